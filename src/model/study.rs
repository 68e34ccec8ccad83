//! `fairbench study`: a study's document (DIR/study.json). It names every cell and run of
//! the plan (so that `study run` again resumes, and refuses a file whose cells changed),
//! each run's status, each cell's figures over its repeats, and each claim's verdict with
//! the cells it rests on.

use super::comparison::{Estimate, Verdict};
use super::RunStatus;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub const STUDY_SCHEMA_NAME: &str = "fairbench.study";
/// 2: each run's round, server and rows at start; the cells rerun after an interruption.
pub const STUDY_SCHEMA_VERSION: u32 = 2;

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct StudyDocument {
    pub schema: String,
    pub schema_version: u32,
    pub fairbench_version: String,
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<String>,
    /// The published study this one redoes: what of it is reproduced, and what dropped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<SeedRecord>,
    /// The study file, as given to `study run`.
    pub file: String,
    /// What the study runs: compared on resume, field by field.
    pub plan: StudyPlanRecord,
    /// Every run in the order planned, round after round (`study run --again` adds one).
    pub runs: Vec<StudyRun>,
    /// Cells run again from their round's first repeat on a fresh dataset after an
    /// interruption (their workload changes its tables' row count).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reruns: Vec<CellRerun>,
    /// Each cell's figures over its repeats (none before the cell has a result).
    #[serde(default)]
    pub cells: Vec<CellFigures>,
    /// Each priced target's prices, by target name (as the file declares them).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub prices: std::collections::BTreeMap<String, Prices>,
    /// The claims as the file declares them (judged again by `study report`).
    #[serde(default)]
    pub declared: Vec<ClaimDefinition>,
    #[serde(default)]
    pub claims: Vec<StudyClaim>,
    /// The conditions of each target's cells, once: what all its cells share, and what
    /// each cell has otherwise.
    #[serde(default)]
    pub conditions: Vec<TargetConditions>,
    /// Where, along a numeric axis, the data stops fitting in the cache.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cliffs: Vec<CacheCliff>,
    /// A/A pairs: two targets declared alike (the same design twice), whose difference is
    /// the noise a ratio between other targets must exceed to mean anything.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub noise: Vec<NoiseFloor>,
}

/// Two cells that differ only in which of two alike targets ran them: the throughput ratio
/// between them, second over first, with its interval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NoiseFloor {
    pub targets: [String; 2],
    pub cells: [String; 2],
    /// The cells' shared values, the target aside.
    pub at: String,
    /// Absent when either cell has no completed run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tps_ratio: Option<crate::model::comparison::Estimate>,
}

impl NoiseFloor {
    /// `'stock' vs 'stock_again' at workload=oltp_write_only threads=16: tps 1.02x
    /// (0.97-1.07)`.
    pub fn describe(&self) -> String {
        let ratio = match &self.tps_ratio {
            Some(e) => format!("tps {:.2}x ({:.2}-{:.2})", e.estimate, e.low, e.high),
            None => "no ratio yet (a cell has no completed run)".into(),
        };
        format!("'{}' vs '{}' at {}: {ratio}", self.targets[1], self.targets[0], self.at)
    }
}

/// Two cells that differ only on `axis`, neighbours on it: the data fits the cache in the
/// first and not in the second.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CacheCliff {
    pub axis: String,
    /// The cells' other values (`target=stock workload=oltp_read_write threads=16`).
    pub at: String,
    pub cache: String,
    /// The last cell that fits, then the first that does not.
    pub cells: [String; 2],
    pub values: [String; 2],
    pub cache_ratios: [f64; 2],
    pub tps: [Option<f64>; 2],
}

impl CacheCliff {
    /// `target=stock workload=oltp_read_write: the data fits innodb_buffer_pool_size at
    /// table_size=10000 (0.4x) and not at table_size=100000 (3.9x); tps 2800.0 -> 900.0 (-67.9%)`.
    pub fn describe(&self) -> String {
        let [a, b] = &self.values;
        let [ra, rb] = self.cache_ratios;
        let tps = match self.tps {
            [Some(x), Some(y)] if x > 0.0 => format!("; tps {x:.1} -> {y:.1} ({:+.1}%)", (y / x - 1.0) * 100.0),
            _ => String::new(),
        };
        format!(
            "{}: the data fits {} at {}={a} ({ra:.2}x) and not at {}={b} ({rb:.2}x){tps}",
            self.at, self.cache, self.axis, self.axis
        )
    }
}

