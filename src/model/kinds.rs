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
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
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
    /// Encrypt when the server offers TLS, else plaintext; the certificate is not checked
    /// (libpq's sslmode=prefer, MySQL's ssl-mode=PREFERRED).
    Prefer,
    /// Encrypt, but do not check the certificate (like libpq's sslmode=require).
    Require,
    /// Encrypt and verify the certificate and host name.
    Verify,
}

impl TlsMode {
    pub fn name(self) -> &'static str {
        match self {
            TlsMode::Off => "off",
            TlsMode::Prefer => "prefer",
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

/// One way the run's connections reached the server, as the server reported it for each
/// connection (PostgreSQL pg_stat_ssl and pg_stat_activity for its own backend; MySQL and
/// MariaDB the session's Ssl_version and Ssl_cipher and its processlist host), with how many
/// connections used it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
pub struct TransportSeen {
    /// `tcp`, `socket` or `embedded`; absent: the server's answer could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<TransportKind>,
    /// The TLS version and cipher (`TLSv1.3 TLS_AES_256_GCM_SHA384`); absent: plaintext.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<String>,
    /// Connections that used it (reconnections included).
    pub connections: u32,
}

impl TransportSeen {
    /// One connection's transport.
    pub fn one(kind: TransportKind, tls: Option<String>) -> Self {
        TransportSeen { kind: Some(kind), tls, connections: 1 }
    }

    /// A connection whose transport the server did not say.
    pub fn unread() -> Self {
        TransportSeen { kind: None, tls: None, connections: 1 }
    }

    /// `TCP, TLSv1.3 TLS_AES_256_GCM_SHA384`, `socket, plaintext`, `unknown`.
    pub fn describe(&self) -> String {
        match (self.kind, &self.tls) {
            (None, _) => "unknown (the server's answer could not be read)".into(),
            (Some(TransportKind::Embedded), _) => "embedded".into(),
            (Some(k), tls) => {
                let name = if k == TransportKind::Tcp { "TCP" } else { k.name() };
                format!("{name}, {}", tls.as_deref().map_or("plaintext".to_string(), |t| format!("TLS {t}")))
            }
        }
    }

    /// Adds `seen`'s connections to `all` (one entry per kind).
    pub fn add(all: &mut Vec<TransportSeen>, seen: &TransportSeen) {
        match all.iter_mut().find(|t| t.kind == seen.kind && t.tls == seen.tls) {
            Some(t) => t.connections += seen.connections,
            None => {
                all.push(seen.clone());
                all.sort();
            }
        }
    }

    /// The connections' transports in one line: `all 8 connections: TCP, TLS ...` or
    /// `6 connections: TCP, TLS ...; 2 connections: TCP, plaintext`; `None`: none recorded.
    pub fn summary(all: &[TransportSeen]) -> Option<String> {
        let counted =
            |t: &TransportSeen| format!("{}: {}", super::plural(t.connections.into(), "connection"), t.describe());
        match all {
            [] => None,
            [one] => Some(format!("all {}", counted(one))),
            many => Some(many.iter().map(counted).collect::<Vec<_>>().join("; ")),
        }
    }

    /// The kinds used, without counts (what a comparison holds against another run):
    /// `TCP, TLS TLSv1.3 ...`, `TCP, plaintext + TC, TLS ...`; `unknown (not recorded)`.
    pub fn kinds(all: &[TransportSeen]) -> String {
        if all.is_empty() {
            return "unknown (not recorded)".into();
        }
        all.iter().map(TransportSeen::describe).collect::<Vec<_>>().join(" + ")
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
