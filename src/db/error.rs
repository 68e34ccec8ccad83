//! Database errors with the server's own code, typed per dialect, and whether a retry or a
//! reconnect can help.

pub use crate::model::{ClientFault, ErrorCode};
use std::fmt;

/// A database error.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct DbError {
    pub code: ErrorCode,
    pub message: String,
    /// The connection is gone or unusable; reconnecting may help.
    pub connection_lost: bool,
}

/// MySQL error numbers that mean the connection is gone (some proxies send them as server errors).
const MYSQL_LOST: [u16; 5] = [2006, 2013, 2055, 1927, 4031];

impl DbError {
    pub fn mysql(errno: u16, message: impl Into<String>) -> Self {
        DbError { code: ErrorCode::Mysql(errno), message: message.into(), connection_lost: MYSQL_LOST.contains(&errno) }
    }

    /// The table named does not exist (MySQL 1146, PostgreSQL 42P01, SQLite's message).
    pub fn no_such_table(&self) -> bool {
        match &self.code {
            ErrorCode::Mysql(1146) => true,
            ErrorCode::Sqlstate(s) => s == "42P01",
            _ => self.message.contains("no such table"),
        }
    }

    /// 57P01 admin shutdown, 57P02 crash shutdown, 57P03 cannot connect now: the server is going away.
    pub fn sqlstate(code: &str, message: impl Into<String>) -> Self {
        let lost = matches!(code, "57P01" | "57P02" | "57P03");
        DbError { code: ErrorCode::Sqlstate(code.to_string()), message: message.into(), connection_lost: lost }
    }

    pub fn sqlite(name: impl Into<String>, message: impl Into<String>) -> Self {
        DbError { code: ErrorCode::Sqlite(name.into()), message: message.into(), connection_lost: false }
    }

    /// The connection broke.
    pub fn lost(message: impl Into<String>) -> Self {
        Self::client(ClientFault::ConnectionLost, message)
    }

    /// The server broke the protocol: the stream cannot be trusted any more.
    pub fn protocol(message: impl Into<String>) -> Self {
        Self::client(ClientFault::Protocol, message)
    }

    pub fn timeout(message: impl Into<String>) -> Self {
        Self::client(ClientFault::Timeout, message)
    }

    /// A client-side fault; faults that leave the stream unusable count as a lost connection.
    pub fn client(fault: ClientFault, message: impl Into<String>) -> Self {
        let lost = matches!(fault, ClientFault::ConnectionLost | ClientFault::Protocol | ClientFault::Timeout);
        DbError { code: ErrorCode::Client(fault), message: message.into(), connection_lost: lost }
    }

    /// A handle `prepare` never returned.
    pub fn no_statement(stmt: usize) -> Self {
        Self::client(ClientFault::Other, format!("no prepared statement {stmt}"))
    }

    /// The wrong number of parameters for a prepared statement.
    pub fn arity(expected: usize, given: usize) -> Self {
        Self::client(ClientFault::Other, format!("statement takes {expected} parameters, {given} given"))
    }

    pub fn fault(&self) -> Option<ClientFault> {
        match self.code {
            ErrorCode::Client(f) => Some(f),
            _ => None,
        }
    }
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.code.is_server_code() && !self.connection_lost {
            write!(f, "{} (error {})", self.message, self.code)
        } else {
            write!(f, "{}", self.message)
        }
    }
}

/// A target URL that cannot be used; the message never holds a password.
#[derive(Clone, Debug, thiserror::Error)]
pub enum UrlError {
    /// `url` with any password redacted; `why` what is wrong with it.
    #[error("invalid --target {url:?}: {why}")]
    Invalid { url: String, why: String },
    #[error("cannot read --password-file {path}: {why}")]
    PasswordFileUnreadable { path: String, why: String },
    #[error("--password-file {0} is not UTF-8 text")]
    PasswordFileNotText(String),
    #[error("--password-file {0} is empty: put the password on its first line")]
    PasswordFileEmpty(String),
    #[error("several --target are the nodes of one replicated database: all mysql:// or all postgres://")]
    MixedNodes,
}

/// " (is the server running?)" when a connection attempt found nobody listening.
pub(crate) fn unreachable_hint(message: &str) -> &'static str {
    let m = message.to_ascii_lowercase();
    if m.contains("refused") || m.contains("timed out") || m.contains("no such file") || m.contains("unreachable") {
        " (is the server running?)"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Dialect;

    #[test]
    fn codes_parse_per_dialect() {
        assert_eq!(ErrorCode::parse(Dialect::Mysql, "1213"), Some(ErrorCode::Mysql(1213)));
        assert_eq!(ErrorCode::parse(Dialect::Mysql, "ALL"), None);
        assert_eq!(ErrorCode::parse(Dialect::Postgres, "40p01"), Some(ErrorCode::Sqlstate("40P01".into())));
        assert_eq!(ErrorCode::parse(Dialect::Sqlite, "sqlite_busy"), Some(ErrorCode::Sqlite("SQLITE_BUSY".into())));
        assert_eq!(ErrorCode::parse(Dialect::Sqlite, "1213"), None);
    }

    #[test]
    fn display_shows_server_codes_only() {
        assert_eq!(DbError::mysql(1213, "Deadlock").to_string(), "Deadlock (error 1213)");
        assert_eq!(DbError::lost("connection lost: reset").to_string(), "connection lost: reset");
        assert!(DbError::mysql(2013, "Lost connection").connection_lost);
        assert!(DbError::protocol("bad packet").connection_lost);
    }
}