/// Conditions by group (`server`, `durability`, `memory/cache`, `client host`, `dataset`...,
/// as compare groups them), then name, then value.
pub type ConditionGroups = std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>>;

/// One target's conditions over its cells with a result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TargetConditions {
    pub target: String,
    /// The same on every cell of the target (numbers within 1%: the first cell's value).
    pub common: ConditionGroups,
    /// Per cell: the conditions not common to the target, with this cell's values.
    pub cells: std::collections::BTreeMap<String, ConditionGroups>,
    /// How many of its cells had a result to read them from.
    #[serde(default)]
    pub compared: u32,
}

/// A study file's `[seed]`: the published study it redoes, the points its conclusion rests
/// on that the file reproduces (each with what covers it) and those it drops (with why).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SeedRecord {
    pub source: String,
    #[serde(default)]
    pub reproduced: Vec<ReproducedPoint>,
    #[serde(default)]
    pub dropped: Vec<DroppedPoint>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReproducedPoint {
    pub point: String,
    /// What in the file covers it: `target:NAME`, `workload:LABEL`, `claim:ID`,
    /// `axis:NAME=VALUE`.
    pub by: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DroppedPoint {
    pub point: String,
    pub why: String,
}

/// A claim as declared: in words, the check, and for a ratio the variable under test with
/// its baseline and subject values; `only` keeps the cells with those values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ClaimDefinition {
    /// How the file's `[seed]` names it (`claim:ID`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub says: String,
    pub check: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vary: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    #[serde(default, rename = "where", skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub only: std::collections::BTreeMap<String, Vec<String>>,
}

/// The parts of a study file that decide what its runs measure.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StudyPlanRecord {
    pub repeats: u32,
    /// `interleaved` or `random`.
    pub order: String,
    pub warmup_s: u32,
    pub time_s: u64,
    pub seed: u64,
    pub cells: Vec<StudyCell>,
}

/// One workload at one point on one target: the unit repeated and judged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StudyCell {
    /// `c01`, `c02`, ... in the plan's order.
    pub id: String,
    pub target: String,
    /// What the target is, in words: `mariadb sandbox`, `postgres sandbox under patroni, 2
    /// replicas`, `server at its URL`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub target_kind: String,
    /// The target's server settings (its own and the matrix's), `NAME=VALUE`.
    pub settings: Vec<String>,
    pub workload: String,
    /// Every axis and its value here: `target`, `workload`, run options, `set.NAME`.
    pub values: Vec<AxisValue>,
    /// The cell's run as a command line (the target's URL with its password hidden).
    pub run: String,
    /// The probe beside its workload: `failover` or `lag`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<String>,
    /// The faults performed on its target during each run (docs/ha.md's schedule).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub faults: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AxisValue {
    pub axis: String,
    pub value: String,
}

impl StudyCell {
    /// This cell's value on `axis`.
    pub fn value(&self, axis: &str) -> Option<&str> {
        self.values.iter().find(|v| v.axis == axis).map(|v| v.value.as_str())
    }

    /// Its run options' values (`threads=8 table_size=100`): neither target, workload nor
    /// a server setting.
    pub fn point(&self) -> String {
        let skip = |a: &str| a == "target" || a == "workload" || a.starts_with("set.");
        let parts: Vec<String> =
            self.values.iter().filter(|v| !skip(&v.axis)).map(|v| format!("{}={}", v.axis, v.value)).collect();
        parts.join(" ")
    }

    /// Its values as `axis=value ...`, leaving out `skip`.
    pub fn describe(&self, skip: &[&str]) -> String {
        let parts: Vec<String> = self
            .values
            .iter()
            .filter(|v| !skip.contains(&v.axis.as_str()))
            .map(|v| format!("{}={}", v.axis, v.value))
            .collect();
        parts.join(" ")
    }
}

/// One run of a cell.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StudyRun {
    pub cell: String,
    /// 1-based, numbered on across rounds (round 2 of 3 repeats: 4, 5, 6).
    pub repeat: u32,
    /// Which run of the whole study it belongs to: 1, then one more per `--again`.
    #[serde(default = "first_round")]
    pub round: u32,
    /// Its result, relative to the study's directory (its record beside it).
    pub file: String,
    /// None: not run yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<RunStatus>,
    /// Why it failed, when it did without a result (a server that did not start, a
    /// dataset that did not load).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// The server it ran on, as the server identifies itself (`server_id 1 at vm:13306`),
    /// and for a sandbox when this study built it: a rebuilt server reads differently.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// The rows of the workload's tables as the run began, as the server reported them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows_at_start: Option<StartRows>,
    /// Its transactions (events) per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tps: Option<f64>,
}

