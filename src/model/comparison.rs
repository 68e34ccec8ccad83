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
    /// The same value written differently (`ON`/`on`/`1`), or numbers within 1% of each
    /// other (a row estimate of 394848 against 394849): listed, never highlighted, never a
    /// finding.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub negligible: bool,
}

impl Difference {
    /// Numbers within this fraction of the largest are the same for a comparison.
    pub const NEGLIGIBLE_FRACTION: f64 = 0.01;

    /// `values` of the condition `group`/`key`, judged negligible or not.
    pub fn new(group: &str, key: &str, values: Vec<Option<String>>) -> Difference {
        let negligible = Self::alike(&values);
        Difference { group: group.into(), key: key.into(), values, negligible }
    }

    /// Every side has the value, and all read the same: the same switch, or numbers (with a
    /// unit: 128M, 2.0 MB, 8kB) within [`Difference::NEGLIGIBLE_FRACTION`] of each other.
    fn alike(values: &[Option<String>]) -> bool {
        let Some(all) = values.iter().cloned().collect::<Option<Vec<String>>>() else {
            return false;
        };
        let switch = |v: &str| match v.to_ascii_lowercase().as_str() {
            "on" | "1" | "true" | "yes" => Some(true),
            "off" | "0" | "false" | "no" => Some(false),
            _ => None,
        };
        let switches: Option<Vec<bool>> = all.iter().map(|v| switch(v)).collect();
        if let Some(s) = switches {
            return s.iter().all(|x| *x == s[0]);
        }
        let numbers: Option<Vec<(f64, String)>> = all.iter().map(|v| number(v)).collect();
        let Some(numbers) = numbers else { return false };
        let same_unit = numbers.iter().all(|(_, unit)| *unit == numbers[0].1);
        let largest = numbers.iter().map(|(n, _)| n.abs()).fold(0.0, f64::max);
        let spread = numbers.iter().map(|(n, _)| *n).fold(f64::MIN, f64::max)
            - numbers.iter().map(|(n, _)| *n).fold(f64::MAX, f64::min);
        same_unit && spread <= largest * Self::NEGLIGIBLE_FRACTION
    }

    /// Worth a reader's attention: not negligible, not a variable no rule reads, and on
    /// every side (what one product records and another does not, such as its own cache's
    /// size or its data directory, is read through the facts that both have).
    pub fn matters(&self) -> bool {
        !self.negligible && self.group != super::ServerFacts::OTHER && self.values.iter().all(Option::is_some)
    }
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

/// `394848` -> (394848, ""), `2.0 MB` -> (2.0, "mb"), `128M` -> (128, "m"); None for text.
fn number(v: &str) -> Option<(f64, String)> {
    let v = v.trim();
    let end = v.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-')).unwrap_or(v.len());
    let n: f64 = v[..end].parse().ok()?;
    let unit = v[end..].trim().to_ascii_lowercase();
    (unit.len() <= 3 && unit.chars().all(|c| c.is_ascii_alphabetic())).then_some((n, unit))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diff(a: &str, b: &str) -> Difference {
        Difference::new("dataset", "rows", vec![Some(a.into()), Some(b.into())])
    }

    #[test]
    fn negligible_differences() {
        assert!(diff("394848", "394849").negligible, "a row estimate");
        assert!(diff("ON", "on").negligible && diff("ON", "1").negligible);
        assert!(diff("2.00 MB", "2.01 MB").negligible);
        for (a, b) in [("128M", "256M"), ("1", "0"), ("9680", "9936"), ("2.0 MB", "2.0 GB"), ("utf8mb4", "latin1")] {
            assert!(!diff(a, b).negligible, "{a} vs {b}");
        }
        assert!(!Difference::new("dataset", "rows", vec![Some("1".into()), None]).negligible, "one-sided");
        assert!(diff("0", "0.0").negligible);
        assert!(diff("394848", "394849").negligible && !diff("394848", "394849").matters());
        let other =
            Difference::new("other variables", "socket", vec![Some("/run/a.sock".into()), Some("/tmp/b".into())]);
        assert!(!other.negligible && !other.matters());
        assert!(diff("9680", "9936").matters());
        assert!(!Difference::new("server", "host datadir", vec![Some("/var/lib/mysql".into()), None]).matters());
    }
}
