//! The closed sets a result names: database dialects, transports, TLS modes, run statuses,
//! loop models. Serialized as the lowercase strings result files have always used.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;

/// SQL dialects fairbench speaks (the result's `target.driver`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Dialect {
    Mysql,
    Postgres,
    Sqlite,
}

impl Dialect {
    pub const ALL: [Dialect; 3] = [Dialect::Mysql, Dialect::Postgres, Dialect::Sqlite];

    /// `mysql`, `postgres` or `sqlite`.
    pub fn from_name(name: &str) -> Option<Dialect> {
        Self::ALL.into_iter().find(|d| d.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            Dialect::Mysql => "mysql",
            Dialect::Postgres => "postgres",
            Dialect::Sqlite => "sqlite",
        }
    }

    /// Whether an INSERT reports the id it generated (MySQL's LAST_INSERT_ID, SQLite's
    /// rowid); PostgreSQL returns it only through RETURNING.
    pub fn reports_insert_id(self) -> bool {
        !matches!(self, Dialect::Postgres)
    }

    /// The error codes retried by default, as sysbench does (MySQL --mysql-ignore-errors
    /// default; PostgreSQL codes hard-coded in sysbench; SQLite's busy/locked).
    pub fn default_retry_codes(self) -> &'static [&'static str] {
        match self {
            Dialect::Mysql => &["1213", "1205", "1020"],
            Dialect::Postgres => &["40001", "40P01", "23505"],
            Dialect::Sqlite => {
                &["SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_CONSTRAINT_PRIMARYKEY", "SQLITE_CONSTRAINT_UNIQUE"]
            }
        }
    }
}

/// How the client sends statements (`--ps`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StatementMode {
    /// Server-side prepared statements, prepared once per connection and executed with
    /// bound values (SQLite: compiled once, cached).
    #[default]
    Prepared,
    /// Plain-text queries with the values written into the SQL (MySQL COM_QUERY,
    /// PostgreSQL's simple query protocol; SQLite: compiled anew for every execution).
    Text,
}

impl StatementMode {
    pub fn describe(self) -> &'static str {
        match self {
            StatementMode::Prepared => "server-side prepared statements",
            StatementMode::Text => "plain-text queries, values in the SQL (--ps=off)",
        }
    }
}

/// How the client reaches the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TransportKind {
    Tcp,
    /// A Unix domain socket.
    Socket,
    /// In-process (SQLite).
    Embedded,
}

impl TransportKind {
    pub fn name(self) -> &'static str {
        match self {
            TransportKind::Tcp => "tcp",
            TransportKind::Socket => "socket",
            TransportKind::Embedded => "embedded",
        }
    }
}

/// TLS mode in force.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TlsMode {
    /// No TLS (the default; sockets never use it).
    Off,
    /// Encrypt, but do not check the certificate (like libpq's sslmode=require).
    Require,
    /// Encrypt and verify the certificate and host name.
    Verify,
}

impl TlsMode {
    pub fn name(self) -> &'static str {
        match self {
            TlsMode::Off => "off",
            TlsMode::Require => "require",
            TlsMode::Verify => "verify",
        }
    }
}

/// How the client reached the server, stated in every report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transport {
    pub kind: TransportKind,
    /// `host:port`, the socket path, or the file.
    pub address: String,
    pub tls: TlsMode,
}

impl fmt::Display for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            TransportKind::Embedded => write!(f, "embedded (in-process), file {}", self.address),
            kind => write!(f, "{} {}, TLS {}", kind.name().to_uppercase(), self.address, self.tls.name()),
        }
    }
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Completed,
    /// Ctrl-C or SIGTERM.
    Interrupted,
    /// A client hit an error it cannot retry, or lost the server.
    Failed,
    /// Written when measuring starts, replaced by the result when the run ends: a file that
    /// still says so belongs to a run that never ended (killed, a power cut): `fairbench
    /// recover` builds it from the run's record.
    Running,
    /// Built by `fairbench recover` from the record of a run that never ended.
    Incomplete,
}

impl RunStatus {
    /// How much of a run's numbers the status leaves in doubt: parts of one run (repeats,
    /// shards) take the worst.
    pub fn severity(self) -> u8 {
        match self {
            RunStatus::Completed => 0,
            RunStatus::Interrupted => 1,
            RunStatus::Failed => 2,
            RunStatus::Running | RunStatus::Incomplete => 3,
        }
    }
}

impl RunStatus {
    pub fn name(self) -> &'static str {
        match self {
            RunStatus::Completed => "completed",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Failed => "failed",
            RunStatus::Running => "running",
            RunStatus::Incomplete => "incomplete",
        }
    }
}

/// Spacing of intended start times in an open loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Arrival {
    /// Exactly 1/rate apart.
    Fixed,
    /// Exponentially distributed gaps with mean 1/rate (a Poisson process), seeded by --rand-seed.
    Poisson,
}

impl Arrival {
    pub fn name(self) -> &'static str {
        match self {
            Arrival::Fixed => "fixed",
            Arrival::Poisson => "poisson",
        }
    }
}

/// Closed or open loop (the result's `run.loop_model`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LoopKind {
    Closed,
    Open,
}

/// How load is offered.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "model")]
pub enum LoopModel {
    /// Each client sends its next event as soon as the previous one ends (sysbench without
    /// --rate). Latency is service time at maximum throughput: stalls that stop a client
    /// also stop it from sending, so percentiles understate what waiting users would see.
    Closed,
    /// Events arrive on a schedule of their own, whatever the server does; latency is
    /// measured from each event's intended start (no coordinated omission).
    Open {
        /// Events per second over all clients.
        rate: f64,
        arrival: Arrival,
        /// Most events allowed to be due but not yet started; older ones are dropped
        /// (counted) so that a recovered server is not hit by an unbounded burst.
        max_backlog: u64,
    },
}

impl LoopModel {
    pub fn kind(&self) -> LoopKind {
        match self {
            LoopModel::Closed => LoopKind::Closed,
            LoopModel::Open { .. } => LoopKind::Open,
        }
    }

    pub fn describe(&self) -> String {
        match self {
            LoopModel::Closed => "closed loop (each client sends its next event when the previous one ends; latency = service time at maximum throughput)".into(),
            LoopModel::Open { rate, arrival, max_backlog } => format!(
                "open loop at {rate} events/s, {} arrivals (latency measured from each event's intended start; service time reported separately; backlog bounded at {max_backlog} events)",
                match arrival {
                    Arrival::Fixed => "fixed-interval",
                    Arrival::Poisson => "Poisson",
                }
            ),
        }
    }

    pub fn is_open(&self) -> bool {
        matches!(self, LoopModel::Open { .. })
    }
}
