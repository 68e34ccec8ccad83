//! The timeline a result keeps: at most a fixed number of entries however long the run, so
//! memory and the result's size stay flat. Closed intervals are kept as they are until the
//! limit; then neighbours merge in pairs and entries cover twice as many intervals from then
//! on. Merges are exact: counts, rates, errors, minima and maxima add up, and percentiles
//! come from the added histograms. The streamed files beside the result keep every interval.

use crate::model::{IntervalStats, SampledFigure, Scatter};
use crate::recorder::classes::{ClassHistograms, PackedClasses};
use crate::recorder::{Recorder, TickRecorder};
use std::collections::BTreeMap;

/// Scatter points an entry keeps (an interval samples at most as many).
const POINTS_PER_ENTRY: usize = 100;

pub struct KeptTimeline {
    /// Most entries kept (even, at least 2): reaching it merges pairs.
    limit: usize,
    /// Intervals per entry.
    width: u32,
    /// Whether each closed entry is warmup: what decides when entries close and how they
    /// pair (a few bytes each, kept whether or not the entries are).
    closed: Vec<bool>,
    /// The entries themselves, unless only told ([`KeptTimeline::telling_only`]: a run's
    /// collector, whose record keeps them).
    entries: Option<Vec<Entry>>,
    /// The entry being filled, and how many intervals it holds.
    open: Option<(IntervalStats, u32)>,
    /// Its histograms, unpacked (one set, reused from entry to entry).
    open_histograms: Option<ClassHistograms>,
    /// Everything its ticks recorded, when given ([`KeptTimeline::push_telling`]'s `counts`):
    /// what the run's record keeps of the entry.
    open_counts: Option<Recorder>,
}

/// Told of each entry as it closes: its figures, histograms per class and, when its ticks'
/// recorders were given, everything they recorded.
pub type Closed<'a> = dyn FnMut(&IntervalStats, &ClassHistograms, Option<&Recorder>) + 'a;

struct Entry {
    stats: IntervalStats,
    histograms: PackedClasses,
}

impl KeptTimeline {
    pub fn new(limit: usize) -> Self {
        KeptTimeline {
            limit: limit.max(2) & !1,
            width: 1,
            closed: Vec::new(),
            entries: Some(Vec::new()),
            open: None,
            open_histograms: None,
            open_counts: None,
        }
    }

    /// A timeline for a run of `intervals` planned intervals (`None`: unknown): entries
    /// start as wide as the run's end would make them, so that while the run keeps to its
    /// plan they never merge, and each entry closes once, at its final width (the streamed
    /// interval log writes each entry as it closes).
    pub fn planned(limit: usize, intervals: Option<u64>) -> Self {
        let mut kept = KeptTimeline::new(limit);
        // One entry spare: the warmup's end may split one.
        let fit = intervals.map_or(1, |n| n.div_ceil(kept.limit as u64 - 1));
        kept.width = fit.clamp(1, u32::MAX as u64 / 2) as u32;
        kept
    }

    /// Entries close as they would, and are told ([`KeptTimeline::push_telling`]), not kept:
    /// memory stays flat however long the run ([`KeptTimeline::finish`] then gives none).
    pub fn telling_only(mut self) -> Self {
        self.entries = None;
        self
    }

    /// Adds one closed interval: its figures and its histograms per class.
    pub fn push(&mut self, stats: IntervalStats, histograms: &ClassHistograms) {
        self.push_telling(stats, histograms, None, &mut |_, _, _| {});
    }

