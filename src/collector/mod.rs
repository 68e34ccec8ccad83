//! The local measurement sink: turns the runner's ticks into the per-second timeline, the
//! `--report-interval` windows and the post-warmup totals that the result is built from.

pub mod kept;
pub mod published;

pub use kept::KeptTimeline;

use crate::model::record::RecordEntry;
use crate::model::IntervalStats;
use crate::recorder::classes::ClassHistograms;
use crate::recorder::figures::{micros, thousandths};
use crate::recorder::summary::interval_stats;
use crate::recorder::{Recorder, Sink, Tick};
use crate::timeline::{LineDetail, TimelineFiles};
use crate::workload::StatementInfo;
use std::time::{Duration, Instant};

/// A reader of what the collector publishes ([`published::read`]): told when measurement
/// starts, of each timeline second, at the end of each report window (the terminal's
/// interval lines and status line) and when the clients stop.
pub trait Progress {
    /// All clients are connected: the run's clock starts at `at` (warmup included).
    fn started(&mut self, _at: Instant) {}
    /// One timeline entry (about a second; warmup flagged), as it is recorded, with its
    /// histograms per class.
    fn second(&mut self, _s: &IntervalStats, _h: &ClassHistograms) {}
    /// Whether [`Progress::second`] is wanted at all (each costs the measuring thread a copy
    /// of the interval's histograms).
    fn wants_seconds(&self) -> bool {
        true
    }
    fn window(&mut self, _w: &Window<'_>) {}
    /// Measurement is over: what follows is the run's end being read.
    fn stopped(&mut self) {}
}

/// One `--report-interval` window. Windows end on multiples of the interval counted from
/// the measured start (the end of the warmup), as sysbench's do; warmup windows end on
/// multiples counted from the run's start and at the warmup's end. Which window a second
/// belongs to is decided by when its tick was due, never by how late the swap ran; the
/// rates divide by the window's real length.
pub struct Window<'a> {
    /// `from_s` as in the timeline (since the run started); `duration_s`: the real length.
    pub stats: &'a IntervalStats,
    /// Where the window ends, seconds since its phase started (the measured start; the
    /// run's start for a warmup window): the boundary for a window that reached one, else
    /// the real end.
    pub end_s: f64,
    /// Ended by the run's end before its boundary (then shorter than the interval). The
    /// warmup's last window ends at the warmup's end: a boundary, not partial.
    pub partial: bool,
}

/// Timeline entries a result keeps over a whole run (a five-minute resolution over a day at
/// most; every interval is in the streamed files): about 0.5 MB of the result at most.
pub const MAX_KEPT: usize = 300;

/// What the collector gathered over a measured phase: its record's entries (the result is
/// built from them, `result::build`).
pub struct Collected {
    /// Each timeline entry as it closed, warmup included (flagged), with everything its
    /// intervals recorded; when streamed, only those after the first write error: the
    /// others are in the record on disk, and are not kept in memory, so that a week-long
    /// run stays flat.
    pub entries: Vec<RecordEntry>,
    /// Entries that went to the record on disk only (before any in `entries`).
    pub streamed: usize,
    /// The streamed files' first write error (they stopped there; the result still has
    /// every entry).
    pub stream_error: Option<String>,
}

pub struct Collector<'p> {
    threads: u32,
    report_every: Option<Duration>,
    start: Instant,
    /// Where measured time starts: the warmup's planned end until the runner says when it
    /// ended (between events, a little later).
    measured_from: Instant,
    last: Instant,
    window: OpenWindow,
    /// Decides when entries close (and how wide they are).
    timeline: KeptTimeline,
    /// Every entry closed so far that is not in the streamed record.
    entries: Vec<RecordEntry>,
    streamed: usize,
    /// Each tick's (and window's) histograms per class, refilled in place.
    classes: ClassHistograms,
    cpu_at_last: Duration,
    /// Where intervals and windows go as they close, for readers on other threads, and
    /// whether every interval goes (else the start, windows and the stop only).
    publish: Option<published::Publisher>,
    publish_seconds: bool,
    /// Percentiles the report windows compute beyond the fixed ones.
    window_percentiles: Vec<f64>,
    /// Where each closed interval is appended as the run goes.
    stream: Option<&'p mut TimelineFiles>,
    stream_error: Option<String>,
}

