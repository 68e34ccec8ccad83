//! `--repeat N`: the measured phase run N times back to back. Each repeat keeps its own
//! statistics; the document's top-level statistics merge them all (histograms added, so
//! percentiles are exact over every repeat), and `repeat_summary` gives each headline
//! metric's median and spread between repeats, the evidence compare's intervals use.

use super::metric::{Metric, MetricSource};
use super::{ClassStats, ClientRecord, ErrorRecord, RunStatus};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One repeat of the measured phase. Its timeline is the document's `intervals` whose
/// `repeat` is this `index`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct RepeatRecord {
    /// 1-based.
    pub index: u32,
    pub status: RunStatus,
    pub started_at: String,
    pub ended_at: String,
    pub measured_s: f64,
    pub events: u64,
    /// As the document's `stats`, `statements` and `transactions`, for this repeat only.
    pub stats: BTreeMap<String, ClassStats>,
    pub statements: BTreeMap<String, ClassStats>,
    #[serde(default)]
    pub transactions: BTreeMap<String, ClassStats>,
    pub errors: ErrorRecord,
    pub client_cost: ClientRecord,
    /// Server counters over this repeat's measured phase (non-zero deltas).
    pub status_delta: BTreeMap<String, i64>,
}

impl RepeatRecord {
    pub fn metric_source(&self, cost_per_hour: Option<f64>) -> MetricSource<'_> {
        MetricSource {
            stats: &self.stats,
            statements: &self.statements,
            transactions: &self.transactions,
            errors: &self.errors,
            client: &self.client_cost,
            cost_per_hour,
            ha: None,
        }
    }
}

/// A headline metric across repeats.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    /// Sample standard deviation over the mean (0 when the mean is 0).
    pub cv: f64,
    /// Each repeat's value, in order.
    pub values: Vec<f64>,
}

impl Spread {
    /// `None` for no values.
    pub fn of(values: Vec<f64>) -> Option<Spread> {
        if values.is_empty() {
            return None;
        }
        let mut sorted = values.clone();
        sorted.sort_by(|a, b| a.total_cmp(b));
        let n = sorted.len();
        let median = if n % 2 == 1 { sorted[n / 2] } else { (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0 };
        let mean = sorted.iter().sum::<f64>() / n as f64;
        let sd = if n > 1 {
            (sorted.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n as f64 - 1.0)).sqrt()
        } else {
            0.0
        };
        Some(Spread {
            median,
            min: sorted[0],
            max: sorted[n - 1],
            mean,
            cv: if mean != 0.0 { sd / mean.abs() } else { 0.0 },
            values,
        })
    }
}

/// Median and spread of each headline metric a repeat has, keyed by metric name.
pub fn summarize(repeats: &[RepeatRecord], metrics: &[Metric], cost_per_hour: Option<f64>) -> BTreeMap<String, Spread> {
    metrics
        .iter()
        .filter_map(|m| {
            let values: Option<Vec<f64>> = repeats.iter().map(|r| m.value(&r.metric_source(cost_per_hour))).collect();
            Some((m.to_string(), Spread::of(values?)?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread() {
        let s = Spread::of(vec![3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.mean), (2.0, 1.0, 3.0, 2.0));
        assert!((s.cv - 0.5).abs() < 1e-12);
        assert_eq!(Spread::of(vec![1.0, 2.0, 3.0, 4.0]).unwrap().median, 2.5);
        assert_eq!(s.values, vec![3.0, 1.0, 2.0]);
    }
}