fn first_round() -> u32 {
    1
}

impl StudyRun {
    /// A run not made yet.
    pub fn planned(cell: String, repeat: u32, round: u32, file: String) -> StudyRun {
        StudyRun {
            cell,
            repeat,
            round,
            file,
            status: None,
            failure: None,
            server: None,
            rows_at_start: None,
            tps: None,
        }
    }
}

/// All tables' rows together; `exact` false when any count is the server's estimate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StartRows {
    pub rows: u64,
    pub exact: bool,
}

/// A cell's round run again from its first repeat, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CellRerun {
    pub cell: String,
    pub round: u32,
    /// The round's first repeat, where it started again.
    pub from_repeat: u32,
    /// Its repeats that had run (completed or failed) and were cleared.
    pub cleared: Vec<u32>,
    /// `its workload inserts rows`.
    pub why: String,
}

impl CellRerun {
    /// `rerun from repeat 1 after an interruption: its workload inserts rows, so the repeats
    /// left could not start from the rows the earlier ones left (repeats 1, 2 ran again)`.
    pub fn describe(&self) -> String {
        let cleared: Vec<String> = self.cleared.iter().map(|r| r.to_string()).collect();
        format!(
            "rerun from repeat {} after an interruption: {}, so the repeats left could not start from the rows the earlier ones left (repeat{} {} ran again)",
            self.from_repeat,
            self.why,
            if cleared.len() == 1 { "" } else { "s" },
            cleared.join(", ")
        )
    }
}

/// A cell's figures over its repeats.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CellFigures {
    pub cell: String,
    /// Runs with a completed result, of the planned repeats (of every round).
    pub completed: u32,
    pub planned: u32,
    /// Runs not made yet.
    #[serde(default)]
    pub not_run: u32,
    /// The worst status among its runs that ran; none when none did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<RunStatus>,
    /// Each round's completed repeats and their median tps (one entry per run of the study).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rounds: Vec<RoundFigures>,
    /// Transactions (events) per second over all completed repeats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tps: Option<f64>,
    /// Its 95% interval: from the repeats when there are 3 or more, else from the runs'
    /// seconds (block bootstrap; none under 10 measured seconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tps_interval: Option<Estimate>,
    /// Transaction (event) latency p99 over all completed repeats, µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_interval: Option<Estimate>,
    /// Ids of the cell's audit findings (warn and above).
    #[serde(default)]
    pub findings: Vec<String>,
    /// What a million transactions cost on its target (a priced target only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<CellCost>,
    /// The data the runs drew from over the cache that would hold it, and that cache's
    /// name (`innodb_buffer_pool_size`): above 1, the data does not fit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_ratio: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<String>,
    /// A probe cell's figures, run by run (each run is one failover or one lag series:
    /// they are not averaged).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub probes: Vec<RunProbe>,
}

impl CellFigures {
    /// `3/3`, `0/3 not run`, `1/3 (1 failed, 1 not run)`: the words of the runs' own
    /// statuses (the worst for those that ran and did not complete).
    pub fn runs_words(&self) -> String {
        let done = format!("{}/{}", self.completed, self.planned);
        if self.not_run == self.planned && self.planned > 0 {
            return format!("{done} not run");
        }
        let ran_badly = self.planned.saturating_sub(self.completed + self.not_run);
        let mut parts = Vec::new();
        if let Some(status) = self.status.filter(|_| ran_badly > 0) {
            parts.push(format!("{ran_badly} {}", status.name()));
        }
        if self.not_run > 0 {
            parts.push(format!("{} not run", self.not_run));
        }
        match parts.is_empty() {
            true => done,
            false => format!("{done} ({})", parts.join(", ")),
        }
    }

    /// The largest less the smallest of the rounds' median tps, and that over the
    /// smallest; none under two rounds with a median.
    pub fn round_spread(&self) -> Option<(f64, f64)> {
        let medians: Vec<f64> = self.rounds.iter().filter_map(|r| r.median_tps).collect();
        let lo = medians.iter().copied().reduce(f64::min)?;
        let hi = medians.iter().copied().reduce(f64::max)?;
        (medians.len() >= 2 && lo > 0.0).then(|| (hi - lo, (hi - lo) / lo))
    }
}

/// One round of a cell: its completed repeats and their median tps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RoundFigures {
    pub round: u32,
    pub completed: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_tps: Option<f64>,
}

