//! Framing: packets in and out of the stream, sequence ids checked, lengths checked
//! against the limits before anything is buffered, skipped data never buffered.

use super::packets::err_packet;
use super::{Socket, WireConn, MAX_FRAME, READ_BUFFER, STATUS_LIMIT};
use crate::db::socket::io_error as io;
use crate::db::DbError;
use tokio::io::AsyncWriteExt;

/// `max_packet`: the limit is the user's `--max-packet`, not a fixed protocol bound.
pub(super) fn too_large(len: usize, limit: usize, phase: &str, max_packet: bool) -> DbError {
    let advice = if max_packet { " (--max-packet raises the limit)" } else { "" };
    DbError::protocol(format!("the server sent a packet of {len} bytes {phase}, over the limit of {limit}{advice}"))
}

/// What the next packet is, from its first byte.
pub(super) enum PacketKind {
    /// An EOF or OK terminator (0xfe and short) or an ERR (0xff): read it.
    Status,
    /// A row or column definition: skip it unread.
    Data,
}

impl<S: Socket> WireConn<S> {
    /// Writes `out` as one packet (split into frames) with the current sequence id.
    pub(super) async fn send(&mut self) -> Result<(), DbError> {
        let mut framed = Vec::with_capacity(self.out.len() + 8);
        let mut chunks = self.out.chunks(MAX_FRAME).peekable();
        if chunks.peek().is_none() {
            framed.extend_from_slice(&[0, 0, 0, self.seq]);
            self.seq = self.seq.wrapping_add(1);
        }
        let mut last_len = 0;
        for chunk in chunks {
            framed.extend_from_slice(&(chunk.len() as u32).to_le_bytes()[..3]);
            framed.push(self.seq);
            self.seq = self.seq.wrapping_add(1);
            framed.extend_from_slice(chunk);
            last_len = chunk.len();
        }
        if last_len == MAX_FRAME {
            framed.extend_from_slice(&[0, 0, 0, self.seq]);
            self.seq = self.seq.wrapping_add(1);
        }
        self.write(&framed).await
    }

    pub(super) async fn write(&mut self, bytes: &[u8]) -> Result<(), DbError> {
        self.writing = true;
        self.stream.write_all(bytes).await.map_err(io)?;
        self.writing = false;
        Ok(())
    }

    /// Starts a command: resets the sequence and writes `out` with `cmd` prepended.
    pub(super) async fn command(&mut self, cmd: u8, body: impl FnOnce(&mut Vec<u8>)) -> Result<(), DbError> {
        // Header space reserved in front so the command goes out in one write.
        self.out.clear();
        self.out.extend_from_slice(&[0, 0, 0, 0, cmd]);
        body(&mut self.out);
        let len = self.out.len() - 4;
        if len >= MAX_FRAME {
            let payload = self.out.split_off(4);
            self.out = payload;
            self.seq = 0;
            return self.send().await;
        }
        self.out[..3].copy_from_slice(&(len as u32).to_le_bytes()[..3]);
        self.out[3] = 0;
        self.seq = 1;
        let out = std::mem::take(&mut self.out);
        let result = self.write(&out).await;
        self.out = out;
        result
    }

    /// Makes `need` unconsumed bytes available (need ≤ the caller's limit + 4).
    pub(super) async fn fill(&mut self, need: usize) -> Result<(), DbError> {
        self.inbox.fill(&mut self.stream, need).await
    }

    /// Consumes `n` bytes without keeping them: memory stays at the buffer's size.
    pub(super) async fn discard(&mut self, n: usize) -> Result<(), DbError> {
        self.inbox.discard(&mut self.stream, n).await
    }

    /// A frame header: the payload length, with the sequence id checked.
    pub(super) async fn header(&mut self) -> Result<usize, DbError> {
        self.fill(4).await?;
        let h = &self.inbox.buf[self.inbox.start..self.inbox.start + 4];
        let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
        if h[3] != self.seq {
            return Err(DbError::protocol(format!(
                "packet out of order from the server: sequence id {}, expected {}",
                h[3], self.seq
            )));
        }
        self.seq = self.seq.wrapping_add(1);
        self.inbox.start += 4;
        Ok(len)
    }

