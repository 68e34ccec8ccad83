//! Summaries of a histogram as they appear in reports and result files (microseconds).

use super::LatencyHistogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Nanoseconds to microseconds (three decimals keep the nanoseconds).
fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

/// Full statistics of one class or statement over the measured run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ClassStats {
    pub count: u64,
    pub min_us: f64,
    pub max_us: f64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p95_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    /// Any further percentiles asked for with `--percentiles`, keyed like `p99.99`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub percentiles_us: BTreeMap<String, f64>,
    /// count / measured seconds.
    pub qps: f64,
    /// Sum of all latencies, so means stay exact when results are merged.
    pub sum_us: f64,
    /// HdrHistogram V2+DEFLATE, base64; values in nanoseconds.
    pub histogram: String,
}

impl ClassStats {
    /// Percentile p: a fixed one, or one asked for with `--percentiles`.
    pub fn at(&self, p: f64) -> Option<f64> {
        fixed_percentile(p, [self.p50_us, self.p95_us, self.p99_us, self.p999_us, self.max_us])
            .or_else(|| self.percentiles_us.get(&percentile_key(p)).copied())
    }

    pub fn of(h: &LatencyHistogram, seconds: f64, extra: &[f64]) -> Self {
        ClassStats {
            count: h.count(),
            min_us: us(h.min_ns()),
            max_us: us(h.max_ns()),
            mean_us: h.mean_ns().round() / 1000.0,
            p50_us: us(h.percentile_ns(50.0)),
            p95_us: us(h.percentile_ns(95.0)),
            p99_us: us(h.percentile_ns(99.0)),
            p999_us: us(h.percentile_ns(99.9)),
            percentiles_us: extra.iter().map(|&p| (percentile_key(p), us(h.percentile_ns(p)))).collect(),
            qps: if seconds > 0.0 { h.count() as f64 / seconds } else { 0.0 },
            sum_us: h.sum_ns() as f64 / 1000.0,
            histogram: h.encode(),
        }
    }
}

/// `99.99` -> `p99.99`, `95` -> `p95`.
pub fn percentile_key(p: f64) -> String {
    format!("p{}", trim_float(p))
}

pub fn trim_float(p: f64) -> String {
    let s = format!("{p:.4}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Per-interval statistics (timelines): no histogram, only the numbers.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct CompactStats {
    pub count: u64,
    pub per_s: f64,
    pub min_us: f64,
    pub p50_us: f64,
    pub p95_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
}

impl CompactStats {
    pub fn of(h: &LatencyHistogram, seconds: f64) -> Self {
        CompactStats {
            count: h.count(),
            per_s: if seconds > 0.0 { h.count() as f64 / seconds } else { 0.0 },
            min_us: us(h.min_ns()),
            p50_us: us(h.percentile_ns(50.0)),
            p95_us: us(h.percentile_ns(95.0)),
            p99_us: us(h.percentile_ns(99.0)),
            p999_us: us(h.percentile_ns(99.9)),
            max_us: us(h.max_ns()),
        }
    }

    /// One of the fixed percentiles (50, 95, 99, 99.9, 100); `None` for others.
    pub fn pick(&self, p: f64) -> Option<f64> {
        fixed_percentile(p, [self.p50_us, self.p95_us, self.p99_us, self.p999_us, self.max_us])
    }
}

/// The value for p among (p50, p95, p99, p99.9, max), the percentiles every summary keeps.
fn fixed_percentile(p: f64, values: [f64; 5]) -> Option<f64> {
    [50.0, 95.0, 99.0, 99.9, 100.0].iter().position(|&f| f == p).map(|i| values[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys() {
        assert_eq!(percentile_key(99.99), "p99.99");
        assert_eq!(percentile_key(95.0), "p95");
    }
}