/// One completed run's probe figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunProbe {
    pub repeat: u32,
    /// `failover` or `lag`.
    pub probe: String,
    /// The longest outage, µs; absent when it is no number (split brain).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub downtime_us: Option<f64>,
    /// What ended that outage: this run's own promote step (`scheduled`), a step asking the
    /// cluster to fail over (`requested`), or the cluster by itself (`detected`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<crate::model::fault::DowntimeOrigin>,
    /// Acknowledged writes the final primary lacks; absent when not looked up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost: Option<u64>,
    /// The worst replica's lag p99 and maximum, µs: lower bounds when `lag_at_least`
    /// (heartbeats a replica never showed within the wait).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_p99_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_max_us: Option<f64>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lag_at_least: bool,
    /// The probe's verdict in words, as its own report prints it.
    pub verdict: String,
    /// The run's high-availability findings (warn and above): `ha-split-brain`...
    #[serde(default)]
    pub findings: Vec<String>,
}

/// A target's prices, in one currency: what a service bills (compute by the hour, storage
/// by the GB-month, I/O by the million requests, provisioned IOPS by the month).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Prices {
    /// A name for the money (`USD`); only one currency per study makes sense.
    #[serde(default = "usd")]
    pub currency: String,
    #[serde(default)]
    pub compute_per_hour: f64,
    /// Per GB of storage per month of 730 hours: of `storage_gb` when given (a volume
    /// provisioned at that size, as the seed priced its 400 and 500 GB volumes), else per
    /// GiB of the dataset (tables and indexes).
    #[serde(default)]
    pub storage_per_gb_month: f64,
    /// The storage billed, GB, whatever the dataset holds: a provisioned volume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_gb: Option<f64>,
    /// Per million I/O requests, counted by the server's own counters
    /// (`conditions.server.facts.io_requests`).
    #[serde(default)]
    pub io_per_million: f64,
    /// Provisioned IOPS, and the price of one per month.
    #[serde(default)]
    pub provisioned_iops: f64,
    #[serde(default)]
    pub per_iops_month: f64,
}

fn usd() -> String {
    "USD".into()
}

/// What a million of a cell's transactions cost, by part, in the target's currency: each
/// part's price per hour over the transactions an hour held at the cell's throughput; the
/// I/O part from the I/O requests per transaction the server counted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CellCost {
    pub currency: String,
    /// Every part, I/O requests billed per request included.
    pub total: f64,
    /// Compute, storage and provisioned IOPS only: a month's bill excluding per-request
    /// I/O, over the transactions a month holds (the Percona 2015 seed's "ops cost" model).
    #[serde(default)]
    pub total_without_io: f64,
    /// That month's bill excluding per-request I/O.
    #[serde(default)]
    pub month_without_io: f64,
    /// What storage was priced on: `provisioned 500 GB` or `dataset 0.123 GiB`.
    #[serde(default)]
    pub storage_basis: String,
    pub compute: f64,
    pub storage: f64,
    /// None when the server counts no I/O requests (an embedded database), or none was
    /// sampled: the total then leaves I/O out, and says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io: Option<f64>,
    pub provisioned_iops: f64,
    /// I/O requests per transaction over the measured intervals the server was sampled in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_requests_per_transaction: Option<f64>,
}

/// A claim of the study file and its verdict over every cell (or pair of cells) it covers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StudyClaim {
    /// As declared, with `vary` filled in for a ratio (`target` by default).
    #[serde(flatten)]
    pub claim: ClaimDefinition,
    /// Supported when every comparison supports it, refuted when any refutes it,
    /// otherwise inconclusive.
    pub verdict: Verdict,
    /// Why, in one sentence.
    pub reason: String,
    /// The sides as they ran, read from their results: `on this host, 'template' (MariaDB
    /// 10.11.6, mariadb sandbox) vs 'stock' (MariaDB 10.11.6, mariadb sandbox)`. The claim is
    /// the seed's question; this is what answered it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub as_run: String,
    /// Each cell (absolute claims) or pair of cells (ratio claims) it rests on.
    pub checks: Vec<ClaimCheck>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ClaimCheck {
    /// The baseline's cell, for a ratio.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_cell: Option<String>,
    pub cell: String,
    /// Where: the cells' shared values (`workload=oltp_read_write threads=8`).
    pub at: String,
    pub verdict: Verdict,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Estimate>,
    pub reason: String,
    /// Findings that undermine this comparison whatever its verdict (conditions that
    /// differ beyond the variable under test, a side's critical audit findings, too few
    /// repeats, a failed cell).
    #[serde(default)]
    pub undermined_by: Vec<String>,
}
