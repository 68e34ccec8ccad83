//! What a MySQL/MariaDB node says about its place in a cluster: its role and identity, whether
//! it has received changes it has not applied yet, and the other nodes it names.

use super::mysql::MysqlConnection;
use super::DbError;
use crate::model::ha::RoleReading;

impl MysqlConnection {
    pub(super) async fn role(&mut self) -> Result<RoleReading, DbError> {
        let vars = self
            .pairs(
                "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('read_only', 'super_read_only', 'log_bin', 'wsrep_on', 'port', 'server_id', \
                 'server_uuid', 'hostname', 'bind_address', 'report_host')",
            )
            .await?;
        if vars.get("wsrep_on").is_some_and(|v| v == "ON") {
            let status = self
                .pairs(
                    "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_cluster_status', 'wsrep_ready', \
                     'wsrep_local_state_comment', 'wsrep_cluster_size')",
                )
                .await?;
            let mut role = super::facts::mysql::galera_role(&status);
            (role.node, role.address) = super::facts::mysql::identity(&vars);
            return Ok(role);
        }
        // SHOW REPLICA STATUS (MySQL 8.0.22+, MariaDB 10.5+), else the older spelling. A user
        // without the privilege to see it is told apart from a node that has no source: a
        // writable node whose source cannot be seen has no role that can be told (the error).
        let replicates = match self.rows("SHOW REPLICA STATUS").await {
            Ok(r) => Ok(!r.is_empty()),
            Err(e) if e.connection_lost => return Err(e),
            Err(_) => self.rows("SHOW SLAVE STATUS").await.map(|r| !r.is_empty()),
        };
        super::facts::mysql::role(&vars, replicates)
    }

    pub(super) async fn replay_behind(&mut self) -> Result<Option<bool>, DbError> {
        // MySQL and MariaDB keep these at the same places: the source's log file and the
        // position read (5, 6), and the log file and position executed (9, 21).
        let rows = match self.rows("SHOW REPLICA STATUS").await {
            Ok(rows) => rows,
            Err(e) if e.connection_lost => return Err(e),
            Err(_) => match self.rows("SHOW SLAVE STATUS").await {
                Ok(rows) => rows,
                Err(_) => return Ok(None),
            },
        };
        let Some(r) = rows.first() else { return Ok(Some(false)) };
        let get = |i: usize| r.get(i).cloned().flatten();
        if r.len() < 22 {
            return Ok(None);
        }
        Ok(Some((get(5), get(6)) != (get(9), get(21))))
    }

    pub(super) async fn listed(&mut self) -> Result<Vec<super::ListedNode>, DbError> {
        let mut out = Vec::new();
        // Both spellings keep the source's host and port in columns 1 and 3, and a
        // replica's host and port in columns 1 and 2 (its report_host: empty when unset).
        let listed =
            [("SHOW REPLICA STATUS", "SHOW SLAVE STATUS", 1, 3), ("SHOW REPLICA HOSTS", "SHOW SLAVE HOSTS", 1, 2)];
        for (sql, older, host, port) in listed {
            let rows = match self.rows(sql).await {
                Ok(rows) => rows,
                Err(e) if e.connection_lost => return Err(e),
                Err(_) => self.rows(older).await.unwrap_or_default(),
            };
            for r in rows {
                let get = |i: usize| r.get(i).cloned().flatten().unwrap_or_default();
                if let (h, Ok(p)) = (get(host), get(port).parse::<u16>()) {
                    if !h.is_empty() && p > 0 {
                        out.push(super::ListedNode { host: h, port: p, listed_by: sql });
                    }
                }
            }
        }
        Ok(out)
    }
}