    /// [`KeptTimeline::push`], telling `closed` of each entry that closes (its figures and
    /// histograms, as the entry is when it closes, and with `counts`, the interval's
    /// recorder, everything the entry's intervals recorded).
    pub fn push_telling(
        &mut self,
        stats: IntervalStats,
        histograms: &ClassHistograms,
        counts: Option<&TickRecorder>,
        closed: &mut Closed<'_>,
    ) {
        // An entry never spans the warmup's end.
        if self.open.as_ref().is_some_and(|(open, _)| open.warmup != stats.warmup) {
            self.close(closed);
        }
        if let Some(r) = counts {
            self.open_counts.get_or_insert_with(|| Recorder::like(r)).add_counts(r);
        }
        match (&mut self.open, &mut self.open_histograms) {
            (Some((open, intervals)), Some(h)) => {
                merge_fields(open, &stats);
                h.add(histograms);
                *intervals += 1;
            }
            (_, reused) => {
                match reused {
                    Some(h) => h.copy_from(histograms),
                    None => *reused = Some(histograms.clone()),
                }
                self.open = Some((stats, 1));
            }
        }
        if self.open.as_ref().is_some_and(|(_, intervals)| *intervals >= self.width) {
            self.close(closed);
        }
    }

    /// Every entry, in time order (the last one possibly covering fewer intervals).
    pub fn finish(self) -> Vec<IntervalStats> {
        self.finish_telling(&mut |_, _, _| {}, false)
    }

    /// [`KeptTimeline::finish`], each entry carrying its class histograms (a shard's, for
    /// `combine`).
    pub fn finish_with_histograms(self) -> Vec<IntervalStats> {
        self.finish_telling(&mut |_, _, _| {}, true)
    }

    /// [`KeptTimeline::finish`], telling `closed` of the last entry; `with_histograms`:
    /// each entry carries its class histograms (a shard's, for `combine`).
    pub fn finish_telling(mut self, closed: &mut Closed<'_>, with_histograms: bool) -> Vec<IntervalStats> {
        self.close(closed);
        let entry = |e: Entry| match with_histograms {
            true => IntervalStats { histograms: e.histograms.encoded(), ..e.stats },
            false => e.stats,
        };
        self.entries.unwrap_or_default().into_iter().map(entry).collect()
    }

    /// Intervals per entry at present.
    pub fn width(&self) -> u32 {
        self.width
    }

    fn close(&mut self, closed: &mut Closed<'_>) {
        let (Some((mut stats, intervals)), Some(h)) = (self.open.take(), &self.open_histograms) else { return };
        if intervals > 1 {
            h.apply_to(&mut stats, &[]);
        }
        closed(&stats, h, self.open_counts.as_ref());
        if let Some(c) = &mut self.open_counts {
            c.reset();
        }
        self.closed.push(stats.warmup);
        if let Some(entries) = &mut self.entries {
            entries.push(Entry { stats, histograms: h.pack() });
        }
        if self.closed.len() >= self.limit {
            self.halve();
        }
    }

    /// Merges neighbours in pairs (never across the warmup's end) and doubles the width.
    fn halve(&mut self) {
        let pairs = pairs(&self.closed);
        self.closed = pairs.iter().map(|&(first, _)| self.closed[first]).collect();
        if let Some(entries) = self.entries.take() {
            let mut entries = entries.into_iter();
            let merged = pairs.iter().filter_map(|&(_, second)| {
                let first = entries.next()?;
                Some(match second.and_then(|_| entries.next()) {
                    Some(other) => merge(first, &other),
                    None => first,
                })
            });
            self.entries = Some(merged.collect());
        }
        self.width *= 2;
    }
}

/// Neighbours in pairs, by index: each entry with the next unless that one is on the other
/// side of the warmup's end (then it stays alone).
fn pairs(warmup: &[bool]) -> Vec<(usize, Option<usize>)> {
    let mut pairs = Vec::with_capacity(warmup.len() / 2 + 1);
    let mut i = 0;
    while i < warmup.len() {
        match warmup.get(i + 1).is_some_and(|&w| w == warmup[i]) {
            true => {
                pairs.push((i, Some(i + 1)));
                i += 2;
            }
            false => {
                pairs.push((i, None));
                i += 1;
            }
        }
    }
    pairs
}

