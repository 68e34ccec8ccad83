//! Command-line flags, parsed in one place and turned into validated plans (no I/O here).
//! sysbench spellings work too: `--table_size=N`, `--skip-trx=on`, `oltp_read_write.lua`, and
//! whole sysbench lines (`fairbench oltp_read_write --threads=8 run`, see [`sysbench`]).

mod ab;
mod compare;
mod error;
mod k8s;
mod probe;
mod report;
mod request;
mod rerun;
mod results;
mod sandbox;
mod shard;
mod study;
mod sweep;
pub mod sysbench;
mod tools;
mod values;

pub use crate::plan::parse_thresholds;
pub use ab::{Ab, AbArgs};
pub use compare::{parse_claims, CompareArgs};
pub use error::FlagError;
pub use k8s::{pod_run, JobArgs, K8sArgs, K8sCommand};
pub use probe::{probe_request, FailoverArgs, LagArgs, Probe, ProbeArgs, ProbeCommon, VerifyArgs};
pub use report::{ExportArgs, ExportWhat, ReportArgs, ShowArgs};
pub use request::{overlay, parse_request};
pub use rerun::{recorded_request, Unrepeatable};
pub use results::{AuditArgs, CombineArgs, RecoverArgs, RerunArgs};
pub use sandbox::{SandboxArgs, SandboxCommand};
pub use shard::ShardArgs;
pub use study::{StudyArgs, StudyCommand, StudyPlanArgs, StudyReportArgs, StudyRunFlags};
pub use sweep::{Sweep, SweepArgs};
pub use tools::{CheckArgs, CompletionsArgs, ListArgs, ManArgs};
pub use values::MAX_SEED;
use values::{packet_size, report_interval, seconds, seed, switch};

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Parser, Debug)]
#[command(
    name = "fairbench",
    version,
    about = "Database benchmarks whose numbers people can believe: sysbench-compatible OLTP workloads on SQLite, MySQL/MariaDB and PostgreSQL, with exact statistics.",
    after_help = "Targets: sqlite://PATH (default sqlite://fairbench.db), mysql://user:pass@host:port/db, postgres://user:pass@host:port/db.\nOutput: the report (and the JSON of --format json) on stdout; notes, progress, interval lines, warnings and errors on stderr (--format sysbench prints its interval lines on stdout, as sysbench does; --quiet keeps only the report and errors).\nExit codes: 0 ok, 1 the run failed (results still saved), 2 bad input or unreachable target, 3 a --threshold failed (results still saved), 4 a compare --claim was refuted or inconclusive, 130 interrupted (results still saved)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Print only the report and errors: no notes, announcements, progress or interval
    /// lines on stderr (interval lines of --format sysbench stay on stdout, with its report).
    #[arg(long, short = 'q', global = true)]
    pub quiet: bool,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Create the workload's tables and load them (refuses to overwrite unless --overwrite).
    Prepare(PrepareArgs),
    /// Run the workload against prepared tables and report.
    Run(RunArgs),
    /// Drop the tables fairbench created (never any other table).
    Cleanup(CleanupArgs),
    /// Run a workload file's checks on the target's tables now (TPC-C's consistency
    /// conditions): each printed with what it found; exits 1 when one fails.
    Verify(VerifyTablesArgs),
    /// Prepare when the tables are missing, then run and report.
    Bench(RunArgs),
    /// Audit a result file: what in its conditions makes the numbers misleading.
    Audit(AuditArgs),
    /// Compare result files: ratios with 95% confidence intervals, the conditions that
    /// differ, claim verdicts (--claim 'qps>=5x') and thresholds.
    Compare(CompareArgs),
    /// A/B: run a workload on two targets alternately (A B A B ... --repeat times each),
    /// save both results and compare them (--under-test NAME names what differs on purpose).
    Ab(AbArgs),
    /// Run a workload at several client counts and data sizes (--threads 1,2,4,8
    /// --table-size 10000,1000000): one file with every point, a table, the saturation point.
    Sweep(SweepArgs),
    /// Render results as one self-contained HTML file with charts (opens offline): one
    /// result, several compared, or a sweep.
    Report(ReportArgs),
    /// Export a result as CSV: the timeline, per-statement statistics or the conditions.
    Export(ExportArgs),
    /// Print a saved result as the text report its run printed (any kind of result, a sweep
    /// or an ab comparison), with its audit.
    Show(ShowArgs),
    /// Combine the shards of a run split over client hosts (--shard I/N) into one result:
    /// histograms summed exactly, a row per shard (docs/distributed.md).
    Combine(CombineArgs),
    /// Build the result of a run that never ended (killed, a lost session, a power cut)
    /// from the record it streamed (docs/record.md).
    Recover(RecoverArgs),
    /// Run what a result ran once more: its command line, seed and workload file, against
    /// the same target (or --target), into a new result to compare with the first.
    Rerun(RerunArgs),
    /// High-availability probes: `probe failover` (downtime, lost acknowledged writes) and
    /// `probe lag` (replica lag), alone or beside a workload (docs/ha.md).
    Probe(ProbeArgs),
    /// Local MariaDB/PostgreSQL servers with replication, for HA probes and the A/B of one
    /// setting: sandbox up|ls|kill|start|promote|down (docs/sandbox.md).
    Sandbox(SandboxArgs),
    /// A study declared in one file: `study plan FILE` shows what it runs (docs/studies.md).
    Study(StudyArgs),
    /// Kubernetes: `k8s job` prints an Indexed Job that runs a workload from N pods on
    /// different nodes at once, and how to collect and combine their results (docs/kubernetes.md).
    K8s(K8sArgs),
    /// Validate a workload file (TOML) and show what it runs on each database; connects nowhere.
    Check(CheckArgs),
    /// List the built-in workloads, the recipes and their options.
    List(ListArgs),
    /// Print the JSON Schema of result files (docs/result-schema.json).
    Schema,
    /// Print a shell completion script: `fairbench completions bash > /etc/bash_completion.d/fairbench`.
    Completions(CompletionsArgs),
    /// Print the manual page (roff): `fairbench man | man -l -`; `fairbench man run` for one command's.
    Man(ManArgs),
}

