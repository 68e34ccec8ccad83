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
