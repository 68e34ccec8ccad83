//! Database error codes, typed per dialect: what retry lists name and results count.

use std::fmt;

/// What went wrong on fairbench's side of a connection (no server code exists).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ClientFault {
    /// The connection broke (reset, closed, I/O error).
    ConnectionLost,
    /// The server's bytes broke the protocol (malformed, oversized, out of sequence).
    Protocol,
    /// A deadline passed (connect, handshake, query).
    Timeout,
    /// TLS setup or handshake failed.
    Tls,
    /// The server asked for something fairbench refuses or does not speak.
    Refused,
    /// Anything else on the client side (bad file, bad option).
    Other,
}

impl ClientFault {
    pub fn name(self) -> &'static str {
        match self {
            ClientFault::ConnectionLost => "connection",
            ClientFault::Protocol => "protocol",
            ClientFault::Timeout => "timeout",
            ClientFault::Tls => "tls",
            ClientFault::Refused => "refused",
            ClientFault::Other => "client",
        }
    }
}

/// A database's own error code.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorCode {
    /// MySQL / MariaDB error number (1213 deadlock, 1205 lock wait timeout...).
    Mysql(u16),
    /// PostgreSQL SQLSTATE (40001, 40P01...).
    Sqlstate(String),
    /// SQLite result code name (SQLITE_BUSY...).
    Sqlite(String),
    /// No server code: fairbench's side.
    Client(ClientFault),
}

impl ErrorCode {
    /// Parses a code as a user writes it for `dialect` (`1213`, `40P01`, `SQLITE_BUSY`).
    pub fn parse(dialect: super::Dialect, s: &str) -> Option<ErrorCode> {
        use super::Dialect;
        let s = s.trim();
        match dialect {
            Dialect::Mysql => s.parse::<u16>().ok().map(ErrorCode::Mysql),
            Dialect::Postgres => (s.len() == 5 && s.bytes().all(|b| b.is_ascii_alphanumeric()))
                .then(|| ErrorCode::Sqlstate(s.to_ascii_uppercase())),
            Dialect::Sqlite => {
                let up = s.to_ascii_uppercase();
                (up.starts_with("SQLITE_")
                    && up.len() > 7
                    && up[7..].bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
                .then_some(ErrorCode::Sqlite(up))
            }
        }
    }

    /// Whether it came from the server (worth printing next to the message).
    pub fn is_server_code(&self) -> bool {
        !matches!(self, ErrorCode::Client(_))
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorCode::Mysql(n) => write!(f, "{n}"),
            ErrorCode::Sqlstate(s) | ErrorCode::Sqlite(s) => f.write_str(s),
            ErrorCode::Client(c) => f.write_str(c.name()),
        }
    }
}

/// Which errors roll back and retry the event (`--ignore-errors`).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct RetryPolicy {
    /// sysbench's `all`: every error the server reports (never fairbench's own faults).
    pub all_server_errors: bool,
    pub codes: Vec<ErrorCode>,
}

impl RetryPolicy {
    #[inline]
    pub fn retries(&self, code: &ErrorCode) -> bool {
        (self.all_server_errors && code.is_server_code()) || self.codes.contains(code)
    }

    /// As recorded and printed: `all` or the codes, comma-separated.
    pub fn describe(&self) -> String {
        let mut parts: Vec<String> = self.codes.iter().map(|c| c.to_string()).collect();
        if self.all_server_errors {
            parts.insert(0, "all".into());
        }
        if parts.is_empty() {
            "none".into()
        } else {
            parts.join(",")
        }
    }
}
/// How a client that lost its connection reconnects (`--reconnect-timeout`): attempts
/// with a doubling wait between them, until the timeout; then the run fails.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ReconnectPolicy {
    /// Attempts go on this long after the loss, seconds.
    pub timeout_s: u32,
    /// The wait after the first failed attempt, milliseconds; it doubles after each ...
    pub backoff_first_ms: u64,
    /// ... up to this: 2 ms per client, from 50 ms to 2 s, so that all clients together
    /// knock at most about 1,000 times a second. Each client waits 50-100% of the step
    /// (spread, so that they do not arrive in the same millisecond). A client sees a
    /// server that is back within this (plus a connect).
    pub backoff_max_ms: u64,
}

impl ReconnectPolicy {
    pub fn new(timeout_s: u32, clients: u32) -> Self {
        ReconnectPolicy { timeout_s, backoff_first_ms: 5, backoff_max_ms: (u64::from(clients) * 2).clamp(50, 2000) }
    }

    /// The wait after failed attempt `n` (0-based) of client `id`.
    pub fn backoff(&self, id: u64, n: u32) -> std::time::Duration {
        let full = self.backoff_first_ms.saturating_mul(1 << n.min(20)).min(self.backoff_max_ms);
        let mut x = id.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ u64::from(n).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x ^= x >> 31;
        std::time::Duration::from_micros(full * 1000).mul_f64(0.5 + (x % 1000) as f64 / 2000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reconnect_backoff_doubles_to_its_cap_spread_over_half_to_all_of_it() {
        let p = ReconnectPolicy::new(10, 4);
        assert_eq!((p.backoff_first_ms, p.backoff_max_ms), (5, 50));
        assert_eq!(ReconnectPolicy::new(10, 300).backoff_max_ms, 600);
        assert_eq!(ReconnectPolicy::new(10, 5000).backoff_max_ms, 2000);
        for id in 0..50 {
            for n in 0..12 {
                let full = std::time::Duration::from_millis((5u64 << n).min(50));
                let w = p.backoff(id, n);
                assert!(w >= full / 2 && w <= full, "client {id} attempt {n}: {w:?} of {full:?}");
            }
        }
        let spread: std::collections::BTreeSet<_> = (0..50).map(|id| p.backoff(id, 3)).collect();
        assert!(spread.len() > 25, "clients wait different times: {spread:?}");
    }
}
