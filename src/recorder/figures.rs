//! One histogram's figures as the result model holds them (microseconds): what a class, a
//! statement or a timeline entry reports of its latencies.

use crate::model::{ClassStats, CompactStats};
use crate::stats::LatencyHistogram;

/// Nanoseconds to microseconds (three decimals keep the nanoseconds).
fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

/// A rate or a percentage to the thousandth: more digits are noise that a day's streamed
/// intervals would carry 86,400 times.
pub fn thousandths(x: f64) -> f64 {
    (x * 1e3).round() / 1e3
}

/// Seconds to the microsecond (what the streamed interval log's times keep).
pub fn micros(seconds: f64) -> f64 {
    (seconds * 1e6).round() / 1e6
}

/// Full statistics of one class or statement over `seconds`, with any extra percentiles.
pub fn class_stats(h: &LatencyHistogram, seconds: f64, extra: &[f64]) -> ClassStats {
    ClassStats {
        count: h.count(),
        min_us: us(h.min_ns()),
        max_us: us(h.max_ns()),
        mean_us: h.mean_ns().round() / 1000.0,
        p50_us: us(h.percentile_ns(50.0)),
        p95_us: us(h.percentile_ns(95.0)),
        p99_us: us(h.percentile_ns(99.0)),
        p999_us: us(h.percentile_ns(99.9)),
        percentiles_us: extra
            .iter()
            .map(|&p| (crate::model::stats::percentile_key(p), us(h.percentile_ns(p))))
            .collect(),
        qps: if seconds > 0.0 { h.count() as f64 / seconds } else { 0.0 },
        sum_us: h.sum_ns() as f64 / 1000.0,
        histogram: h.encode(),
        rows_affected: None,
        rollbacks: None,
        errors: None,
        skipped: None,
    }
}

/// Per-interval statistics (timelines): no histogram, only the numbers, and any `extra`
/// percentiles (report windows with a --percentile the summaries do not keep).
pub fn compact_stats(h: &LatencyHistogram, seconds: f64, extra: &[f64]) -> CompactStats {
    CompactStats {
        count: h.count(),
        per_s: if seconds > 0.0 { thousandths(h.count() as f64 / seconds) } else { 0.0 },
        min_us: us(h.min_ns()),
        p50_us: us(h.percentile_ns(50.0)),
        p95_us: us(h.percentile_ns(95.0)),
        p99_us: us(h.percentile_ns(99.0)),
        p999_us: us(h.percentile_ns(99.9)),
        max_us: us(h.max_ns()),
        percentiles_us: extra
            .iter()
            .map(|&p| (crate::model::stats::percentile_key(p), us(h.percentile_ns(p))))
            .collect(),
    }
}
