//! MySQL, MariaDB, Percona and compatible services: server-side prepared statements over
//! the binary protocol, BEGIN/COMMIT as text (like sysbench's driver). Plain TCP and socket
//! connections use fairbench's lean protocol client (mysql_wire.rs); TLS and the
//! authentication it does not speak go through mysql_async. With
//! `prepared_statements` off, statements are plain text queries (COM_QUERY, parameters
//! rendered as literals by text_sql.rs): each is prepared once at `prepare`, to learn its
//! parameters and columns, and closed at once.

use super::ddl::{Generated, Spelling};
use super::mysql_connect::describe_connect_error;
use super::mysql_wire::{text_value, ColumnFormat, ConnectError, LoadOutcome, WireConn, WireLimits};
use super::text_sql::TextSql;
use super::{
    ConnectOptions, Connection, Database, DbError, Dialect, Executed, KeptRow, Param, RowPick, RowSource, ServerInfo,
    TableInfo, TargetUrl, TlsMode, Transport, Value as FbValue,
};
use crate::model::ha::RoleReading;
use crate::model::{SbtestShape, TableDef, TableSize};
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Params, Row, Statement, Value};
use std::collections::BTreeMap;
use tokio::net::{TcpStream, UnixStream};

pub struct MysqlDatabase {
    opts: mysql_async::Opts,
    /// `?tls=prefer`: the options without TLS, for a server that offers none.
    plain: Option<mysql_async::Opts>,
    target: TargetUrl,
    options: ConnectOptions,
}

impl MysqlDatabase {
    pub fn new(target: &TargetUrl, options: &ConnectOptions) -> Result<Self, DbError> {
        let opts = super::mysql_connect::opts(target, options, target.tls);
        // `prefer` and a server that offers no TLS, with an authentication only mysql_async speaks.
        let plain = (target.tls == TlsMode::Prefer).then(|| super::mysql_connect::opts(target, options, TlsMode::Off));
        Ok(MysqlDatabase { opts, plain, target: target.clone(), options: options.clone() })
    }
}

impl Database for MysqlDatabase {
    fn open(url: &TargetUrl, options: &ConnectOptions) -> Result<Self, DbError> {
        Self::new(url, options)
    }

    fn clock_sql(&self) -> crate::db::ProbeSql {
        crate::db::ProbeSql {
            now_text: "CAST(NOW(6) AS CHAR)",
            session_id: "CONNECTION_ID()",
            epoch_us: "CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000 AS SIGNED)",
        }
    }

    fn server_facts(&self, product: &str, variables: &BTreeMap<String, String>) -> crate::model::ServerFacts {
        crate::db::facts::mysql::facts(product, variables)
    }

    fn data_caches(&self, variables: &BTreeMap<String, String>, os_available: Option<u64>) -> BTreeMap<String, u64> {
        crate::db::facts::mysql::data_caches(variables, os_available)
    }

    type Conn = MysqlConnection;

    async fn connect(&self) -> Result<MysqlConnection, DbError> {
        let t = &self.target;
        let limit = self.options.connect_timeout;
        let timed_out = || {
            DbError::timeout(format!(
                "no complete handshake within {} s (is this a MySQL server? --connect-timeout raises the limit)",
                limit.as_secs_f64()
            ))
        };
        let mut opts = &self.opts;
        if matches!(t.tls, TlsMode::Off | TlsMode::Prefer) {
            let lean =
                tokio::time::timeout(limit, self.connect_lean()).await.unwrap_or_else(|_| Err(timed_out().into()));
            match lean {
                Ok(inner) => return Ok(MysqlConnection { inner, text: self.text_mode() }),
                Err(ConnectError::Db(e)) => return Err(describe_connect_error(e, t)),
                // mysql_async below: with TLS when the server offers it under `prefer`.
                Err(ConnectError::TlsOffered) => {}
                Err(ConnectError::Unsupported) => opts = self.plain.as_ref().unwrap_or(&self.opts),
            }
        }
        let conn = match tokio::time::timeout(limit, Conn::new(opts.clone())).await {
            Ok(conn) => conn.map_err(|e| describe_connect_error(error(e), t))?,
            Err(_) => return Err(describe_connect_error(timed_out(), t)),
        };
        Ok(MysqlConnection { inner: Inner::Async { conn, statements: Vec::new() }, text: self.text_mode() })
    }

    fn dialect(&self) -> Dialect {
        Dialect::Mysql
    }

