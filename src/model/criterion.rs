//! Thresholds (`p99<10ms`, checked on a result's value) and claims (`qps>=5x`, checked on a
//! comparison's interval): one grammar, `METRIC OP NUMBER[UNIT]`.

use super::metric::{Metric, Quantity, UnknownMetric};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Op {
    #[serde(rename = "<")]
    Lt,
    #[serde(rename = "<=")]
    Le,
    #[serde(rename = ">")]
    Gt,
    #[serde(rename = ">=")]
    Ge,
    #[serde(rename = "==")]
    Eq,
}

impl Op {
    pub fn holds(self, value: f64, bound: f64) -> bool {
        match self {
            Op::Lt => value < bound,
            Op::Le => value <= bound,
            Op::Gt => value > bound,
            Op::Ge => value >= bound,
            Op::Eq => value == bound,
        }
    }

    fn symbol(self) -> &'static str {
        match self {
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::Eq => "==",
        }
    }
}

/// What a criterion compares against.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bound {
    /// In the metric's own unit (µs for latency and CPU, per second for rates, a fraction).
    Absolute(f64),
    /// A multiple of the baseline's value (`5x`): claims only.
    Ratio(f64),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Criterion {
    /// As given (whitespace removed).
    pub text: String,
    pub metric: Metric,
    pub op: Op,
    pub bound: Bound,
}

pub const GRAMMAR: &str = "METRIC OP NUMBER[UNIT] with OP one of < <= > >= ==, a latency in us, ms or s (p99<10ms, commit.p99<=2ms), a rate or count as a plain number (qps>5000, errors==0), error_rate as a fraction or with % (error_rate<0.1%)";

/// What a claim may be beyond a threshold, named after [`GRAMMAR`] in a claim's errors.
const CLAIM_GRAMMAR: &str = ", or a ratio to the baseline (qps>=5x)";

/// A threshold or claim that does not read as one.
#[derive(Debug, thiserror::Error)]
pub enum CriterionError {
    #[error("{problem} in {text:?}: expected {GRAMMAR}{}", if *.in_claim { CLAIM_GRAMMAR } else { "" })]
    Malformed { problem: Malformation, text: String, in_claim: bool },
    #[error("{source} in {text:?}")]
    UnknownMetric { source: UnknownMetric, text: String },
    #[error("threshold {0:?}: a threshold is absolute (a ratio like 5x is a claim for compare)")]
    RatioThreshold(String),
}

/// What is wrong in a criterion that does not follow [`GRAMMAR`].
#[derive(Debug, thiserror::Error)]
pub enum Malformation {
    #[error("no comparison")]
    NoComparison,
    #[error("no number")]
    NoNumber,
    #[error("a latency needs its unit (us, ms or s)")]
    LatencyWithoutUnit,
    #[error("unit {unit:?} does not fit {metric}")]
    UnitDoesNotFit { unit: String, metric: Metric },
    #[error("a ratio must be above 0")]
    RatioNotAboveZero,
}

impl CriterionError {
    /// The same error for a claim: the grammar it names allows ratios.
    fn in_claim(self) -> Self {
        match self {
            CriterionError::Malformed { problem, text, .. } => {
                CriterionError::Malformed { problem, text, in_claim: true }
            }
            other => other,
        }
    }
}

impl Criterion {
    /// A threshold: an absolute bound (`p99<10ms`, `qps>5000`, `errors==0`).
    pub fn threshold(text: &str) -> Result<Criterion, CriterionError> {
        let c = Criterion::parse(text)?;
        if matches!(c.bound, Bound::Ratio(_)) {
            return Err(CriterionError::RatioThreshold(text.into()));
        }
        Ok(c)
    }

    /// A claim: a ratio against the baseline (`qps>=5x`, `p99<=0.5x`) or absolute.
    pub fn claim(text: &str) -> Result<Criterion, CriterionError> {
        Criterion::parse(text).map_err(CriterionError::in_claim)
    }

    fn parse(text: &str) -> Result<Criterion, CriterionError> {
        let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        let bad = |problem: Malformation| CriterionError::Malformed { problem, text: text.into(), in_claim: false };
        let at = compact.find(['<', '>', '=']).ok_or_else(|| bad(Malformation::NoComparison))?;
        let (name, rest) = compact.split_at(at);
        let (op, number) = [("<=", Op::Le), (">=", Op::Ge), ("==", Op::Eq), ("<", Op::Lt), (">", Op::Gt)]
            .into_iter()
            .find_map(|(s, op)| rest.strip_prefix(s).map(|n| (op, n)))
            .ok_or_else(|| bad(Malformation::NoComparison))?;
        let metric =
            Metric::parse(name).map_err(|source| CriterionError::UnknownMetric { source, text: text.into() })?;
        // The longest prefix that is a number (`1e9`, `0.5`); the rest is the unit.
        let split = (1..=number.len())
            .rev()
            .filter(|&i| number.is_char_boundary(i))
            .find(|&i| number[..i].parse::<f64>().is_ok_and(|n| n.is_finite()))
            .ok_or_else(|| bad(Malformation::NoNumber))?;
        let (digits, unit) = number.split_at(split);
        let n: f64 = digits.parse().map_err(|_| bad(Malformation::NoNumber))?;
        let bound = match (unit, metric.quantity()) {
            ("x", _) => Bound::Ratio(n),
            ("us" | "µs", Quantity::Latency | Quantity::Cpu) => Bound::Absolute(n),
            ("ms", Quantity::Latency | Quantity::Cpu) => Bound::Absolute(n * 1e3),
            ("s", Quantity::Latency | Quantity::Cpu) => Bound::Absolute(n * 1e6),
            ("", Quantity::Latency | Quantity::Cpu) => return Err(bad(Malformation::LatencyWithoutUnit)),
            ("" | "/s", Quantity::Rate) | ("", Quantity::Count | Quantity::Money | Quantity::Fraction) => {
                Bound::Absolute(n)
            }
            ("%", Quantity::Fraction) => Bound::Absolute(n / 100.0),
            (u, _) => return Err(bad(Malformation::UnitDoesNotFit { unit: u.into(), metric })),
        };
        if matches!(bound, Bound::Ratio(r) if r <= 0.0) {
            return Err(bad(Malformation::RatioNotAboveZero));
        }
        Ok(Criterion { text: compact, metric, op, bound })
    }
}