#[derive(Args, Debug, Clone)]
pub struct TargetArgs {
    /// Database URL: sqlite://PATH, mysql://user:pass@host:port/db or postgres://user:pass@host:port/db.
    /// Options: ?socket=PATH, ?tls=require|verify, ?ca=FILE. Safer than a password in the URL:
    /// --password-file, or FAIRBENCH_PASSWORD / MYSQL_PWD / PGPASSWORD (see docs/security.md).
    /// run and bench take several: the nodes of one replicated database, each client
    /// connected to the first that takes writes (and to whichever does after a failover).
    #[arg(
        long = "target",
        value_name = "URL",
        env = "FAIRBENCH_TARGET",
        default_value = "sqlite://fairbench.db",
        hide_env_values = true,
        action = clap::ArgAction::Append
    )]
    pub targets: Vec<String>,
    /// Read the password from the first line of FILE (used when the URL has none; keep the
    /// file mode 0600).
    #[arg(long = "password-file", value_name = "FILE")]
    pub password_file: Option<PathBuf>,
    #[command(flatten)]
    pub connect: ConnectArgs,
    /// Server-side prepared statements (on) or plain-text queries with the values written
    /// into the SQL (off: needed behind ProxySQL, PgBouncer in transaction mode, Vitess;
    /// sysbench's --db-ps-mode=disable). SQLite, which has no server, then compiles every
    /// statement anew for each execution.
    #[arg(long, default_value = "on", value_parser = switch, num_args = 0..=1, default_missing_value = "on", require_equals = true)]
    pub ps: bool,
}

impl TargetArgs {
    /// The first (often the only) target.
    pub fn target(&self) -> &str {
        self.targets.first().map_or("", String::as_str)
    }

    /// One target, as `--target URL` for the one given.
    pub fn one(target: String, password_file: Option<PathBuf>, connect: ConnectArgs, ps: bool) -> Self {
        TargetArgs { targets: vec![target], password_file, connect, ps }
    }
}

/// Faults performed on a sandbox's nodes while a run or probe measures.
#[derive(Args, Debug, Clone, Default)]
pub struct FaultArgs {
    /// Faults performed on a sandbox's nodes on the run's clock (seconds from its start,
    /// warmup included; a probe's from the probe's start): 'ACTION NODE @TIME [for
    /// DURATION]; ...' with kill, stop, start, pause, resume, promote, e.g. 'kill primary @5s;
    /// promote replica1 @6s' (docs/ha.md).
    #[arg(long, value_name = "SCHEDULE")]
    pub fault: Option<String>,
    /// The sandbox --fault acts on (default: the one with a node at the first target's port).
    #[arg(long, value_name = "NAME", requires = "fault")]
    pub sandbox: Option<String>,
}

