//! PostgreSQL and compatible services over tokio-postgres (extended protocol, statements
//! prepared once per connection; `?` placeholders become `$n`). With `prepared_statements`
//! off, plain text queries: each statement is prepared once to learn its parameter and
//! column types, and only that description is kept (the server's statement is closed);
//! executions go over the simple query protocol with the parameters rendered as literals
//! (text_sql.rs), and the first row's text is read back typed by the column types.

use super::cleartext_guard::CleartextGuard;
use super::ddl::{Generated, Spelling};
use super::text_sql::TextSql;
use super::{
    ConnectOptions, Connection, Database, DbError, Dialect, Executed, Param, ServerInfo, TableInfo, TargetUrl,
    Transport, Value,
};
use crate::model::{SbtestShape, TableDef, TableSize};
use futures_util::StreamExt as _;
use std::collections::BTreeMap;
use std::error::Error as _;
use tokio_postgres::types::Type;
use tokio_postgres::{Client, Config, NoTls, SimpleQueryMessage, Statement};
use values::{text_value, Captured, PgParam};

mod values;

pub struct PostgresDatabase {
    config: Config,
    tls: Option<rustls::ClientConfig>,
    target: TargetUrl,
    options: ConnectOptions,
}

impl PostgresDatabase {
    pub fn new(target: &TargetUrl, options: &ConnectOptions) -> Result<Self, DbError> {
        let mut config = Config::new();
        config.user(&target.user).dbname(&target.database).port(target.port).application_name("fairbench");
        if !target.password.is_empty() {
            config.password(target.password.expose());
        }
        match &target.socket {
            // libpq takes the socket's directory; accept the file path too.
            Some(sock) => {
                let dir = if sock.file_name().is_some_and(|n| n.to_string_lossy().starts_with(".s.PGSQL")) {
                    sock.parent().unwrap_or(sock).to_path_buf()
                } else {
                    sock.clone()
                };
                config.host_path(dir);
            }
            None => {
                config.host(&target.host);
            }
        }
        let tls = super::tls::client_config(target).map_err(|m| DbError::client(super::ClientFault::Tls, m))?;
        if tls.is_some() {
            config.ssl_mode(tokio_postgres::config::SslMode::Require);
        }
        Ok(PostgresDatabase { config, tls, target: target.clone(), options: options.clone() })
    }

    /// Plain TCP with a password the user did not allow in clear: through the guard.
    fn guarded(&self) -> bool {
        self.tls.is_none()
            && self.target.socket.is_none()
            && !self.target.password.is_empty()
            && !self.options.allow_cleartext_password
    }

    async fn connect_client(&self) -> Result<Client, DbError> {
        let t = &self.target;
        if self.guarded() {
            let stream = tokio::net::TcpStream::connect((t.host.as_str(), t.port))
                .await
                .map_err(|e| DbError::lost(format!("connection lost: {e}")))?;
            let _ = stream.set_nodelay(true);
            let (guard, refused) = CleartextGuard::new(stream);
            return match self.config.connect_raw(guard, NoTls).await {
                Ok((client, conn)) => {
                    drive(conn);
                    Ok(client)
                }
                Err(_) if refused.load(std::sync::atomic::Ordering::Relaxed) => Err(DbError::client(
                    super::ClientFault::Tls,
                    "the server asked for the password in clear over unencrypted TCP; refused \
                     (use ?tls=require, a Unix socket, or --allow-cleartext-password)",
                )),
                Err(e) => Err(error(e)),
            };
        }
        match &self.tls {
            None => {
                let (client, conn) = self.config.connect(NoTls).await.map_err(error)?;
                drive(conn);
                Ok(client)
            }
            Some(tls) => {
                let make = tokio_postgres_rustls::MakeRustlsConnect::new(tls.clone());
                let (client, conn) = self.config.connect(make).await.map_err(error)?;
                drive(conn);
                Ok(client)
            }
        }
    }
}

impl Database for PostgresDatabase {
    fn server_facts(&self, product: &str, variables: &BTreeMap<String, String>) -> crate::model::ServerFacts {
        crate::db::facts::postgres::facts(product, variables)
    }

    fn data_caches(&self, variables: &BTreeMap<String, String>, os_available: Option<u64>) -> BTreeMap<String, u64> {
        crate::db::facts::postgres::data_caches(variables, os_available)
    }

