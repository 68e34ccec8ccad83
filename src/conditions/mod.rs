//! The conditions of a run, recorded in every result: client host, server (product, version,
//! every variable, counters, replication role), dataset (rows and bytes per table, and the
//! memory that caches it), workload and run. The audit reads these.

mod host;

pub use host::HostFacts;

use crate::db::Dialect;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Conditions {
    pub client: ClientConditions,
    pub server: ServerConditions,
    pub dataset: DatasetConditions,
    pub workload: crate::result::WorkloadRecord,
    pub run: crate::result::RunRecord,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ClientConditions {
    #[serde(flatten)]
    pub host: HostFacts,
    pub fairbench_version: String,
    /// With any password replaced by `***`.
    pub command_line: Vec<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ServerConditions {
    pub product: String,
    pub version: String,
    /// MySQL: SHOW GLOBAL VARIABLES; PostgreSQL: pg_settings (`setting unit`); SQLite: PRAGMAs.
    pub variables: BTreeMap<String, String>,
    /// Counters just before the first measured event and just after the last (MySQL SHOW
    /// GLOBAL STATUS; PostgreSQL pg_stat_database, pg_stat_bgwriter, pg_stat_wal; SQLite
    /// page counts); `status_delta` = after - before, non-zero entries only.
    pub status_before: BTreeMap<String, i64>,
    pub status_after: BTreeMap<String, i64>,
    pub status_delta: BTreeMap<String, i64>,
    /// `primary`, `replica`, `standalone` or `embedded`, with what it was read from.
    pub replication_role: String,
    /// Whether the server runs on the client's host (loopback, socket or embedded): then the
    /// client's host facts are the server's too.
    pub same_host_as_client: bool,
    /// Facts about its host the server itself exposes (hostname, OS, machine).
    pub host: BTreeMap<String, String>,
}

impl ServerConditions {
    pub fn set_status(&mut self, before: BTreeMap<String, i64>, after: BTreeMap<String, i64>) {
        self.status_delta = after
            .iter()
            .filter_map(|(k, a)| {
                let b = before.get(k)?;
                (a != b).then(|| (k.clone(), a - b))
            })
            .collect();
        self.status_before = before;
        self.status_after = after;
    }
}

/// One table's size, as the database reports it.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct TableSize {
    pub name: String,
    pub rows: u64,
    /// false: the database's estimate (InnoDB statistics, pg_class.reltuples).
    pub rows_exact: bool,
    pub data_bytes: u64,
    pub index_bytes: u64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DatasetConditions {
    /// Rows each table should have (0 for oltp_insert --auto-inc=off, as sysbench).
    pub declared_rows_per_table: u64,
    pub tables_at_start: Vec<TableSize>,
    pub tables_at_end: Vec<TableSize>,
    /// Data + index bytes of all tables at start.
    pub total_bytes: u64,
    /// The memory that caches the data: innodb_buffer_pool_size; shared_buffers and
    /// effective_cache_size; SQLite's cache_size. Bytes.
    pub cache: BTreeMap<String, u64>,
    /// RAM of the server's host when known (same host as the client), else null.
    pub server_host_memory_bytes: Option<u64>,
}

/// Parses `123`, `128MB`, `16384 8kB` (pg_settings setting + unit) to bytes.
pub fn parse_bytes(value: &str) -> Option<u64> {
    let v = value.trim();
    let (num, unit) = match v.split_once(' ') {
        Some((n, u)) => (n, u),
        None => {
            let split = v.find(|c: char| !c.is_ascii_digit() && c != '-').unwrap_or(v.len());
            (&v[..split], &v[split..])
        }
    };
    let n: i64 = num.parse().ok()?;
    let unit_bytes: i64 = match unit.trim() {
        "" | "B" => 1,
        "kB" | "K" | "KB" => 1024,
        "8kB" => 8192,
        "16kB" => 16384,
        "MB" | "M" => 1 << 20,
        "GB" | "G" => 1 << 30,
        "TB" | "T" => 1 << 40,
        _ => return None,
    };
    u64::try_from(n.checked_mul(unit_bytes)?).ok()
}

/// The memory that caches table data, by name, from the server's variables.
pub fn cache_memory(dialect: Dialect, vars: &BTreeMap<String, String>) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    let mut take = |name: &str| {
        if let Some(b) = vars.get(name).and_then(|v| parse_bytes(v)) {
            out.insert(name.to_string(), b);
        }
    };
    match dialect {
        Dialect::Mysql => take("innodb_buffer_pool_size"),
        Dialect::Postgres => {
            take("shared_buffers");
            take("effective_cache_size");
        }
        Dialect::Sqlite => {
            // cache_size < 0 is KiB; > 0 is pages (per connection).
            let page = vars.get("page_size").and_then(|v| v.parse::<i64>().ok()).unwrap_or(4096);
            if let Some(c) = vars.get("cache_size").and_then(|v| v.parse::<i64>().ok()) {
                let bytes = if c < 0 { -c * 1024 } else { c * page };
                out.insert("cache_size".to_string(), bytes as u64);
            }
        }
    }
    out
}

/// Reads what the server says about itself before a run (counters come later).
pub async fn server<C: crate::db::Connection>(
    conn: &mut C,
    dialect: Dialect,
    transport: &crate::db::Transport,
    info: crate::db::ServerInfo,
) -> Result<ServerConditions, crate::db::DbError> {
    let variables = conn.variables().await?;
    let replication_role = conn.replication_role().await?;
    let same_host_as_client = match transport.kind {
        crate::db::TransportKind::Embedded | crate::db::TransportKind::Socket => true,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_in_server_spellings() {
        assert_eq!(parse_bytes("134217728"), Some(134_217_728));
        assert_eq!(parse_bytes("16384 8kB"), Some(16384 * 8192));
        assert_eq!(parse_bytes("4GB"), Some(4 << 30));
        assert_eq!(parse_bytes("on"), None);
    }

    #[test]
    fn sqlite_cache_size_negative_is_kib() {
        let vars = BTreeMap::from([("cache_size".to_string(), "-2000".to_string())]);
        assert_eq!(cache_memory(Dialect::Sqlite, &vars)["cache_size"], 2_048_000);
    }
}
