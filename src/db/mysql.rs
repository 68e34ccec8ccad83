//! MySQL, MariaDB, Percona and compatible services over mysql_async (binary protocol,
//! server-side prepared statements; BEGIN/COMMIT as text, like sysbench's driver).

use super::{Connection, Database, DbError, Dialect, Param, ServerInfo, TableInfo, TargetUrl, TlsMode, Transport};
use crate::conditions::TableSize;
use crate::workload::schema::MARKER;
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, OptsBuilder, Params, Row, SslOpts, Statement, Value};
use std::collections::BTreeMap;

pub struct MysqlDatabase {
    opts: mysql_async::Opts,
    target: TargetUrl,
}

impl MysqlDatabase {
    pub fn new(target: &TargetUrl) -> Result<Self, DbError> {
        let mut b = OptsBuilder::default()
            .ip_or_hostname(target.host.clone())
            .tcp_port(target.port)
            .user(Some(target.user.clone()))
            .db_name(Some(target.database.clone()))
            // Set explicitly: left unset, mysql_async switches 127.0.0.1 to the Unix socket
            // and runs `SELECT @@...` on connect, which the server would count as a SELECT.
            .prefer_socket(false)
            .max_allowed_packet(Some(16 * 1024 * 1024))
            .wait_timeout(Some(28_800))
            .tcp_nodelay(true)
            .stmt_cache_size(0);
        if !target.password.is_empty() {
            b = b.pass(Some(target.password.expose().to_string()));
        }
        if let Some(sock) = &target.socket {
            b = b.socket(Some(sock.to_string_lossy().into_owned()));
        }
        match target.tls {
            TlsMode::Off => {}
            TlsMode::Require => {
                b = b.ssl_opts(
                    SslOpts::default().with_danger_accept_invalid_certs(true).with_danger_skip_domain_validation(true),
                )
            }
            TlsMode::Verify => {
                let mut ssl = SslOpts::default();
                if let Some(ca) = &target.ca_file {
                    ssl = ssl.with_root_certs(vec![ca.clone().into()]);
                }
                b = b.ssl_opts(ssl);
            }
        }
        Ok(MysqlDatabase { opts: b.into(), target: target.clone() })
    }
}

impl Database for MysqlDatabase {
    type Conn = MysqlConnection;

    async fn connect(&self) -> Result<MysqlConnection, DbError> {
        let conn = Conn::new(self.opts.clone()).await.map_err(|e| connect_error(e, &self.target))?;
        Ok(MysqlConnection { conn, statements: Vec::new() })
    }

    fn dialect(&self) -> Dialect {
        Dialect::Mysql
    }

    fn transport(&self) -> Transport {
        match &self.target.socket {
            Some(s) => Transport { kind: "socket", address: s.display().to_string(), tls: "off" },
            None => Transport {
                kind: "tcp",
                address: format!("{}:{}", self.target.host, self.target.port),
                tls: self.target.tls.name(),
            },
        }
    }
}

pub struct MysqlConnection {
    conn: Conn,
    statements: Vec<Statement>,
}

impl Connection for MysqlConnection {
    async fn prepare(&mut self, sql: &str) -> Result<usize, DbError> {
        let stmt = self.conn.prep(sql).await.map_err(error)?;
        self.statements.push(stmt);
        Ok(self.statements.len() - 1)
    }

