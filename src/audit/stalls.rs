//! Events far outside the run's distribution: a lock wait, a checkpoint, a failover. The
//! percentiles hide one 4-second event among thousands; the timeline's per-second maxima
//! and the slowest statement of each second do not.

use super::{Finding, Severity};
use crate::model::{IntervalStats, ResultDocument};
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
    let named: Vec<_> = stalled.iter().take(NAMED).map(|i| named(d, i, warmup)).collect();
    let checkpointed = stalled.iter().any(|i| checkpoints_in(d, i) > 0.0);
    let which = match (span(stalled[0], warmup), &stalled[0].slowest) {
        (Some(Span { from_s, to_s, of: SpanOf::Event }), Some(s)) => format!(
            " ({from_s:.2} s to {to_s:.2} s after the warmup; its second's slowest statement {} took {:.2} s)",
            s.statement,
            s.latency_us / 1e6
        ),
        (Some(Span { from_s, to_s, .. }), Some(s)) => {
            format!(" ({}, {from_s:.2} s to {to_s:.2} s after the warmup)", s.statement)
        }
        (Some(Span { from_s, to_s, .. }), None) => format!(" ({from_s:.2} s to {to_s:.2} s after the warmup)"),
        (None, _) => String::new(),
    };
    vec![Finding {
        id: "stall".into(),
        severity: Severity::Warn,
        title: format!(
            "{} held events far outside the distribution: the longest took {:.2} s{which} where p99 is {:.2} ms{}",
            stretches(&stalled),
            worst / 1e6,
            p99 / 1000.0,
            if checkpointed { "; the server checkpointed then" } else { "" }
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

/// One stall in the evidence; times in seconds from the end of the warmup.
fn named(d: &ResultDocument, i: &IntervalStats, warmup: f64) -> serde_json::Value {
    let mut stall = json!({ "event_ms": round(i.event.max_us / 1000.0) });
    if let Some(s) = &i.slowest {
        stall["statement"] = json!(s.statement);
        stall["statement_ms"] = json!(round(s.latency_us / 1000.0));
    }
    match span(i, warmup) {
        Some(span) => {
            stall["started_s"] = json!(round(span.from_s));
            stall["ended_s"] = json!(round(span.to_s));
            stall["span_of"] = json!(span.of.name());
        }
        // Results before statements were named: the interval it ended in.
        None => stall["interval_end_s"] = json!(round(i.from_s + i.duration_s - warmup)),
    }
    if let Some(r) = i.repeat {
        stall["repeat"] = json!(r);
    }
    let server = server_then(d, i);
    if !server.is_empty() {
        stall["server"] = json!(server);
    }
    stall
}

/// When a stall began and ended, seconds after the warmup.
struct Span {
    from_s: f64,
    to_s: f64,
    of: SpanOf,
}

/// Whose span: the stalled event's, or (results before events' ends were recorded) the
/// slowest statement's, which may be any part of the event.
#[derive(Clone, Copy)]
enum SpanOf {
    Event,
    Statement,
}

impl SpanOf {
    fn name(self) -> &'static str {
        match self {
            SpanOf::Event => "event",
            SpanOf::Statement => "statement",
        }
    }
}

fn span(i: &IntervalStats, warmup: f64) -> Option<Span> {
    let (latency_us, ended_s, of) = match (&i.slowest_event, &i.slowest) {
        (Some(e), _) => (e.latency_us, e.ended_s, SpanOf::Event),
        (None, Some(s)) => (s.latency_us, s.ended_s, SpanOf::Statement),
        (None, None) => return None,
    };
    Some(Span { from_s: ended_s - latency_us / 1e6 - warmup, to_s: ended_s - warmup, of })
}

/// The server's figures in a stalled interval that stand out from the run: at least twice
/// their median over the measured intervals (a checkpoint, a surge of page flushing, lock
/// waits), with that median.
fn server_then(d: &ResultDocument, i: &IntervalStats) -> serde_json::Map<String, serde_json::Value> {
    let mut out = serde_json::Map::new();
    for (key, value) in &i.server {
        let mut all: Vec<f64> =
            d.intervals.iter().filter(|m| !m.warmup).filter_map(|m| m.server.get(key).copied()).collect();
        all.sort_by(f64::total_cmp);
        let median = all.get(all.len() / 2).copied().unwrap_or(0.0);
        if *value > 0.0 && *value >= 2.0 * median {
            out.insert(key.clone(), json!({ "then": round(*value), "median": round(median) }));
        }
    }
    out
}

/// Checkpoints the server counted in the interval (figures whose unit is checkpoints).
fn checkpoints_in(d: &ResultDocument, i: &IntervalStats) -> f64 {
    let figures = d.conditions.server.sampled();
    figures.iter().filter(|f| f.unit == "checkpoints").filter_map(|f| i.server.get(&f.key)).sum()
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// "1 second", "3 seconds"; or, when the timeline's entries are not seconds (merged over a
/// long run, or a fractional --report-interval), "2 stretches (of up to 5.12 s)".
fn stretches(stalled: &[&IntervalStats]) -> String {
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

    #[test]
    fn stalls_are_counted_in_seconds_or_in_the_entries_they_were() {
        let entry = |d: f64| IntervalStats { duration_s: d, ..Default::default() };
        let (second, merged) = (entry(1.002), entry(5.12));
        assert_eq!(stretches(&[&second]), "1 second");
        assert_eq!(stretches(&[&second, &second]), "2 seconds");
        assert_eq!(stretches(&[&merged, &second]), "2 stretches (of up to 5.12 s)");
        assert_eq!(stretches(&[&entry(0.25)]), "1 stretch (of up to 0.25 s)");
    }

    /// A stall spans its event as recorded, not the slowest statement of its second: here the
    /// event waited in a statement that ended 0.45 s before the event did.
    #[test]
    fn a_stall_spans_its_event_not_its_slowest_statement() {
        use crate::model::{ClassStats, SlowestEvent, SlowestStatement};
        let mut d: ResultDocument = serde_json::from_str(include_str!("testdata/mariadb_loopback.json")).unwrap();
        d.conditions.run.warmup_s = 2;
        d.stats.insert("event".into(), ClassStats { p99_us: 2_000.0, ..Default::default() });
        d.intervals =
            (0..10).map(|n| IntervalStats { from_s: n as f64, duration_s: 1.0, ..Default::default() }).collect();
        d.intervals.iter_mut().for_each(|i| i.event.max_us = 3_000.0);
        let stalled = &mut d.intervals[9];
        stalled.event.max_us = 900_000.0;
        stalled.slowest =
            Some(SlowestStatement { statement: "point_select".into(), latency_us: 400_000.0, ended_s: 9.5 });
        stalled.slowest_event = Some(SlowestEvent { latency_us: 900_000.0, ended_s: 9.95 });
        let found = stalls(&d);
        let stall = &found[0].evidence["stalls"][0];
        assert_eq!(
            (&stall["started_s"], &stall["ended_s"], &stall["span_of"]),
            (&json!(7.05), &json!(7.95), &json!("event"))
        );
        assert_eq!(stall["statement_ms"], json!(400.0));
        assert!(found[0].title.contains("took 0.90 s (7.05 s to 7.95 s after the warmup; its second's slowest statement point_select took 0.40 s)"), "{}", found[0].title);
        // A result written before events' ends were recorded: the statement's span, said to be so.
        d.intervals[9].slowest_event = None;
        let stall = &stalls(&d)[0].evidence["stalls"][0];
        assert_eq!(
            (&stall["started_s"], &stall["ended_s"], &stall["span_of"]),
            (&json!(7.1), &json!(7.5), &json!("statement"))
        );
    }

    /// A stall in a second the server checkpointed says so, with the figures that stood
    /// out then (requested checkpoints, buffers written) against their medians.
    #[test]
    fn a_stall_during_a_checkpoint_says_so() {
        use crate::model::{ClassStats, SampledFigure, ServerFacts};
        let second = |n: usize, max_us: f64, checkpoints: f64, buffers: f64| {
            let mut i = IntervalStats { from_s: n as f64, duration_s: 1.0, ..Default::default() };
            i.event.max_us = max_us;
            i.server = [
                ("checkpoints_req/s".to_string(), checkpoints),
                ("buffers_checkpoint/s".to_string(), buffers),
                ("xact_commit/s".to_string(), 500.0),
            ]
            .into();
            i
        };
        let mut d: ResultDocument = serde_json::from_str(include_str!("testdata/mariadb_loopback.json")).unwrap();
        d.stats.insert("event".into(), ClassStats { p99_us: 2_000.0, ..Default::default() });
        d.intervals = (0..9).map(|n| second(n, 3_000.0, 0.0, 10.0)).collect();
        d.intervals.push(second(9, 900_000.0, 1.0, 4_000.0));
        d.conditions.server.facts = Some(ServerFacts {
            sampled: vec![
                SampledFigure::rate("checkpoints_req", "checkpoints (requested)", "checkpoints", "checkpoint"),
                SampledFigure::rate("buffers_checkpoint", "buffers written by checkpoints", "buffers", "checkpoint"),
            ],
            ..Default::default()
        });
        let found = stalls(&d);
        assert_eq!(found.len(), 1);
        assert!(found[0].title.ends_with("; the server checkpointed then"), "{}", found[0].title);
        let server = &found[0].evidence["stalls"][0]["server"];
        assert_eq!(server["checkpoints_req/s"], json!({"then": 1.0, "median": 0.0}));
        assert_eq!(server["buffers_checkpoint/s"], json!({"then": 4000.0, "median": 10.0}));
        assert!(server.get("xact_commit/s").is_none(), "a figure as usual is not named: {server}");
        d.intervals[9].server.insert("checkpoints_req/s".into(), 0.0);
        assert!(!stalls(&d)[0].title.contains("checkpointed"));
    }
}
