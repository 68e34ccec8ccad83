//! Reads the conditions of a run from where they live: the server (product, version,
//! variables, replication role, its host) and the client's own host. Builds model values;
//! the counters are read around the measured phase by the runner.

pub mod host;

use crate::db::{Connection, DbError, ServerInfo};
use crate::model::{Dialect, ServerConditions, Transport, TransportKind};
use std::collections::BTreeMap;

/// Reads what the server says about itself before a run (counters come later).
pub async fn server<C: Connection>(
    conn: &mut C,
    dialect: Dialect,
    transport: &Transport,
    info: ServerInfo,
) -> Result<ServerConditions, DbError> {
    let variables = conn.variables().await?;
    let replication_role = conn.replication_role().await?;
    let same_host_as_client = match transport.kind {
        TransportKind::Embedded | TransportKind::Socket => true,
        _ => {
            let host = transport.address.rsplit_once(':').map(|(h, _)| h).unwrap_or(&transport.address);
            matches!(host.trim_matches(['[', ']']), "127.0.0.1" | "localhost" | "::1") || host.starts_with("127.")
        }
    };
    let mut host = BTreeMap::new();
    match dialect {
        Dialect::Mysql => {
            for (key, var) in [
                ("hostname", "hostname"),
                ("os", "version_compile_os"),
                ("machine", "version_compile_machine"),
                ("datadir", "datadir"),
            ] {
                if let Some(v) = variables.get(var) {
                    host.insert(key.to_string(), v.clone());
                }
            }
        }
        Dialect::Postgres => {
            if let Some(v) = variables.get("data_directory") {
                host.insert("data_directory".into(), v.clone());
            }
        }
        Dialect::Sqlite => {
            host.insert("file".into(), transport.address.clone());
        }
    }
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
