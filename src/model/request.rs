//! What a measurement was asked to do, as typed data: the workload and its options, the
//! targets, the load's shape, warmup and duration, what to record and where. The command
//! line becomes a [`RunRequest`] once (src/cli); study cells, sweep points, `ab` sides,
//! `probe --with` and `rerun` make or carry requests. A result keeps the request it ran
//! (passwords never: target URLs are stored redacted), and `rerun` executes it.
//!
//! Field names are the command line's (`table_size` is `--table-size`), defaults are its
//! defaults, and durations are seconds.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// `run` and `bench`: one measurement.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunRequest {
    /// `bench`: the workload's tables prepared first when they are missing.
    #[serde(default)]
    pub bench: bool,
    pub target: TargetRequest,
    pub workload: WorkloadRequest,
    /// Client connections.
    pub threads: u32,
    /// Measured seconds after warmup (None: 10 unless `events`; 0: no limit).
    pub time: Option<u64>,
    /// Events after warmup (0: no limit).
    pub events: Option<u64>,
    /// Seconds before statistics start.
    pub warmup: u32,
    /// Seconds between interval lines (0.01 to 86400).
    pub report_interval: Option<f64>,
    pub percentile: f64,
    pub percentiles: Vec<f64>,
    /// `text`, `sysbench` or `json`; None: sysbench's with `sysbench_defaults`, else text.
    pub format: Option<String>,
    pub verbose: bool,
    pub histogram: bool,
    pub out: Option<PathBuf>,
    pub metrics_listen: Option<String>,
    pub ignore_errors: Vec<String>,
    /// Seconds a client keeps reconnecting.
    pub reconnect_timeout: u32,
    pub faults: FaultRequest,
    /// Open loop: events per second over all clients (None or 0: closed loop).
    pub rate: Option<f64>,
    /// `fixed` or `poisson`.
    pub arrival: String,
    pub max_backlog: Option<u64>,
    pub prepare_threads: Option<u32>,
    pub allow_foreign_tables: bool,
    pub repeat: u32,
    /// `--threshold`s as written: `p99<10ms`.
    pub thresholds: Vec<String>,
    pub cost_per_hour: Option<f64>,
    pub shard: ShardRequest,
}

impl RunRequest {
    /// `workload` with every other option at its default.
    pub fn new(workload: &str) -> Self {
        RunRequest {
            bench: false,
            target: TargetRequest::default(),
            workload: WorkloadRequest::new(workload),
            threads: 1,
            time: None,
            events: None,
            warmup: 0,
            report_interval: None,
            percentile: 95.0,
            percentiles: Vec::new(),
            format: None,
            verbose: false,
            histogram: false,
            out: None,
            metrics_listen: None,
            ignore_errors: Vec::new(),
            reconnect_timeout: 10,
            faults: FaultRequest::default(),
            rate: None,
            arrival: "fixed".into(),
            max_backlog: None,
            prepare_threads: None,
            allow_foreign_tables: false,
            repeat: 1,
            thresholds: Vec::new(),
            cost_per_hour: None,
            shard: ShardRequest::default(),
        }
    }

    /// The request as a result keeps it: target URLs without their passwords.
    pub fn redacted(&self, redact: impl Fn(&str) -> String) -> Self {
        RunRequest { target: self.target.redacted(redact), ..self.clone() }
    }
}

/// Where to connect and how.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TargetRequest {
    /// Database URLs: one, or the nodes of one replicated database.
    pub targets: Vec<String>,
    /// The password's file (the password itself is never kept).
    pub password_file: Option<PathBuf>,
    pub connect: ConnectRequest,
    /// Server-side prepared statements.
    pub ps: bool,
}

/// A recorded target URL made usable again: the `***` that stood for its password (or its
/// percent-encoded form, from a sysbench line's redacted `--mysql-password`) taken out, so
/// the password comes from where it always does (`--password-file`, the environment).
pub fn without_redacted_password(url: &str) -> String {
    url.replacen(":***@", "@", 1).replacen(":%2A%2A%2A@", "@", 1)
}

impl Default for TargetRequest {
    fn default() -> Self {
        TargetRequest {
            targets: vec![DEFAULT_TARGET.into()],
            password_file: None,
            connect: ConnectRequest::default(),
            ps: true,
        }
    }
}

impl TargetRequest {
    /// The first (often the only) target.
    pub fn target(&self) -> &str {
        self.targets.first().map_or("", String::as_str)
    }

    /// The same target with each URL passed through `redact`.
    pub fn redacted(&self, redact: impl Fn(&str) -> String) -> Self {
        TargetRequest { targets: self.targets.iter().map(|t| redact(t)).collect(), ..self.clone() }
    }
}

