//! The conditions of a run, recorded in every result: client host, server (product, version,
//! every variable, counters, replication role), dataset (rows and bytes per table, and the
//! memory that caches it), workload and run. The audit reads these.

use super::{LoopKind, RunStatus};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Conditions {
    pub client: ClientConditions,
    pub server: ServerConditions,
    pub dataset: DatasetConditions,
    pub workload: WorkloadRecord,
    pub run: RunRecord,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ClientConditions {
    #[serde(flatten)]
    pub host: HostFacts,
    pub fairbench_version: String,
    /// With any password replaced by `***`. For display: `rerun` executes `request`.
    pub command_line: Vec<String>,
    /// What the run was asked to do, as typed data (target URLs without passwords);
    /// absent in results written before requests were kept, and in a probe's own result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<super::RunRequest>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct ServerConditions {
    pub product: String,
    pub version: String,
    /// MySQL: SHOW GLOBAL VARIABLES; PostgreSQL: pg_settings (`setting unit`); SQLite: PRAGMAs.
    pub variables: BTreeMap<String, String>,
    /// Counters as the measured phase starts (after any warmup) and after the last event (MySQL SHOW
    /// GLOBAL STATUS; PostgreSQL pg_stat_database, pg_stat_bgwriter, pg_stat_wal; SQLite
    /// page counts); `status_delta` = after - before, non-zero entries only.
    pub status_before: BTreeMap<String, i64>,
    pub status_after: BTreeMap<String, i64>,
    pub status_delta: BTreeMap<String, i64>,
    /// `primary`, `replica`, `standalone` or `embedded`, with what it was read from.
    pub replication_role: String,
    /// The server's own identity as its driver reads it (MySQL's `server_uuid`, MariaDB's
    /// `server_id` at the host and port it reports, PostgreSQL's address and port with its
    /// system identifier), with the `host:port` it reports: which server ran, never the
    /// address dialled. Absent for an embedded database and in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<String>,
    /// Whether the server runs on the client's host (loopback, socket or embedded): then the
    /// client's host facts are the server's too.
    pub same_host_as_client: bool,
    /// Facts about its host the server itself exposes (hostname, OS, machine).
    pub host: BTreeMap<String, String>,
    /// What the server is in words every product shares, derived by its driver from the
    /// settings above (absent in results written before they were recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub facts: Option<crate::model::ServerFacts>,
}

impl ServerConditions {
    /// The figures its driver follows over time (none: a result from before they were).
    pub fn sampled(&self) -> &[crate::model::SampledFigure] {
        self.facts.as_ref().map(|f| f.sampled.as_slice()).unwrap_or_default()
    }

    pub fn set_status(&mut self, before: BTreeMap<String, i64>, after: BTreeMap<String, i64>) {
        self.status_delta = after
            .iter()
            .filter_map(|(k, a)| {
                let b = before.get(k)?;
                (a != b).then(|| (k.clone(), a - b))
            })
            .collect();
        self.status_before = before;
        self.status_after = after;
    }
}

/// One table's size, as the database reports it.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct TableSize {
    pub name: String,
    pub rows: u64,
    /// false: the database's estimate (InnoDB statistics, pg_class.reltuples).
    pub rows_exact: bool,
    pub data_bytes: u64,
    pub index_bytes: u64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct DatasetConditions {
    /// Rows each table should have (0 for oltp_insert --auto-inc=off, as sysbench; a
    /// workload file's largest table).
    pub declared_rows_per_table: u64,
    /// A workload file's tables: the rows prepare loads into each (tables declared empty
    /// are meant to be).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub declared_rows: BTreeMap<String, u64>,
    pub tables_at_start: Vec<TableSize>,
    pub tables_at_end: Vec<TableSize>,
    /// Tables the run used that fairbench did not create (`--allow-foreign-tables` for
    /// writers): another tool prepared them, so their rows and shape are that tool's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub foreign_tables: Vec<String>,
    /// Data + index bytes of all tables at start.
    pub total_bytes: u64,
    /// The part of the data the run drew from (absent: it drew from no table, or the
    /// result predates this record).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub touched: Option<crate::model::TouchedData>,
    /// The memory that caches the data, as each driver names it (`Database::data_caches`):
    /// InnoDB's buffer pool, PostgreSQL's shared_buffers, SQLite's own page cache, and the
    /// OS page cache (`os_page_cache`: the host's available RAM before the run) when the
    /// server is on this host and reads through it. Bytes.
    pub cache: BTreeMap<String, u64>,
    /// RAM of the server's host when known (same host as the client), else null.
    pub server_host_memory_bytes: Option<u64>,
}

/// The name of the OS page cache among a dataset's caches: present when the server is on
/// this host and its engine reads the data through the OS (not InnoDB with O_DIRECT).
pub const OS_PAGE_CACHE: &str = "os_page_cache";

impl DatasetConditions {
    /// Whether the engine reads its data through the OS page cache of the server's host, as
    /// the driver judged it (`cache` names it).
    pub fn reads_through_os_cache(&self) -> bool {
        self.cache.contains_key(OS_PAGE_CACHE)
    }

    /// The largest memory that caches the data, by the server's name for it, and its bytes;
    /// `None` when none is known.
    pub fn largest_cache(&self) -> Option<(&str, u64)> {
        self.cache.iter().max_by_key(|(_, b)| **b).filter(|(_, b)| **b > 0).map(|(n, b)| (n.as_str(), *b))
    }

    /// The data's bytes over the largest cache (above 1: it does not fit), with the cache's
    /// name; `None` when the cache or the data's size is unknown.
    pub fn cache_ratio(&self) -> Option<(&str, f64)> {
        let (name, bytes) = self.largest_cache()?;
        let data = self.working_set_bytes();
        (data > 0).then(|| (name, data as f64 / bytes as f64))
    }

    /// Bytes of the data the run drew from: all tables', or the drawn part of tables that
    /// hold more rows than the run drew from.
    pub fn working_set_bytes(&self) -> u64 {
        self.touched.as_ref().map_or(self.total_bytes, |t| t.bytes.min(self.total_bytes))
    }

    /// The cache cliff between this dataset and a larger one, the rule sweeps and studies
    /// share: the data the run drew from fits the largest cache here (ratio at most 1) and
    /// not in `next` (above 1). The cache's name (`next`'s) and both ratios.
    pub fn cache_cliff_to<'a>(&self, next: &'a DatasetConditions) -> Option<(&'a str, f64, f64)> {
        let ((_, before), (name, after)) = (self.cache_ratio()?, next.cache_ratio()?);
        is_cache_cliff(before, after).then_some((name, before, after))
    }

    /// `0.37x innodb_buffer_pool_size`, `2.01x cache_size (larger)` or `unknown`.
    pub fn describe_cache_fit(&self) -> String {
        match self.cache_ratio() {
            Some((name, r)) => format!("{r:.2}x {name}{}", if r > 1.0 { " (larger)" } else { "" }),
            None => "unknown".into(),
        }
    }
}

