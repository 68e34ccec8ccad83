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
    let replication_role = match conn.replication_role().await {
        Ok(role) => role,
        Err(e) if !e.connection_lost => format!("unknown: not visible to this user ({})", e.message),
        Err(e) => return Err(e),
    };
    let same_host_as_client = match transport.kind {
        TransportKind::Embedded | TransportKind::Socket => true,
        _ => {
            let host = transport.address.rsplit_once(':').map(|(h, _)| h).unwrap_or(&transport.address);
            matches!(host.trim_matches(['[', ']']), "127.0.0.1" | "localhost" | "::1") || host.starts_with("127.")
        }
    };
    let host = db.host_facts(&variables);
    Ok(ServerConditions {
        product: info.product,
        version: info.version,
        variables,
        replication_role,
        same_host_as_client,
        host,
        ..Default::default()
    })
}