    /// The next packet's payload (valid until the next read), at most `limit` bytes.
    pub(super) async fn read_packet(&mut self, limit: usize, phase: &str) -> Result<&[u8], DbError> {
        let len = self.header().await?;
        self.payload(len, limit, phase).await
    }

    /// The payload of a packet whose header was read.
    pub(super) async fn payload(&mut self, len: usize, limit: usize, phase: &str) -> Result<&[u8], DbError> {
        if len > limit {
            return Err(too_large(len, limit, phase, limit == self.limits.max_packet));
        }
        if len < MAX_FRAME {
            self.fill(len).await?;
            let from = self.inbox.start;
            self.inbox.start += len;
            return Ok(&self.inbox.buf[from..from + len]);
        }
        // Continuation frames, assembled; the total is checked before each is buffered.
        self.long.clear();
        if self.long.capacity() > READ_BUFFER {
            self.long.shrink_to(READ_BUFFER);
        }
        let mut len = len;
        loop {
            let mut left = len;
            while left > 0 {
                self.fill(1).await?;
                let k = (self.inbox.end - self.inbox.start).min(left);
                self.long.extend_from_slice(&self.inbox.buf[self.inbox.start..self.inbox.start + k]);
                self.inbox.start += k;
                left -= k;
            }
            if len < MAX_FRAME {
                return Ok(&self.long);
            }
            len = self.header().await?;
            if self.long.len() + len > limit {
                return Err(too_large(self.long.len() + len, limit, phase, limit == self.limits.max_packet));
            }
        }
    }

    /// Skips a packet whose header was read, frame by frame, never buffering it.
    pub(super) async fn skip_payload(&mut self, len: usize) -> Result<(), DbError> {
        let mut len = len;
        let mut total = len;
        loop {
            if total > self.limits.max_packet {
                return Err(too_large(total, self.limits.max_packet, "in a result row", true));
            }
            self.discard(len).await?;
            if len < MAX_FRAME {
                return Ok(());
            }
            len = self.header().await?;
            total += len;
        }
    }

    /// The hot path's shortcut: consumes up to `max` complete data packets (rows, column
    /// definitions) already in the buffer without an await, and returns how many. Stops at
    /// a status packet, a partial packet or anything unexpected, which the checked path then
    /// reads (and reports).
    #[inline]
    pub(super) fn skip_buffered_rows(&mut self, max: u64) -> u64 {
        let mut rows = 0;
        while rows < max {
            let b = &self.inbox.buf[self.inbox.start..self.inbox.end];
            if b.len() < 5 {
                return rows;
            }
            let len = u32::from_le_bytes([b[0], b[1], b[2], 0]) as usize;
            let data = len > 0 && len < MAX_FRAME && !matches!(b[4], 0xfe | 0xff);
            if !data || b[3] != self.seq || b.len() < 4 + len {
                return rows;
            }
            self.seq = self.seq.wrapping_add(1);
            self.inbox.start += 4 + len;
            rows += 1;
        }
        rows
    }

    /// Reads the next header and classifies the packet by its first byte.
    pub(super) async fn next_kind(&mut self) -> Result<(usize, PacketKind), DbError> {
        let len = self.header().await?;
        if len == 0 {
            return Ok((0, PacketKind::Data));
        }
        self.fill(1).await?;
        let kind = match self.inbox.buf[self.inbox.start] {
            0xfe if len < MAX_FRAME => PacketKind::Status,
            0xff => PacketKind::Status,
            _ => PacketKind::Data,
        };
        Ok((len, kind))
    }

    /// Skips the next packet if it is data (a row, a column definition); an OK or EOF is
    /// returned, an ERR is the error it carries.
    pub(super) async fn skip_unless_status(&mut self, phase: &str) -> Result<Option<&[u8]>, DbError> {
        let (len, kind) = self.next_kind().await?;
        match kind {
            PacketKind::Data => {
                self.skip_payload(len).await?;
                Ok(None)
            }
            PacketKind::Status => {
                let p = self.payload(len, STATUS_LIMIT, phase).await?;
                if p[0] == 0xff {
                    return Err(err_packet(p));
                }
                Ok(Some(p))
            }
        }
    }
}
