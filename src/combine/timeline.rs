//! The shards' timelines as one: the entries that cover the same stretch of the run (the
//! shards started together) grouped, and each group merged from its added histograms.

use crate::collector::kept::merge_scatter;
use crate::model::{IntervalStats, Scatter};
use crate::recorder::classes::ClassHistograms;
use std::collections::BTreeMap;

/// Every shard's entries (`stats` of each) grouped by the stretch they cover, in time order.
pub fn group<'a, T>(timelines: &[&'a [T]], stats: impl Fn(&T) -> &IntervalStats) -> Vec<Vec<&'a T>> {
    let figures: Vec<Vec<&IntervalStats>> = timelines.iter().map(|t| t.iter().map(&stats).collect()).collect();
    if aligned(&figures) {
        return (0..timelines[0].len()).map(|n| timelines.iter().map(|t| &t[n]).collect()).collect();
    }
    // Timelines that differ (one shard's entries merged further, or it ran on shorter):
    // grouped by the widest typical entry they fall in.
    let width = figures.iter().map(|t| typical_width(t)).fold(0.0, f64::max).max(1e-3);
    let mut groups: BTreeMap<(bool, i64), Vec<&T>> = BTreeMap::new();
    for entry in timelines.iter().flat_map(|t| t.iter()) {
        let s = stats(entry);
        let slot = (s.from_s / width + 1e-6).floor() as i64;
        groups.entry((!s.warmup, slot)).or_default().push(entry);
    }
    let mut groups: Vec<Vec<&T>> = groups.into_values().collect();
    groups.sort_by(|a, b| stats(a[0]).from_s.total_cmp(&stats(b[0]).from_s));
    groups
}

/// Whether the shards' timelines have the same entries (the same run length and width):
/// then entry n of every shard covers the same planned stretch.
fn aligned(timelines: &[Vec<&IntervalStats>]) -> bool {
    let first = &timelines[0];
    timelines.iter().all(|t| {
        t.len() == first.len()
            && t.iter()
                .zip(first)
                .all(|(a, b)| a.warmup == b.warmup && (a.duration_s - b.duration_s).abs() <= 0.25 * b.duration_s)
    })
}

fn typical_width(t: &[&IntervalStats]) -> f64 {
    let mut widths: Vec<f64> = t.iter().map(|i| i.duration_s).collect();
    widths.sort_by(f64::total_cmp);
    widths.get(widths.len() / 2).copied().unwrap_or(1.0)
}

/// Entries of several shards over the same stretch as one: counts and rates from their added
/// `histograms` over the stretch they cover together; clients, errors and client CPU added.
pub fn merge_group(entries: &[&IntervalStats], histograms: &ClassHistograms) -> IntervalStats {
    let first = entries[0];
    let from = entries.iter().map(|e| e.from_s).fold(f64::INFINITY, f64::min);
    let end = entries.iter().map(|e| e.from_s + e.duration_s).fold(f64::NEG_INFINITY, f64::max);
    // Entries that start together span the longest of them (not end - start, which can
    // differ from it in the last bit).
    let duration_s = match entries.iter().all(|e| e.from_s == from) {
        true => entries.iter().map(|e| e.duration_s).fold(0.0, f64::max),
        false => end - from,
    };
    let mut into = IntervalStats { from_s: from, duration_s, histograms: BTreeMap::new(), ..first.clone() };
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
    into.slowest_event =
        entries.iter().filter_map(|e| e.slowest_event.clone()).max_by(|a, b| a.latency_us.total_cmp(&b.latency_us));
    into.scatter = scatter(entries);
    // The shard that leads reads the server for the whole run.
    into.server = entries.iter().find(|e| !e.server.is_empty()).map(|e| e.server.clone()).unwrap_or_default();
    into
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
