//! Bounds the PostgreSQL messages a server may send. tokio-postgres trusts a backend
//! message's length: it reserves that much buffer and keeps reading until the message is
//! complete, so a server announcing 2 GB drives the client to gigabytes. The guard follows
//! the message framing (1 type byte, then a 4-byte big-endian length that counts itself)
//! and fails the connection as soon as a header announces more than `--max-packet`.
//!
//! Only TLS targets use tokio-postgres (the lean client, pg_wire, bounds messages itself).
//! The guard sits on the TLS session (after the handshake), where tokio-postgres reads plain
//! protocol bytes, so it never sees the one-byte 'S'/'N' answer to an SSLRequest, which has
//! no length: that byte is read from the raw socket below the guard.

use crate::db::inspected::{Inspect, Inspected};
use std::io;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use tokio_postgres::tls::{ChannelBinding, TlsConnect, TlsStream};

/// Why a guard failed its connection, for the error the client is left with (tokio-postgres
/// reports only "connection closed" to queries once its connection task ends).
#[derive(Clone, Default)]
pub struct FrameVerdict(Arc<OnceLock<String>>);

impl FrameVerdict {
    pub fn refusal(&self) -> Option<&str> {
        self.0.get().map(String::as_str)
    }
}

/// A message announced longer than `--max-packet` allows.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "the server sent a message of {bytes} bytes (type '{}'), over the limit of {limit} (--max-packet raises the limit)",
    .kind.escape_default()
)]
struct TooLong {
    bytes: u64,
    /// The message's type byte.
    kind: char,
    limit: usize,
}

enum State {
    /// Collecting a message header: type and length.
    Header { bytes: [u8; 5], have: usize },
    /// Inside a message body of this many bytes still to come.
    Body(u64),
}

pub struct FrameGuard {
    state: State,
    max_message: usize,
    verdict: FrameVerdict,
}

impl FrameGuard {
    /// `inner` with its messages bounded to `max_message` bytes; a refusal lands in `verdict`.
    pub fn wrap<S>(inner: S, max_message: usize, verdict: FrameVerdict) -> Inspected<S, Self> {
        Inspected::new(inner, FrameGuard { state: State::Header { bytes: [0; 5], have: 0 }, max_message, verdict })
    }

    /// Follows the framing through received bytes; the refusal when a message is too long.
    fn follow(&mut self, mut data: &[u8]) -> Result<(), TooLong> {
        while !data.is_empty() {
            match &mut self.state {
                State::Body(left) => {
                    let k = (*left).min(data.len() as u64);
                    *left -= k;
                    data = &data[k as usize..];
                    if *left == 0 {
                        self.state = State::Header { bytes: [0; 5], have: 0 };
                    }
                }
                State::Header { bytes, have } => {
                    let k = (5 - *have).min(data.len());
                    bytes[*have..*have + k].copy_from_slice(&data[..k]);
                    *have += k;
                    data = &data[k..];
                    if *have < 5 {
                        continue;
                    }
                    // A length below 4 is malformed: tokio-postgres reports it itself.
                    let body = u32::from_be_bytes([bytes[1], bytes[2], bytes[3], bytes[4]]).saturating_sub(4) as u64;
                    if body > self.max_message as u64 {
                        return Err(TooLong { bytes: body, kind: bytes[0] as char, limit: self.max_message });
                    }
                    self.state = if body == 0 { State::Header { bytes: [0; 5], have: 0 } } else { State::Body(body) };
                }
            }
        }
        Ok(())
    }
}

impl Inspect for FrameGuard {
    fn inspect(&mut self, received: &[u8]) -> io::Result<()> {
        // Once refused, the stream is out of step with the framing: every read fails.
        let refusal = match self.verdict.refusal() {
            Some(refusal) => refusal.to_string(),
            None => match self.follow(received) {
                Ok(()) => return Ok(()),
                Err(refusal) => self.verdict.0.get_or_init(|| refusal.to_string()).clone(),
            },
        };
        Err(io::Error::new(io::ErrorKind::InvalidData, refusal))
    }
}

impl<S: TlsStream + Unpin> TlsStream for Inspected<S, FrameGuard> {
    fn channel_binding(&self) -> ChannelBinding {
        self.inner.channel_binding()
    }
}

/// A TLS connector whose sessions are guarded: the guard reads the decrypted messages.
pub struct GuardedTls<T> {
    pub tls: T,
    pub max_message: usize,
    pub verdict: FrameVerdict,
}

impl<S, T> TlsConnect<S> for GuardedTls<T>
where
    T: TlsConnect<S>,
    T::Future: Send + 'static,
    T::Stream: 'static,
{
    type Stream = Inspected<T::Stream, FrameGuard>;
    type Error = T::Error;
    type Future = Pin<Box<dyn std::future::Future<Output = Result<Self::Stream, T::Error>> + Send>>;

    fn connect(self, stream: S) -> Self::Future {
        let GuardedTls { tls, max_message, verdict } = self;
        let handshake = tls.connect(stream);
        Box::pin(async move { Ok(FrameGuard::wrap(handshake.await?, max_message, verdict)) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::db::inspected::pg_message as msg;

    fn guard(max_message: usize, verdict: FrameVerdict) -> FrameGuard {
        FrameGuard { state: State::Header { bytes: [0; 5], have: 0 }, max_message, verdict }
    }

    #[test]
    fn messages_over_the_limit_are_refused_however_the_bytes_arrive() {
        let row = msg(b'D', &[7; 100]);
        let empty = msg(b'I', &[]);
        let huge_header = [b'D', 0x7f, 0xff, 0xff, 0xff];
        for chunk in [1, 2, 3, 5, 7, 1000] {
            let mut g = guard(100, FrameVerdict::default());
            let admitted = [row.clone(), empty.clone(), row.clone()].concat();
            assert!(admitted.chunks(chunk).all(|c| g.follow(c).is_ok()), "chunk {chunk}");
            let mut g = guard(99, FrameVerdict::default());
            let e = row.chunks(chunk).map(|c| g.follow(c)).find_map(Result::err).expect("refused").to_string();
            assert!(e.contains("message of 100 bytes (type 'D'), over the limit of 99"), "{e}");
            let mut g = guard(64 << 20, FrameVerdict::default());
            let stream = [empty.clone(), huge_header.to_vec()].concat();
            let e = stream.chunks(chunk).map(|c| g.follow(c)).find_map(Result::err).expect("refused").to_string();
            assert!(e.contains("message of 2147483643 bytes") && e.contains("--max-packet"), "{e}");
        }
    }
}
