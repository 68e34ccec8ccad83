//! The result model: everything a result file holds, as typed data (documented in
//! docs/result-schema.md, machine-checked by docs/result-schema.json). This module depends
//! on nothing else in the crate: the runner, conditions and audit build or read these values,
//! and reports, compare and merge will read nothing else.

pub mod command;
pub mod comparison;
pub mod conditions;
pub mod criterion;
pub mod error_code;
pub mod facts;
pub mod fault;
pub mod file;
pub mod finding;
pub mod ha;
pub mod ha_figure;
pub mod ha_ledger;
pub mod ha_node;
pub mod ha_servers;
pub mod kinds;
pub mod metric;
pub mod outage;
pub mod probe_request;
pub mod record;
pub mod repeat;
pub mod request;
pub mod shard;
pub mod statement_class;
pub mod stats;
pub mod study;
pub mod sweep;
pub mod table;
mod time;
pub mod touched;
pub mod tpcc;
mod words;

pub use command::SqlCommand;
pub use conditions::*;
pub use criterion::{Criterion, ThresholdRecord};
pub use error_code::{ClientFault, ErrorCode, ReconnectPolicy, RetryPolicy};
pub use facts::{CommitFlush, Counted, CounterRule, Durability, SampleKind, SampledFigure, ServerFacts};
pub use file::{pretty_json, ResultFileError};
pub use finding::{Finding, Severity};
pub use kinds::*;
pub use metric::{Metric, MetricSource};
pub use probe_request::ProbeRequest;
pub use repeat::{RepeatRecord, Spread};
pub use request::{PrepareRequest, RunRequest, TargetRequest, WorkloadRequest};
pub use statement_class::{StatementClass, LATENCY_CLASSES};
pub use stats::{
    ClassStats, CompactStats, EncodedHistogram, IntervalStats, RateSpread, Scatter, ScatterOf, SlowestEvent,
    SlowestStatement,
};
pub use table::{ColumnDef, ColumnType, SbtestShape, TableDef};
pub use time::{now_micros, parse_sql_timestamp, rfc3339, write_sql_timestamp};
pub use touched::TouchedData;
pub use words::{nearest, plural};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The JSON Schema of result files, generated from these types (committed as
/// docs/result-schema.json; `fairbench schema` prints it).
pub fn json_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(ResultDocument)).expect("schema serializes")
}

/// Bumped whenever a field changes meaning or disappears (additions keep the version).
pub const SCHEMA_VERSION: u32 = 2;
pub const SCHEMA_NAME: &str = "fairbench.result";

/// The top-level document.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ResultDocument {
    pub schema: String,
    pub schema_version: u32,
    pub fairbench_version: String,
    pub target: TargetRecord,
    /// Everything the numbers depend on: client host, server, dataset, workload, run.
    pub conditions: Conditions,
    /// Keys `total`, `read`, `write`, `commit`, `other` (statements) and `event`
    /// (whole events: sysbench's "latency"). Open loop: latency from each event's intended
    /// start (a statement's latency includes the time its event waited to start).
    pub stats: BTreeMap<String, ClassStats>,
    /// Per statement kind (sysbench's names: `point_selects`, ...; a file's
    /// `transaction.statement`).
    pub statements: BTreeMap<String, ClassStats>,
    /// Per kind of event: a workload file's transactions (count, rate, latency of the
    /// whole transaction); a built-in workload has one, named after it.
    #[serde(default)]
    pub transactions: BTreeMap<String, ClassStats>,
    /// A workload file's checks, run after the measured phase.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<CheckRecord>,
    /// A workload file's tallies: numbers its tables hold, read as the measured phase
    /// started and after it ended.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tallies: Vec<TallyRecord>,
    /// Open loop only: the same keys as `stats`, service time (actual start to end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<BTreeMap<String, ClassStats>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_statements: Option<BTreeMap<String, ClassStats>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_loop: Option<OpenLoopRecord>,
    /// The load generator's own CPU and memory.
    pub client_cost: ClientRecord,
    /// How evenly the measured events spread over the clients (sysbench's "threads
    /// fairness"); absent in results written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fairness: Option<FairnessRecord>,
    pub errors: ErrorRecord,
    /// One entry per second of the run, warmup included (flagged).
    pub intervals: Vec<IntervalStats>,
    /// The streamed timeline written beside this file as the run went (each interval
    /// appended when it closed): its files, by name in this file's directory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub streamed: Vec<StreamedFile>,
    /// `--repeat N` (N > 1): each repeat's statistics; the top-level ones merge them all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repeats: Vec<RepeatRecord>,
    /// `--repeat N`: each headline metric's median and spread between the repeats.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub repeat_summary: BTreeMap<String, Spread>,
    /// `--threshold`s, checked when the run ended.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thresholds: Vec<ThresholdRecord>,
    /// A TPC-C-like workload's figures (tpmC, NOPM, the mix and response times against the
    /// specification); absent for any other workload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpcc: Option<tpcc::TpccRecord>,
    /// A high-availability probe's figures (`fairbench probe failover|lag`): every write
    /// attempt and outage, lost acknowledged writes, replica lag; absent for other runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ha: Option<ha::HaRecord>,
    /// Faults performed on a sandbox's nodes on a schedule (`--fault`), on the run's clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub faults: Option<fault::FaultRecord>,
    /// A combined result (`fairbench combine`): one row per shard, the figures above being
    /// theirs added up (histograms merged exactly). Empty for a run on one host.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shards: Vec<shard::ShardRow>,
    /// What the audit found when the result was written (`fairbench audit` recomputes).
    #[serde(default)]
    pub audit: Vec<Finding>,
}

