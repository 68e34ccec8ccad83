//! What the lean protocol clients (mysql_wire, pg_wire) share: the byte stream to a server
//! and the read buffer that starts small and grows only when reads fill it.

use super::DbError;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};

/// The read buffer's largest size for ordinary reads. It starts at READ_BUFFER_START (a point
/// select's connection never needs more: 10,000 connections stay small) and doubles each
/// time a read fills it, so result sets of many rows still arrive in few reads.
pub const READ_BUFFER: usize = 64 * 1024;
pub const READ_BUFFER_START: usize = 512;

/// A byte stream to a server. `drained`: after a complete reply the server has nothing more
/// to say (request/response), so read readiness can be dropped without a syscall, saving
/// one read per statement. `try_send`: a non-blocking write for a goodbye on drop.
pub trait Socket: AsyncRead + AsyncWrite + Unpin {
    fn drained(&self) {}
    fn try_send(&mut self, bytes: &[u8]) {
        let _ = bytes;
    }
}

impl Socket for tokio::net::TcpStream {
    fn drained(&self) {
        let _ = self.try_io(tokio::io::Interest::READABLE, || Err::<(), _>(std::io::ErrorKind::WouldBlock.into()));
    }
    fn try_send(&mut self, bytes: &[u8]) {
        let _ = self.try_write(bytes);
    }
}

impl Socket for tokio::net::UnixStream {
    fn drained(&self) {
        let _ = self.try_io(tokio::io::Interest::READABLE, || Err::<(), _>(std::io::ErrorKind::WouldBlock.into()));
    }
    fn try_send(&mut self, bytes: &[u8]) {
        let _ = self.try_write(bytes);
    }
}

pub fn io_error(e: std::io::Error) -> DbError {
    DbError::lost(format!("connection lost: {e}"))
}

/// Bytes read from the socket; `start..end` not yet consumed.
pub struct Inbox {
    pub buf: Vec<u8>,
    pub start: usize,
    pub end: usize,
}

impl Default for Inbox {
    fn default() -> Self {
        Inbox { buf: vec![0; READ_BUFFER_START], start: 0, end: 0 }
    }
}

impl Inbox {
    /// Everything received has been consumed.
    pub fn empty(&self) -> bool {
        self.start == self.end
    }

    /// Makes `need` unconsumed bytes available in `buf` (the caller has bounded `need`).
    pub async fn fill<R: AsyncRead + Unpin>(&mut self, stream: &mut R, need: usize) -> Result<(), DbError> {
        if self.end - self.start >= need {
            return Ok(());
        }
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.buf.len() < need {
            self.buf.resize(need, 0);
        }
        while self.end < need {
            let n = stream.read(&mut self.buf[self.end..]).await.map_err(io_error)?;
            if n == 0 {
                return Err(DbError::lost("connection closed by the server"));
            }
            self.end += n;
            self.grow_if_filled();
        }
        Ok(())
    }

    /// A read that filled the buffer suggests more was waiting: the next reads get twice
    /// the room, up to READ_BUFFER.
    fn grow_if_filled(&mut self) {
        if self.end == self.buf.len() && self.buf.len() < READ_BUFFER {
            self.buf.resize((self.buf.len() * 2).min(READ_BUFFER), 0);
        }
    }

    /// Consumes up to `n` of the bytes already received; returns how many of `n` are still
    /// to come.
    #[inline]
    pub fn consume(&mut self, n: usize) -> usize {
        let k = (self.end - self.start).min(n);
        self.start += k;
        n - k
    }

    /// Consumes `n` bytes without keeping them: memory stays at the buffer's size.
    pub async fn discard<R: AsyncRead + Unpin>(&mut self, stream: &mut R, mut n: usize) -> Result<(), DbError> {
        loop {
            n = self.consume(n);
            if n == 0 {
                return Ok(());
            }
            let cap = self.buf.len().min(READ_BUFFER.max(n));
            self.start = 0;
            self.end = stream.read(&mut self.buf[..cap]).await.map_err(io_error)?;
            if self.end == 0 {
                return Err(DbError::lost("connection closed by the server"));
            }
            self.grow_if_filled();
        }
    }
}

/// The unit tests' in-memory pipe as a server connection.
#[cfg(test)]
impl Socket for tokio::io::DuplexStream {
    fn try_send(&mut self, bytes: &[u8]) {
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        let _ = std::pin::Pin::new(self).poll_write(&mut cx, bytes);
    }
}

/// Fuzz cases per property: the suite's default, or FAIRBENCH_FUZZ_CASES for a long run.
#[cfg(test)]
pub fn fuzz_cases(default: u32) -> u32 {
    std::env::var("FAIRBENCH_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}