/// The report window being filled.
struct OpenWindow {
    recorder: Recorder,
    /// Where it really began: the previous window's last swap.
    from: Instant,
    /// Where it ends: a multiple of the interval, or the warmup's end.
    boundary: Instant,
    ticks: u32,
    warmup: bool,
}

impl<'p> Collector<'p> {
    pub fn new(
        statements: &[StatementInfo],
        transactions: &[String],
        open_loop: bool,
        threads: u32,
        report_every: Option<Duration>,
    ) -> Self {
        let now = Instant::now();
        Collector {
            threads,
            report_every,
            start: now,
            measured_from: now,
            last: now,
            window: OpenWindow {
                recorder: Recorder::new(statements, transactions, open_loop),
                from: now,
                boundary: now,
                ticks: 0,
                warmup: false,
            },
            timeline: KeptTimeline::new(MAX_KEPT).telling_only(),
            entries: Vec::new(),
            streamed: 0,
            classes: ClassHistograms::of(&Recorder::new(statements, transactions, open_loop)),
            cpu_at_last: Duration::ZERO,
            publish: None,
            publish_seconds: false,
            window_percentiles: Vec::new(),
            stream: None,
            stream_error: None,
        }
    }

    /// Report windows (and, with `seconds`, every interval) are published to `to` as they
    /// close: readers take them on their own threads.
    pub fn publish_to(mut self, to: published::Publisher, seconds: bool) -> Self {
        self.publish = Some(to);
        self.publish_seconds = seconds;
        self
    }

    fn publish(&self, what: impl FnOnce() -> published::Published) {
        if let Some(to) = &self.publish {
            // A reader that has gone stops nothing: the run is measured all the same.
            let _ = to.send(what());
        }
    }

    /// Each closed interval is also appended to `files`.
    pub fn stream_to(mut self, files: &'p mut TimelineFiles) -> Self {
        self.stream = Some(files);
        self
    }

    /// Keeps at most `entries` timeline entries (e.g. the run's share when it is one of
    /// several repeats; [`MAX_KEPT`] unless told), as wide from the start as a run of
    /// `planned` ticks needs.
    pub fn keep_at_most(mut self, entries: usize, planned: Option<u64>) -> Self {
        self.timeline = KeptTimeline::planned(entries, planned).telling_only();
        self
    }

    /// Report windows also compute these percentiles (a --percentile beyond the fixed ones).
    pub fn window_percentiles(mut self, extra: &[f64]) -> Self {
        self.window_percentiles = extra.to_vec();
        self
    }

    /// Ends collection: a partly filled report window is printed (labelled with its true
    /// length by the printer) unless it is a sliver under a fifth of the interval, whose
    /// rates would be noise (it is in the totals and the timeline either way); then what was
    /// gathered is returned.
    pub fn finish(mut self) -> Collected {
        if let Some(every) = self.report_every {
            let left = self.last.saturating_duration_since(self.window.from);
            if self.window.ticks > 0 && !is_sliver(left, every) {
                let end_s = self.last.saturating_duration_since(self.phase_start(self.window.warmup)).as_secs_f64();
                self.flush_window(self.last, end_s, true);
            }
        }
        let mut kept = Kept {
            stream: &mut self.stream,
            error: &mut self.stream_error,
            entries: &mut self.entries,
            streamed: &mut self.streamed,
        };
        self.timeline.finish_telling(&mut |entry, _, counts| kept.record(entry, counts), false);
        Collected { entries: self.entries, streamed: self.streamed, stream_error: self.stream_error }
    }

    /// The end of the warmup: measured time starts there.
    fn measured_start(&self) -> Instant {
        self.measured_from
    }

    /// Where window labels count from: the run's start in the warmup, else the measured start.
    fn phase_start(&self, warmup: bool) -> Instant {
        if warmup {
            self.start
        } else {
            self.measured_start()
        }
    }