/// Deadlines and limits for a server that may misbehave: none of them can hang fairbench.
#[derive(Args, Debug, Clone)]
pub struct ConnectArgs {
    /// Seconds to connect, negotiate TLS and authenticate (each connection).
    #[arg(long = "connect-timeout", default_value = "10", value_parser = seconds)]
    pub connect_timeout: Duration,
    /// Seconds for each administrative query (settings, counters, table sizes) before
    /// fairbench gives up on it.
    #[arg(long = "admin-timeout", default_value = "30", value_parser = seconds)]
    pub admin_timeout: Duration,
    /// Largest packet (MySQL) or message (PostgreSQL) a server may send, in bytes (K, M, G
    /// suffixes; 1K to 1G). A longer one fails the connection as soon as its length arrives.
    #[arg(long = "max-packet", default_value = "64M", value_parser = packet_size)]
    pub max_packet: usize,
    /// Send the password in clear over unencrypted TCP when the server asks for it
    /// (PostgreSQL password auth, MySQL mysql_clear_password). Off: such servers are refused.
    #[arg(long = "allow-cleartext-password")]
    pub allow_cleartext_password: bool,
}

#[derive(Args, Debug, Clone)]
pub struct WorkloadArgs {
    /// Workload: oltp_read_write, oltp_read_only, oltp_write_only, oltp_point_select,
    /// oltp_update_index, oltp_update_non_index, oltp_insert, oltp_delete (see `fairbench list`),
    /// or a workload file PATH.toml (docs/workloads.md; the oltp options then do not apply).
    pub workload: String,
    /// Override a workload file's [params] value, e.g. --set customers=100000 (repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// Number of tables.
    #[arg(long, default_value_t = 1)]
    pub tables: u32,
    /// Rows per table.
    #[arg(long = "table-size", alias = "table_size", default_value_t = 10_000)]
    pub table_size: u64,
    /// Rows per range SELECT.
    #[arg(long = "range-size", alias = "range_size", default_value_t = 100)]
    pub range_size: u32,
    /// Point SELECTs per transaction.
    #[arg(long = "point-selects", alias = "point_selects", default_value_t = 10)]
    pub point_selects: u32,
    /// Simple range SELECTs per transaction.
    #[arg(long = "simple-ranges", alias = "simple_ranges", default_value_t = 1)]
    pub simple_ranges: u32,
    /// SELECT SUM() ranges per transaction.
    #[arg(long = "sum-ranges", alias = "sum_ranges", default_value_t = 1)]
    pub sum_ranges: u32,
    /// SELECT ... ORDER BY ranges per transaction.
    #[arg(long = "order-ranges", alias = "order_ranges", default_value_t = 1)]
    pub order_ranges: u32,
    /// SELECT DISTINCT ranges per transaction.
    #[arg(long = "distinct-ranges", alias = "distinct_ranges", default_value_t = 1)]
    pub distinct_ranges: u32,
    /// UPDATEs of the indexed column per transaction.
    #[arg(long = "index-updates", alias = "index_updates", default_value_t = 1)]
    pub index_updates: u32,
    /// UPDATEs of a non-indexed column per transaction.
    #[arg(long = "non-index-updates", alias = "non_index_updates", default_value_t = 1)]
    pub non_index_updates: u32,
    /// DELETE+INSERT pairs per transaction.
    #[arg(long = "delete-inserts", alias = "delete_inserts", default_value_t = 1)]
    pub delete_inserts: u32,
    /// Enable the four range SELECT kinds (on|off).
    #[arg(long = "range-selects", alias = "range_selects", default_value = "on", value_parser = switch, num_args = 0..=1, default_missing_value = "on", require_equals = true)]
    pub range_selects: bool,
    /// Autocommit every statement: no BEGIN/COMMIT (on|off).
    #[arg(long = "skip-trx", alias = "skip_trx", default_value = "off", value_parser = switch, num_args = 0..=1, default_missing_value = "on", require_equals = true)]
    pub skip_trx: bool,
    /// AUTO_INCREMENT / SERIAL ids; off: client-generated ids (oltp_insert then prepares EMPTY tables, as sysbench does).
    #[arg(long = "auto-inc", alias = "auto_inc", default_value = "on", value_parser = switch, num_args = 0..=1, default_missing_value = "on", require_equals = true)]
    pub auto_inc: bool,
    /// A secondary index on id instead of the PRIMARY KEY (on|off).
    #[arg(long, default_value = "off", value_parser = switch, num_args = 0..=1, default_missing_value = "on", require_equals = true)]
    pub secondary: bool,
    /// Build the index on k after loading (on|off).
    #[arg(long = "create-secondary", alias = "create_secondary", default_value = "on", value_parser = switch, num_args = 0..=1, default_missing_value = "on", require_equals = true)]
    pub create_secondary: bool,
    /// Storage engine on MySQL.
    #[arg(long = "mysql-storage-engine", alias = "mysql_storage_engine", default_value = "innodb")]
    pub mysql_storage_engine: String,
    /// Distribution of ids: uniform (default), gaussian, special (sysbench 1.0.20's default),
    /// pareto, zipfian.
    #[arg(long = "rand-type", alias = "rand_type")]
    pub rand_type: Option<String>,
    /// sysbench 1.0.20's defaults where fairbench's differ: ids from the `special`
    /// distribution, a 10 s limit also with --events, sysbench's report (each unless given).
    #[arg(long = "sysbench-defaults")]
    pub sysbench_defaults: bool,
    /// Iterations of the gaussian and special distributions.
    #[arg(long = "rand-spec-iter", alias = "rand_spec_iter", default_value_t = 12)]
    pub rand_spec_iter: u32,
    /// Percentage of the range holding the special distribution's hot values.
    #[arg(long = "rand-spec-pct", alias = "rand_spec_pct", default_value_t = 1)]
    pub rand_spec_pct: u32,
    /// Percentage of draws that hit the special distribution's hot values.
    #[arg(long = "rand-spec-res", alias = "rand_spec_res", default_value_t = 75)]
    pub rand_spec_res: u32,
    /// Shape h of the pareto distribution.
    #[arg(long = "rand-pareto-h", alias = "rand_pareto_h", default_value_t = 0.2)]
    pub rand_pareto_h: f64,
    /// Exponent of the zipfian distribution.
    #[arg(long = "rand-zipfian-exp", alias = "rand_zipfian_exp", default_value_t = 0.8)]
    pub rand_zipfian_exp: f64,
    /// Seed of the random streams (0: from the clock; the seed used is recorded). At most
    /// 2^53 - 1, so that the result's JSON keeps it exact for every reader.
    #[arg(long = "rand-seed", alias = "rand_seed", default_value_t = 0, value_parser = seed)]
    pub rand_seed: u64,
}

