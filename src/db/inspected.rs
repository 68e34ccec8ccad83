//! A stream whose received bytes pass an inspector before the driver sees them: the
//! guards against hostile PostgreSQL servers (cleartext password requests, oversized
//! messages) follow the message framing here and can fail the connection mid-read.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Looks at received bytes in order, however the reads split them.
pub trait Inspect {
    /// An error fails the read: the bytes are withheld from the driver.
    fn inspect(&mut self, received: &[u8]) -> io::Result<()>;
}

pub struct Inspected<S, I> {
    pub(crate) inner: S,
    pub(crate) inspector: I,
}

impl<S, I: Inspect> Inspected<S, I> {
    pub fn new(inner: S, inspector: I) -> Self {
        Inspected { inner, inspector }
    }
}

impl<S: AsyncRead + Unpin, I: Inspect + Unpin> AsyncRead for Inspected<S, I> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            if let Err(e) = self.inspector.inspect(&buf.filled()[before..]) {
                buf.set_filled(before);
                return Poll::Ready(Err(e));
            }
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin, I: Unpin> AsyncWrite for Inspected<S, I> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, data)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// A PostgreSQL backend message: its type byte, a length that counts itself, the body.
#[cfg(test)]
pub(crate) fn pg_message(kind: u8, body: &[u8]) -> Vec<u8> {
    let mut m = vec![kind];
    m.extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
    m.extend_from_slice(body);
    m
}
