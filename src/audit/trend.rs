//! A trend across repeats: throughput that rises (caches warming after prepare) or falls
//! (a growing history table, purge lag) from the first repeat to the last. Repeats run
//! one side after the other put such a trend on whichever side ran later.

use super::{Finding, Severity};
use crate::model::ResultDocument;
use serde_json::json;

/// The fitted change from the first repeat to the last, relative to their mean, that
/// counts as a trend when every step goes the same way (or nearly: see `monotone`).
const CHANGE: f64 = 0.10;

pub fn trend(d: &ResultDocument) -> Vec<Finding> {
    let Some(s) = d.repeat_summary.get("tps").filter(|s| s.values.len() >= 3 && s.mean > 0.0) else {
        return vec![];
    };
    let v = &s.values;
    let slope = least_squares_slope(v);
    let change = slope * (v.len() - 1) as f64 / s.mean;
    if change.abs() < CHANGE || !monotone(v, slope) {
        return vec![];
    }
    let rising = slope > 0.0;
    vec![Finding {
        id: "trend".into(),
        severity: Severity::Warn,
        title: format!(
            "throughput {} across the repeats: {:+.0}% from the first to the last ({:+.1} events/s per repeat)",
            if rising { "rose" } else { "fell" },
            change * 100.0,
            slope
        ),
        evidence: [
            ("tps_per_repeat".to_string(), json!(v.iter().map(|x| (x * 10.0).round() / 10.0).collect::<Vec<_>>())),
            ("slope_per_repeat".to_string(), json!((slope * 10.0).round() / 10.0)),
            ("change_pct".to_string(), json!((change * 1000.0).round() / 10.0)),
        ]
        .into_iter()
        .collect(),
        advice: if rising {
            "the server was still warming up (caches filling after prepare): warm up longer (--warmup), and alternate the sides of a comparison so no side gets only the warm repeats"
        } else {
            "the server slowed down repeat after repeat (growing tables, purge or vacuum lag, checkpoints): run longer and alternate the sides of a comparison so the slowdown does not land on one side"
        }
        .into(),
    }]
}

/// Least-squares slope of `v` against 0, 1, 2, ...
fn least_squares_slope(v: &[f64]) -> f64 {
    let n = v.len() as f64;
    let mean_x = (n - 1.0) / 2.0;
    let mean_y = v.iter().sum::<f64>() / n;
    let (mut num, mut den) = (0.0, 0.0);
    for (i, y) in v.iter().enumerate() {
        let dx = i as f64 - mean_x;
        num += dx * (y - mean_y);
        den += dx * dx;
    }
    if den > 0.0 {
        num / den
    } else {
        0.0
    }
}

/// Whether the pairs of repeats agree with the slope's direction: all of them for up to
/// four repeats, at least 80% (Kendall's tau >= 0.6) beyond.
fn monotone(v: &[f64], slope: f64) -> bool {
    let (mut agree, mut pairs) = (0usize, 0usize);
    for i in 0..v.len() {
        for j in i + 1..v.len() {
            pairs += 1;
            if (v[j] - v[i]) * slope > 0.0 {
                agree += 1;
            }
        }
    }
    match v.len() {
        ..=4 => agree == pairs,
        _ => agree as f64 >= pairs as f64 * 0.8,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slope_of_a_line_and_of_noise() {
        assert!((least_squares_slope(&[557.0, 644.0, 651.0]) - 47.0).abs() < 1e-9);
        assert_eq!(least_squares_slope(&[5.0, 5.0, 5.0]), 0.0);
    }

    #[test]
    fn monotone_needs_every_step_for_few_repeats() {
        assert!(monotone(&[557.0, 644.0, 651.0], 1.0));
        assert!(!monotone(&[557.0, 700.0, 651.0], 1.0));
        assert!(monotone(&[10.0, 9.0, 8.0], -1.0));
        // Six repeats, one step back: 14 of 15 pairs agree.
        assert!(monotone(&[1.0, 2.0, 3.0, 2.9, 5.0, 6.0], 1.0));
    }
}