    fn create_table_sql(&self, t: &TableDef, comment: &str) -> Vec<String> {
        const SPELLING: Spelling = Spelling {
            double: "DOUBLE",
            decimal: "DECIMAL",
            blob: "LONGBLOB",
            timestamp: "DATETIME(6)",
            generated: Generated::After("NOT NULL AUTO_INCREMENT"),
        };
        vec![format!("CREATE TABLE {}{} COMMENT='{comment}'", t.name, super::ddl::body(t, &SPELLING))]
    }

    fn comment_sql(&self, table: &str, comment: &str) -> Option<String> {
        Some(format!("ALTER TABLE {table} COMMENT='{comment}'"))
    }

    fn sbtest_create_sql(&self, n: u32, shape: &SbtestShape, comment: &str) -> Vec<String> {
        let key = if shape.secondary { "KEY xid" } else { "PRIMARY KEY" };
        let id = if shape.auto_inc { "INTEGER NOT NULL AUTO_INCREMENT" } else { "INTEGER NOT NULL" };
        vec![format!(
            "CREATE TABLE sbtest{n}(\n  id {id},\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  {key} (id)\n) /*! ENGINE = {} */ COMMENT='{comment}'",
            shape.engine
        )]
    }

    fn host_facts(&self, variables: &BTreeMap<String, String>) -> BTreeMap<String, String> {
        let names = [
            ("hostname", "hostname"),
            ("os", "version_compile_os"),
            ("machine", "version_compile_machine"),
            ("datadir", "datadir"),
        ];
        names.iter().filter_map(|(key, var)| variables.get(*var).map(|v| (key.to_string(), v.clone()))).collect()
    }

    fn transport(&self) -> Transport {
        self.target.network_transport()
    }
}

impl MysqlDatabase {
    fn text_mode(&self) -> Option<TextMode> {
        (!self.options.prepared_statements).then(TextMode::default)
    }

    async fn connect_lean(&self) -> Result<Inner, ConnectError> {
        let t = &self.target;
        let (user, password, db) = (&t.user, t.password.expose(), &t.database);
        let limits = WireLimits {
            max_packet: self.options.max_packet,
            local_infile: self.options.local_infile,
            prefer_tls: t.tls == TlsMode::Prefer,
            ..WireLimits::default()
        };
        let lost = |e: std::io::Error| ConnectError::Db(DbError::lost(format!("connection lost: {e}")));
        match &t.socket {
            Some(path) => {
                let s = UnixStream::connect(path).await.map_err(lost)?;
                WireConn::connect(s, user, password, db, true, limits).await.map(Inner::Unix)
            }
            None => {
                let s = TcpStream::connect((t.host.as_str(), t.port)).await.map_err(lost)?;
                let _ = s.set_nodelay(true);
                WireConn::connect(s, user, password, db, false, limits).await.map(Inner::Tcp)
            }
        }
    }
}

pub struct MysqlConnection {
    inner: Inner,
    /// Plain text queries (`prepared_statements` off); None: prepared statements.
    text: Option<TextMode>,
}

/// Each statement's SQL with its placeholders (index = handle; None for a handle never
/// returned), and the buffer every execution renders into.
#[derive(Default)]
struct TextMode {
    statements: Vec<Option<TextSql>>,
    sql: String,
}

enum Inner {
    Tcp(WireConn<TcpStream>),
    Unix(WireConn<UnixStream>),
    Async { conn: Conn, statements: Vec<Statement> },
}

/// Runs the same call on whichever lean connection this is.
macro_rules! wire {
    ($inner:expr, |$w:ident| $body:expr, |$conn:ident, $st:ident| $fallback:expr) => {
        match $inner {
            Inner::Tcp($w) => $body,
            Inner::Unix($w) => $body,
            Inner::Async { conn: $conn, statements: $st } => $fallback,
        }
    };
}

impl MysqlConnection {
    /// A text query's rows as strings: what every SHOW below reads.
    pub(super) async fn rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, DbError> {
        wire!(&mut self.inner, |w| w.query_rows(sql).await, |conn, _st| {
            let rows: Vec<Row> = conn.query(sql).await.map_err(error)?;
            Ok(rows
                .into_iter()
                .map(|r| {
                    r.unwrap()
                        .into_iter()
                        .map(|v| match v {
                            Value::NULL => None,
                            Value::Bytes(b) => Some(String::from_utf8_lossy(&b).into_owned()),
                            other => Some(other.as_sql(true).trim_matches('\'').to_string()),
                        })
                        .collect()
                })
                .collect())
        })
    }

