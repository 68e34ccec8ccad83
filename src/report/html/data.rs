//! The compact chart data the page embeds: rounded numbers computed here from the result
//! documents (never the raw result JSON). Every chart is one [`Chart`] (chart.rs); report.js draws it.
//! This file holds the page's data and one result's charts; `multi.rs` the comparison's and
//! the sweep's.

use super::chart::{ms, secs, sig, Axis, Chart, Mark, Series};
use crate::model::{ClassStats, CompactStats, IntervalStats, ResultDocument, ScatterOf};
use crate::stats::LatencyHistogram;
use serde::Serialize;
use serde_json::Value;

/// Scatter points kept per result (the result holds up to 100 per second).
pub const MAX_SCATTER_POINTS: usize = 3000;

/// Classes drawn, in order, with what they are.
pub const CLASSES: [(&str, &str); 5] = [
    ("event", "whole events"),
    ("read", "read statements"),
    ("write", "write statements"),
    ("commit", "COMMIT"),
    ("other", "other statements (BEGIN, ...)"),
];

/// Everything report.js draws.
#[derive(Serialize, Default)]
pub struct PageData {
    pub charts: Vec<Chart>,
    /// x arrays shared by several series (a timeline's seconds), referenced by `xref`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub xs: Vec<Vec<Value>>,
}

impl PageData {
    /// The charts, long timelines drawn from buckets, each long x array stored once however
    /// many series use it.
    pub fn new(mut charts: Vec<Chart>) -> PageData {
        super::decimate::long_timelines(&mut charts);
        let mut xs: Vec<Vec<Value>> = vec![];
        for s in charts.iter_mut().flat_map(|c| c.series.iter_mut()).filter(|s| s.x.len() > 20) {
            let at = match xs.iter().position(|x| *x == s.x) {
                Some(at) => at,
                None => {
                    xs.push(s.x.clone());
                    xs.len() - 1
                }
            };
            s.x.clear();
            s.xref = Some(at);
        }
        PageData { charts, xs }
    }
}

/// The classes of a result that ran anything, with their description.
pub fn classes_with_statements(stats: &std::collections::BTreeMap<String, ClassStats>) -> Vec<(&'static str, &str)> {
    CLASSES.iter().copied().filter(|(c, _)| stats.get(*c).is_some_and(|s| s.count > 0)).collect()
}

pub fn interval_class<'a>(i: &'a IntervalStats, class: &str) -> &'a CompactStats {
    i.class(class).unwrap_or(&i.other)
}

/// The intervals drawn per second: all but the short last one of a run or repeat (a few ms
/// whose rate says nothing; compare and the audit leave it out too). A second in which
/// nothing completed stays: it is a stall, drawn as 0 events/s.
pub fn seconds(intervals: &[IntervalStats]) -> Vec<&IntervalStats> {
    crate::model::stats::full_intervals(intervals).collect()
}

/// Each interval's end, seconds since the run started: the point stands for that second.
pub fn times(iv: &[&IntervalStats]) -> Vec<Value> {
    iv.iter().map(|i| secs(i.from_s + i.duration_s)).collect()
}

