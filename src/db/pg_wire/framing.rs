//! Messages in and out of the stream: each backend message's length is checked against
//! `--max-packet` before anything is buffered, and rows being skipped are never buffered.

use super::{PgConn, Socket};
use crate::db::socket::io_error;
use crate::db::DbError;
use tokio::io::AsyncWriteExt;

impl<S: Socket> PgConn<S> {
    /// Writes the output buffer in one write.
    pub(super) async fn send(&mut self) -> Result<(), DbError> {
        self.writing = true;
        self.stream.write_all(&self.out).await.map_err(io_error)?;
        self.writing = false;
        Ok(())
    }

    /// The next message's type and body length, the length checked against the limit.
    pub(super) async fn header(&mut self) -> Result<(u8, usize), DbError> {
        self.inbox.fill(&mut self.stream, 5).await?;
        // Five bytes are in the inbox now: the header is there.
        let (kind, body) = self.buffered_header()?.unwrap_or_default();
        self.inbox.start += 5;
        Ok((kind, body))
    }

    /// The next message's type and body length when its header is in the inbox (not
    /// consumed), the length checked against the limit.
    #[inline]
    pub(super) fn buffered_header(&self) -> Result<Option<(u8, usize)>, DbError> {
        let Some(h) = self.inbox.buf[self.inbox.start..self.inbox.end].first_chunk::<5>() else { return Ok(None) };
        let (kind, len) = (h[0], u32::from_be_bytes([h[1], h[2], h[3], h[4]]));
        if len < 4 {
            return Err(DbError::protocol(format!(
                "the server sent a message of length {len} (type '{}'): not PostgreSQL's protocol (is this a PostgreSQL server?)",
                (kind as char).escape_default()
            )));
        }
        let body = (len - 4) as usize;
        if body > self.max_message {
            return Err(DbError::protocol(format!(
                "the server sent a message of {body} bytes (type '{}'), over the limit of {} (--max-packet raises the limit)",
                (kind as char).escape_default(),
                self.max_message
            )));
        }
        Ok(Some((kind, body)))
    }

    /// The body of a message whose header was read (valid until the next read).
    pub(super) async fn body(&mut self, len: usize) -> Result<&[u8], DbError> {
        self.inbox.fill(&mut self.stream, len).await?;
        let from = self.inbox.start;
        self.inbox.start += len;
        Ok(&self.inbox.buf[from..from + len])
    }

    /// The next message, whole.
    pub(super) async fn message(&mut self) -> Result<(u8, &[u8]), DbError> {
        let (kind, len) = self.header().await?;
        Ok((kind, self.body(len).await?))
    }

    /// A reply is complete and the server speaks only when spoken to: if every byte
    /// received is consumed, the socket is empty.
    pub(super) fn finished(&mut self) {
        if self.inbox.empty() {
            self.stream.drained();
        }
    }
}