fn merge(mut first: Entry, second: &Entry) -> Entry {
    let mut h = first.histograms.unpack();
    h.add(&second.histograms.unpack());
    merge_fields(&mut first.stats, &second.stats);
    h.apply_to(&mut first.stats, &[]);
    Entry { stats: first.stats, histograms: h.pack() }
}

/// Intervals that follow one another as one: their figures merged, the class figures from
/// `histograms` (the intervals' added).
pub fn merged(intervals: &[IntervalStats], histograms: &ClassHistograms) -> Option<IntervalStats> {
    let (first, later) = intervals.split_first()?;
    let mut into = first.clone();
    later.iter().for_each(|l| merge_fields(&mut into, l));
    histograms.apply_to(&mut into, &[]);
    Some(into)
}

/// Everything but the class figures (which come from the added histograms): `later`
/// follows `into` in time.
fn merge_fields(into: &mut IntervalStats, later: &IntervalStats) {
    let (a, b) = (into.duration_s, later.duration_s);
    into.duration_s = later.from_s + later.duration_s - into.from_s;
    into.threads = into.threads.max(later.threads);
    let add = |x: Option<u64>, y: Option<u64>| match (x, y) {
        (None, None) => None,
        _ => Some(x.unwrap_or(0) + y.unwrap_or(0)),
    };
    into.late = add(into.late, later.late);
    into.dropped = add(into.dropped, later.dropped);
    // The backlog is a reading at the interval's end.
    into.backlog = later.backlog.or(into.backlog);
    into.errors += later.errors;
    into.reconnects += later.reconnects;
    into.reconnect_failures += later.reconnect_failures;
    into.client_cpu_pct = match (into.client_cpu_pct, later.client_cpu_pct) {
        (Some(x), Some(y)) if a + b > 0.0 => Some((x * a + y * b) / (a + b)),
        (x, y) => x.or(y),
    };
    merge_server(&mut into.server, &later.server, a, b);
    merge_scatter(&mut into.scatter, &later.scatter);
    if later.slowest.as_ref().is_some_and(|l| into.slowest.as_ref().is_none_or(|s| l.latency_us > s.latency_us)) {
        into.slowest = later.slowest.clone();
    }
    if later
        .slowest_event
        .as_ref()
        .is_some_and(|l| into.slowest_event.as_ref().is_none_or(|s| l.latency_us > s.latency_us))
    {
        into.slowest_event = later.slowest_event.clone();
    }
}

/// The server's figures over `a` seconds and the next `b`: rates as their mean over both,
/// gauges at their highest (the longest history, the oldest checkpoint).
pub fn merge_server(into: &mut BTreeMap<String, f64>, later: &BTreeMap<String, f64>, a: f64, b: f64) {
    for (key, y) in later {
        let merged = match into.get(key) {
            Some(x) if SampledFigure::is_rate_key(key) && a + b > 0.0 => (x * a + y * b) / (a + b),
            Some(x) => x.max(*y),
            None => *y,
        };
        into.insert(key.clone(), merged);
    }
}

