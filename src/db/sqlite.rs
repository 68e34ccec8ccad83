//! Embedded SQLite through rusqlite. Blocking: the runner gives each client its own thread.
//!
//! Statements are compiled once and kept in rusqlite's statement cache. With
//! `prepared_statements` off ("plain text queries" elsewhere) there is no server to send
//! text to: the cache is not used, and every execution compiles the statement anew from its
//! SQL (sqlite3_prepare and sqlite3_finalize each time), its parameters still bound.

use super::ddl::{Generated, Spelling};
use super::facts::OS_PAGE_CACHE;
use super::{
    ConnectOptions, Connection, Database, DbError, Dialect, Executed, KeptRow, Param, RowPick, RowSource, ServerInfo,
    TableInfo, TargetUrl, Transport, Value,
};
use crate::model::{SbtestShape, TableDef, TableSize};
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{OpenFlags, ToSql};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

pub struct SqliteDatabase {
    path: PathBuf,
    pragmas: Vec<(String, String)>,
    /// Off: every execution compiles its statement anew (no statement cache).
    prepared_statements: bool,
}

impl SqliteDatabase {
    pub fn new(target: &TargetUrl) -> Result<Self, DbError> {
        Self::with_options(target, &ConnectOptions::default())
    }

    /// Of the options only `prepared_statements` applies to an embedded database.
    pub fn with_options(target: &TargetUrl, options: &ConnectOptions) -> Result<Self, DbError> {
        Ok(SqliteDatabase {
            path: target.path.clone(),
            pragmas: target.pragmas.clone(),
            prepared_statements: options.prepared_statements,
        })
    }

    /// Creates the database file when missing (prepare only), in WAL mode so that readers
    /// and the one writer do not block each other. An existing file keeps its settings.
    pub fn create_if_missing(&self) -> Result<bool, DbError> {
        if self.path.exists() {
            return Ok(false);
        }
        let conn = rusqlite::Connection::open(&self.path).map_err(|e| self.open_error(e))?;
        conn.pragma_update(None, "journal_mode", "WAL").map_err(error)?;
        Ok(true)
    }

    fn open_error(&self, e: rusqlite::Error) -> DbError {
        DbError::sqlite("SQLITE_CANTOPEN", format!("cannot open SQLite file {}: {e}", self.path.display()))
    }
}

impl Database for SqliteDatabase {
    fn open(url: &TargetUrl, options: &ConnectOptions) -> Result<Self, DbError> {
        Self::with_options(url, options)
    }

    fn clock_sql(&self) -> crate::db::ProbeSql {
        // An embedded database has no session apart from the process.
        crate::db::ProbeSql {
            now_text: "strftime('%Y-%m-%d %H:%M:%f', 'now')",
            session_id: "0",
            // julianday keeps milliseconds: the same host needs no finer.
            epoch_us: "CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)",
        }
    }

    fn server_facts(&self, product: &str, variables: &BTreeMap<String, String>) -> crate::model::ServerFacts {
        crate::db::facts::sqlite::facts(product, variables)
    }

    type Conn = SqliteConnection;