/// The target when none is given.
pub const DEFAULT_TARGET: &str = "sqlite://fairbench.db";

/// Deadlines and limits for a server that may misbehave.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ConnectRequest {
    /// Seconds to connect, negotiate TLS and authenticate.
    pub connect_timeout: f64,
    /// Seconds for each administrative query.
    pub admin_timeout: f64,
    /// Largest packet or message a server may send, in bytes.
    pub max_packet: usize,
    pub allow_cleartext_password: bool,
}

impl Default for ConnectRequest {
    fn default() -> Self {
        ConnectRequest {
            connect_timeout: 10.0,
            admin_timeout: 30.0,
            max_packet: 64 << 20,
            allow_cleartext_password: false,
        }
    }
}

/// The workload and its options (sysbench's, for a built-in; `set` for a file's [params]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WorkloadRequest {
    /// A built-in's name or a workload file's path.
    pub workload: String,
    /// `NAME=VALUE` overrides of a file's [params].
    pub set: Vec<String>,
    /// sysbench's table and transaction options (a built-in's; a file has its own).
    #[serde(flatten)]
    pub oltp: OltpOptions,
    /// None: uniform, or special with `sysbench_defaults`.
    pub rand_type: Option<String>,
    pub sysbench_defaults: bool,
    pub rand_spec_iter: u32,
    pub rand_spec_pct: u32,
    pub rand_spec_res: u32,
    pub rand_pareto_h: f64,
    pub rand_zipfian_exp: f64,
    /// 0: from the clock (the seed used is recorded in the result's run conditions).
    pub rand_seed: u64,
}

impl WorkloadRequest {
    /// `workload` with sysbench's default options.
    pub fn new(workload: &str) -> Self {
        WorkloadRequest {
            workload: workload.into(),
            set: Vec::new(),
            oltp: OltpOptions::default(),
            rand_type: None,
            sysbench_defaults: false,
            rand_spec_iter: 12,
            rand_spec_pct: 1,
            rand_spec_res: 75,
            rand_pareto_h: 0.2,
            rand_zipfian_exp: 0.8,
            rand_seed: 0,
        }
    }
}

/// Faults performed on a sandbox's nodes while the run measures.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FaultRequest {
    /// `ACTION NODE @TIME [for DURATION]; ...`
    pub fault: Option<String>,
    /// The sandbox the faults act on.
    pub sandbox: Option<String>,
}

/// sysbench's oltp_common.lua options, with its defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OltpOptions {
    pub tables: u32,
    pub table_size: u64,
    pub range_size: u32,
    pub point_selects: u32,
    pub simple_ranges: u32,
    pub sum_ranges: u32,
    pub order_ranges: u32,
    pub distinct_ranges: u32,
    pub index_updates: u32,
    pub non_index_updates: u32,
    pub delete_inserts: u32,
    pub range_selects: bool,
    pub skip_trx: bool,
    pub auto_inc: bool,
    pub secondary: bool,
    pub create_secondary: bool,
    pub mysql_storage_engine: String,
}

impl Default for OltpOptions {
    fn default() -> Self {
        OltpOptions {
            tables: 1,
            table_size: 10_000,
            range_size: 100,
            point_selects: 10,
            simple_ranges: 1,
            sum_ranges: 1,
            order_ranges: 1,
            distinct_ranges: 1,
            index_updates: 1,
            non_index_updates: 1,
            delete_inserts: 1,
            range_selects: true,
            skip_trx: false,
            auto_inc: true,
            secondary: false,
            create_secondary: true,
            mysql_storage_engine: "innodb".into(),
        }
    }
}

/// A run split over client hosts: this shard's part.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ShardRequest {
    /// `I/N`, or `N` with `shard_index`.
    pub shard: Option<String>,
    pub shard_index: Option<u32>,
    pub shard_key: Option<String>,
    /// Seconds a shard waits for the others at the barrier.
    pub shard_timeout: u64,
    pub print_result: bool,
}

impl Default for ShardRequest {
    fn default() -> Self {
        ShardRequest { shard: None, shard_index: None, shard_key: None, shard_timeout: 120, print_result: false }
    }
}

/// `prepare`: create the workload's tables and load them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PrepareRequest {
    pub target: TargetRequest,
    pub workload: WorkloadRequest,
    /// Loader threads.
    pub threads: u32,
    /// Drop and recreate tables fairbench created earlier.
    pub overwrite: bool,
    /// sysbench's multi-row INSERTs instead of the server's bulk path.
    pub insert_only: bool,
    pub shard: ShardRequest,
}

/// The largest seed: 2^53 - 1, the largest integer a JSON number keeps exact everywhere.
pub const MAX_SEED: u64 = (1 << 53) - 1;