    /// The boundary after `at`: the next multiple of the interval from the run's start
    /// within the warmup (which ends on one), else from the measured start.
    fn boundary_after(&self, at: Instant, every: Duration) -> Instant {
        let measured = self.measured_start();
        let origin = if at < measured { self.start } else { measured };
        let whole = (at.duration_since(origin).as_nanos() / every.as_nanos()) as u32;
        let next = origin + every * (whole + 1);
        if at < measured {
            next.min(measured)
        } else {
            next
        }
    }

    fn flush_window(&mut self, until: Instant, end_s: f64, partial: bool) {
        let w = &mut self.window;
        let from_s = w.from.duration_since(self.start).as_secs_f64();
        let secs = until.duration_since(w.from).as_secs_f64();
        self.classes.refill(&w.recorder);
        let h = &self.classes;
        let mut stats = interval_stats(&w.recorder, h, self.start, from_s, secs, w.warmup, &self.window_percentiles);
        stats.threads = self.threads;
        w.recorder.reset();
        w.ticks = 0;
        w.from = until;
        self.publish(|| published::Published::Window(Box::new(stats), end_s, partial));
    }

    /// Adds a tick to the report window; the window ends when the tick was due at (or,
    /// for the run's last tick, after) its boundary.
    fn window_tick(&mut self, t: &Tick<'_>, warmup: bool, every: Duration) {
        self.window.recorder.add_counts(t.recorder);
        self.window.ticks += 1;
        self.window.warmup = warmup;
        if t.due < self.window.boundary {
            return;
        }
        let boundary = self.window.boundary;
        // On a boundary: a multiple of the interval (whole milliseconds).
        let end_s = (boundary.duration_since(self.phase_start(warmup)).as_secs_f64() * 1e3).round() / 1e3;
        self.flush_window(t.until, end_s, false);
        self.window.boundary = self.boundary_after(boundary, every);
        // A late last tick may pass more than one boundary: the next window still ends on one.
        while self.window.boundary <= t.due {
            self.window.boundary = self.boundary_after(self.window.boundary, every);
        }
    }
}

/// Where closed entries go: the collector's fields, borrowed apart from its timeline.
struct Kept<'a, 'p> {
    stream: &'a mut Option<&'p mut TimelineFiles>,
    error: &'a mut Option<String>,
    entries: &'a mut Vec<RecordEntry>,
    streamed: &'a mut usize,
}

impl Kept<'_, '_> {
    /// An entry as it closes: streamed (its record line), or kept in memory when there is no stream; the first error stops the stream,
    /// and that entry and the later ones are kept.
    fn record(&mut self, entry: &IntervalStats, counts: Option<&Recorder>) {
        let counts = counts.map(Recorder::counts).unwrap_or_default();
        let entry = RecordEntry { stats: entry.clone(), counts };
        if let Some(files) = self.stream {
            match files.append_entry(&entry) {
                Ok(()) => {
                    *self.streamed += 1;
                    return;
                }
                Err(e) => {
                    *self.error = Some(e.to_string());
                    *self.stream = None;
                }
            }
        }
        self.entries.push(entry);
    }
}

/// A window too short for its rates to mean anything: under a fifth of the interval (the
/// milliseconds after the last whole second of a run).
fn is_sliver(span: Duration, every: Duration) -> bool {
    span < every / 5
}

