//! Chart data of several results: a comparison (ratios with their intervals, overlaid
//! timelines and percentile curves) and a sweep (throughput and p99 against client counts
//! and against data size).

use super::chart::{sig, Axis, Chart, Mark, Series};
use super::data::{fit_time_axes, percentile_chart, seconds, times, warmup_ranges};
use crate::model::comparison::{Comparison, Significance};
use crate::model::sweep::SweepDocument;
use crate::model::{ClassStats, IntervalStats, ResultDocument};
use serde_json::Value;
use std::collections::BTreeMap;

/// How a ratio reads, in words (the interval decides, not the ratio).
pub fn reading(s: Significance, interval: bool) -> &'static str {
    match (s, interval) {
        (_, false) | (Significance::Unknown, _) => "no interval: raw ratio only",
        (Significance::NoSignificantDifference, _) => "no significant difference",
        (Significance::Better, _) => "better",
        (Significance::Worse, _) => "worse",
    }
}

/// Every chart of a comparison, in page order; `legends` name each result (`A: a.json`).
pub fn compare_charts(legends: &[String], docs: &[&ResultDocument], c: &Comparison) -> Vec<Chart> {
    let mut charts = vec![ratio_chart(c)];
    let shade: Vec<[f64; 2]> = docs.iter().flat_map(|d| warmup_ranges(&d.intervals)).collect();
    let overlay = |id: &str, title: &str, unit: &str, f: fn(&IntervalStats) -> f64| {
        let mut ch = Chart::new(id, title, "line", Axis::seconds(), Axis::new(unit, "linear", "num"));
        ch.series = docs
            .iter()
            .enumerate()
            .map(|(n, d)| {
                let iv = seconds(&d.intervals);
                Series::line(&legends[n], times(&iv), iv.iter().map(|i| sig(f(i), 5)).collect(), n)
            })
            .collect();
        ch.shade = shade.clone();
        ch
    };
    charts.push(overlay("cmp-tps", "Events per second over time (TPS), every result", "events per second", |i| {
        i.event.per_s
    }));
    charts.push(overlay("cmp-qps", "Queries per second over time (QPS), every result", "queries per second", |i| {
        i.total.per_s
    }));
    for (class, what) in [("event", "whole events"), ("commit", "COMMIT")] {
        let lines: Vec<(String, &ClassStats)> = docs
            .iter()
            .enumerate()
            .filter_map(|(n, d)| d.stats.get(class).filter(|s| s.count > 0).map(|s| (legends[n].clone(), s)))
            .collect();
        if !lines.is_empty() {
            let title = format!("Latency percentile distribution: {class} ({what}), every result");
            charts.push(percentile_chart(&format!("cmp-pct-{class}"), &title, &lines));
        }
    }
    charts.retain(Chart::has_data);
    fit_time_axes(&mut charts, &docs.iter().flat_map(|d| seconds(&d.intervals)).collect::<Vec<_>>());
    charts
}

