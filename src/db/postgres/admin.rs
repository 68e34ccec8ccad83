//! Administrative queries (locks, tables, settings, counters, sizes): simple queries read
//! as text, so they run the same over the lean client and tokio-postgres. Not measured.

use super::PostgresConnection;
use crate::db::text_sql::literal;
use crate::db::{ClientFault, Connection, DbError, Dialect, Param, ServerInfo, TableInfo};
use crate::model::ha::{NodeRole, RoleReading};
use crate::model::TableSize;
use std::collections::BTreeMap;

/// A column of a text row: None when absent or NULL.
fn col(row: &[Option<String>], i: usize) -> Option<&str> {
    row.get(i).and_then(|v| v.as_deref())
}

fn text(row: &[Option<String>], i: usize) -> String {
    col(row, i).unwrap_or_default().to_string()
}

fn int(row: &[Option<String>], i: usize) -> Result<i64, DbError> {
    let v = col(row, i).unwrap_or("0");
    v.parse().map_err(|_| DbError::client(ClientFault::Other, format!("the server returned {v:?} for an integer")))
}

fn quoted(s: &str) -> Result<String, DbError> {
    let mut out = String::new();
    literal(Dialect::Postgres, &Param::Text(s), &mut out)?;
    Ok(out)
}

/// The first row of a query that returns one.
async fn one(c: &mut PostgresConnection, sql: &str) -> Result<Vec<Option<String>>, DbError> {
    let mut rows = c.text_rows(sql).await?;
    if rows.is_empty() {
        return Err(DbError::client(ClientFault::Other, format!("no row from: {sql}")));
    }
    Ok(rows.swap_remove(0))
}

impl PostgresConnection {
    pub(super) async fn try_lock(&mut self) -> Result<bool, DbError> {
        // Advisory locks are per database: two prepares of one database exclude each other.
        let row = one(self, "SELECT pg_try_advisory_lock(hashtext('fairbench.prepare'))").await?;
        Ok(col(&row, 0) == Some("t"))
    }

    pub(super) async fn tables_like(&mut self, prefix: &str) -> Result<Vec<TableInfo>, DbError> {
        let sql = format!(
            "SELECT c.relname::text, coalesce(obj_description(c.oid, 'pg_class'), '') \
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE c.relkind IN ('r', 'p') AND n.nspname = current_schema() AND c.relname LIKE {}",
            quoted(&format!("{prefix}%"))?
        );
        let rows = self.text_rows(&sql).await?;
        Ok(rows.iter().map(|r| TableInfo { name: text(r, 0), definition: text(r, 1) }).collect())
    }

    pub(super) async fn server(&mut self) -> Result<ServerInfo, DbError> {
        let row = one(self, "SELECT version(), current_setting('server_version')").await?;
        let product = if text(&row, 0).contains("CockroachDB") { "CockroachDB" } else { "PostgreSQL" };
        Ok(ServerInfo { product: product.into(), version: text(&row, 1) })
    }

    /// The server's counters in one statement, so that a reading is one transaction
    /// (xact_commit + 1) and never a failed one (xact_rollback): the statistics views differ
    /// across versions (pg_stat_wal 14+, pg_stat_checkpointer 17+), so which exist is read
    /// once per connection. Views' columns are prefixed by the view (`wal.wal_bytes`).
    pub(super) async fn counters(&mut self) -> Result<BTreeMap<String, i64>, DbError> {
        const COLUMNS: [&str; 11] = [
            "xact_commit",
            "xact_rollback",
            "blks_read",
            "blks_hit",
            "tup_returned",
            "tup_fetched",
            "tup_inserted",
            "tup_updated",
            "tup_deleted",
            "conflicts",
            "deadlocks",
        ];
        const VIEWS: [&str; 3] = ["pg_stat_bgwriter", "pg_stat_wal", "pg_stat_checkpointer"];
        let present = match self.stat_views {
            Some(v) => v,
            None => {
                let exists: Vec<String> = VIEWS.iter().map(|v| format!("to_regclass('{v}') IS NOT NULL")).collect();
                let row = one(self, &format!("SELECT {}", exists.join(", "))).await?;
                let v = (0..VIEWS.len()).filter(|i| col(&row, *i) == Some("t")).fold(0u8, |v, i| v | 1 << i);
                *self.stat_views.insert(v)
            }
        };
        let columns: Vec<String> = COLUMNS.iter().map(|c| format!("coalesce({c}, 0)::int8 AS {c}")).collect();
        let mut parts = vec![format!(
            "(SELECT row_to_json(d)::text FROM (SELECT {} FROM pg_stat_database WHERE datname = current_database()) d)",
            columns.join(", ")
        )];
        let views: Vec<&str> =
            VIEWS.iter().enumerate().filter(|(i, _)| present & 1 << i != 0).map(|(_, v)| *v).collect();
        parts.extend(views.iter().map(|v| format!("(SELECT row_to_json(v)::text FROM {v} v)")));
        let row = one(self, &format!("SELECT {}", parts.join(", "))).await?;
        let mut out = BTreeMap::new();
        let prefixes = std::iter::once("").chain(views.iter().map(|v| v.trim_start_matches("pg_stat_")));
        for (i, prefix) in prefixes.enumerate() {
            let Some(json) = col(&row, i) else { continue };
            let Ok(serde_json::Value::Object(map)) = serde_json::from_str(json) else { continue };
            for (k, v) in map {
                let name = if prefix.is_empty() { k } else { format!("{prefix}.{k}") };
                if let Some(n) = v.as_i64().or_else(|| v.as_f64().map(|f| f as i64)) {
                    out.insert(name, n);
                }
            }
        }
        if !COLUMNS.iter().all(|c| out.contains_key(*c)) {
            return Err(DbError::client(ClientFault::Other, "pg_stat_database has no row for this database"));
        }
        Ok(out)
    }