/// The warmup stretches of a timeline, merged when adjacent.
pub fn warmup_ranges(intervals: &[IntervalStats]) -> Vec<[f64; 2]> {
    let mut out: Vec<[f64; 2]> = vec![];
    for i in intervals.iter().filter(|i| i.warmup) {
        let (from, to) = (round3(i.from_s), round3(i.from_s + i.duration_s));
        match out.last_mut() {
            Some(last) if (from - last[1]).abs() < 0.01 => last[1] = to,
            _ => out.push([from, to]),
        }
    }
    out
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// Time axes from 0 to the end of the last second drawn (to 0.1 s), not to Chart.js' next
/// round number.
pub fn fit_time_axes(charts: &mut [Chart], intervals: &[&IntervalStats]) {
    let end = (intervals.iter().map(|i| i.from_s + i.duration_s).fold(0.0, f64::max) * 10.0).ceil() / 10.0;
    for c in charts.iter_mut().filter(|c| c.x.format == "s" && end > 0.0) {
        c.x.min = Some(0.0);
        c.x.max = Some(end);
    }
}

/// Where each repeat after the first begins.
pub fn repeat_marks(intervals: &[IntervalStats]) -> Vec<Mark> {
    intervals
        .windows(2)
        .filter_map(|w| match (w[0].repeat, w[1].repeat) {
            (Some(a), Some(b)) if a != b => Some(Mark { x: round3(w[1].from_s), label: format!("repeat {b}") }),
            _ => None,
        })
        .collect()
}

/// The latency percentile curve of one class, HdrHistogram style: x = 1/(1-p) (1 is the
/// minimum, 100 the 99th percentile), y in ms; `None` when the histogram does not decode.
pub fn percentile_curve(s: &ClassStats) -> Option<(Vec<Value>, Vec<Value>)> {
    if s.count == 0 {
        return None;
    }
    let ns = |us: f64| (us * 1000.0).round().max(0.0) as u64;
    let h = LatencyHistogram::decode(&s.histogram, ns(s.min_us), ns(s.max_us), ns(s.sum_us) as u128).ok()?;
    if h.count() == 0 {
        return None;
    }
    // 20 points per decade of 1/(1-p), up to the last sample (at most 99.9999%).
    let last = (h.count() as f64).min(1e6);
    let (mut xs, mut ys) = (vec![], vec![]);
    for k in 0.. {
        let x = 10f64.powf(k as f64 / 20.0);
        if x >= last {
            break;
        }
        xs.push(sig(x, 4));
        ys.push(sig(h.percentile_ns(100.0 * (1.0 - 1.0 / x)) as f64 / 1e6, 4));
    }
    xs.push(sig(last, 4));
    ys.push(sig(h.max_ns() as f64 / 1e6, 4));
    Some((xs, ys))
}

/// The x-axis of percentile charts: 0% to at least 99.999%.
pub fn percentile_axis(charts_last_x: f64) -> Axis {
    let mut a = Axis::new("percentile (log scale of 1/(1-p))", "pct", "percentile");
    a.min = Some(1.0);
    a.max = Some(if charts_last_x > 1e5 { 1e6 } else { 1e5 });
    a
}

fn last_x(series: &[Series]) -> f64 {
    series.iter().filter_map(|s| s.x.last().and_then(Value::as_f64)).fold(0.0, f64::max)
}

/// One chart of percentile curves; `lines` = (label, class stats).
pub fn percentile_chart(id: &str, title: &str, lines: &[(String, &ClassStats)]) -> Chart {
    let series: Vec<Series> = lines
        .iter()
        .enumerate()
        .filter_map(|(n, (label, s))| percentile_curve(s).map(|(x, y)| Series::line(label, x, y, n)))
        .collect();
    let mut c =
        Chart::new(id, title, "line", percentile_axis(last_x(&series)), Axis::ms_log("latency (ms, log scale)"));
    c.series = series;
    c.height = 340;
    c
}

/// Every chart of one result, in page order.
pub fn single_charts(d: &ResultDocument) -> Vec<Chart> {
    let iv = seconds(&d.intervals);
    let t = times(&iv);
    let shade = warmup_ranges(&d.intervals);
    let marks = repeat_marks(&d.intervals);
    let timeline = |id: &str, title: &str, y: Axis, series: Vec<Series>| {
        let mut c = Chart::new(id, title, "line", Axis::seconds(), y);
        c.series = series;
        c.shade = shade.clone();
        c.marks = marks.clone();
        c.height = 280;
        c
    };
    let mut charts = vec![];

    // Throughput: queries/s and events/s, each on its own chart (on one, a steady mix draws
    // the two lines on top of each other); the open loop's target rate with events/s.
    let per_s = |f: fn(&IntervalStats) -> f64| iv.iter().map(|i| sig(f(i), 5)).collect::<Vec<_>>();
    charts.push(timeline(
        "qps",
        "Queries per second (QPS): every statement",
        Axis::new("queries per second", "linear", "num"),
        vec![Series::line("queries/s", t.clone(), per_s(|i| i.total.per_s), 0)],
    ));
    let mut tps = timeline(
        "tps",
        "Events per second (TPS): transactions, or statements of autocommit workloads",
        Axis::new("events per second", "linear", "num"),
        vec![Series::line("events/s", t.clone(), per_s(|i| i.event.per_s), 1)],
    );
    if let Some(ol) = &d.open_loop {
        let target = t.iter().map(|_| sig(ol.rate, 6)).collect();
        tps.series.push(Series::line("target rate", t.clone(), target, 6).styled("dash"));
    }
    charts.push(tps);
    // The server's own figures over time, under the throughput they go with.
    charts.extend(
        super::server::charts(d, &iv, &t).into_iter().map(|(id, title, y, series)| timeline(&id, &title, y, series)),
    );

    // Latency over time, one chart per class that ran anything.
    for (id, title, series) in latency_series(d, &iv, &t) {
        charts.push(timeline(&id, &title, Axis::ms_log("latency (ms, log scale)"), series));
    }

    // The percentile distribution of each class, from its decoded histogram.
    let lines: Vec<(String, &ClassStats)> =
        classes_with_statements(&d.stats).into_iter().map(|(c, _)| (c.to_string(), &d.stats[c])).collect();
    let open = if d.open_loop.is_some() { ", from each event's intended start" } else { "" };
    charts.push(percentile_chart(
        "percentiles",
        &format!("Latency percentile distribution per class (whole measured run{open})"),
        &lines,
    ));

    // Sampled COMMIT (or event) latencies.
    if let Some(c) = scatter_chart(d, &shade, &marks) {
        charts.push(c);
    }

    if d.open_loop.is_some() {
        charts.extend(open_loop_charts(&iv, &t, &shade, &marks));
    }

    let cpu = iv.iter().map(|i| i.client_cpu_pct.map_or(Value::Null, |v| sig(v, 3))).collect();
    charts.push(timeline(
        "client-cpu",
        "fairbench client CPU per second (percent of one core)",
        Axis::new("CPU (% of one core)", "linear", "pct"),
        vec![Series::line("client CPU", t.clone(), cpu, 3)],
    ));
    charts.retain(Chart::has_data);
    fit_time_axes(&mut charts, &iv);
    charts
}

/// Sampled points of one repeat (`None`: a result without --repeat).
pub struct ScatterGroup {
    pub repeat: Option<u32>,
    pub points: Vec<[f64; 2]>,
}

/// Every interval's scatter points, per repeat, thinned evenly to at most
/// [`MAX_SCATTER_POINTS`] in all.
pub fn scatter_points(d: &ResultDocument) -> (ScatterOf, Vec<ScatterGroup>) {
    let of = d.intervals.iter().find(|i| !i.scatter.points.is_empty()).map_or(ScatterOf::Commit, |i| i.scatter.of);
    let mut all: Vec<(usize, [f64; 2])> = vec![];
    let mut groups: Vec<ScatterGroup> = vec![];
    for seconds in d.intervals.chunk_by(|a, b| a.repeat == b.repeat) {
        let shift = older_repeat_shift(seconds);
        let points = seconds.iter().flat_map(|i| i.scatter.points.iter().map(|p| [p[0] + shift, p[1]]));
        all.extend(points.map(|p| (groups.len(), p)));
        groups.push(ScatterGroup { repeat: seconds[0].repeat, points: vec![] });
    }
    let n = all.len();
    let kept: Box<dyn Iterator<Item = &(usize, [f64; 2])>> = match n <= MAX_SCATTER_POINTS {
        true => Box::new(all.iter()),
        false => Box::new((0..MAX_SCATTER_POINTS).map(|k| &all[k * n / MAX_SCATTER_POINTS])),
    };
    for (g, p) in kept {
        groups[*g].points.push(*p);
    }
    groups.retain(|g| !g.points.is_empty());
    (of, groups)
}

/// Results written before a repeat's samples were put on the timeline's axis count each
/// repeat's from 0: their seconds start where the repeat's first second does.
fn older_repeat_shift(seconds: &[IntervalStats]) -> f64 {
    let start = seconds.first().map_or(0.0, |i| i.from_s);
    let earliest = seconds.iter().flat_map(|i| i.scatter.points.first()).map(|p| p[0]).fold(f64::INFINITY, f64::min);
    // A sample may precede its second by a swap's lateness, never by half a second.
    if seconds.first().is_some_and(|i| i.repeat.is_some()) && earliest < start - 0.5 {
        start
    } else {
        0.0
    }
}

fn scatter_chart(d: &ResultDocument, shade: &[[f64; 2]], marks: &[Mark]) -> Option<Chart> {
    let (of, groups) = scatter_points(d);
    if groups.is_empty() {
        return None;
    }
    let (what, title) = match of {
        ScatterOf::Commit => ("COMMIT latency", "COMMIT latency samples over time"),
        ScatterOf::Event => ("event latency", "Event latency samples over time (no COMMIT in this workload)"),
    };
    let seen: u64 = d.intervals.iter().map(|i| i.scatter.seen).sum();
    let drawn: usize = groups.iter().map(|g| g.points.len()).sum();
    let title = format!("{title} ({drawn} of {seen} sampled)");
    let mut c = Chart::new("scatter", &title, "scatter", Axis::seconds(), Axis::ms_log("latency (ms, log scale)"));
    for g in &groups {
        // Each repeat in a colour of its own, on the one time axis.
        let (label, color) = match g.repeat {
            Some(r) => (format!("{what}, repeat {r}"), (r as usize).saturating_sub(1)),
            None => (what.to_string(), 0),
        };
        let (x, y) = (g.points.iter().map(|p| secs(p[0])).collect(), g.points.iter().map(|p| ms(p[1])).collect());
        c.series.push(Series::line(&label, x, y, color).styled("points"));
    }
    c.shade = shade.to_vec();
    c.marks = marks.to_vec();
    Some(c)
}

/// Each class's latency percentiles per second: (id, title, series) of its chart.
fn latency_series(d: &ResultDocument, iv: &[&IntervalStats], t: &[Value]) -> Vec<(String, String, Vec<Series>)> {
    let mut out = Vec::new();
    for (class, what) in classes_with_statements(&d.stats) {
        let col = |f: fn(&CompactStats) -> f64| iv.iter().map(|i| ms(f(interval_class(i, class)))).collect::<Vec<_>>();
        let series = vec![
            Series::line("p50", t.to_vec(), col(|s| s.p50_us), 2),
            Series::line("p95", t.to_vec(), col(|s| s.p95_us), 0),
            Series::line("p99", t.to_vec(), col(|s| s.p99_us), 1),
            Series::line("max", t.to_vec(), col(|s| s.max_us), 6).styled("dash"),
        ];
        let mut title = format!("Latency per second: {class} ({what})");
        if class != "event" && !iv.iter().any(|i| interval_class(i, class).has_percentiles()) {
            // A long run's streamed seconds: the percentiles are in the result's wider entries.
            title.push_str(": max per second only (a long run's intervals file keeps each class's count and max; its percentiles are in the result's timeline entries)");
        }
        out.push((format!("latency-{class}"), title, series));
    }
    out
}

fn open_loop_charts(iv: &[&IntervalStats], t: &[Value], shade: &[[f64; 2]], marks: &[Mark]) -> Vec<Chart> {
    let per_s = |f: fn(&IntervalStats) -> Option<u64>| {
        iv.iter()
            .map(|i| if i.duration_s > 0.0 { sig(f(i).unwrap_or(0) as f64 / i.duration_s, 4) } else { Value::Null })
            .collect::<Vec<_>>()
    };
    // The backlog (events due but not started at each second's end) is in newer results only.
    let has_backlog = iv.iter().any(|i| i.backlog.is_some());
    let title = if has_backlog {
        "Open loop: late and dropped events per second, and the backlog"
    } else {
        "Open loop: late and dropped events per second (this result does not record the backlog)"
    };
    let mut late =
        Chart::new("open-loop-late", title, "line", Axis::seconds(), Axis::new("events per second", "linear", "num"));
    late.series = vec![
        Series::line("late/s (started > 1 ms after intended)", t.to_vec(), per_s(|i| i.late), 1),
        Series::line("dropped/s (backlog full)", t.to_vec(), per_s(|i| i.dropped), 6),
    ];
    if has_backlog {
        let backlog = iv.iter().map(|i| i.backlog.map_or(Value::Null, Value::from)).collect();
        late.series.push(Series::line("backlog at the second's end (events)", t.to_vec(), backlog, 0).on_y2());
        late.y2 = Some(Axis::new("backlog (events due, not started)", "linear", "num"));
    }
    let mut queue = Chart::new(
        "open-loop-latency",
        "Open loop: event latency from the intended start vs service time (queueing is the gap)",
        "line",
        Axis::seconds(),
        Axis::ms_log("latency (ms, log scale)"),
    );
    let col = |f: fn(&IntervalStats) -> f64| iv.iter().map(|i| ms(f(i))).collect::<Vec<_>>();
    let svc = |f: fn(&CompactStats) -> f64| {
        iv.iter().map(|i| i.event_service.as_ref().map_or(Value::Null, |s| ms(f(s)))).collect::<Vec<_>>()
    };
    queue.series = vec![
        Series::line("p99 from intended start", t.to_vec(), col(|i| i.event.p99_us), 1),
        Series::line("p50 from intended start", t.to_vec(), col(|i| i.event.p50_us), 4).styled("dash"),
        Series::line("p99 service time", t.to_vec(), svc(|s| s.p99_us), 0),
        Series::line("p50 service time", t.to_vec(), svc(|s| s.p50_us), 5).styled("dash"),
    ];
    for c in [&mut late, &mut queue] {
        c.height = 280;
        c.shade = shade.to_vec();
        c.marks = marks.to_vec();
    }
    vec![late, queue]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_curve_rises_to_the_max() {
        let mut h = LatencyHistogram::new();
        for i in 1..=10_000u64 {
            h.record_ns(i * 1000);
        }
        let s = ClassStats {
            count: h.count(),
            min_us: h.min_ns() as f64 / 1e3,
            max_us: h.max_ns() as f64 / 1e3,
            sum_us: h.sum_ns() as f64 / 1e3,
            histogram: h.encode(),
            ..Default::default()
        };
        let (x, y) = percentile_curve(&s).unwrap();
        assert_eq!(x.first().unwrap().as_f64(), Some(1.0));
        assert_eq!(x.last().unwrap().as_f64(), Some(10_000.0));
        assert_eq!(y.last().unwrap().as_f64(), Some(10.0));
        let ys: Vec<f64> = y.iter().map(|v| v.as_f64().unwrap()).collect();
        assert!(ys.windows(2).all(|w| w[0] <= w[1]), "{ys:?}");
        // x = 100 is the 99th percentile: 9.9 ms of 1..10 ms.
        let i99 = x.iter().position(|v| v.as_f64() == Some(100.0)).unwrap();
        assert!((ys[i99] - 9.9).abs() < 0.02, "{}", ys[i99]);
    }
}
