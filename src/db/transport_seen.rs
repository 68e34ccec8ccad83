//! How the server saw a connection arrive, from the server's own views of the session
//! (never inferred from the URL): TCP or a Unix socket, and the TLS version and cipher or
//! plaintext. One or two administrative round trips per connection, before it measures.

use crate::model::{TransportKind, TransportSeen};
use std::collections::BTreeMap;

/// PostgreSQL: the session's own row of pg_stat_ssl, and its client port (-1: a Unix socket).
pub const POSTGRES_SQL: &str = "SELECT s.ssl, s.version, s.cipher, a.client_port \
     FROM pg_stat_ssl s JOIN pg_stat_activity a ON a.pid = s.pid WHERE s.pid = pg_backend_pid()";

/// MySQL and MariaDB: the session's TLS version and cipher (empty: plaintext).
pub const MYSQL_TLS_SQL: &str = "SHOW SESSION STATUS WHERE Variable_name IN ('Ssl_version', 'Ssl_cipher')";

/// MySQL and MariaDB: the session's host as the server lists it (`host:port` over TCP,
/// `localhost` without a port over a Unix socket).

/// A PostgreSQL session's transport from [`POSTGRES_SQL`]'s row.
pub fn postgres(row: &[Option<String>]) -> TransportSeen {
    let col = |i: usize| row.get(i).and_then(|v| v.as_deref()).filter(|v| !v.is_empty());
    let kind = match col(3) {
        Some("-1") => TransportKind::Socket,
        Some(_) => TransportKind::Tcp,
        None => return TransportSeen::unread(),
    };
    let tls = (col(0) == Some("t")).then(|| tls_words(col(1), col(2)));
    TransportSeen::one(kind, tls)
}

/// A MySQL or MariaDB session's transport: its TLS from [`MYSQL_TLS_SQL`]'s pairs, as the
/// server reports it, over `kind`, the socket the connection itself opened. (The server's
/// only record of the client's socket is a SELECT on its PROCESSLIST, which would add one
/// to Com_select per connection; the server's counters must count exactly the workload's
/// statements, as they do for sysbench.)
pub fn mysql(status: &BTreeMap<String, String>, kind: TransportKind) -> TransportSeen {
    let value = |name: &str| status.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str());
    let (version, cipher) = (value("Ssl_version").filter(|v| !v.is_empty()), value("Ssl_cipher"));
    let tls = cipher.filter(|c| !c.is_empty()).map(|c| tls_words(version, Some(c)));
    TransportSeen::one(kind, tls)
}

fn tls_words(version: Option<&str>, cipher: Option<&str>) -> String {
    [version, cipher].into_iter().flatten().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(v: &[Option<&str>]) -> Vec<Option<String>> {
        v.iter().map(|s| s.map(str::to_string)).collect()
    }

    #[test]
    fn postgres_sessions_read_as_the_server_reports_them() {
        let tls = postgres(&row(&[Some("t"), Some("TLSv1.3"), Some("TLS_AES_256_GCM_SHA384"), Some("51234")]));
        assert_eq!(tls.describe(), "TCP, TLS TLSv1.3 TLS_AES_256_GCM_SHA384");
        let plain = postgres(&row(&[Some("f"), None, None, Some("51234")]));
        assert_eq!(plain.describe(), "TCP, plaintext");
        assert_eq!(postgres(&row(&[Some("f"), None, None, Some("-1")])).describe(), "socket, plaintext");
        assert_eq!(postgres(&row(&[])).kind, None);
    }

    #[test]
    fn mysql_sessions_read_as_the_server_reports_them() {
        let tls: BTreeMap<String, String> =
            [("Ssl_cipher".into(), "TLS_AES_128_GCM_SHA256".into()), ("Ssl_version".into(), "TLSv1.3".into())].into();
        assert_eq!(mysql(&tls, TransportKind::Tcp).describe(), "TCP, TLS TLSv1.3 TLS_AES_128_GCM_SHA256");
        let plain: BTreeMap<String, String> =
            [("Ssl_cipher".into(), "".into()), ("Ssl_version".into(), "".into())].into();
        assert_eq!(mysql(&plain, TransportKind::Tcp).describe(), "TCP, plaintext");
        assert_eq!(mysql(&plain, TransportKind::Socket).describe(), "socket, plaintext");
    }

    #[test]
    fn connections_are_counted_by_kind() {
        let mut all = Vec::new();
        let tls = TransportSeen::one(TransportKind::Tcp, Some("TLSv1.3 X".into()));
        for _ in 0..3 {
            TransportSeen::add(&mut all, &tls);
        }
        assert_eq!(TransportSeen::summary(&all).unwrap(), "all 3 connections: TCP, TLS TLSv1.3 X");
        TransportSeen::add(&mut all, &TransportSeen::one(TransportKind::Tcp, None));
        assert_eq!(
            TransportSeen::summary(&all).unwrap(),
            "1 connection: TCP, plaintext; 3 connections: TCP, TLS TLSv1.3 X"
        );
    }
}