    async fn connect(&self) -> Result<SqliteConnection, DbError> {
        if !self.path.exists() {
            return Err(DbError::sqlite(
                "SQLITE_CANTOPEN",
                format!("SQLite file {} does not exist (prepare creates it)", self.path.display()),
            ));
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI;
        let conn = rusqlite::Connection::open_with_flags(&self.path, flags).map_err(|e| self.open_error(e))?;
        // Writers queue for the lock instead of failing at once; SQLITE_BUSY after this is
        // retried like a MySQL lock wait timeout.
        conn.busy_timeout(Duration::from_secs(10)).map_err(error)?;
        for (k, v) in &self.pragmas {
            // Names and values were validated by the URL parser.
            conn.execute_batch(&format!("PRAGMA {k} = {v}")).map_err(error)?;
        }
        Ok(SqliteConnection { conn, statements: Vec::new(), cached: self.prepared_statements })
    }

    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn transport(&self) -> Transport {
        Transport {
            kind: super::TransportKind::Embedded,
            address: self.path.display().to_string(),
            tls: super::TlsMode::Off,
        }
    }

    fn blocking(&self) -> bool {
        true
    }

    fn single_writer(&self) -> bool {
        true
    }

    fn create_if_missing(&self) -> Result<(), DbError> {
        SqliteDatabase::create_if_missing(self).map(|_| ())
    }

    fn compact_if_empty(&self) -> Result<Option<String>, DbError> {
        if !self.path.exists() {
            return Ok(None);
        }
        let conn = rusqlite::Connection::open(&self.path).map_err(|e| self.open_error(e))?;
        let tables: i64 = conn
            .query_row("SELECT count(*) FROM sqlite_master WHERE type = 'table'", [], |r| r.get(0))
            .map_err(error)?;
        let size = || std::fs::metadata(&self.path).map(|m| m.len()).unwrap_or(0);
        let before = size();
        if tables > 0 || before == 0 {
            return Ok(None);
        }
        conn.execute_batch("VACUUM; PRAGMA wal_checkpoint(TRUNCATE);").map_err(error)?;
        let mib = |b: u64| b as f64 / (1 << 20) as f64;
        Ok(Some(format!(
            "Compacted {} (no table left): {:.1} MiB -> {:.1} MiB (VACUUM)",
            self.path.display(),
            mib(before),
            mib(size())
        )))
    }

    fn host_facts(&self, _variables: &BTreeMap<String, String>) -> BTreeMap<String, String> {
        BTreeMap::from([("file".to_string(), self.path.display().to_string())])
    }

    fn data_caches(
        &self,
        variables: &BTreeMap<String, String>,
        host_available_memory: Option<u64>,
    ) -> BTreeMap<String, u64> {
        let mut out = BTreeMap::new();
        if let Some(bytes) = page_cache_bytes(variables) {
            out.insert("cache_size".to_string(), bytes);
        }
        // SQLite reads its file through the OS: the pages its own small cache drops stay in
        // the OS page cache, which can grow into all of the host's available RAM.
        if let Some(bytes) = host_available_memory {
            out.insert(OS_PAGE_CACHE.to_string(), bytes);
        }
        out
    }

    fn create_table_sql(&self, t: &TableDef, comment: &str) -> Vec<String> {
        const SPELLING: Spelling = Spelling {
            double: "DOUBLE",
            decimal: "DECIMAL",
            blob: "BLOB",
            // Text that sorts as time: SQLite's date functions read it.
            timestamp: "TEXT",
            // A rowid alias must be spelled exactly INTEGER PRIMARY KEY.
            generated: Generated::Instead("INTEGER PRIMARY KEY"),
        };
        let body = super::ddl::body(t, &SPELLING);
        vec![format!("CREATE TABLE {}( /* {comment} */{}", t.name, &body[1..])]
    }

    fn comment_sql(&self, _table: &str, _comment: &str) -> Option<String> {
        None
    }

    fn sbtest_create_sql(&self, n: u32, shape: &SbtestShape, comment: &str) -> Vec<String> {
        // INTEGER PRIMARY KEY is SQLite's auto-increment (rowid alias). This text is also
        // the table's ownership mark: it must never change for tables already prepared.
        let id = if shape.secondary { "INTEGER NOT NULL" } else { "INTEGER NOT NULL PRIMARY KEY" };
        let mut v = vec![format!(
            "CREATE TABLE sbtest{n}( /* {comment} */\n  id {id},\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL\n)"
        )];
        if shape.secondary {
            v.push(format!("CREATE INDEX xid_{n} ON sbtest{n}(id)"));
        }
        v
    }

    fn begin_sql(&self, writes: bool) -> &'static str {
        if writes {
            "BEGIN IMMEDIATE"
        } else {
            "BEGIN"
        }
    }
}

pub struct SqliteConnection {
    conn: rusqlite::Connection,
    /// SQL text per handle, and whether it is an INSERT (which has a rowid to report).
    statements: Vec<(String, bool)>,
    /// Statements from rusqlite's cache (prepared statements); false: compiled anew for
    /// every execution and finalized after it.
    cached: bool,
}

/// A parameter as SQLite's own value, borrowed.
struct Bind<'a>(Param<'a>);

impl ToSql for Bind<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self.0 {
            Param::Null => ValueRef::Null,
            Param::Int(i) => ValueRef::Integer(i),
            Param::Float(f) => ValueRef::Real(f),
            Param::Text(s) => ValueRef::Text(s.as_bytes()),
            Param::Bytes(b) => ValueRef::Blob(b),
        }))
    }
}

