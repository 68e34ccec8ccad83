//! The one seam between fairbench and a database: [`Database`] opens [`Connection`]s.
//!
//! Each database is one file here (`sqlite.rs`, `mysql.rs`, `postgres/`); a fourth is one
//! new file plus a line in [`with_database!`](crate::with_database). Drivers know SQL dialects and
//! error codes; they know nothing about workloads, statistics or the terminal.

#![allow(async_fn_in_trait)] // futures run on a LocalSet: they need not be Send.

mod bulk;
mod ddl;
mod error;
pub mod facts;
pub mod follow;
mod inspected;
pub mod mysql;
mod mysql_cluster;
mod mysql_connect;
mod mysql_wire;
mod pg_wire;
pub mod postgres;
pub mod redact;
mod socket;
pub mod sqlite;
mod text_sql;
mod tls;
mod transport_seen;
pub mod url;
mod value;

use crate::model::{SbtestShape, TableDef, TableSize};
use std::collections::BTreeMap;
use std::time::Duration;

pub use crate::model::{Dialect, TlsMode, Transport, TransportKind};
pub(crate) use error::unreachable_hint;
pub use error::{ClientFault, DbError, ErrorCode, UrlError};
pub use url::TargetUrl;
pub use value::{Executed, KeptRow, Param, RowPick, RowSource, Value};

/// How connections are opened, whatever the database.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectOptions {
    /// TCP connect, TLS and authentication together.
    pub connect_timeout: Duration,
    /// MySQL: the largest packet the server may send (read or skipped).
    pub max_packet: usize,
    /// Send the password in clear over unencrypted TCP when the server asks for it.
    pub allow_cleartext_password: bool,
    /// Server-side prepared statements (the default). Off: plain text queries, sysbench's
    /// `--db-ps-mode=disable`, for proxies and poolers that do not keep prepared
    /// statements. Each execution then sends the SQL with its parameters rendered as
    /// literals: MySQL COM_QUERY, PostgreSQL's simple query protocol. `prepare` still asks
    /// the server once per statement for its parameters and columns (MySQL closes the
    /// statement at once; PostgreSQL keeps only the description). SQLite has no server:
    /// there it means no statement cache, every execution compiles the statement anew
    /// (prepare and finalize each time), parameters still bound.
    pub prepared_statements: bool,
    /// MySQL: announce CLIENT_LOCAL_FILES so [`Connection::bulk_load`] can send LOAD DATA
    /// LOCAL INFILE (only prepare's connections; the client sends only its own rows).
    pub local_infile: bool,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        ConnectOptions {
            connect_timeout: Duration::from_secs(10),
            max_packet: 64 * 1024 * 1024,
            allow_cleartext_password: false,
            prepared_statements: true,
            local_infile: false,
        }
    }
}

/// The server as it describes itself.
/// A node of the cluster as another node names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListedNode {
    pub host: String,
    pub port: u16,
    /// Where it was read (`SHOW REPLICA STATUS`, `pg_stat_replication`...).
    pub listed_by: &'static str,
}

#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ServerInfo {
    /// MySQL, MariaDB, Percona Server, PostgreSQL, SQLite...
    pub product: String,
    pub version: String,
}

/// Expressions a probe's INSERT evaluates on the server.
#[derive(Clone, Copy, Debug)]
pub struct ProbeSql {
    /// The server's current time as text, microseconds where it has them.
    pub now_text: &'static str,
    /// The id of this session on the server (MySQL's connection id, PostgreSQL's backend
    /// pid), as an integer; 0 where there is none.
    pub session_id: &'static str,
    /// The server's clock as an integer: microseconds since the Unix epoch, whatever the
    /// session's time zone (shards measure their clocks' offsets against it).
    pub epoch_us: &'static str,
}

/// A table named like the workload's, with the text that carries fairbench's ownership
/// marker (decided above this layer, in `workload::schema`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableInfo {
    pub name: String,
    /// The table comment (MySQL, PostgreSQL) or its CREATE statement (SQLite).
    pub definition: String,
}