    type Conn = PostgresConnection;

    async fn connect(&self) -> Result<PostgresConnection, DbError> {
        let limit = self.options.connect_timeout;
        let client = match tokio::time::timeout(limit, self.connect_client()).await {
            Ok(client) => client.map_err(|e| connect_error(e, &self.target))?,
            Err(_) => {
                let e = DbError::timeout(format!(
                    "no complete connection within {} s (is this a PostgreSQL server? --connect-timeout raises the limit)",
                    limit.as_secs_f64()
                ));
                return Err(connect_error(e, &self.target));
            }
        };
        let text = (!self.options.prepared_statements).then(TextMode::default);
        Ok(PostgresConnection { client, statements: Vec::new(), text })
    }

    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn create_table_sql(&self, t: &TableDef, comment: &str) -> Vec<String> {
        const SPELLING: Spelling = Spelling {
            double: "DOUBLE PRECISION",
            decimal: "NUMERIC",
            blob: "BYTEA",
            generated: Generated::After("GENERATED BY DEFAULT AS IDENTITY"),
        };
        let mut v = vec![format!("CREATE TABLE {}{}", t.name, super::ddl::body(t, &SPELLING))];
        v.extend(self.comment_sql(&t.name, comment));
        v
    }

    fn comment_sql(&self, table: &str, comment: &str) -> Option<String> {
        Some(format!("COMMENT ON TABLE {table} IS '{comment}'"))
    }

    fn sbtest_create_sql(&self, n: u32, shape: &SbtestShape, comment: &str) -> Vec<String> {
        let id = if shape.auto_inc { "SERIAL" } else { "INTEGER NOT NULL" };
        // PostgreSQL has no inline KEY: --secondary becomes a separate index.
        let pk = if shape.secondary { String::new() } else { ",\n  PRIMARY KEY (id)".into() };
        let mut v = vec![
            format!(
                "CREATE TABLE sbtest{n}(\n  id {id},\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL{pk}\n)"
            ),
            format!("COMMENT ON TABLE sbtest{n} IS '{comment}'"),
        ];
        if shape.secondary {
            v.push(format!("CREATE INDEX xid_{n} ON sbtest{n}(id)"));
        }
        v
    }

    fn after_load_sql(&self, t: &TableDef) -> Vec<String> {
        // Loaded ids do not advance the identity: start it after the largest.
        t.columns
            .iter()
            .filter(|c| c.generated)
            .map(|c| {
                format!(
                    "SELECT setval(pg_get_serial_sequence('{t}', '{c}'), COALESCE(MAX({c}), 0) + 1, false) FROM {t}",
                    t = t.name,
                    c = c.name
                )
            })
            .collect()
    }

    fn analyze_sql(&self, table: &str) -> Option<String> {
        Some(format!("ANALYZE {table}"))
    }

    fn host_facts(&self, variables: &BTreeMap<String, String>) -> BTreeMap<String, String> {
        variables.get("data_directory").map(|v| ("data_directory".to_string(), v.clone())).into_iter().collect()
    }

    fn transport(&self) -> Transport {
        self.target.network_transport()
    }
}

pub struct PostgresConnection {
    client: Client,
    statements: Vec<Statement>,
    /// Plain text queries (`prepared_statements` off); None: prepared statements.
    text: Option<TextMode>,
}

/// The statements as described by the server (index = handle), and the buffer every
/// execution renders into.
#[derive(Default)]
struct TextMode {
    statements: Vec<TextStatement>,
    sql: String,
}

struct TextStatement {
    sql: TextSql,
    /// Names and types of the columns it returns.
    columns: Vec<(String, Type)>,
}

/// `?` to `$1, $2, ...` (the workload SQL has no `?` inside literals).
fn numbered_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut n = 0;
    for ch in sql.chars() {
        if ch == '?' {
            n += 1;
            out.push('$');
            out.push_str(&n.to_string());
        } else {
            out.push(ch);
        }
    }
    out
}