    /// A plain text query: `stmt`'s SQL with `params` as literals, over COM_QUERY.
    async fn execute_text(
        &mut self,
        stmt: usize,
        params: &[Param<'_>],
        row: Option<&mut KeptRow<'_>>,
    ) -> Result<Executed, DbError> {
        let Some(text) = self.text.as_mut() else { return Err(DbError::no_statement(stmt)) };
        let st = text.statements.get(stmt).and_then(Option::as_ref).ok_or_else(|| DbError::no_statement(stmt))?;
        st.render(params, &mut text.sql)?;
        let sql = text.sql.as_str();
        wire!(&mut self.inner, |w| w.query(sql, row).await, |conn, _st| query_async(conn, sql, row).await)
    }

    pub(super) async fn pairs(&mut self, sql: &str) -> Result<BTreeMap<String, String>, DbError> {
        Ok(self
            .rows(sql)
            .await?
            .into_iter()
            .filter_map(|mut r| {
                let v = r.get_mut(1).and_then(Option::take).unwrap_or_default();
                r.into_iter().next().flatten().map(|k| (k, v))
            })
            .collect())
    }
}

impl Connection for MysqlConnection {
    async fn text_rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, DbError> {
        self.rows(sql).await
    }

    async fn prepare(&mut self, sql: &str) -> Result<usize, DbError> {
        let Some(text) = self.text.as_mut() else {
            return wire!(&mut self.inner, |w| w.prepare(sql).await, |conn, statements| {
                statements.push(conn.prep(sql).await.map_err(error)?);
                Ok(statements.len() - 1)
            });
        };
        // Plain text queries: described by the server, closed at once, sent as text.
        let (stmt, params) = wire!(&mut self.inner, |w| w.describe(sql).await?, |conn, statements| {
            let st = conn.prep(sql).await.map_err(error)?;
            conn.close(st.clone()).await.map_err(error)?;
            statements.push(st);
            (statements.len() - 1, statements[statements.len() - 1].num_params() as usize)
        });
        let template = TextSql::new(Dialect::Mysql, sql);
        template.check_count(params)?;
        if text.statements.len() <= stmt {
            text.statements.resize(stmt + 1, None);
        }
        text.statements[stmt] = Some(template);
        Ok(stmt)
    }