fn value(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(f) => Value::Float(f),
        ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::Bytes(b.to_vec()),
    }
}

impl SqliteConnection {
    /// One prepared INSERT executed per row, inside one transaction (the caller's, or
    /// one of its own): SQLite has no faster way in.
    fn load_rows(&mut self, table: &str, columns: &[&str], rows: &mut dyn RowSource) -> Result<u64, DbError> {
        let own = self.conn.is_autocommit();
        if own {
            self.conn.execute_batch("BEGIN IMMEDIATE").map_err(error)?;
        }
        let marks = vec!["?"; columns.len()].join(", ");
        let sql = format!("INSERT INTO {table} ({}) VALUES ({marks})", columns.join(", "));
        let loaded = (|| {
            let mut st = self.conn.prepare(&sql).map_err(error)?;
            let (mut n, mut failed) = (0u64, None);
            loop {
                let mut i = 0;
                let more = rows.next_row(&mut |p| {
                    i += 1;
                    if let Err(e) = st.raw_bind_parameter(i, Bind(p)) {
                        failed.get_or_insert(e);
                    }
                });
                if !more {
                    return Ok(n);
                }
                if let Some(e) = failed.take() {
                    return Err(error(e));
                }
                if i != columns.len() {
                    return Err(DbError::arity(columns.len(), i));
                }
                st.raw_execute().map_err(error)?;
                n += 1;
            }
        })();
        if own {
            let end = if loaded.is_ok() { "COMMIT" } else { "ROLLBACK" };
            self.conn.execute_batch(end).map_err(error)?;
        }
        loaded
    }