impl ResultDocument {
    /// What metrics read: the whole result (every repeat merged).
    pub fn metric_source(&self) -> MetricSource<'_> {
        MetricSource {
            stats: &self.stats,
            statements: &self.statements,
            transactions: &self.transactions,
            errors: &self.errors,
            client: &self.client_cost,
            cost_per_hour: self.conditions.run.cost_per_hour,
            ha: self.ha.as_ref(),
        }
    }

    /// A metric's value over the whole result.
    pub fn metric(&self, m: &Metric) -> Option<f64> {
        m.value(&self.metric_source())
    }
}

/// One check of a workload file and how it came out.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct CheckRecord {
    pub name: String,
    /// As sent (parameters substituted).
    pub sql: String,
    pub passed: bool,
    /// The first column of the first row, as text (`null` when no row or NULL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// A check that counts the rows breaking it: how many did (it passed at 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offending: Option<u64>,
    /// Why it could not run, when it could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl CheckRecord {
    /// As a report prints it: `check FAILED: NAME (2 offending rows)`.
    pub fn line(&self) -> String {
        let verdict = if self.passed { "PASSED" } else { "FAILED" };
        format!("check {verdict}: {} ({})", self.name, self.detail())
    }

    /// What it read, or why it could not run: `returned 0`, `could not run: ...`.
    pub fn detail(&self) -> String {
        match (&self.error, &self.value, self.offending) {
            (Some(e), _, _) => format!("could not run: {e}"),
            (None, _, Some(0)) => "no offending row".into(),
            (None, _, Some(n)) => plural(n, "offending row"),
            (None, Some(v), None) => format!("returned {v}"),
            (None, None, None) => "returned nothing".into(),
        }
    }
}

/// Which row of its result a statement keeps for later statements (a workload file's
/// `save_row`; the drivers keep it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RowPick {
    #[default]
    First,
    /// Row ceil(n/2) of the n rows, in the query's order: TPC-C's customer chosen by last
    /// name, the middle one of those sorted by first name (clause 2.5.2.2).
    Middle,
}

/// A number the tables hold around the measured phase (absent: it could not be read then).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TallyRecord {
    pub name: String,
    /// As the measured phase started (after any warmup).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<i64>,
    /// After the last event, once every client had finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<i64>,
    /// after - before; over repeats, the sum of each repeat's change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<i64>,
}

impl TallyRecord {
    pub fn read(name: &str, before: Option<i64>, after: Option<i64>) -> TallyRecord {
        let change = before.zip(after).map(|(b, a)| a - b);
        TallyRecord { name: name.into(), before, after, change }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct TargetRecord {
    /// The URL with the password replaced by `***`.
    pub url: String,
    pub driver: Dialect,
    pub transport: TransportKind,
    /// `host:port`, the socket path, or the SQLite file.
    pub address: String,
    pub tls: TlsMode,
    /// Prepared statements or plain-text queries (results before it was recorded: prepared).
    #[serde(default)]
    pub statements: StatementMode,
    /// Several --target (the nodes of one replicated database): every node, in the order
    /// tried; each client connects to the first that takes writes, again after a loss. `url`
    /// is the first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<String>,
}

/// For `skip_serializing_if`: a count that is zero is left out.
pub(crate) fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct ErrorRecord {
    pub total: u64,
    /// Retried errors by the database's own code (MySQL errno, SQLSTATE, SQLite code).
    pub by_code: BTreeMap<String, u64>,
    pub reconnects: u64,
    /// Reconnect attempts that failed, each followed by a backoff (10 ms doubling to 250 ms)
    /// until --reconnect-timeout.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reconnect_failures: u64,
}

/// Open-loop facts of a run.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct OpenLoopRecord {
    /// Target events per second over all clients.
    pub rate: f64,
    pub arrival: Arrival,
    pub max_backlog: u64,
    /// Events that started more than 1 ms after their intended start.
    pub late: u64,
    /// Events never sent because the backlog was full.
    pub dropped: u64,
    /// Actual start minus intended start, over all measured events.
    pub start_delay: ClassStats,
}

/// Measured events and busy time per client: average and population standard deviation
/// over all clients (sysbench's "threads fairness"), with the extremes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FairnessRecord {
    pub clients: u32,
    pub events_avg: f64,
    pub events_stddev: f64,
    pub events_min: u64,
    pub events_max: u64,
    /// Sum of a client's event latencies, seconds.
    pub busy_s_avg: f64,
    pub busy_s_stddev: f64,
}

/// The load generator's own cost (issue: a heavy client steals CPU from the server).
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct ClientRecord {
    pub cpu_s: f64,
    /// Absent when no event completed (nothing to divide by).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_per_event_us: Option<f64>,
    /// Absent when no statement completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_per_query_us: Option<f64>,
    /// Process CPU over measured wall time, percent of all cores.
    pub cpu_utilization_pct: f64,
    pub cores: u32,
    pub worker_threads: u32,
    /// Busiest worker thread's CPU over wall time, percent of one core.
    pub busiest_worker_pct: f64,
    /// The whole host's CPU busy time over the measured phase (all processes), percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_cpu_busy_pct: Option<f64>,
    pub peak_rss_bytes: u64,
    pub saturated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// A file of the streamed timeline (src/timeline.rs, docs/result-schema.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StreamedFile {
    /// Its name, beside the result file.
    pub file: String,
    /// `intervals-jsonl-gz` (one `intervals[]` entry per line, gzip; `intervals-jsonl`:
    /// plain, in results written before the stream was compressed), `hdr-interval-log`
    /// (HdrHistogram's interval log of the kept entries, V2 + DEFLATE, nanoseconds, tagged
    /// by class) or `fairbench-record-jsonl-gz` (the run's record, which the result was
    /// built from: docs/record.md).
    pub format: String,
    pub bytes: u64,
    /// SHA-256 of its content when the result was written.
    pub sha256: String,
}