/// One client connection. Statements are prepared once and then executed by handle.
pub trait Connection: 'static {
    /// Prepares `sql` (with `?` placeholders) and returns its handle.
    async fn prepare(&mut self, sql: &str) -> Result<usize, DbError>;
    /// Executes a prepared statement (any number of parameters), reading and discarding
    /// any rows: the measured hot path.
    async fn execute(&mut self, stmt: usize, params: &[Param<'_>]) -> Result<Executed, DbError>;
    /// The same, keeping the first row's columns in `row` (cleared first; left empty when
    /// no row comes back) so a later statement can use them.
    async fn execute_row(
        &mut self,
        stmt: usize,
        params: &[Param<'_>],
        row: &mut Vec<Value>,
    ) -> Result<Executed, DbError> {
        self.execute_kept(stmt, params, RowPick::First, row).await
    }
    /// The same, keeping the row `pick` names.
    async fn execute_kept(
        &mut self,
        stmt: usize,
        params: &[Param<'_>],
        pick: RowPick,
        row: &mut Vec<Value>,
    ) -> Result<Executed, DbError>;
    /// The names of the columns a prepared statement returns (none for most writes).
    async fn columns(&mut self, stmt: usize) -> Result<Vec<String>, DbError>;
    /// Sends SQL text without parameters (BEGIN, COMMIT, DDL, bulk INSERTs).
    async fn simple(&mut self, sql: &str) -> Result<(), DbError>;
    /// Loads `rows` into `columns` of `table` the fastest way the database has (PostgreSQL
    /// COPY, MySQL LOAD DATA LOCAL INFILE, SQLite one prepared INSERT per row in a
    /// transaction), falling back to multi-row INSERTs where it is refused. Returns the rows
    /// loaded.
    async fn bulk_load(&mut self, table: &str, columns: &[&str], rows: &mut dyn RowSource) -> Result<u64, DbError>;
    /// Takes fairbench's exclusive lock on this database for prepare and cleanup (MySQL
    /// GET_LOCK, PostgreSQL advisory lock; SQLite locks its file itself): `false` when
    /// another session holds it. Released when the connection closes.
    async fn try_exclusive_lock(&mut self) -> Result<bool, DbError>;
    /// Tables in the current database whose name starts with `prefix`.
    async fn tables(&mut self, prefix: &str) -> Result<Vec<TableInfo>, DbError>;
    /// Every row of an administrative query, each column as text (`None`: NULL). Not for the
    /// measured path: it allocates per value.
    async fn text_rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, DbError>;
    /// Product and version.
    async fn server_info(&mut self) -> Result<ServerInfo, DbError>;
    /// How this connection reached the server, as the server reports it for this session
    /// (never inferred from the URL): TCP or socket, and its TLS version and cipher.
    async fn transport_seen(&mut self) -> Result<crate::model::TransportSeen, DbError>;
    /// Server-wide statement counters (MySQL `Com_*`, PostgreSQL `pg_stat_database`), read
    /// without changing them, so deltas around a run count exactly what the run sent.
    async fn status_counters(&mut self) -> Result<BTreeMap<String, i64>, DbError>;
    /// Every server setting (MySQL SHOW GLOBAL VARIABLES, pg_settings, SQLite PRAGMAs).
    async fn variables(&mut self) -> Result<BTreeMap<String, String>, DbError>;
    /// What the node is now (primary, replica, read-only...) and what that was read from.
    /// Needs little privilege: what the user cannot see is said in the evidence.
    async fn node_role(&mut self) -> Result<crate::model::ha::RoleReading, DbError>;
    /// A replica that has received changes it has not applied yet: `Some(true)`; nothing
    /// left to apply, or not a replica: `Some(false)`; `None`: this driver cannot tell (the
    /// caller waits for its reads to agree instead).
    async fn replay_pending(&mut self) -> Result<Option<bool>, DbError> {
        Ok(None)
    }
    /// The other nodes of its cluster this server names itself (a replica's source, a
    /// primary's replicas), as far as this user may see them; none where it names none.
    async fn listed_nodes(&mut self) -> Result<Vec<ListedNode>, DbError> {
        Ok(Vec::new())
    }
    /// The role in words, with the evidence in parentheses.
    async fn replication_role(&mut self) -> Result<String, DbError> {
        Ok(self.node_role().await?.describe())
    }
    /// Rows and bytes of the named tables. Row counts are exact where counting is cheap or
    /// the database's estimate looks wrong (below half of `declared_rows`); counting stops
    /// at max(declared_rows, 1,000,000) rows. Otherwise they are the database's estimates.
    async fn table_sizes(&mut self, tables: &[String], declared_rows: u64) -> Result<Vec<TableSize>, DbError>;
}

/// A database target: where to connect and how.
pub trait Database: Send + Sync + 'static {
    type Conn: Connection;
    /// The target `url` names, for generic code that holds several of one kind (a probe's
    /// targets).
    fn open(url: &TargetUrl, options: &ConnectOptions) -> Result<Self, DbError>
    where
        Self: Sized;
    async fn connect(&self) -> Result<Self::Conn, DbError>;
    fn dialect(&self) -> Dialect;
    fn transport(&self) -> Transport;
    /// Blocking drivers (SQLite) get one OS thread per client.
    fn blocking(&self) -> bool {
        false
    }
    /// The BEGIN a write transaction uses (SQLite needs BEGIN IMMEDIATE to avoid
    /// deadlocking upgrades from read to write locks).
    fn begin_sql(&self, writes: bool) -> &'static str {
        let _ = writes;
        "BEGIN"
    }
    /// Creates the database itself when it is missing and this kind of target can (SQLite
    /// creates its file for prepare and bench; servers need an existing database).
    fn create_if_missing(&self) -> Result<(), DbError> {
        Ok(())
    }
    /// After cleanup: gives back the space a database file keeps for dropped tables, when
    /// it holds no table any more (SQLite's VACUUM); says what it did. Servers: nothing.
    fn compact_if_empty(&self) -> Result<Option<String>, DbError> {
        Ok(None)
    }
    /// One writer at a time (SQLite): prepare loads with one connection in one transaction.
    fn single_writer(&self) -> bool {
        false
    }
    /// What the server is, in the words every product shares (durability in effect,
    /// isolation), from its product name and settings.
    fn server_facts(&self, product: &str, variables: &BTreeMap<String, String>) -> crate::model::ServerFacts;
    /// What the server's settings say about the machine it runs on (host name, OS, data
    /// directory), as the result records it.
    fn host_facts(&self, variables: &BTreeMap<String, String>) -> BTreeMap<String, String> {
        let _ = variables;
        BTreeMap::new()
    }
    /// The memory that holds the table data, by the name it goes by, in bytes: the server's
    /// own caches (from its variables) and, for a database that reads its files through
    /// this host's OS, the OS page cache (`host_available_memory`: this host's available
    /// RAM before the run, when known).
    fn data_caches(
        &self,
        variables: &BTreeMap<String, String>,
        host_available_memory: Option<u64>,
    ) -> BTreeMap<String, u64>;
    /// CREATE TABLE for a workload file's table. `comment` is the table's whole comment
    /// (fairbench's ownership marker): a table comment where the database has them, else
    /// a comment inside the CREATE text the database stores (SQLite).
    fn create_table_sql(&self, t: &TableDef, comment: &str) -> Vec<String>;
    /// sysbench's CREATE TABLE for `sbtest<n>` in this dialect (plus what it needs after,
    /// e.g. PostgreSQL's separate index for --secondary), with the whole comment `comment`.
    fn sbtest_create_sql(&self, n: u32, shape: &SbtestShape, comment: &str) -> Vec<String>;
    /// Replaces a table's whole comment; `None` where it is part of the CREATE text.
    fn comment_sql(&self, table: &str, comment: &str) -> Option<String>;
    /// What must follow loading explicit values into a generated column (PostgreSQL moves
    /// the identity past them; MySQL and SQLite do it themselves).
    fn after_load_sql(&self, t: &TableDef) -> Vec<String> {
        let _ = t;
        Vec::new()
    }
    /// SQL for the server's clock as text, as precise as it keeps it (a probe's rows record
    /// when the server wrote them), and for the session's id on the server.
    fn clock_sql(&self) -> ProbeSql;
    /// What refreshes the planner's statistics after loading a table, where it is needed.
    fn analyze_sql(&self, table: &str) -> Option<String> {
        let _ = table;
        None
    }
}

/// Runs `$body` with `$db` bound to the concrete database the URL names.
#[macro_export]
macro_rules! with_database {
    ($url:expr, $options:expr, |$db:ident| $body:expr) => {
        match $url.dialect {
            $crate::db::Dialect::Sqlite => {
                let $db = std::sync::Arc::new($crate::db::sqlite::SqliteDatabase::with_options($url, $options)?);
                $body
            }
            $crate::db::Dialect::Mysql => {
                let $db = std::sync::Arc::new($crate::db::mysql::MysqlDatabase::new($url, $options)?);
                $body
            }
            $crate::db::Dialect::Postgres => {
                let $db = std::sync::Arc::new($crate::db::postgres::PostgresDatabase::new($url, $options)?);
                $body
            }
        }
    };
}