/// The cache cliff rule on data-over-cache ratios: fits (at most 1), then does not (above 1).
pub fn is_cache_cliff(before: f64, after: f64) -> bool {
    before <= 1.0 && after > 1.0
}

/// Parses `123`, `128MB`, `16384 8kB` (pg_settings setting + unit) to bytes.
pub fn parse_bytes(value: &str) -> Option<u64> {
    let v = value.trim();
    let (num, unit) = match v.split_once(' ') {
        Some((n, u)) => (n, u),
        None => {
            let split = v.find(|c: char| !c.is_ascii_digit() && c != '-').unwrap_or(v.len());
            (&v[..split], &v[split..])
        }
    };
    let n: i64 = num.parse().ok()?;
    let unit_bytes: i64 = match unit.trim() {
        "" | "B" => 1,
        "kB" | "K" | "KB" => 1024,
        "8kB" => 8192,
        "16kB" => 16384,
        "MB" | "M" => 1 << 20,
        "GB" | "G" => 1 << 30,
        "TB" | "T" => 1 << 40,
        _ => return None,
    };
    u64::try_from(n.checked_mul(unit_bytes)?).ok()
}

/// Facts about the machine fairbench ran on (read from /proc and /sys on Linux).
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct HostFacts {
    pub hostname: String,
    pub cpu_model: String,
    pub cores: u32,
    pub memory_bytes: u64,
    pub os: String,
    pub kernel: String,
    /// `tsc`, `kvm-clock`, `hpet`...: timing quality under virtualization.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clocksource: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_governor: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transparent_hugepages: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct WorkloadRecord {
    pub name: String,
    pub options: serde_json::Value,
    pub distribution: serde_json::Value,
    /// Human description of the distribution (`uniform`, `special (...)`).
    pub distribution_description: String,
    /// Statements per event, by kind, as the workload sends them.
    pub mix_per_event: BTreeMap<String, u64>,
    /// SQL text of each statement kind (table 1, `?` placeholders).
    pub statements_sql: BTreeMap<String, String>,
    /// fairbench's classification of each statement kind.
    pub statement_classes: BTreeMap<String, String>,
    /// The SQL command of each statement, keyed like `statements` (what the audit compares
    /// with the server's own counters); absent in results written before it was recorded.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub statement_commands: BTreeMap<String, crate::model::SqlCommand>,
    /// A workload file's transactions: weight, BEGIN/COMMIT, statements in order.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub transactions: BTreeMap<String, TransactionRecord>,
    /// The workload file, when the workload came from one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<WorkloadFileRecord>,
    /// The benchmark whose rules the file follows (`tpc-c`), if it says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub follows: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct TransactionRecord {
    /// Relative frequency in the mix.
    pub weight: u32,
    /// Expected share of events, 0..1.
    pub share: f64,
    /// Inside BEGIN ... COMMIT.
    pub begin: bool,
    /// The think time's mean (after each transaction, closed loop only).
    pub think_ms: u64,
    /// How think times are drawn: `0 ms` or `100 ms` (fixed), `negative exponential, mean
    /// 12000 ms, at most 120000 ms`; absent in results written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think: Option<String>,
    /// The pause before each transaction (keying time), the same way; absent when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keying: Option<String>,
    /// Statement names in the order sent (`statements_sql` has their SQL).
    pub statements: Vec<String>,
    /// Queued by the client and executed by the run's deferred worker; its executions are
    /// the transaction `{name}_deferred` of the results (their time from queued to committed).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deferred: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct WorkloadFileRecord {
    /// As given on the command line.
    pub path: String,
    /// SHA-256 of the file's content, hex.
    pub sha256: String,
    /// The whole file, as read.
    pub content: String,
    /// `--set` overrides, as given.
    pub overrides: BTreeMap<String, String>,
    /// Every parameter's value used (after overrides).
    pub params: BTreeMap<String, String>,
    /// How each event's transaction was picked: `weighted` (drawn by weight) or `deck`
    /// (dealt from a shuffled deck of `weight` cards per transaction); absent in results
    /// written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pick: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct RunRecord {
    /// `closed` or `open`, with its description.
    pub loop_model: LoopKind,
    pub loop_model_description: String,
    pub threads: u32,
    pub time_limit_s: Option<f64>,
    pub events_limit: Option<u64>,
    pub warmup_s: u32,
    pub measured_s: f64,
    pub events: u64,
    pub rand_seed: u64,
    pub percentile_method: String,
    pub status: RunStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// How clients reconnected after losing their connection (absent: a probe's own
    /// writes, or a result from before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconnect: Option<crate::model::ReconnectPolicy>,
    /// How the warmup ended (absent without a warmup, or in results from before it was
    /// recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_end: Option<WarmupEnd>,
    /// `--repeat`: how many times the measured phase ran (absent: once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<u32>,
    /// `--cost-per-hour`: the target's price per hour, in the user's currency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_per_hour: Option<f64>,
    /// RFC 3339 UTC.
    pub started_at: String,
    pub ended_at: String,
    /// A workload with deferred transactions: requests still queued when the run ended,
    /// never executed (their queueing was counted as the client's event).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deferred_left: Option<u64>,
    /// How the run's connections reached the server, as the server reported each one:
    /// one entry per kind (TCP or socket, TLS version and cipher or plaintext) with its
    /// connections. Absent in results written before it was recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transports: Vec<crate::model::TransportSeen>,
    /// `--shard I/N`: this run is one shard of a run split over client hosts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::model::shard::ShardRecord>,
}