    #[inline]
    async fn execute(&mut self, stmt: usize, params: &[Param<'_>]) -> Result<Executed, DbError> {
        if self.text.is_some() {
            return self.execute_text(stmt, params, None).await;
        }
        wire!(&mut self.inner, |w| w.execute(stmt, params).await, |conn, statements| {
            exec_async(conn, statements, stmt, params, None).await
        })
    }

    async fn execute_kept(
        &mut self,
        stmt: usize,
        params: &[Param<'_>],
        pick: RowPick,
        row: &mut Vec<FbValue>,
    ) -> Result<Executed, DbError> {
        let kept = Some(&mut KeptRow::new(row, pick));
        if self.text.is_some() {
            return self.execute_text(stmt, params, kept).await;
        }
        wire!(&mut self.inner, |w| w.execute_into(stmt, params, kept).await, |conn, statements| {
            exec_async(conn, statements, stmt, params, kept).await
        })
    }

    async fn columns(&mut self, stmt: usize) -> Result<Vec<String>, DbError> {
        wire!(&mut self.inner, |w| w.columns(stmt), |_conn, statements| {
            let st = statements.get(stmt).ok_or_else(|| DbError::no_statement(stmt))?;
            Ok(st.columns().iter().map(|c| c.name_str().into_owned()).collect())
        })
    }

    async fn simple(&mut self, sql: &str) -> Result<(), DbError> {
        wire!(&mut self.inner, |w| w.simple(sql).await, |conn, _st| conn.query_drop(sql).await.map_err(error))
    }

    async fn bulk_load(&mut self, table: &str, columns: &[&str], rows: &mut dyn RowSource) -> Result<u64, DbError> {
        let loaded = match &mut self.inner {
            Inner::Tcp(w) => w.load_data_local(table, columns, rows).await?,
            Inner::Unix(w) => w.load_data_local(table, columns, rows).await?,
            Inner::Async { .. } => LoadOutcome::Refused,
        };
        match loaded {
            LoadOutcome::Rows(n) => Ok(n),
            // Refused before any row was read: the same rows go as INSERTs.
            LoadOutcome::Refused => super::bulk::insert_rows(self, Dialect::Mysql, table, columns, rows).await,
        }
    }

    async fn try_exclusive_lock(&mut self) -> Result<bool, DbError> {
        // GET_LOCK names are server-wide: the database name makes the lock per database.
        let rows = self.rows("SELECT GET_LOCK(CONCAT('fairbench.prepare.', DATABASE()), 0)").await?;
        Ok(rows.first().and_then(|r| r.first().cloned().flatten()).as_deref() == Some("1"))
    }

    async fn tables(&mut self, prefix: &str) -> Result<Vec<TableInfo>, DbError> {
        // SHOW (not SELECT ... information_schema) so Com_select stays the workload's own.
        let rows = self.rows(&format!("SHOW TABLE STATUS LIKE '{}%'", prefix.replace('\'', ""))).await?;
        Ok(rows
            .into_iter()
            .map(|r| TableInfo {
                definition: r.get(COMMENT).cloned().flatten().unwrap_or_default(),
                name: r.into_iter().next().flatten().unwrap_or_default(),
            })
            .collect())
    }

    async fn transport_seen(&mut self) -> Result<crate::model::TransportSeen, DbError> {
        let status = self.pairs(super::transport_seen::MYSQL_TLS_SQL).await?;
        let kind = match &self.inner {
            Inner::Unix(_) => crate::model::TransportKind::Socket,
            // mysql_async carries the connections that negotiated TLS, over TCP.
            Inner::Tcp(_) | Inner::Async { .. } => crate::model::TransportKind::Tcp,
        };
        Ok(super::transport_seen::mysql(&status, kind))
    }

    async fn server_info(&mut self) -> Result<ServerInfo, DbError> {
        // '%version%': Aurora MySQL names itself in aurora_version, which 'version%' misses.
        let vars = self.pairs("SHOW GLOBAL VARIABLES LIKE '%version%'").await?;
        let version = vars.get("version").cloned().unwrap_or_default();
        let comment = vars.get("version_comment").cloned().unwrap_or_default();
        let product = if version.contains("MariaDB") {
            "MariaDB"
        } else if comment.contains("Percona") {
            "Percona Server"
        } else if vars.contains_key("aurora_version") {
            super::facts::mysql::AURORA
        } else if version.contains("TiDB") {
            "TiDB"
        } else {
            "MySQL"
        };
        // Aurora reports the MySQL version it is compatible with; its own release matters too.
        let version = match vars.get("aurora_version") {
            Some(aurora) => format!("{version} (Aurora {aurora})"),
            None => version,
        };
        Ok(ServerInfo { product: product.into(), version })
    }

    async fn status_counters(&mut self) -> Result<BTreeMap<String, i64>, DbError> {
        let pairs = self.pairs("SHOW GLOBAL STATUS").await?;
        Ok(pairs.into_iter().filter_map(|(k, v)| v.parse::<i64>().ok().map(|v| (k, v))).collect())
    }

    async fn variables(&mut self) -> Result<BTreeMap<String, String>, DbError> {
        self.pairs("SHOW GLOBAL VARIABLES").await
    }

    async fn node_role(&mut self) -> Result<RoleReading, DbError> {
        self.role().await
    }

    async fn replay_pending(&mut self) -> Result<Option<bool>, DbError> {
        self.replay_behind().await
    }

    async fn listed_nodes(&mut self) -> Result<Vec<super::ListedNode>, DbError> {
        self.listed().await
    }

    async fn table_sizes(&mut self, tables: &[String], declared_rows: u64) -> Result<Vec<TableSize>, DbError> {
        if tables.is_empty() {
            return Ok(Vec::new());
        }
        let names: Vec<String> = tables.iter().map(|t| format!("'{}'", t.replace('\'', "''"))).collect();
        let rows = self.rows(&format!("SHOW TABLE STATUS WHERE Name IN ({})", names.join(", "))).await?;
        let mut out = Vec::new();
        for row in rows {
            let name = row.first().cloned().flatten().unwrap_or_default();
            if !tables.contains(&name) {
                continue;
            }
            let num = |i: usize| row.get(i).cloned().flatten().and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
            let mut size = TableSize {
                rows: num(ROWS),
                rows_exact: false,
                data_bytes: num(DATA_LENGTH),
                index_bytes: num(INDEX_LENGTH),
                name,
            };
            if size.rows < declared_rows / 2 {
                // The only SELECT fairbench sends outside the workload (before the counters).
                let bound = declared_rows.max(1_000_000);
                let sql = format!("SELECT COUNT(*) FROM (SELECT 1 FROM {} LIMIT {bound}) t", size.name);
                let counted = self.rows(&sql).await?;
                size.rows = counted
                    .first()
                    .and_then(|r| r.first().cloned().flatten())
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0);
                size.rows_exact = size.rows < bound;
            }
            out.push(size);
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }
}

/// mysql_async's execution (TLS and other authentications), with the lean client's results.
async fn exec_async(
    conn: &mut Conn,
    statements: &[Statement],
    stmt: usize,
    params: &[Param<'_>],
    row: Option<&mut KeptRow<'_>>,
) -> Result<Executed, DbError> {
    let st = statements.get(stmt).ok_or_else(|| DbError::no_statement(stmt))?;
    let values = params
        .iter()
        .map(|p| match *p {
            Param::Null => Value::NULL,
            Param::Int(i) => Value::Int(i),
            Param::Float(f) => Value::Double(f),
            Param::Text(s) => Value::Bytes(s.as_bytes().to_vec()),
            Param::Bytes(b) => Value::Bytes(b.to_vec()),
        })
        .collect();
    let result = conn.exec_iter(st, Params::Positional(values)).await.map_err(error)?;
    finish(result, row, |first, out| {
        let binary: Vec<bool> = first.columns_ref().iter().map(|c| c.character_set() == 63).collect();
        for (v, binary) in first.unwrap().into_iter().zip(binary) {
            out.push(match v {
                Value::NULL => FbValue::Null,
                Value::Int(i) => FbValue::Int(i),
                Value::UInt(u) => i64::try_from(u).map(FbValue::Int).unwrap_or(FbValue::Text(u.to_string())),
                Value::Float(f) => FbValue::Float(f as f64),
                Value::Double(f) => FbValue::Float(f),
                Value::Bytes(b) if binary => FbValue::Bytes(b),
                Value::Bytes(b) => FbValue::Text(String::from_utf8_lossy(&b).into_owned()),
                other => FbValue::Text(other.as_sql(true).trim_matches('\'').to_string()),
            });
        }
        Ok(())
    })
    .await
}

/// The lean client's result from a mysql_async result set (binary or text protocol): the
/// affected rows and generated id, the rows `row` keeps decoded by `decode`, every row
/// counted, the set drained.
async fn finish<P: mysql_async::prelude::Protocol>(
    mut result: mysql_async::QueryResult<'_, '_, P>,
    mut row: Option<&mut KeptRow<'_>>,
    mut decode: impl FnMut(Row, &mut Vec<FbValue>) -> Result<(), DbError>,
) -> Result<Executed, DbError> {
    let mut done = Executed {
        affected_rows: result.affected_rows(),
        rows: 0,
        last_insert_id: result.last_insert_id().filter(|&id| id != 0),
    };
    while let Some(r) = result.next().await.map_err(error)? {
        done.rows += 1;
        if let Some(out) = row.as_deref_mut().and_then(KeptRow::next_row) {
            decode(r, out)?;
        }
    }
    result.drop_result().await.map_err(error)?;
    Ok(done)
}

/// A plain text query through mysql_async, with the lean client's results (text rows
/// decoded by their column types as the lean client decodes them).
async fn query_async(conn: &mut Conn, sql: &str, row: Option<&mut KeptRow<'_>>) -> Result<Executed, DbError> {
    let result = conn.query_iter(sql).await.map_err(error)?;
    finish(result, row, |first, out| {
        let types: Vec<ColumnFormat> = first
            .columns_ref()
            .iter()
            .map(|c| ColumnFormat { charset: c.character_set(), kind: c.column_type() as u8, flags: c.flags().bits() })
            .collect();
        for (v, c) in first.unwrap().into_iter().zip(&types) {
            let bytes = match &v {
                Value::NULL => None,
                Value::Bytes(b) => Some(b.as_slice()),
                other => {
                    out.push(FbValue::Text(other.as_sql(true).trim_matches('\'').to_string()));
                    continue;
                }
            };
            let value = text_value(bytes, c)
                .map_err(|m| DbError::protocol(format!("malformed reply from the server to COM_QUERY: {}", m.0)))?;
            out.push(value);
        }
        Ok(())
    })
    .await
}

/// Columns of SHOW TABLE STATUS (the same positions in MySQL and MariaDB).
const ROWS: usize = 4;
const DATA_LENGTH: usize = 6;
const INDEX_LENGTH: usize = 8;
const COMMENT: usize = 17;

fn error(e: mysql_async::Error) -> DbError {
    match e {
        mysql_async::Error::Server(s) => {
            // 2006/2013 can come back as server errors from proxies (DbError::mysql knows).
            DbError::mysql(s.code, s.message)
        }
        mysql_async::Error::Io(io) => DbError::lost(format!("connection lost: {io}")),
        mysql_async::Error::Driver(mysql_async::DriverError::ConnectionClosed) => {
            DbError::lost("connection closed by the server")
        }
        other => {
            let mut e = DbError::client(super::ClientFault::Other, other.to_string());
            e.connection_lost = other.is_fatal();
            e
        }
    }
}