#[derive(Args, Debug, Clone)]
pub struct PrepareArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub workload: WorkloadArgs,
    /// Loader threads (tables are split across them).
    #[arg(long, default_value_t = 1)]
    pub threads: u32,
    /// Drop and recreate tables fairbench created earlier (tables it did not create are never touched).
    #[arg(long)]
    pub overwrite: bool,
    /// How rows are loaded: auto (PostgreSQL COPY, MySQL LOAD DATA LOCAL INFILE falling back
    /// to INSERTs where the server refuses it, SQLite one prepared INSERT per row), or
    /// insert (sysbench's multi-row INSERTs). --ps off loads with INSERTs.
    #[arg(long = "bulk-load", value_enum, default_value = "auto")]
    pub bulk_load: BulkLoad,
    #[command(flatten)]
    pub shard: ShardArgs,
}

/// `prepare --bulk-load`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum BulkLoad {
    Auto,
    Insert,
}

#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub workload: WorkloadArgs,
    /// Client connections (each its own).
    #[arg(long, default_value_t = 1)]
    pub threads: u32,
    /// Measured seconds after warmup (default 10 unless --events is given; 0: no limit).
    #[arg(long)]
    pub time: Option<u64>,
    /// Stop after this many events, counted after warmup (0: no limit, as sysbench).
    #[arg(long)]
    pub events: Option<u64>,
    /// Seconds to run before statistics start.
    #[arg(long, alias = "warmup-time", default_value_t = 0)]
    pub warmup: u32,
    /// Print a line every N seconds: whole seconds as sysbench, or fractions down to 0.01
    /// (in steps of 10 ms); the timeline then has entries as short as the interval.
    #[arg(long = "report-interval", alias = "report_interval", value_parser = report_interval)]
    pub report_interval: Option<Duration>,
    /// Percentile in the report's P columns and interval lines: any from 1 to 100 (0, as
    /// sysbench's --percentile=0: no percentile in sysbench's report, the 95th elsewhere).
    #[arg(long, default_value_t = 95.0)]
    pub percentile: f64,
    /// Further percentiles to report for every class, e.g. 90,99.99.
    #[arg(long, value_delimiter = ',')]
    pub percentiles: Vec<f64>,
    /// What to print when the run ends: the text report (with the audit; the default),
    /// sysbench's report (its sections and labels, for existing parsers) or the result JSON.
    #[arg(long, value_parser = ["text", "sysbench", "json"])]
    pub format: Option<String>,
    /// The report's wide per-query table too (QPS and latencies per class on one line, as
    /// Finch prints them).
    #[arg(long, short = 'v')]
    pub verbose: bool,
    /// Print a latency histogram of events at the end, as sysbench's --histogram does.
    #[arg(long, num_args = 0..=1, default_missing_value = "on", require_equals = true, value_parser = switch, default_value = "off")]
    pub histogram: bool,
    /// Result file (JSON); default fairbench-results/<workload>-<time>.json.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Serve the run's figures as OpenMetrics text (Prometheus) at http://ADDR:PORT/metrics
    /// while it lasts. Off by default; listens only where told (port 0: any free port).
    #[arg(long, value_name = "ADDR:PORT")]
    pub metrics_listen: Option<String>,
    /// Error codes to roll back and retry (default: MySQL 1213,1205,1020; PostgreSQL 40001,40P01,23505; SQLite SQLITE_BUSY,SQLITE_LOCKED, SQLITE_CONSTRAINT_PRIMARYKEY,SQLITE_CONSTRAINT_UNIQUE).
    #[arg(long = "ignore-errors", alias = "mysql-ignore-errors", value_delimiter = ',')]
    pub ignore_errors: Vec<String>,
    /// Seconds a client keeps trying to reconnect after losing its connection.
    #[arg(long = "reconnect-timeout", default_value_t = 10)]
    pub reconnect_timeout: u32,
    #[command(flatten)]
    pub faults: FaultArgs,
    /// Open loop: events per second over all clients, on a schedule that does not wait for
    /// the server; latency is measured from each event's intended start. Without it (or 0,
    /// sysbench's "no limit"): closed loop.
    #[arg(long)]
    pub rate: Option<f64>,
    /// Open-loop arrivals: fixed (evenly spaced) or poisson.
    #[arg(long, default_value = "fixed", requires = "rate")]
    pub arrival: String,
    /// Open loop: most events allowed to be due but not started before the oldest are
    /// dropped and counted (default: 10 seconds of arrivals).
    #[arg(long = "max-backlog", requires = "rate")]
    pub max_backlog: Option<u64>,
    /// Loader threads when bench has to prepare (default: --threads).
    #[arg(long = "prepare-threads")]
    pub prepare_threads: Option<u32>,
    /// Let a writing sysbench workload run on sbtest tables fairbench did not create (e.g.
    /// prepared by sysbench, to compare both tools on identical data). They are written as
    /// the workload writes, never dropped or recreated; the result lists them.
    #[arg(long = "allow-foreign-tables")]
    pub allow_foreign_tables: bool,
    /// Run the measured phase N times back to back (each after its warmup); the result
    /// holds every repeat and each headline metric's median and spread (3 or more for compare's intervals).
    #[arg(long, default_value_t = 1)]
    pub repeat: u32,
    /// A check for CI pipelines, repeatable: p99<10ms, qps>5000, errors==0, write.p95<2ms.
    /// Any that fails: exit code 3 (the result is still saved).
    #[arg(long = "threshold")]
    pub thresholds: Vec<String>,
    /// The target's price per hour (any currency): the report gives cost per million queries and transactions.
    #[arg(long = "cost-per-hour")]
    pub cost_per_hour: Option<f64>,
    #[command(flatten)]
    pub shard: ShardArgs,
}

#[derive(Args, Debug, Clone)]
pub struct VerifyTablesArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    /// A workload file PATH.toml or a recipe name (tpcc).
    pub workload: String,
    /// The [params] the tables were prepared with, e.g. --set warehouses=10 (repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
}

#[derive(Args, Debug, Clone)]
pub struct CleanupArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    /// A workload file PATH.toml: drop its tables fairbench created. Otherwise (a built-in
    /// name or nothing) every sbtest table fairbench created is dropped.
    pub workload: Option<String>,
    /// Drop only sbtest1..sbtestN (sysbench's cleanup --tables); default: every sbtest
    /// table fairbench created.
    #[arg(long)]
    pub tables: Option<u32>,
}