impl fmt::Display for Criterion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bound = match self.bound {
            Bound::Ratio(r) => format!("{r}x"),
            Bound::Absolute(v) => self.metric.show(v).replace(' ', ""),
        };
        write!(f, "{}{}{}", self.metric, self.op.symbol(), bound)
    }
}

/// A threshold checked at the end of a run (or on each side of a comparison).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ThresholdRecord {
    /// As given, e.g. `p99<10ms`.
    pub threshold: String,
    pub metric: String,
    pub op: Op,
    /// The bound in the metric's unit (µs for latency and CPU, per second for rates).
    pub bound: f64,
    /// The measured value in the same unit; absent when the result does not have it
    /// (a `commit` latency of a workload without COMMIT): then it fails.
    pub value: Option<f64>,
    pub passed: bool,
}

impl ThresholdRecord {
    pub fn check(c: &Criterion, value: Option<f64>) -> ThresholdRecord {
        let bound = match c.bound {
            Bound::Absolute(b) | Bound::Ratio(b) => b,
        };
        ThresholdRecord {
            threshold: c.text.clone(),
            metric: c.metric.to_string(),
            op: c.op,
            bound,
            value,
            passed: value.is_some_and(|v| c.op.holds(v, bound)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issue_examples() {
        let t = Criterion::threshold("p99<10ms").unwrap();
        assert_eq!((t.op, t.bound), (Op::Lt, Bound::Absolute(10_000.0)));
        assert_eq!(Criterion::threshold("qps>5000").unwrap().bound, Bound::Absolute(5000.0));
        assert_eq!(Criterion::threshold("qps>1e9").unwrap().bound, Bound::Absolute(1e9));
        assert_eq!(Criterion::threshold("errors==0").unwrap().op, Op::Eq);
        assert_eq!(Criterion::threshold("write.p95 < 2ms").unwrap().bound, Bound::Absolute(2000.0));
        assert_eq!(Criterion::claim("qps>=5x").unwrap().bound, Bound::Ratio(5.0));
        assert_eq!(Criterion::claim("p99<=0.5x").unwrap().bound, Bound::Ratio(0.5));
        assert_eq!(Criterion::claim("commit.p99<=2ms").unwrap().bound, Bound::Absolute(2000.0));
        assert_eq!(Criterion::threshold("error_rate<0.1%").unwrap().bound, Bound::Absolute(0.001));
    }

    #[test]
    fn bad_syntax_names_the_grammar() {
        for bad in ["p99", "p99<10", "p99<10kg", "qps>fast", "qps>5ms", "latency<3ms", "p99=<3ms"] {
            let e = Criterion::threshold(bad).unwrap_err().to_string();
            assert!(e.contains("METRIC OP NUMBER") || e.contains("unknown metric"), "{bad}: {e}");
        }
        assert!(Criterion::threshold("qps>=5x").unwrap_err().to_string().contains("claim"));
        assert!(Criterion::claim("qps>=0x").unwrap_err().to_string().contains("above 0"));
    }

    /// The seed of studies/commit-latency.toml judges a COMMIT's floor: its minimum.
    #[test]
    fn commit_min_reads_the_fastest_commit() {
        use crate::model::metric::LatencyFigure;
        use crate::model::stats::{CompactStats, IntervalStats};
        let c = Criterion::claim("commit.min<=2ms").unwrap();
        assert_eq!(c.metric, Metric::Latency { class: "commit".into(), figure: LatencyFigure::Min });
        assert_eq!((c.op, c.bound), (Op::Le, Bound::Absolute(2000.0)));
        assert_eq!(c.to_string(), "commit.min<=2.000ms");
        let commit =
            CompactStats { count: 3, min_us: 1_500.0, p99_us: 40_000.0, max_us: 922_000.0, ..Default::default() };
        let second = IntervalStats { commit, ..Default::default() };
        let min = c.metric.per_second(&second, None).map(|(v, _)| v);
        assert_eq!(min, Some(1_500.0));
        assert!(ThresholdRecord::check(&c, min).passed);
        let max = Criterion::claim("commit.max<226ms").unwrap();
        let worst = max.metric.per_second(&second, None).map(|(v, _)| v);
        assert!(!ThresholdRecord::check(&max, worst).passed, "922 ms is past Aurora's 226 ms");
    }

    #[test]
    fn checks() {
        let t = Criterion::threshold("p99<10ms").unwrap();
        assert!(ThresholdRecord::check(&t, Some(9_999.0)).passed);
        assert!(!ThresholdRecord::check(&t, Some(10_000.0)).passed);
        assert!(!ThresholdRecord::check(&t, None).passed);
    }
}