impl PostgresConnection {
    /// A plain text query: `stmt`'s SQL with `params` as literals, over the simple query
    /// protocol; the count from the command tag as for prepared statements.
    async fn execute_text(
        &mut self,
        stmt: usize,
        params: &[Param<'_>],
        mut row: Option<&mut Vec<Value>>,
    ) -> Result<Executed, DbError> {
        let Some(text) = self.text.as_mut() else { return Err(DbError::no_statement(stmt)) };
        let st = text.statements.get(stmt).ok_or_else(|| DbError::no_statement(stmt))?;
        st.sql.render(params, &mut text.sql)?;
        if let Some(out) = row.as_deref_mut() {
            out.clear();
        }
        let stream = self.client.simple_query_raw(&text.sql).await.map_err(error)?;
        let mut stream = std::pin::pin!(stream);
        let (mut count, mut first) = (0, true);
        while let Some(m) = stream.next().await {
            match m.map_err(error)? {
                SimpleQueryMessage::Row(r) if first => {
                    first = false;
                    let Some(out) = row.as_deref_mut() else { continue };
                    for i in 0..r.len() {
                        let v = r.try_get(i).map_err(error)?;
                        let (name, ty) = st.columns.get(i).map_or(("?", &Type::TEXT), |(n, t)| (n.as_str(), t));
                        let v = text_value(v, ty)
                            .map_err(|e| DbError::client(super::ClientFault::Other, format!("column {name}: {e}")))?;
                        out.push(v);
                    }
                }
                SimpleQueryMessage::CommandComplete(n) => count += n,
                _ => {}
            }
        }
        Ok(if st.columns.is_empty() {
            Executed { affected_rows: count, ..Executed::default() }
        } else {
            Executed { rows: count, ..Executed::default() }
        })
    }

    /// The prepared statement `stmt`, checked to take `params`.
    fn statement(&self, stmt: usize, params: &[Param<'_>]) -> Result<&Statement, DbError> {
        let st = self.statements.get(stmt).ok_or_else(|| DbError::no_statement(stmt))?;
        if st.params().len() != params.len() {
            return Err(DbError::arity(st.params().len(), params.len()));
        }
        Ok(st)
    }
}

/// Drives a connection's I/O on the local task set until the client is dropped.
fn drive<F: std::future::Future + 'static>(connection: F) {
    tokio::task::spawn_local(async move {
        let _ = connection.await;
    });
}

impl Connection for PostgresConnection {
    async fn prepare(&mut self, sql: &str) -> Result<usize, DbError> {
        let Some(text) = self.text.as_mut() else {
            let stmt = self.client.prepare(&numbered_placeholders(sql)).await.map_err(error)?;
            self.statements.push(stmt);
            return Ok(self.statements.len() - 1);
        };
        // Plain text queries: the server's description is kept, its statement closed (on drop).
        let template = TextSql::new(Dialect::Postgres, sql);
        let described = self.client.prepare(&template.numbered()).await.map_err(error)?;
        template.check_count(described.params().len())?;
        let columns = described.columns().iter().map(|c| (c.name().to_string(), c.type_().clone())).collect();
        text.statements.push(TextStatement { sql: template, columns });
        Ok(text.statements.len() - 1)
    }