    async fn execute(&mut self, stmt: usize, params: &[Param<'_>]) -> Result<(), DbError> {
        let values = params
            .iter()
            .map(|p| match *p {
                Param::Int(i) => Value::Int(i as i64),
                Param::Text(s) => Value::Bytes(s.as_bytes().to_vec()),
            })
            .collect();
        self.conn.exec_drop(&self.statements[stmt], Params::Positional(values)).await.map_err(error)
    }

    async fn simple(&mut self, sql: &str) -> Result<(), DbError> {
        self.conn.query_drop(sql).await.map_err(error)
    }

    async fn tables(&mut self, prefix: &str) -> Result<Vec<TableInfo>, DbError> {
        // SHOW (not SELECT ... information_schema) so Com_select stays the workload's own.
        let rows: Vec<Row> =
            self.conn.query(format!("SHOW TABLE STATUS LIKE '{}%'", prefix.replace('\'', ""))).await.map_err(error)?;
        Ok(rows
            .into_iter()
            .map(|row| {
                let name: String = row.get_opt(0).and_then(|r| r.ok()).unwrap_or_default();
                let comment: String =
                    row.get_opt::<Option<String>, _>("Comment").and_then(|r| r.ok()).flatten().unwrap_or_default();
                TableInfo { created_by_fairbench: comment.contains(MARKER), name }
            })
            .collect())
    }

    async fn server_info(&mut self) -> Result<ServerInfo, DbError> {
        let vars = show_pairs(&mut self.conn, "SHOW GLOBAL VARIABLES LIKE 'version%'").await?;
        let version = vars.get("version").cloned().unwrap_or_default();
        let comment = vars.get("version_comment").cloned().unwrap_or_default();
        let product = if version.contains("MariaDB") {
            "MariaDB"
        } else if comment.contains("Percona") {
            "Percona Server"
        } else if vars.contains_key("aurora_version") {
            "Aurora MySQL"
        } else if version.contains("TiDB") {
            "TiDB"
        } else {
            "MySQL"
        };
        Ok(ServerInfo { product: product.into(), version })
    }

    async fn status_counters(&mut self) -> Result<BTreeMap<String, i64>, DbError> {
        let rows: Vec<(String, Option<String>)> = self.conn.query("SHOW GLOBAL STATUS").await.map_err(error)?;
        Ok(rows.into_iter().filter_map(|(k, v)| v?.parse::<i64>().ok().map(|v| (k, v))).collect())
    }

    async fn variables(&mut self) -> Result<BTreeMap<String, String>, DbError> {
        let rows: Vec<(String, Option<String>)> = self.conn.query("SHOW GLOBAL VARIABLES").await.map_err(error)?;
        Ok(rows.into_iter().map(|(k, v)| (k, v.unwrap_or_default())).collect())
    }

    async fn replication_role(&mut self) -> Result<String, DbError> {
        // SHOW REPLICA STATUS (MySQL 8.0.22+, MariaDB 10.5+), else the older spelling.
        let rows: Vec<Row> = match self.conn.query("SHOW REPLICA STATUS").await {
            Ok(r) => r,
            Err(_) => self.conn.query("SHOW SLAVE STATUS").await.map_err(error)?,
        };
        if !rows.is_empty() {
            return Ok("replica (SHOW REPLICA STATUS has a source)".into());
        }
        let log_bin = show_pairs(&mut self.conn, "SHOW GLOBAL VARIABLES LIKE 'log_bin'").await?;
        Ok(match log_bin.get("log_bin").map(String::as_str) {
            Some("ON") => "primary (binary log on, not a replica)".into(),
            _ => "standalone (no binary log, not a replica)".into(),
        })
    }

    async fn table_sizes(&mut self, tables: &[String], declared_rows: u64) -> Result<Vec<TableSize>, DbError> {
        let rows: Vec<Row> = self.conn.query("SHOW TABLE STATUS LIKE 'sbtest%'").await.map_err(error)?;
        let mut out = Vec::new();
        for row in rows {
            let name: String = row.get_opt(0).and_then(|r| r.ok()).unwrap_or_default();
            if !tables.contains(&name) {
                continue;
            }
            let num = |col: &str| row.get_opt::<Option<u64>, _>(col).and_then(|r| r.ok()).flatten().unwrap_or(0);
            let mut size = TableSize {
                rows: num("Rows"),
                rows_exact: false,
                data_bytes: num("Data_length"),
                index_bytes: num("Index_length"),
                name,
            };
            if size.rows < declared_rows / 2 {
                // The only SELECT fairbench sends outside the workload (before the counters).
                let bound = declared_rows.max(1_000_000);
                let sql = format!("SELECT COUNT(*) FROM (SELECT 1 FROM {} LIMIT {bound}) t", size.name);
                size.rows = self.conn.query_first::<u64, _>(sql).await.map_err(error)?.unwrap_or(0);
                size.rows_exact = size.rows < bound;
            }
            out.push(size);
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }
}

async fn show_pairs(conn: &mut Conn, sql: &str) -> Result<BTreeMap<String, String>, DbError> {
    let rows: Vec<(String, Option<String>)> = conn.query(sql).await.map_err(error)?;
    Ok(rows.into_iter().map(|(k, v)| (k.to_lowercase(), v.unwrap_or_default())).collect())
}

fn error(e: mysql_async::Error) -> DbError {
    match e {
        mysql_async::Error::Server(s) => {
            // 2006/2013 can come back as server errors from proxies.
            let lost = matches!(s.code, 2006 | 2013 | 2055 | 1927 | 4031);
            DbError { code: s.code.to_string(), message: s.message, connection_lost: lost }
        }
        mysql_async::Error::Io(io) => DbError::lost(format!("connection lost: {io}")),
        mysql_async::Error::Driver(mysql_async::DriverError::ConnectionClosed) => {
            DbError::lost("connection closed by the server")
        }
        other => DbError { code: "client".into(), message: other.to_string(), connection_lost: other.is_fatal() },
    }
}

/// Turns connection failures into advice naming the server.
fn connect_error(e: mysql_async::Error, t: &TargetUrl) -> DbError {
    let at = match &t.socket {
        Some(s) => format!("socket {}", s.display()),
        None => format!("{}:{}", t.host, t.port),
    };
    let mut err = error(e);
    err.message = match err.code.as_str() {
        "1045" => {
            format!("access denied for user '{}' at {at}: check the user and password (URL or MYSQL_PWD)", t.user)
        }
        "1049" => format!(
            "database '{}' does not exist at {at}: create it (CREATE DATABASE {}) or name another in --target",
            t.database, t.database
        ),
        _ => format!(
            "cannot connect to MySQL at {at}: {}{}",
            err.message.trim_start_matches("connection lost: "),
            super::unreachable_hint(&err.message)
        ),
    };
    err.connection_lost = false;
    err
}
