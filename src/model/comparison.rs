//! What `fairbench compare` finds (`--json` prints it): each headline metric on every side
//! with its ratio to the baseline and a 95% confidence interval, every difference between
//! the sides' conditions, the findings that make the comparison unfair, claim verdicts and
//! thresholds. Documented in docs/compare.md.

use super::{Finding, ThresholdRecord};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub const COMPARISON_SCHEMA_NAME: &str = "fairbench.comparison";
pub const COMPARISON_SCHEMA_VERSION: u32 = 1;

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Comparison {
    pub schema: String,
    pub schema_version: u32,
    /// The results compared; the first is the baseline.
    pub sides: Vec<Side>,
    pub metrics: Vec<MetricComparison>,
    /// `--under-test`: the difference the comparison is about (not a finding).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub under_test: Option<UnderTest>,
    /// Every other condition that differs between the sides.
    pub differences: Vec<Difference>,
    /// What makes the comparison unfair (ids like the audit's: `durability-differs`, ...).
    pub findings: Vec<Finding>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<ClaimRecord>,
    /// `--threshold`s checked on every side.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thresholds: Vec<SideThreshold>,
    /// `fairbench ab`: the measured phases in the order they ran (`A1`, `B1`, `A2`, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub order: Vec<String>,
}

/// What `--under-test` names and the differences it covers.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct UnderTest {
    /// A setting or option (`innodb_flush_log_at_trx_commit`, `threads`), or `product`,
    /// `version`, `target`.
    pub name: String,
    pub differences: Vec<Difference>,
}

/// One result file of the comparison.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Side {
    pub file: String,
    /// A short name for tables: `A`, `B`, ...
    pub label: String,
    pub workload: String,
    pub product: String,
    pub version: String,
    pub threads: u32,
    /// Measured phases in the file (`--repeat`).
    pub repeats: u32,
    pub measured_s: f64,
    /// The side's own audit, carried along.
    pub audit: Vec<Finding>,
}

/// Where an interval came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum IntervalMethod {
    /// Welch's t on the logarithms of the repeats' values (3 or more repeats on each side).
    Repeats,
    /// Moving-block bootstrap over the per-second timeline (one run a side).
    BlockBootstrap,
}

/// A value or ratio with its 95% confidence interval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Estimate {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
    pub method: IntervalMethod,
    /// Repeats: the fewer repeats of the two sides; bootstrap: block length in seconds.
    pub detail: u32,
}

/// How a ratio reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Significance {
    /// The interval contains 1.
    NoSignificantDifference,
    /// The whole interval is on the better side of 1 (higher throughput, lower latency).
    Better,
    Worse,
    /// No interval could be computed (too few seconds or repeats, a metric the timeline
    /// does not carry): the ratio alone says nothing about significance.
    Unknown,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RatioRecord {
    /// Index of the side divided by the baseline.
    pub side: usize,
    pub ratio: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<Estimate>,
    pub significance: Significance,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MetricComparison {
    /// As thresholds and claims name it: `qps`, `commit.p99`, ...
    pub metric: String,
    /// `us`, `per_s`, `fraction`, `count` or `money`.
    pub unit: String,
    /// `higher` or `lower`.
    pub better: String,
    /// Each side's value (whole result, every repeat merged); null when it has none.
    pub values: Vec<Option<f64>>,
    /// Each other side against the baseline.
    pub ratios: Vec<RatioRecord>,
}

/// A condition that is not the same on every side.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Difference {
    /// `server`, `durability`, `memory/cache`, `logging/redo`, `replication`,
    /// `connections`, `other variables`, `client host`, `dataset`, `workload`, `run`,
    /// `transport`.
    pub group: String,
    pub key: String,
    /// Each side's value; null where a side does not have it.
    pub values: Vec<Option<String>>,
}

impl Difference {
    /// A server variable (grouped by its driver's [`super::ServerFacts::setting_groups`]).
    pub fn is_variable(&self) -> bool {
        super::ServerFacts::SETTING_GROUPS.contains(&self.group.as_str()) || self.group == super::ServerFacts::OTHER
    }

    /// A server variable only some sides have: one product's own setting.
    pub fn one_sided(&self) -> bool {
        self.is_variable() && self.values.iter().any(Option::is_none)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The whole interval satisfies the claim.
    Supported,
    /// None of it does.
    Refuted,
    /// The interval straddles the bound, or there is no interval.
    Inconclusive,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Supported => "supported",
            Verdict::Refuted => "refuted",
            Verdict::Inconclusive => "inconclusive",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ClaimRecord {
    /// As given: `qps>=5x`, `commit.p99<=2ms`.
    pub claim: String,
    /// The side the claim is about (a ratio: against the baseline).
    pub side: usize,
    pub verdict: Verdict,
    /// The ratio (or the absolute value) and its interval, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Estimate>,
    /// Why the verdict is what it is, in one sentence.
    pub reason: String,
    /// Ids of the comparison's findings (and the sides' critical audit findings) that
    /// undermine the claim whatever its verdict.
    pub undermined_by: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SideThreshold {
    pub side: usize,
    #[serde(flatten)]
    pub check: ThresholdRecord,
}
