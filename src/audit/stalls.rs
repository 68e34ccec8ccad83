//! Events far outside the run's distribution: a lock wait, a checkpoint, a failover. The
//! percentiles hide one 4-second event among thousands; the timeline's per-second maxima
//! and the slowest statement of each second do not.

use super::{Finding, Severity};
use crate::model::ResultDocument;
use serde_json::json;

/// An event counts as a stall at this many times the run's p99 ...
const TIMES_P99: f64 = 20.0;
/// ... and at least this far beyond it (microseconds): fast servers' small hiccups are not stalls.
const BEYOND_P99_US: f64 = 100_000.0;
/// Stalls named in the evidence, longest first.
const NAMED: usize = 5;

pub fn stalls(d: &ResultDocument) -> Vec<Finding> {
    let Some(p99) = d.stats.get("event").map(|e| e.p99_us).filter(|p| *p > 0.0) else { return vec![] };
    let threshold = (p99 * TIMES_P99).max(p99 + BEYOND_P99_US);
    let warmup = d.conditions.run.warmup_s as f64;
    let mut stalled: Vec<_> = d.intervals.iter().filter(|i| !i.warmup && i.event.max_us >= threshold).collect();
    if stalled.is_empty() {
        return vec![];
    }
    stalled.sort_by(|a, b| b.event.max_us.total_cmp(&a.event.max_us));
    let worst = stalled[0].event.max_us;
    let named: Vec<_> = stalled
        .iter()
        .take(NAMED)
        .map(|i| {
            // Times in seconds from the end of the warmup.
            let mut stall = json!({ "event_ms": round(i.event.max_us / 1000.0) });
            match &i.slowest {
                Some(s) => {
                    stall["statement"] = json!(s.statement);
                    stall["statement_ms"] = json!(round(s.latency_us / 1000.0));
                    stall["started_s"] = json!(round(s.ended_s - s.latency_us / 1e6 - warmup));
                    stall["ended_s"] = json!(round(s.ended_s - warmup));
                }
                // Results before statements were named: the interval it ended in.
                None => stall["interval_end_s"] = json!(round(i.from_s + i.duration_s - warmup)),
            }
            if let Some(r) = i.repeat {
                stall["repeat"] = json!(r);
            }
            stall
        })
        .collect();
    let which = stalled[0]
        .slowest
        .as_ref()
        .map(|s| {
            let ended = s.ended_s - warmup;
            format!(" ({}, {:.2} s to {ended:.2} s after the warmup)", s.statement, ended - s.latency_us / 1e6)
        })
        .unwrap_or_default();
    vec![Finding {
        id: "stall".into(),
        severity: Severity::Warn,
        title: format!(
            "{} held events far outside the distribution: the longest took {:.2} s{which} where p99 is {:.2} ms",
            stretches(&stalled),
            worst / 1e6,
            p99 / 1000.0
        ),
        evidence: [
            ("p99_ms".to_string(), json!(round(p99 / 1000.0))),
            ("threshold_ms".to_string(), json!(round(threshold / 1000.0))),
            ("stalled_seconds".to_string(), json!(stalled.len())),
            ("stalls".to_string(), json!(named)),
        ]
        .into_iter()
        .collect(),
        advice: "find what stopped these events (lock waits, checkpoints, log flushes, a failover, the client's host) before quoting percentiles: a closed loop also held back each stalled client's next events, so the percentiles understate the stall; the timeline shows when".into(),
    }]
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// "1 second", "3 seconds"; or, when the timeline's entries are not seconds (merged over a
/// long run, or a fractional --report-interval), "2 stretches (of up to 5.12 s)".
fn stretches(stalled: &[&crate::model::IntervalStats]) -> String {
    let n = stalled.len() as u64;
    let longest = stalled.iter().map(|i| i.duration_s).fold(0.0, f64::max);
    if (0.5..1.5).contains(&longest) {
        crate::model::plural(n, "second")
    } else {
        let stretches = if n == 1 { "1 stretch".to_string() } else { format!("{n} stretches") };
        format!("{stretches} (of up to {longest:.2} s)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::IntervalStats;

    #[test]
    fn stalls_are_counted_in_seconds_or_in_the_entries_they_were() {
        let entry = |d: f64| IntervalStats { duration_s: d, ..Default::default() };
        let (second, merged) = (entry(1.002), entry(5.12));
        assert_eq!(stretches(&[&second]), "1 second");
        assert_eq!(stretches(&[&second, &second]), "2 seconds");
        assert_eq!(stretches(&[&merged, &second]), "2 stretches (of up to 5.12 s)");
        assert_eq!(stretches(&[&entry(0.25)]), "1 stretch (of up to 0.25 s)");
    }
}