    fn run(&mut self, stmt: usize, params: &[Param<'_>], row: Option<&mut KeptRow>) -> Result<Executed, DbError> {
        let Some((sql, insert)) = self.statements.get(stmt) else {
            return Err(DbError::no_statement(stmt));
        };
        let mut done = if self.cached {
            let mut st = self.conn.prepare_cached(sql).map_err(error)?;
            run_statement(&mut st, params, row)?
        } else {
            run_statement(&mut self.conn.prepare(sql).map_err(error)?, params, row)?
        };
        if *insert && done.affected_rows > 0 {
            done.last_insert_id = Some(self.conn.last_insert_rowid() as u64);
        }
        Ok(done)
    }
}

/// Binds `params` to `st` and runs it: rows counted (the one `row` asks for kept), or the
/// rows changed.
#[inline]
fn run_statement(
    st: &mut rusqlite::Statement<'_>,
    params: &[Param<'_>],
    mut row: Option<&mut KeptRow>,
) -> Result<Executed, DbError> {
    if st.parameter_count() != params.len() {
        return Err(DbError::arity(st.parameter_count(), params.len()));
    }
    for (i, p) in params.iter().enumerate() {
        st.raw_bind_parameter(i + 1, Bind(*p)).map_err(error)?;
    }
    let mut done = Executed::default();
    let columns = st.column_count();
    if columns > 0 {
        let mut rows = st.raw_query();
        while let Some(r) = rows.next().map_err(error)? {
            if let Some(out) = row.as_deref_mut().and_then(KeptRow::next_row) {
                for i in 0..columns {
                    out.push(value(r.get_ref(i).map_err(error)?));
                }
            }
            done.rows += 1;
        }
    } else {
        done.affected_rows = st.raw_execute().map_err(error)? as u64;
    }
    Ok(done)
}

impl Connection for SqliteConnection {
    async fn text_rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, DbError> {
        let mut stmt = self.conn.prepare(sql).map_err(error)?;
        let n = stmt.column_count();
        let rows = stmt.query_map([], |r| {
            (0..n)
                .map(|i| {
                    Ok(match r.get::<_, rusqlite::types::Value>(i)? {
                        rusqlite::types::Value::Null => None,
                        rusqlite::types::Value::Integer(v) => Some(v.to_string()),
                        rusqlite::types::Value::Real(v) => Some(v.to_string()),
                        rusqlite::types::Value::Text(t) => Some(t),
                        rusqlite::types::Value::Blob(b) => Some(String::from_utf8_lossy(&b).into_owned()),
                    })
                })
                .collect::<Result<Vec<_>, rusqlite::Error>>()
        });
        let collected: Result<Vec<_>, DbError> = rows.map_err(error)?.map(|r| r.map_err(error)).collect();
        collected
    }

    async fn prepare(&mut self, sql: &str) -> Result<usize, DbError> {
        if self.cached {
            self.conn.prepare_cached(sql).map_err(error)?;
        } else {
            self.conn.prepare(sql).map_err(error)?; // checked, then finalized
        }
        let insert = sql.trim_start().get(..6).is_some_and(|w| w.eq_ignore_ascii_case("insert"));
        self.statements.push((sql.to_string(), insert));
        if self.cached {
            let capacity = self.statements.len().max(16);
            self.conn.set_prepared_statement_cache_capacity(capacity);
        }
        Ok(self.statements.len() - 1)
    }

    async fn execute(&mut self, stmt: usize, params: &[Param<'_>]) -> Result<Executed, DbError> {
        self.run(stmt, params, None)
    }

    async fn execute_kept(
        &mut self,
        stmt: usize,
        params: &[Param<'_>],
        pick: RowPick,
        row: &mut Vec<Value>,
    ) -> Result<Executed, DbError> {
        self.run(stmt, params, Some(&mut KeptRow::new(row, pick)))
    }

    async fn columns(&mut self, stmt: usize) -> Result<Vec<String>, DbError> {
        let Some((sql, _)) = self.statements.get(stmt) else {
            return Err(DbError::no_statement(stmt));
        };
        if !self.cached {
            let st = self.conn.prepare(sql).map_err(error)?;
            return Ok(st.column_names().map(str::to_string).collect());
        }
        let st = self.conn.prepare_cached(sql).map_err(error)?;
        Ok(st.column_names().map(str::to_string).collect())
    }

    async fn simple(&mut self, sql: &str) -> Result<(), DbError> {
        self.conn.execute_batch(sql).map_err(error)
    }

    async fn bulk_load(&mut self, table: &str, columns: &[&str], rows: &mut dyn RowSource) -> Result<u64, DbError> {
        self.load_rows(table, columns, rows)
    }

    async fn try_exclusive_lock(&mut self) -> Result<bool, DbError> {
        // prepare holds the file's write lock (BEGIN IMMEDIATE) for all of its work.
        Ok(true)
    }

    async fn tables(&mut self, prefix: &str) -> Result<Vec<TableInfo>, DbError> {
        let mut st = self
            .conn
            .prepare("SELECT name, coalesce(sql, '') FROM sqlite_master WHERE type = 'table' AND name LIKE ?1")
            .map_err(error)?;
        let rows = st
            .query_map([format!("{prefix}%")], |r| Ok(TableInfo { name: r.get(0)?, definition: r.get(1)? }))
            .map_err(error)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(error)
    }

    async fn server_info(&mut self) -> Result<ServerInfo, DbError> {
        Ok(ServerInfo { product: "SQLite".into(), version: rusqlite::version().to_string() })
    }

    async fn transport_seen(&mut self) -> Result<crate::model::TransportSeen, DbError> {
        Ok(crate::model::TransportSeen::one(super::TransportKind::Embedded, None))
    }

    async fn status_counters(&mut self) -> Result<BTreeMap<String, i64>, DbError> {
        // An embedded library keeps no statement counters across connections: what the file
        // itself says is all there is.
        let mut out = BTreeMap::new();
        for pragma in ["page_count", "freelist_count", "data_version"] {
            let v: i64 = self.conn.query_row(&format!("PRAGMA {pragma}"), [], |r| r.get(0)).map_err(error)?;
            out.insert(pragma.to_string(), v);
        }
        Ok(out)
    }

    async fn variables(&mut self) -> Result<BTreeMap<String, String>, DbError> {
        const PRAGMAS: [&str; 12] = [
            "journal_mode",
            "synchronous",
            "cache_size",
            "page_size",
            "page_count",
            "freelist_count",
            "mmap_size",
            "locking_mode",
            "wal_autocheckpoint",
            "temp_store",
            "auto_vacuum",
            "busy_timeout",
        ];
        let mut out = BTreeMap::new();
        for p in PRAGMAS {
            let v: rusqlite::types::Value =
                self.conn.query_row(&format!("PRAGMA {p}"), [], |r| r.get(0)).map_err(error)?;
            let text = match v {
                rusqlite::types::Value::Integer(i) => i.to_string(),
                rusqlite::types::Value::Text(t) => t,
                rusqlite::types::Value::Real(f) => f.to_string(),
                _ => String::new(),
            };
            out.insert(p.to_string(), text);
        }
        out.insert("sqlite_version".into(), rusqlite::version().into());
        Ok(out)
    }

    async fn node_role(&mut self) -> Result<crate::model::ha::RoleReading, DbError> {
        let evidence = "in-process library, no replication";
        Ok(crate::model::ha::RoleReading::anonymous(crate::model::ha::NodeRole::Embedded, evidence))
    }

    async fn table_sizes(&mut self, tables: &[String], _declared_rows: u64) -> Result<Vec<TableSize>, DbError> {
        // Exact counts are cheap here; sizes from the dbstat virtual table (pages in use).
        let mut out = Vec::new();
        for name in tables {
            let rows: i64 =
                self.conn.query_row(&format!("SELECT count(*) FROM {name}"), [], |r| r.get(0)).map_err(error)?;
            let data: i64 = self
                .conn
                .query_row("SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name = ?1", [name], |r| r.get(0))
                .map_err(error)?;
            let index: i64 = self
                .conn
                .query_row(
                    "SELECT coalesce(sum(d.pgsize), 0) FROM dbstat d JOIN sqlite_master m ON m.name = d.name \
                     WHERE m.type = 'index' AND m.tbl_name = ?1",
                    [name],
                    |r| r.get(0),
                )
                .map_err(error)?;
            out.push(TableSize {
                name: name.clone(),
                rows: rows as u64,
                rows_exact: true,
                data_bytes: data as u64,
                index_bytes: index as u64,
            });
        }
        Ok(out)
    }
}

/// SQLite's own page cache, per connection: `cache_size` < 0 is KiB, > 0 is pages.
fn page_cache_bytes(variables: &BTreeMap<String, String>) -> Option<u64> {
    let page = variables.get("page_size").and_then(|v| v.parse::<i64>().ok()).unwrap_or(4096);
    let pages_or_kib = variables.get("cache_size")?.parse::<i64>().ok()?;
    let bytes = if pages_or_kib < 0 { -pages_or_kib * 1024 } else { pages_or_kib * page };
    u64::try_from(bytes).ok()
}

fn error(e: rusqlite::Error) -> DbError {
    match &e {
        rusqlite::Error::SqliteFailure(f, msg) => {
            let code = match f.code {
                rusqlite::ErrorCode::DatabaseBusy => "SQLITE_BUSY".to_string(),
                rusqlite::ErrorCode::DatabaseLocked => "SQLITE_LOCKED".to_string(),
                // The extended codes of a duplicate key, retried by default like PostgreSQL's
                // 23505 (concurrent DELETE + INSERT of one id in autocommit).
                rusqlite::ErrorCode::ConstraintViolation => match f.extended_code {
                    1555 => "SQLITE_CONSTRAINT_PRIMARYKEY".to_string(),
                    2067 => "SQLITE_CONSTRAINT_UNIQUE".to_string(),
                    _ => "SQLITE_CONSTRAINT".to_string(),
                },
                other => format!("SQLITE_{other:?}").to_uppercase(),
            };
            DbError::sqlite(code, msg.clone().unwrap_or_else(|| e.to_string()))
        }
        _ => DbError::client(super::ClientFault::Other, e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn cache_size_negative_is_kib_and_positive_is_pages() {
        assert_eq!(page_cache_bytes(&vars(&[("cache_size", "-2000")])), Some(2_048_000));
        assert_eq!(page_cache_bytes(&vars(&[("cache_size", "100"), ("page_size", "8192")])), Some(819_200));
    }

    #[test]
    fn the_os_page_cache_holds_the_data_beyond_sqlites_own_cache() {
        let db =
            SqliteDatabase { path: PathBuf::from("/nonexistent/x.db"), pragmas: Vec::new(), prepared_statements: true };
        let caches = db.data_caches(&vars(&[("cache_size", "-2000")]), Some(8 << 30));
        assert_eq!(caches["cache_size"], 2_048_000);
        assert_eq!(caches[OS_PAGE_CACHE], 8 << 30);
        assert!(!db.data_caches(&vars(&[("cache_size", "-2000")]), None).contains_key(OS_PAGE_CACHE));
    }
}
