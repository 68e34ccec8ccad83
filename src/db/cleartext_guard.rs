//! Watches a PostgreSQL server's messages before authentication completes and breaks the
//! connection if the server asks for the password in clear (AuthenticationCleartextPassword)
//! over a transport that is not encrypted. tokio-postgres would answer it; a server (or
//! anyone on the path) should not get a password that easily.

use super::inspected::{Inspect, Inspected};
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

const AUTH_REQUEST: u8 = b'R';
const AUTH_OK: u32 = 0;
const AUTH_CLEARTEXT: u32 = 3;

enum State {
    /// Collecting a message header: type, length and (for 'R') the request code.
    Header { bytes: [u8; 9], have: usize },
    /// Inside a message body the guard does not need.
    Skip(usize),
    /// Authenticated: everything passes untouched.
    Done,
}

pub struct CleartextGuard {
    state: State,
    refused: Arc<AtomicBool>,
}

impl CleartextGuard {
    /// `inner` guarded, and a flag that tells afterwards whether the guard refused.
    pub fn wrap<S>(inner: S) -> (Inspected<S, Self>, Arc<AtomicBool>) {
        let refused = Arc::new(AtomicBool::new(false));
        let guard = CleartextGuard { state: State::Header { bytes: [0; 9], have: 0 }, refused: refused.clone() };
        (Inspected::new(inner, guard), refused)
    }

    /// Feeds received bytes; false when the server asked for a cleartext password.
    fn follow(&mut self, mut data: &[u8]) -> bool {
        while !data.is_empty() {
            match &mut self.state {
                State::Done => return true,
                State::Skip(n) => {
                    let k = (*n).min(data.len());
                    *n -= k;
                    data = &data[k..];
                    if *n == 0 {
                        self.state = State::Header { bytes: [0; 9], have: 0 };
                    }
                }
                State::Header { bytes, have } => {
                    // Type and length (5 bytes); an authentication request adds its code.
                    let need = |bytes: &[u8; 9], have: usize| if have >= 1 && bytes[0] == AUTH_REQUEST { 9 } else { 5 };
                    let k = (need(bytes, *have) - *have).min(data.len());
                    bytes[*have..*have + k].copy_from_slice(&data[..k]);
                    *have += k;
                    data = &data[k..];
                    if *have < need(bytes, *have) {
                        continue;
                    }
                    let len = u32::from_be_bytes([bytes[1], bytes[2], bytes[3], bytes[4]]) as usize;
                    if bytes[0] == AUTH_REQUEST {
                        match u32::from_be_bytes([bytes[5], bytes[6], bytes[7], bytes[8]]) {
                            AUTH_CLEARTEXT => return false,
                            AUTH_OK => self.state = State::Done,
                            _ => self.state = State::Skip(len.saturating_sub(8)),
                        }
                    } else {
                        self.state = State::Skip(len.saturating_sub(4));
                    }
                    if let State::Skip(0) = self.state {
                        self.state = State::Header { bytes: [0; 9], have: 0 };
                    }
                }
            }
        }
        true
    }
}

impl Inspect for CleartextGuard {
    fn inspect(&mut self, received: &[u8]) -> io::Result<()> {
        if matches!(self.state, State::Done) || self.follow(received) {
            return Ok(());
        }
        self.refused.store(true, Ordering::Relaxed);
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "the server asked for the password in clear over unencrypted TCP",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::db::inspected::pg_message as msg;

    fn verdict(stream: &[u8], chunk: usize) -> bool {
        let (mut g, _) = CleartextGuard::wrap(());
        stream.chunks(chunk.max(1)).all(|c| g.inspector.follow(c))
    }

    #[test]
    fn cleartext_requests_are_caught_however_the_bytes_arrive() {
        let scram = msg(b'R', &[&10u32.to_be_bytes()[..], b"SCRAM-SHA-256\0\0"].concat());
        let cleartext = msg(b'R', &AUTH_CLEARTEXT.to_be_bytes());
        let ok = msg(b'R', &AUTH_OK.to_be_bytes());
        let notice = msg(b'N', b"SNOTICE\0Mhello\0\0");
        for chunk in [1, 2, 3, 7, 100] {
            assert!(!verdict(&[notice.clone(), cleartext.clone()].concat(), chunk));
            assert!(!verdict(&cleartext, chunk));
            assert!(verdict(&[scram.clone(), ok.clone(), cleartext.clone()].concat(), chunk), "after OK anything goes");
            assert!(verdict(&[msg(b'R', &5u32.to_be_bytes()[..]), ok.clone()].concat(), chunk), "md5 is no cleartext");
        }
    }
}