    pub(super) async fn settings(&mut self) -> Result<BTreeMap<String, String>, DbError> {
        let rows = self.text_rows("SELECT name, coalesce(setting, ''), coalesce(unit, '') FROM pg_settings").await?;
        Ok(rows
            .iter()
            .map(|r| {
                let (setting, unit) = (text(r, 1), text(r, 2));
                (text(r, 0), if unit.is_empty() { setting } else { format!("{setting} {unit}") })
            })
            .collect())
    }

    pub(super) async fn role(&mut self) -> Result<RoleReading, DbError> {
        let row = one(
            self,
            "SELECT pg_is_in_recovery(), current_setting('default_transaction_read_only'), \
             (SELECT count(*) FROM pg_stat_replication), current_setting('port'), \
             coalesce(host(inet_server_addr()), 'local'), \
             (SELECT system_identifier FROM pg_control_system())::text, \
             (SELECT setting FROM pg_settings WHERE name = 'data_directory')",
        )
        .await?;
        let (role, evidence) = match (col(&row, 0) == Some("t"), col(&row, 1) == Some("on"), int(&row, 2)?) {
            (true, _, _) => (NodeRole::Replica, "pg_is_in_recovery".to_string()),
            (false, true, _) => (NodeRole::ReadOnly, "default_transaction_read_only=on, not in recovery".into()),
            (false, false, 0) => (NodeRole::Standalone, "not in recovery, no replica connected".into()),
            (false, false, n) => (NodeRole::Primary, format!("not in recovery, {n} replica(s) in pg_stat_replication")),
        };
        let (node, address) = identity(&row);
        Ok(RoleReading { role, evidence, node, address })
    }

    /// A standby whose received WAL is ahead of what it has replayed (a promoted node
    /// replays what it received before it takes writes; a primary has nothing to replay).
    pub(super) async fn replay_behind(&mut self) -> Result<bool, DbError> {
        let row = one(
            self,
            "SELECT pg_is_in_recovery() AND coalesce(pg_last_wal_receive_lsn() > pg_last_wal_replay_lsn(), false)",
        )
        .await?;
        Ok(col(&row, 0) == Some("t"))
    }

    /// A standby's source (`pg_stat_wal_receiver`) and a primary's streaming replicas
    /// (`pg_stat_replication`, at this server's port: it does not say theirs). Both hide
    /// their addresses from users without pg_read_all_stats: then none.
    pub(super) async fn listed(&mut self) -> Result<Vec<crate::db::ListedNode>, DbError> {
        let sql = "SELECT sender_host, sender_port::text, 'pg_stat_wal_receiver' FROM pg_stat_wal_receiver \
                   WHERE sender_host IS NOT NULL AND sender_host NOT LIKE '/%' \
                   UNION ALL SELECT host(client_addr), current_setting('port'), 'pg_stat_replication' \
                   FROM pg_stat_replication WHERE client_addr IS NOT NULL";
        let rows = self.text_rows(sql).await?;
        let by = |r: &[Option<String>]| {
            if col(r, 2) == Some("pg_stat_replication") {
                // It names a replica's address, not its port: this server's port is a guess.
                "pg_stat_replication: its address, this server's port"
            } else {
                "pg_stat_wal_receiver"
            }
        };
        Ok(rows
            .iter()
            .filter_map(|r| {
                let port = col(r, 1)?.parse().ok()?;
                Some(crate::db::ListedNode { host: col(r, 0)?.to_string(), port, listed_by: by(r) })
            })
            .collect())
    }

    pub(super) async fn sizes(&mut self, tables: &[String], declared_rows: u64) -> Result<Vec<TableSize>, DbError> {
        if tables.is_empty() {
            return Ok(Vec::new());
        }
        let names = tables.iter().map(|t| quoted(t)).collect::<Result<Vec<_>, _>>()?;
        let sql = format!(
            "SELECT c.relname::text, c.reltuples::int8, pg_table_size(c.oid), pg_indexes_size(c.oid) \
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE n.nspname = current_schema() AND c.relname IN ({}) ORDER BY 1",
            names.join(", ")
        );
        let mut out = Vec::new();
        for r in self.text_rows(&sql).await? {
            let estimate = int(&r, 1)?; // -1: never analyzed
            let mut size = TableSize {
                name: text(&r, 0),
                rows: estimate.max(0) as u64,
                rows_exact: false,
                data_bytes: int(&r, 2)? as u64,
                index_bytes: int(&r, 3)? as u64,
            };
            // reltuples lags behind deletes until the next ANALYZE: count when it is cheap
            // (up to a million rows) or when the estimate looks wrong.
            if declared_rows <= 1_000_000 || estimate < 0 || size.rows < declared_rows / 2 {
                let bound = declared_rows.max(1_000_000);
                let sql = format!("SELECT count(*) FROM (SELECT 1 FROM {} LIMIT {bound}) t", size.name);
                size.rows = int(&one(self, &sql).await?, 0)? as u64;
                size.rows_exact = size.rows < bound;
            }
            out.push(size);
        }
        Ok(out)
    }
}

/// A PostgreSQL server's own identity from the role query's columns 3-5. Physical replicas
/// share the system identifier and Patroni members share `cluster_name` and often the port,
/// so the address the server accepted this connection on goes with them (through a proxy,
/// the node's own address). Not the data directory: only some users may read it, and a
/// key must not change with the user who reads it (`probe verify` may use another).
fn identity(row: &[Option<String>]) -> (String, String) {
    let address = format!("{}:{}", text(row, 4), text(row, 3));
    (format!("{address} system {}", col(row, 5).unwrap_or("?")), address)
}
