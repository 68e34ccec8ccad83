//! Reads the conditions of a run from where they live: the server (product, version,
//! variables, replication role, its host) and the client's own host. Builds model values;
//! the counters are read around the measured phase by the runner.

pub mod host;

use crate::db::{Connection, Database, DbError, ServerInfo};
use crate::model::{ServerConditions, TransportKind};

/// Reads what the server says about itself before a run (counters come later).
pub async fn server<D: Database>(db: &D, conn: &mut D::Conn, info: ServerInfo) -> Result<ServerConditions, DbError> {
    let transport = db.transport();
    let variables = conn.variables().await?;
    // Needs more than a benchmark user may have (MySQL's REPLICATION CLIENT): optional.
    let (replication_role, identity) = match conn.node_role().await {
        Ok(reading) => (reading.describe(), reading.identity()),
        Err(e) if !e.connection_lost => (format!("unknown: not visible to this user ({})", e.message), None),
        Err(e) => return Err(e),
    };
    let host = db.host_facts(&variables);
    let same_host_as_client = same_host(transport.kind, &transport.address, host.get("hostname"));
    let facts = Some(db.server_facts(&info.product, &variables));
    Ok(ServerConditions {
        facts,
        product: info.product,
        version: info.version,
        variables,
        replication_role,
        identity,
        same_host_as_client,
        host,
        ..Default::default()
    })
}

/// Whether the server runs on the client's host: embedded, over a Unix socket, at a
/// loopback address, or with the same hostname as this host when the server says its own.
fn same_host(kind: TransportKind, address: &str, server_hostname: Option<&String>) -> bool {
    if matches!(kind, TransportKind::Embedded | TransportKind::Socket) {
        return true;
    }
    let host = address.rsplit_once(':').map(|(h, _)| h).unwrap_or(address).trim_matches(['[', ']']);
    let loopback = matches!(host, "localhost" | "::1") || host.starts_with("127.");
    loopback || server_hostname.is_some_and(|name| name.eq_ignore_ascii_case(&host::hostname()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_socket_embedded_and_our_own_hostname_are_this_host() {
        for address in ["127.0.0.1:3306", "localhost:5432", "[::1]:3306", "127.0.1.1:3306"] {
            assert!(same_host(TransportKind::Tcp, address, None), "{address}");
        }
        assert!(same_host(TransportKind::Socket, "/run/mysqld/mysqld.sock", None));
        assert!(same_host(TransportKind::Embedded, "/tmp/x.db", None));
        assert!(!same_host(TransportKind::Tcp, "10.0.0.7:3306", None));
        let ours = host::hostname();
        assert!(same_host(TransportKind::Tcp, "10.0.0.7:3306", Some(&ours)));
        assert!(!same_host(TransportKind::Tcp, "10.0.0.7:3306", Some(&format!("{ours}-db"))));
    }
}