/// Each other side's ratio to the baseline per metric, with its 95% interval as an error bar.
fn ratio_chart(c: &Comparison) -> Chart {
    let metrics: Vec<_> = c.metrics.iter().filter(|m| m.ratios.iter().any(|r| r.ratio > 0.0)).collect();
    let mut ch = Chart::new(
        "ratios",
        "Ratio to the baseline A with 95% confidence intervals (log scale; no bar: no interval)",
        "ratio",
        Axis::new("ratio to A (log scale)", "log", "ratio"),
        Axis::new("metric", "category", "num"),
    );
    ch.categories = metrics.iter().map(|m| format!("{} ({} is better)", m.metric, m.better)).collect();
    for side in 1..c.sides.len() {
        let mut s = Series::line(&format!("{} / A", c.sides[side].label), vec![], vec![], side).styled("points");
        for (row, m) in metrics.iter().enumerate() {
            let r = m.ratios.iter().find(|r| r.side == side && r.ratio > 0.0);
            s.y.push(Value::from(row));
            s.x.push(r.map_or(Value::Null, |r| sig(r.ratio, 4)));
            let e = r.and_then(|r| r.interval.as_ref());
            s.lo.push(e.map_or(Value::Null, |e| sig(e.low, 4)));
            s.hi.push(e.map_or(Value::Null, |e| sig(e.high, 4)));
            s.tip.push(match (r, e) {
                (Some(r), Some(e)) => format!(
                    "{:.3}x, 95% interval {:.3} to {:.3}: {}",
                    r.ratio,
                    e.low,
                    e.high,
                    reading(r.significance, true)
                ),
                (Some(r), None) => format!("{:.3}x: {}", r.ratio, reading(r.significance, false)),
                _ => "no ratio".into(),
            });
        }
        // The chart's points are drawn from x/y; mark which have data.
        s.y = s.x.iter().zip(&s.y).map(|(x, y)| if x.is_null() { Value::Null } else { y.clone() }).collect();
        ch.series.push(s);
    }
    // The axis spans every ratio, every interval and 1.
    let ends = ch.series.iter().flat_map(|s| s.x.iter().chain(&s.lo).chain(&s.hi)).filter_map(Value::as_f64);
    let (lo, hi) = ends.filter(|v| *v > 0.0).fold((1.0f64, 1.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    ch.x.min = Some(lo / 1.25);
    ch.x.max = Some(hi * 1.25);
    ch.marks.push(Mark { x: 1.0, label: "1 = same as A".into() });
    ch.height = 60 + 24 * ch.categories.len().max(1) as u32;
    ch
}

/// A data size of a sweep: tables and rows per table.
type Size = (u32, u64);

fn size_label(tables: u32, rows: u64, bytes: u64) -> String {
    format!("{tables} x {rows} rows ({:.2} MiB)", bytes as f64 / 1_048_576.0)
}

/// A sweep chart's metric: key, title, axis label, value of a point.
type SweepMetric = (&'static str, &'static str, &'static str, fn(&ResultDocument) -> Value);

/// Every chart of a sweep, in page order: each metric against client counts (one line per
/// data size), then against data size (one line per client count).
pub fn sweep_charts(s: &SweepDocument) -> Vec<Chart> {
    let mut sizes: BTreeMap<Size, u64> = BTreeMap::new();
    for p in &s.points {
        sizes.entry((p.tables, p.table_size)).or_insert(dataset_bytes(&p.result));
    }
    let mut threads: Vec<u32> = s.points.iter().map(|p| p.threads).collect();
    threads.sort_unstable();
    threads.dedup();
    let mut charts = against_clients(s, &sizes, &threads);
    charts.extend(against_size(s, &sizes, &threads));
    charts.retain(Chart::has_data);
    charts
}

fn dataset_bytes(r: &ResultDocument) -> u64 {
    r.conditions.dataset.total_bytes
}

/// What a sweep's charts show of each point.
fn sweep_metrics() -> [SweepMetric; 3] {
    fn stat(r: &ResultDocument, class: &str) -> ClassStats {
        r.stats.get(class).cloned().unwrap_or_default()
    }
    [
        ("tps", "Events per second (TPS)", "events per second", |r| sig(stat(r, "event").qps, 5)),
        ("qps", "Queries per second (QPS)", "queries per second", |r| sig(stat(r, "total").qps, 5)),
        ("p99", "p99 latency per event", "p99 latency (ms)", |r| {
            let us = stat(r, "event").p99_us;
            if us > 0.0 {
                sig(us / 1000.0, 4)
            } else {
                Value::Null
            }
        }),
    ]
}

/// Against client counts: one line per data size; the saturation points marked, one mark
/// per client count naming every data size that saturated there.
fn against_clients(s: &SweepDocument, sizes: &BTreeMap<Size, u64>, threads: &[u32]) -> Vec<Chart> {
    let mut tick_threads = Axis::new("clients (threads, log scale)", "log", "num");
    tick_threads.ticks = threads.iter().map(|&t| t as f64).collect();
    if let (Some(&lo), Some(&hi)) = (threads.first(), threads.last()) {
        tick_threads.min = Some(lo as f64 / 1.25);
        tick_threads.max = Some(hi as f64 * 1.25);
    }
    let mut sat_marks: Vec<Mark> = vec![];
    for sat in &s.saturation {
        let what = format!("{} x {} rows", sat.tables, sat.table_size);
        match sat_marks.iter_mut().find(|m| m.x == sat.threads as f64) {
            Some(m) => m.label = m.label.replacen(')', &format!("; {what})"), 1),
            None => sat_marks.push(Mark { x: sat.threads as f64, label: format!("saturation ({what})") }),
        }
    }
    let mut charts = vec![];
    for (key, title, unit, f) in sweep_metrics() {
        let mut ch = Chart::new(
            &format!("sweep-{key}-threads"),
            &format!("{title} against clients, one line per data size"),
            "line",
            tick_threads.clone(),
            Axis::new(unit, "linear", "num"),
        );
        for (n, (&(tables, rows), &b)) in sizes.iter().enumerate() {
            let pts: Vec<_> = s.points.iter().filter(|p| (p.tables, p.table_size) == (tables, rows)).collect();
            ch.series.push(Series::line(
                &size_label(tables, rows, b),
                pts.iter().map(|p| Value::from(p.threads)).collect(),
                pts.iter().map(|p| f(&p.result)).collect(),
                n,
            ));
        }
        ch.marks = sat_marks.clone();
        charts.push(ch);
    }
    charts
}

/// Against data size in bytes: one line per client count; the largest cache marked.
fn against_size(s: &SweepDocument, sizes: &BTreeMap<Size, u64>, threads: &[u32]) -> Vec<Chart> {
    let cache = s
        .points
        .iter()
        .flat_map(|p| p.result.conditions.dataset.cache.iter())
        .max_by_key(|(_, b)| **b)
        .map(|(name, b)| (name.clone(), *b));
    let mut x = Axis::new("data size (bytes, log scale)", "log", "bytes");
    x.ticks = sizes.values().filter(|&&b| b > 0).map(|&b| b as f64).collect();
    let mut extent: Vec<f64> = x.ticks.clone();
    if let Some((_, b)) = &cache {
        extent.push(*b as f64);
        x.ticks.push(*b as f64);
    }
    if let (Some(lo), Some(hi)) = (extent.iter().copied().reduce(f64::min), extent.iter().copied().reduce(f64::max)) {
        x.min = Some(lo / 1.5);
        x.max = Some(hi * 1.5);
    }
    let mut charts = vec![];
    for (key, title, unit, f) in sweep_metrics() {
        let mut ch = Chart::new(
            &format!("sweep-{key}-size"),
            &format!("{title} against data size, one line per client count"),
            "line",
            x.clone(),
            Axis::new(unit, "linear", "num"),
        );
        for (n, &t) in threads.iter().enumerate() {
            let pts: Vec<_> = s.points.iter().filter(|p| p.threads == t && dataset_bytes(&p.result) > 0).collect();
            ch.series.push(Series::line(
                &format!("{t} client{}", if t == 1 { "" } else { "s" }),
                pts.iter().map(|p| Value::from(dataset_bytes(&p.result))).collect(),
                pts.iter().map(|p| f(&p.result)).collect(),
                n,
            ));
        }
        if let Some((name, b)) = &cache {
            ch.marks.push(Mark { x: *b as f64, label: format!("cache: {name} {:.2} MiB", *b as f64 / 1_048_576.0) });
        }
        charts.push(ch);
    }
    charts
}