    async fn execute(&mut self, stmt: usize, params: &[Param<'_>]) -> Result<Executed, DbError> {
        if self.text.is_some() {
            return self.execute_text(stmt, params, None).await;
        }
        let st = self.statement(stmt, params)?;
        let n = self.client.execute_raw(st, params.iter().map(|p| PgParam(*p))).await.map_err(error)?;
        // The command tag's count: rows returned by a query, rows changed otherwise.
        Ok(if st.columns().is_empty() {
            Executed { affected_rows: n, ..Executed::default() }
        } else {
            Executed { rows: n, ..Executed::default() }
        })
    }

    async fn columns(&mut self, stmt: usize) -> Result<Vec<String>, DbError> {
        if let Some(text) = &self.text {
            let st = text.statements.get(stmt).ok_or_else(|| DbError::no_statement(stmt))?;
            return Ok(st.columns.iter().map(|(name, _)| name.clone()).collect());
        }
        let st = self.statements.get(stmt).ok_or_else(|| DbError::no_statement(stmt))?;
        Ok(st.columns().iter().map(|c| c.name().to_string()).collect())
    }

    async fn execute_row(
        &mut self,
        stmt: usize,
        params: &[Param<'_>],
        row: &mut Vec<Value>,
    ) -> Result<Executed, DbError> {
        if self.text.is_some() {
            return self.execute_text(stmt, params, Some(row)).await;
        }
        let st = self.statement(stmt, params)?;
        row.clear();
        let stream = self.client.query_raw(st, params.iter().map(|p| PgParam(*p))).await.map_err(error)?;
        let mut stream = std::pin::pin!(stream);
        let mut done = Executed::default();
        while let Some(r) = stream.next().await {
            let r = r.map_err(error)?;
            if done.rows == 0 {
                for i in 0..r.len() {
                    let v: Captured = r.try_get(i).map_err(|e| {
                        DbError::client(
                            super::ClientFault::Other,
                            format!("column {}: {}", r.columns()[i].name(), error_text(&e)),
                        )
                    })?;
                    row.push(v.0);
                }
            }
            done.rows += 1;
        }
        if st.columns().is_empty() {
            done.affected_rows = stream.rows_affected().unwrap_or(0);
        }
        Ok(done)
    }

    async fn simple(&mut self, sql: &str) -> Result<(), DbError> {
        self.client.batch_execute(sql).await.map_err(error)
    }

    async fn try_exclusive_lock(&mut self) -> Result<bool, DbError> {
        // Advisory locks are per database: two prepares of one database exclude each other.
        let row = self
            .client
            .query_one("SELECT pg_try_advisory_lock(hashtext('fairbench.prepare'))", &[])
            .await
            .map_err(error)?;
        Ok(row.get::<_, bool>(0))
    }

    async fn tables(&mut self, prefix: &str) -> Result<Vec<TableInfo>, DbError> {
        let rows = self
            .client
            .query(
                "SELECT c.relname::text, coalesce(obj_description(c.oid, 'pg_class'), '') \
                 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
                 WHERE c.relkind IN ('r', 'p') AND n.nspname = current_schema() AND c.relname LIKE $1",
                &[&format!("{prefix}%")],
            )
            .await
            .map_err(error)?;
        Ok(rows.iter().map(|r| TableInfo { name: r.get(0), definition: r.get(1) }).collect())
    }

    async fn server_info(&mut self) -> Result<ServerInfo, DbError> {
        let row =
            self.client.query_one("SELECT version(), current_setting('server_version')", &[]).await.map_err(error)?;
        let full: String = row.get(0);
        let product = if full.contains("CockroachDB") { "CockroachDB" } else { "PostgreSQL" };
        Ok(ServerInfo { product: product.into(), version: row.get(1) })
    }

    async fn status_counters(&mut self) -> Result<BTreeMap<String, i64>, DbError> {
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
        let select: Vec<String> = COLUMNS.iter().map(|c| format!("coalesce({c}, 0)::int8")).collect();
        let sql = format!("SELECT {} FROM pg_stat_database WHERE datname = current_database()", select.join(", "));
        let row = self.client.query_one(&sql, &[]).await.map_err(error)?;
        let mut out: BTreeMap<String, i64> =
            COLUMNS.iter().enumerate().map(|(i, c)| (c.to_string(), row.get::<_, i64>(i))).collect();
        // Views differ across versions (pg_stat_wal 14+, pg_stat_checkpointer 17+): read
        // whichever exist, every numeric column, prefixed by the view.
        for view in ["pg_stat_bgwriter", "pg_stat_wal", "pg_stat_checkpointer"] {
            let sql = format!("SELECT row_to_json(v)::text FROM {view} v");
            let Ok(rows) = self.client.query(&sql, &[]).await else { continue };
            let Some(json) = rows.first().map(|r| r.get::<_, String>(0)) else { continue };
            if let Ok(serde_json::Value::Object(map)) = serde_json::from_str(&json) {
                let prefix = view.trim_start_matches("pg_stat_");
                for (k, v) in map {
                    if let Some(n) = v.as_i64() {
                        out.insert(format!("{prefix}.{k}"), n);
                    }
                }
            }
        }
        Ok(out)
    }

    async fn variables(&mut self) -> Result<BTreeMap<String, String>, DbError> {
        let rows = self
            .client
            .query("SELECT name, coalesce(setting, ''), coalesce(unit, '') FROM pg_settings", &[])
            .await
            .map_err(error)?;
        Ok(rows
            .iter()
            .map(|r| {
                let (setting, unit): (String, String) = (r.get(1), r.get(2));
                (r.get(0), if unit.is_empty() { setting } else { format!("{setting} {unit}") })
            })
            .collect())
    }

    async fn replication_role(&mut self) -> Result<String, DbError> {
        let row = self
            .client
            .query_one("SELECT pg_is_in_recovery(), (SELECT count(*) FROM pg_stat_replication)", &[])
            .await
            .map_err(error)?;
        let (recovery, replicas): (bool, i64) = (row.get(0), row.get(1));
        Ok(match (recovery, replicas) {
            (true, _) => "replica (pg_is_in_recovery)".into(),
            (false, 0) => "standalone (no replica connected)".into(),
            (false, n) => format!("primary ({n} replica(s) in pg_stat_replication)"),
        })
    }

    async fn table_sizes(&mut self, tables: &[String], declared_rows: u64) -> Result<Vec<TableSize>, DbError> {
        let names: Vec<&str> = tables.iter().map(String::as_str).collect();
        let rows = self
            .client
            .query(
                "SELECT c.relname::text, c.reltuples::int8, pg_table_size(c.oid), pg_indexes_size(c.oid) \
                 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
                 WHERE n.nspname = current_schema() AND c.relname = ANY($1) ORDER BY 1",
                &[&names],
            )
            .await
            .map_err(error)?;
        let mut out = Vec::new();
        for r in rows {
            let estimate: i64 = r.get(1); // -1: never analyzed
            let mut size = TableSize {
                name: r.get(0),
                rows: estimate.max(0) as u64,
                rows_exact: false,
                data_bytes: r.get::<_, i64>(2) as u64,
                index_bytes: r.get::<_, i64>(3) as u64,
            };
            // reltuples lags behind deletes until the next ANALYZE: count when it is cheap
            // (up to a million rows) or when the estimate looks wrong.
            if declared_rows <= 1_000_000 || estimate < 0 || size.rows < declared_rows / 2 {
                let bound = declared_rows.max(1_000_000);
                let sql = format!("SELECT count(*) FROM (SELECT 1 FROM {} LIMIT {bound}) t", size.name);
                size.rows = self.client.query_one(&sql, &[]).await.map_err(error)?.get::<_, i64>(0) as u64;
                size.rows_exact = size.rows < bound;
            }
            out.push(size);
        }
        Ok(out)
    }
}

/// An error's innermost message (tokio-postgres wraps conversion errors).
fn error_text(e: &tokio_postgres::Error) -> String {
    e.source().map(|s| s.to_string()).unwrap_or_else(|| e.to_string())
}

fn error(e: tokio_postgres::Error) -> DbError {
    if let Some(db) = e.as_db_error() {
        return DbError::sqlstate(db.code().code(), db.message());
    }
    if e.is_closed() {
        return DbError::lost("connection closed by the server");
    }
    let detail = e.source().map(|s| s.to_string()).unwrap_or_else(|| e.to_string());
    DbError::lost(format!("connection lost: {detail}"))
}

fn connect_error(mut err: DbError, t: &TargetUrl) -> DbError {
    let at = match &t.socket {
        Some(s) => format!("socket {}", s.display()),
        None => format!("{}:{}", t.host, t.port),
    };
    let sqlstate = match &err.code {
        super::ErrorCode::Sqlstate(s) => s.as_str(),
        _ => "",
    };
    err.message = match sqlstate {
        "28P01" | "28000" => format!(
            "authentication failed for user '{}' at {at}: check the user and password (URL, --password-file, FAIRBENCH_PASSWORD or PGPASSWORD)",
            t.user
        ),
        "3D000" => format!(
            "database '{}' does not exist at {at}: create it (CREATE DATABASE {}) or name another in --target",
            t.database, t.database
        ),
        _ => {
            // tokio-postgres's words for bytes that are not PostgreSQL's protocol.
            let m = &err.message;
            let foreign = ["unexpected message", "bytes remaining", "invalid message", "unexpected EOF"];
            let hint = if foreign.iter().any(|f| m.contains(f)) { " (is this a PostgreSQL server?)" } else { "" };
            format!(
                "cannot connect to PostgreSQL at {at}: {}{}{hint}",
                m.trim_start_matches("connection lost: "),
                super::unreachable_hint(m)
            )
        }
    };
    err.connection_lost = false;
    err
}

#[cfg(test)]
mod tests {
    #[test]
    fn placeholders_are_numbered() {
        assert_eq!(super::numbered_placeholders("a=? AND b BETWEEN ? AND ?"), "a=$1 AND b BETWEEN $2 AND $3");
    }
}