impl Sink for Collector<'_> {
    fn started(&mut self, start: Instant, warmup: Duration, process_cpu: Duration) {
        self.start = start;
        self.measured_from = start + warmup;
        self.last = start;
        self.window.from = start;
        if let Some(every) = self.report_every {
            self.window.boundary = self.boundary_after(start, every);
        }
        self.cpu_at_last = process_cpu;
        self.publish(|| published::Published::Started(start));
    }

    fn measuring(&mut self, from: Instant) {
        self.measured_from = from;
        if let Some(every) = self.report_every {
            // What a late warmup tick left in the window is the warmup's.
            if self.window.ticks > 0 {
                let end_s = self.last.saturating_duration_since(self.start).as_secs_f64();
                self.flush_window(self.last, end_s, false);
            }
            self.window.boundary = from + every;
        }
    }

    fn tick(&mut self, t: &Tick<'_>) {
        if t.until <= self.last {
            return;
        }
        let warmup = t.due <= self.measured_start();
        // To the microsecond (the interval log's resolution), from rounded ends: intervals
        // follow one another exactly.
        let from_s = micros(self.last.duration_since(self.start).as_secs_f64());
        let secs = micros(micros(t.until.duration_since(self.start).as_secs_f64()) - from_s);
        // Each class's histogram merged once, for the figures, the streamed log and the kept timeline.
        self.classes.refill(t.recorder);
        let mut stats = interval_stats(t.recorder, &self.classes, self.start, from_s, secs, warmup, &[]);
        stats.threads = self.threads;
        let cpu = t.process_cpu.saturating_sub(self.cpu_at_last);
        stats.client_cpu_pct = Some(thousandths(cpu.as_secs_f64() / secs.max(1e-9) * 100.0));
        stats.backlog = t.backlog;
        if let Some(server) = &t.server {
            stats.server = server.iter().map(|(k, v)| (k.clone(), thousandths(*v))).collect();
        }
        self.cpu_at_last = t.process_cpu;
        if self.publish_seconds {
            self.publish(|| published::Published::Second(Box::new((stats.clone(), self.classes.clone()))));
        }
        if let Some(files) = &mut self.stream {
            // Whole while the result keeps each interval as its own entry.
            let detail = if self.timeline.width() == 1 { LineDetail::Whole } else { LineDetail::Peaks };
            if let Err(e) = files.append(&stats, detail) {
                self.stream_error = Some(format!("{}: {e}", files.paths()[0].display()));
                self.stream = None;
            }
        }
        let mut kept = Kept {
            stream: &mut self.stream,
            error: &mut self.stream_error,
            entries: &mut self.entries,
            streamed: &mut self.streamed,
        };
        let told =
            &mut |entry: &IntervalStats, _: &ClassHistograms, counts: Option<&Recorder>| kept.record(entry, counts);
        self.timeline.push_telling(stats, &self.classes, Some(t.recorder), told);
        if let Some(every) = self.report_every {
            self.window_tick(t, warmup, every);
        }
        self.last = t.until;
    }

    fn stopped(&mut self) {
        self.publish(|| published::Published::Stopped);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the terminal would be told of each window.
    #[derive(Debug, PartialEq)]
    struct Seen {
        warmup: bool,
        end_s: f64,
        partial: bool,
        events: u64,
        from_s: f64,
        duration_s: f64,
    }

    #[derive(Default)]
    struct Windows(Vec<Seen>);
    impl Progress for Windows {
        fn window(&mut self, w: &Window<'_>) {
            let s = w.stats;
            let (from_s, duration_s) = (s.from_s, s.duration_s);
            let seen = Seen {
                warmup: s.warmup,
                end_s: w.end_s,
                partial: w.partial,
                events: s.event.count,
                from_s,
                duration_s,
            };
            self.0.push(seen);
        }
    }

    const MS: Duration = Duration::from_millis(1);

    /// Feeds a run: one tick per whole second up to `secs` (warmup included), tick n holding
    /// n events and swapped `late(n)` after it was due, then the end tick `end_after` after
    /// the last second.
    fn run(
        warmup_s: u64,
        secs: u64,
        every: u32,
        late: impl Fn(u64) -> Duration,
        end_after: Duration,
    ) -> (Vec<Seen>, Collected) {
        let mut progress = Windows::default();
        let (tx, rx) = std::sync::mpsc::channel();
        let mut c = Collector::new(&[], &[], false, 4, Some(Duration::from_secs(every as u64))).publish_to(tx, false);
        let start = Instant::now();
        c.started(start, Duration::from_secs(warmup_s), Duration::ZERO);
        let mut r = crate::recorder::TickRecorder::with_counters(&[], &[], false);
        let second = Duration::from_secs(1);
        for n in 1..=secs {
            let due = start + second * n as u32;
            for _ in 0..n {
                r.event(0, MS, MS, due - MS);
            }
            c.tick(&Tick {
                recorder: &r,
                until: due + late(n),
                due,
                process_cpu: Duration::ZERO,
                backlog: None,
                server: None,
            });
            r.reset();
        }
        let end = start + Duration::from_secs(secs) + end_after;
        r.event(0, MS, MS, end);
        c.tick(&Tick { recorder: &r, until: end, due: end, process_cpu: Duration::ZERO, backlog: None, server: None });
        let collected = c.finish();
        published::read(rx, &mut progress);
        (progress.0, collected)
    }

    /// Events in the measured entries.
    fn measured_events(c: &Collected) -> u64 {
        c.entries.iter().filter(|e| !e.stats.warmup).map(|e| e.stats.event.count).sum()
    }

    fn events(from: u64, to: u64) -> u64 {
        (from..=to).sum()
    }

    #[test]
    fn windows_end_on_multiples_of_the_interval_from_the_measured_start() {
        // --warmup 2 --report-interval 5 --time 12, the tick at 7 s (measured 5 s) swapped
        // 300 ms late, the others 2 ms, the run ending 7 ms after its last second.
        let late = |n| if n == 7 { 300 * MS } else { 2 * MS };
        let (w, collected) = run(2, 14, 5, late, 7 * MS);
        let ends: Vec<(bool, f64, bool)> = w.iter().map(|s| (s.warmup, s.end_s, s.partial)).collect();
        assert_eq!(ends, [(true, 2.0, false), (false, 5.0, false), (false, 10.0, false), (false, 14.007 - 2.0, true)]);
        // Each window holds exactly its seconds' events: ticks due in (boundary - 5, boundary].
        let counts: Vec<u64> = w.iter().map(|s| s.events).collect();
        assert_eq!(counts, [events(1, 2), events(3, 7), events(8, 12), events(13, 14) + 1]);
        // Rates divide by the real span: from the previous window's last swap to this one's.
        assert!((w[1].from_s - 2.002).abs() < 1e-9 && (w[1].duration_s - 5.298).abs() < 1e-9, "{:?}", w[1]);
        assert!((w[2].from_s - 7.3).abs() < 1e-9 && (w[2].duration_s - 4.702).abs() < 1e-9, "{:?}", w[2]);
        assert!((w[3].duration_s - 2.005).abs() < 1e-9, "{:?}", w[3]);
        // The timeline: one entry per tick, measured from the warmup's boundary on.
        assert_eq!(collected.entries.len(), 15);
        assert_eq!(collected.entries.iter().filter(|e| e.stats.warmup).count(), 2);
        assert_eq!(measured_events(&collected), events(3, 14) + 1);
    }

    /// Streamed entries are on disk only (a week-long run stays flat), and the record read
    /// back holds every one: [`crate::timeline::record::with_streamed_entries`].
    #[test]
    fn streamed_entries_stay_on_disk_and_come_back_whole() {
        use crate::model::record::{Record, RecordLine, RecordStart, RecordedPhase, RunOutcome};
        let dir = tempfile::tempdir().unwrap();
        let result = dir.path().join("r.json");
        let mut files = TimelineFiles::create(&result, None).unwrap();
        let start = RecordStart::for_tests(8);
        files.write_record(&RecordLine::Start(Box::new(start.clone()))).unwrap();
        let mut c = Collector::new(&[], &[], false, 1, None).keep_at_most(8, None).stream_to(&mut files);
        let t0 = Instant::now();
        c.started(t0, Duration::ZERO, Duration::ZERO);
        let mut r = crate::recorder::TickRecorder::with_counters(&[], &[], false);
        for n in 1..=100u32 {
            let due = t0 + Duration::from_secs(n as u64);
            r.event(0, MS * n, MS, due);
            c.tick(&Tick { recorder: &r, until: due, due, process_cpu: Duration::ZERO, backlog: None, server: None });
            r.reset();
        }
        let collected = c.finish();
        assert!(collected.entries.is_empty() && collected.stream_error.is_none());
        files.write_record(&RecordLine::PhaseEnd(Box::new(RunOutcome::starting()))).unwrap();
        files.finish().unwrap();
        let mut memory = Record::new(start);
        memory.phases.push(RecordedPhase { entries: collected.entries, end: Some(RunOutcome::starting()) });
        let path = crate::timeline::record_path_for(&result);
        let whole = crate::timeline::record::with_streamed_entries(memory, &path).unwrap();
        let entries = &whole.phases[0].entries;
        assert_eq!(entries.len(), collected.streamed);
        assert!(entries.len() > 8, "entries widen as the run goes, and each one is recorded once");
        assert_eq!(entries.iter().map(|e| e.stats.event.count).sum::<u64>(), 100);
        assert_eq!(entries.iter().map(|e| e.counts.events.as_ref().map_or(0, |_| 1)).sum::<usize>(), entries.len());
        let end = entries.last().map(|e| e.stats.from_s + e.stats.duration_s);
        assert_eq!(end, Some(100.0), "intervals to the microsecond, following one another");
        // The interval log, written from the record at the end: each entry's events.
        let log = std::fs::read_to_string(crate::timeline::paths_for(&result)[1].as_path()).unwrap();
        let logged: Vec<&str> = log.lines().filter(|l| l.starts_with("Tag=event,")).collect();
        assert_eq!(logged.len(), entries.len());
        let first = format!("Tag=event,{:.6},{:.6},", entries[0].stats.from_s, entries[0].stats.duration_s);
        assert!(logged[0].starts_with(&first), "{} vs {first}", logged[0]);
        let decode = |l: &str| crate::stats::LatencyHistogram::decode(l.rsplit(',').next().unwrap(), 0, u64::MAX, 0);
        assert_eq!(logged.iter().map(|l| decode(l).unwrap().count()).sum::<u64>(), 100);
    }

    #[test]
    fn a_sliver_after_the_last_boundary_is_not_a_window() {
        let (w, collected) = run(0, 10, 5, |_| MS, 7 * MS);
        let ends: Vec<(f64, bool)> = w.iter().map(|s| (s.end_s, s.partial)).collect();
        assert_eq!(ends, [(5.0, false), (10.0, false)]);
        // The sliver's event is measured all the same.
        assert_eq!(measured_events(&collected), events(1, 10) + 1);
        assert_eq!(collected.entries.len(), 11);
        // A fifth of the interval is a window.
        let (w, _) = run(0, 10, 5, |_| MS, 1001 * MS);
        assert_eq!(w.len(), 3);
        assert!(w[2].partial && (w[2].end_s - 11.001).abs() < 1e-9 && w[2].events == 1, "{:?}", w[2]);
    }

    #[test]
    fn warmup_windows_end_on_the_interval_from_the_start_and_at_the_warmup() {
        // --warmup 7 --report-interval 5: warmup windows end at 5 s and 7 s since the start,
        // measured ones at 5 s and 10 s since the warmup ended.
        let (w, collected) = run(7, 17, 5, |_| 10 * MS, 30 * MS);
        let ends: Vec<(bool, f64, bool)> = w.iter().map(|s| (s.warmup, s.end_s, s.partial)).collect();
        assert_eq!(ends, [(true, 5.0, false), (true, 7.0, false), (false, 5.0, false), (false, 10.0, false)]);
        let counts: Vec<u64> = w.iter().map(|s| s.events).collect();
        assert_eq!(counts, [events(1, 5), events(6, 7), events(8, 12), events(13, 17)]);
        assert_eq!(measured_events(&collected), events(8, 17) + 1);
    }

    #[test]
    fn a_swap_more_than_a_second_late_moves_no_second_to_another_window() {
        // The swap of the tick due at 5 s runs 1.5 s late: the ticks due at 6 s and later
        // are swapped after it, and the window still ends with the second due at 5 s.
        let late = |n| {
            if n == 5 {
                1500 * MS
            } else if n == 6 {
                600 * MS
            } else {
                MS
            }
        };
        let (w, _) = run(0, 10, 5, late, 5 * MS);
        let counts: Vec<u64> = w.iter().map(|s| s.events).collect();
        assert_eq!(counts, [events(1, 5), events(6, 10)]);
        assert!((w[0].duration_s - 6.5).abs() < 1e-9 && (w[1].duration_s - 3.501).abs() < 1e-9, "{w:?}");
    }
}
