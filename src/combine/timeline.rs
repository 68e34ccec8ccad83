//! The shards' timelines as one: the entries that cover the same stretch of the run (the
//! shards started together) merged from their class histograms.

use super::CombineError;
use crate::collector::kept::merge_scatter;
use crate::model::{IntervalStats, ResultDocument, Scatter};
use crate::recorder::classes::ClassHistograms;
use std::collections::BTreeMap;

/// One timeline from every shard's.
pub fn merged(docs: &[&ResultDocument]) -> Result<Vec<IntervalStats>, CombineError> {
    let timelines: Vec<&[IntervalStats]> = docs.iter().map(|d| d.intervals.as_slice()).collect();
    if timelines.iter().flat_map(|t| t.iter()).any(|i| i.histograms.is_empty()) {
        return Err(CombineError::TimelineWithoutHistograms);
    }
    let groups = if aligned(&timelines) { by_index(&timelines) } else { by_time(&timelines) };
    groups.into_iter().map(|g| merge_group(&g)).collect()
}

/// Whether the shards' timelines have the same entries (the same run length and width):
/// then entry n of every shard covers the same planned stretch.
fn aligned(timelines: &[&[IntervalStats]]) -> bool {
    let first = timelines[0];
    timelines.iter().all(|t| {
        t.len() == first.len()
            && t.iter().zip(first).all(|(a, b)| {
                a.warmup == b.warmup
                    && a.repeat == b.repeat
                    && (a.duration_s - b.duration_s).abs() <= 0.25 * b.duration_s
            })
    })
}

fn by_index<'a>(timelines: &[&'a [IntervalStats]]) -> Vec<Vec<&'a IntervalStats>> {
    (0..timelines[0].len()).map(|n| timelines.iter().map(|t| &t[n]).collect()).collect()
}

/// Entries of timelines that differ (one shard's entries merged further, or it ran on
/// shorter): grouped by the widest typical entry they fall in.
fn by_time<'a>(timelines: &[&'a [IntervalStats]]) -> Vec<Vec<&'a IntervalStats>> {
    let width = timelines.iter().map(|t| typical_width(t)).fold(0.0, f64::max).max(1e-3);
    let mut groups: BTreeMap<(Option<u32>, bool, i64), Vec<&IntervalStats>> = BTreeMap::new();
    for entry in timelines.iter().flat_map(|t| t.iter()) {
        let slot = (entry.from_s / width + 1e-6).floor() as i64;
        groups.entry((entry.repeat, !entry.warmup, slot)).or_default().push(entry);
    }
    let mut groups: Vec<Vec<&IntervalStats>> = groups.into_values().collect();
    groups.sort_by(|a, b| a[0].from_s.total_cmp(&b[0].from_s));
    groups
}

fn typical_width(t: &[IntervalStats]) -> f64 {
    let mut widths: Vec<f64> = t.iter().map(|i| i.duration_s).collect();
    widths.sort_by(f64::total_cmp);
    widths.get(widths.len() / 2).copied().unwrap_or(1.0)
}

/// Entries of several shards over the same stretch as one: counts and rates from the added
/// histograms over the stretch they cover together; clients, errors and client CPU added.
fn merge_group(entries: &[&IntervalStats]) -> Result<IntervalStats, CombineError> {
    let first = entries[0];
    let from = entries.iter().map(|e| e.from_s).fold(f64::INFINITY, f64::min);
    let end = entries.iter().map(|e| e.from_s + e.duration_s).fold(f64::NEG_INFINITY, f64::max);
    let mut into = IntervalStats { from_s: from, duration_s: end - from, histograms: BTreeMap::new(), ..first.clone() };
    let mut histograms = ClassHistograms::from_encoded(&first.histograms)?;
    for e in &entries[1..] {
        histograms.add(&ClassHistograms::from_encoded(&e.histograms)?);
    }
    histograms.apply_to(&mut into, &[]);
    let sum = |f: fn(&IntervalStats) -> Option<u64>| entries.iter().filter_map(|e| f(e)).reduce(|a, b| a + b);
    into.threads = entries.iter().map(|e| e.threads).sum();
    into.late = sum(|e| e.late);
    into.dropped = sum(|e| e.dropped);
    into.backlog = sum(|e| e.backlog);
    into.errors = entries.iter().map(|e| e.errors).sum();
    into.reconnects = entries.iter().map(|e| e.reconnects).sum();
    into.reconnect_failures = entries.iter().map(|e| e.reconnect_failures).sum();
    // Percent of one core, over every client host.
    into.client_cpu_pct = entries.iter().filter_map(|e| e.client_cpu_pct).reduce(|a, b| a + b);
    into.slowest =
        entries.iter().filter_map(|e| e.slowest.clone()).max_by(|a, b| a.latency_us.total_cmp(&b.latency_us));
    into.scatter = scatter(entries);
    // The shard that leads reads the server for the whole run.
    into.server = entries.iter().find(|e| !e.server.is_empty()).map(|e| e.server.clone()).unwrap_or_default();
    Ok(into)
}

/// Every shard's sample in time order, thinned evenly as an entry's is.
fn scatter(entries: &[&IntervalStats]) -> Scatter {
    let mut points: Vec<[f64; 2]> = entries.iter().flat_map(|e| e.scatter.points.iter().copied()).collect();
    points.sort_by(|a, b| a[0].total_cmp(&b[0]));
    let all = Scatter { of: entries[0].scatter.of, seen: entries.iter().map(|e| e.scatter.seen).sum(), points };
    let mut thinned = Scatter { of: all.of, seen: 0, points: Vec::new() };
    merge_scatter(&mut thinned, &all);
    thinned
}