/// Both samples, thinned evenly to at most [`POINTS_PER_ENTRY`] points.
pub fn merge_scatter(into: &mut Scatter, later: &Scatter) {
    into.seen += later.seen;
    let mut points = std::mem::take(&mut into.points);
    points.extend_from_slice(&later.points);
    let n = points.len();
    if n > POINTS_PER_ENTRY {
        let slot = |i: usize| i * POINTS_PER_ENTRY / n;
        points = points.into_iter().enumerate().filter(|(i, _)| slot(i + 1) > slot(*i)).map(|(_, p)| p).collect();
    }
    into.points = points;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recorder::summary::interval_stats;
    use crate::recorder::Recorder;
    use crate::stats::LatencyHistogram;
    use std::time::{Duration, Instant};

    /// Interval n (0-based) holds events of (n % 97 + 1) .. ms, one of them a spike in
    /// interval 500; returns the kept timeline and a histogram of every measured event.
    fn feed(intervals: u32, warmup: u32, limit: usize) -> (Vec<IntervalStats>, LatencyHistogram, u32) {
        let mut kept = KeptTimeline::new(limit);
        let mut all = LatencyHistogram::new();
        let start = Instant::now();
        let mut r = Recorder::new(&[], &[], false);
        for n in 0..intervals {
            let at = start + Duration::from_secs(n as u64);
            for k in 0..10u64 {
                let ms = if n == 500 && k == 0 { 4_000 } else { (n as u64 % 97) + k + 1 };
                let latency = Duration::from_millis(ms);
                r.event(0, latency, latency, at + Duration::from_millis(10 * k));
                if n >= warmup {
                    all.record(latency);
                }
            }
            let h = ClassHistograms::of(&r);
            let mut stats = interval_stats(&r, &h, start, n as f64, 1.0, n < warmup, &[]);
            stats.errors = 1;
            stats.client_cpu_pct = Some(if n % 2 == 0 { 10.0 } else { 30.0 });
            kept.push(stats, &h);
            r.reset();
        }
        let width = kept.width();
        (kept.finish(), all, width)
    }

    #[test]
    fn a_long_timeline_stays_within_its_limit_and_merges_exactly() {
        let (entries, all, width) = feed(1_000, 10, 16);
        assert!(entries.len() < 16 && entries.len() >= 8, "{} entries", entries.len());
        assert_eq!(width, 128);
        // Contiguous, covering every interval, never across the warmup's end.
        let mut at = 0.0;
        for e in &entries {
            assert!((e.from_s - at).abs() < 1e-9, "{} vs {at}", e.from_s);
            at = e.from_s + e.duration_s;
        }
        assert!((at - 1_000.0).abs() < 1e-9);
        assert_eq!(entries.iter().filter(|e| e.warmup).map(|e| e.duration_s).sum::<f64>(), 10.0);
        // Counts, errors and extremes add up; the spike's max survives; percentiles are those
        // of every event the entries cover (histograms added, not percentiles averaged).
        let measured: Vec<&IntervalStats> = entries.iter().filter(|e| !e.warmup).collect();
        assert_eq!(measured.iter().map(|e| e.event.count).sum::<u64>(), all.count());
        assert_eq!(entries.iter().map(|e| e.errors).sum::<u64>(), 1_000);
        assert_eq!(measured.iter().map(|e| e.event.max_us).fold(0.0, f64::max), 4_000_000.0);
        let spike = measured.iter().find(|e| e.from_s <= 500.0 && 500.0 < e.from_s + e.duration_s).unwrap();
        assert_eq!(spike.event.max_us, 4_000_000.0);
        // ... and when it ended: a stall's span.
        let slowest = spike.slowest_event.as_ref().map(|e| (e.latency_us, e.ended_s));
        assert_eq!(slowest, Some((4_000_000.0, 500.0)));
        let last = measured.last().unwrap();
        let mut covered = LatencyHistogram::new();
        for n in last.from_s as u64..1_000 {
            for k in 0..10u64 {
                covered.record(Duration::from_millis((n % 97) + k + 1));
            }
        }
        assert_eq!(last.event.count, covered.count());
        assert_eq!(last.event.p99_us, covered.percentile_ns(99.0) as f64 / 1000.0);
        assert_eq!(last.event.p50_us, covered.percentile_ns(50.0) as f64 / 1000.0);
        assert!((last.event.per_s - 10.0).abs() < 1e-9, "{}", last.event.per_s);
        // CPU weighted by time: half the seconds at 10%, half at 30%.
        assert!((measured[1].client_cpu_pct.unwrap() - 20.0).abs() < 1e-9);
        // The scatter stays bounded per entry, in time order.
        for e in &entries {
            assert!(e.scatter.points.len() <= POINTS_PER_ENTRY);
            assert!(e.scatter.points.windows(2).all(|w| w[0][0] <= w[1][0]));
        }
    }

    #[test]
    fn a_planned_run_starts_wide_and_each_entry_closes_once() {
        // 600 planned intervals, 5 of them warmup, 60 entries at most: entries of 11 (the
        // warmup in one of its own), never merged, each told once as it closes; the
        // histograms told add up to all.
        let mut kept = KeptTimeline::planned(60, Some(600));
        let start = Instant::now();
        let mut r = Recorder::new(&[], &[], false);
        let mut told: Vec<(f64, f64, u64)> = Vec::new();
        let mut h = ClassHistograms::of(&r);
        for n in 0..600u32 {
            r.event(0, Duration::from_millis(1 + n as u64 % 5), Duration::from_millis(1), start);
            h.refill(&r);
            let stats = interval_stats(&r, &h, start, n as f64, 1.0, n < 5, &[]);
            kept.push_telling(stats, &h, None, &mut |e, h, _| told.push((e.from_s, e.duration_s, h.event().count())));
            r.reset();
        }
        assert_eq!(kept.width(), 11);
        let entries = kept.finish_telling(&mut |e, h, _| told.push((e.from_s, e.duration_s, h.event().count())), false);
        assert_eq!(entries.len(), told.len());
        assert_eq!(entries.len(), 1 + 595usize.div_ceil(11), "the warmup, then 11 intervals an entry");
        assert!(entries.len() <= 60);
        for (e, t) in entries.iter().zip(&told) {
            assert_eq!((e.from_s, e.duration_s, e.event.count), *t);
        }
        assert_eq!(told.iter().map(|t| t.2).sum::<u64>(), 600);
        assert_eq!(told[0], (0.0, 5.0, 5), "the warmup closes at its end");
        assert_eq!((told[1].0, told[1].1), (5.0, 11.0), "measured entries start at the warmup's end");
    }

    /// A collector's timeline keeps no entry (its record does), and closes each one where a
    /// kept timeline would, through merges in pairs and the warmup's end alike.
    #[test]
    fn a_timeline_that_only_tells_closes_the_same_entries_and_keeps_none() {
        let start = Instant::now();
        let mut r = Recorder::new(&[], &[], false);
        let mut h = ClassHistograms::of(&r);
        let (mut kept, mut told) = (KeptTimeline::new(16), KeptTimeline::new(16).telling_only());
        let (mut a, mut b): (Vec<(f64, f64, u64)>, Vec<(f64, f64, u64)>) = (Vec::new(), Vec::new());
        for n in 0..1_000u32 {
            r.event(0, Duration::from_millis(1 + n as u64 % 7), Duration::ZERO, start);
            h.refill(&r);
            let stats = interval_stats(&r, &h, start, n as f64, 1.0, n < 13, &[]);
            kept.push_telling(stats.clone(), &h, None, &mut |e, h, _| {
                a.push((e.from_s, e.duration_s, h.event().count()))
            });
            told.push_telling(stats, &h, None, &mut |e, h, _| b.push((e.from_s, e.duration_s, h.event().count())));
            r.reset();
        }
        assert_eq!((kept.width(), told.width()), (128, 128));
        let entries = kept.finish_telling(&mut |e, h, _| a.push((e.from_s, e.duration_s, h.event().count())), false);
        assert!(told
            .finish_telling(&mut |e, h, _| b.push((e.from_s, e.duration_s, h.event().count())), false)
            .is_empty());
        assert_eq!(a, b);
        assert!(entries.len() < 16 && a.len() > entries.len(), "{} kept of {} told", entries.len(), a.len());
        assert_eq!(b.iter().map(|t| t.2).sum::<u64>(), 1_000);
    }

    #[test]
    fn a_short_timeline_is_kept_as_it_was_recorded() {
        let (entries, _, width) = feed(50, 5, 300);
        assert_eq!((entries.len(), width), (50, 1));
        assert!(entries.iter().all(|e| e.duration_s == 1.0 && e.event.count == 10));
    }
}