/// The measured phase began between events: at the warmup's end no client started a new
/// event, the events in flight finished, the server's counters were read, then measuring
/// began. Its counters and its counted events thus describe the same statements.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WarmupEnd {
    /// From the warmup's planned end to the measured phase's start, ms: the events in
    /// flight finishing and the counters being read. It is in no event's latency.
    pub pause_ms: f64,
    /// Warmup events still running when fairbench stopped waiting for them (after 10 s):
    /// their statements may fall on either side of the counters. 0 when none.
    pub events_in_flight: u32,
}

impl WarmupEnd {
    /// Several warmups that ended each on its own (repeats, shards) as one: the longest
    /// pause, every event left in flight.
    pub fn pooled<'a>(ends: impl IntoIterator<Item = &'a WarmupEnd>) -> WarmupEnd {
        ends.into_iter().fold(WarmupEnd::default(), |a, e| WarmupEnd {
            pause_ms: a.pause_ms.max(e.pause_ms),
            events_in_flight: a.events_in_flight + e.events_in_flight,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_cache_is_the_one_that_holds_the_most_data() {
        let ds = DatasetConditions {
            total_bytes: 4_000_000,
            cache: [("cache_size".into(), 2_048_000), ("os_page_cache".into(), 8 << 30)].into(),
            ..Default::default()
        };
        assert_eq!(ds.largest_cache(), Some(("os_page_cache", 8 << 30)));
        assert_eq!(ds.describe_cache_fit(), "0.00x os_page_cache");
    }

    #[test]
    fn bytes_in_server_spellings() {
        assert_eq!(parse_bytes("134217728"), Some(134_217_728));
        assert_eq!(parse_bytes("16384 8kB"), Some(16384 * 8192));
        assert_eq!(parse_bytes("4GB"), Some(4 << 30));
        assert_eq!(parse_bytes("on"), None);
    }
}
