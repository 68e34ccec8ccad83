//! The local measurement sink: turns the runner's ticks into the per-second timeline, the
//! `--report-interval` windows and the post-warmup totals that the result is built from.

use crate::model::IntervalStats;
use crate::recorder::summary::interval_stats;
use crate::recorder::{Recorder, Sink, Tick};
use crate::workload::StatementInfo;
use std::time::{Duration, Instant};

/// Told when measurement starts and at the end of each report window (the terminal's
/// interval lines; tests may ignore it).
pub trait Progress {
    fn started(&mut self) {}
    fn window(&mut self, _stats: &IntervalStats) {}
}

/// Ignores progress.
pub struct Quiet;
impl Progress for Quiet {}

/// What the collector gathered over a run.
pub struct Collected {
    /// Post-warmup totals.
    pub totals: Recorder,
    /// One entry per tick, warmup included (flagged).
    pub timeline: Vec<IntervalStats>,
}

pub struct Collector<'p> {
    threads: u32,
    report_every: Option<u32>,
    start: Instant,
    warmup: Duration,
    last: Instant,
    window: Recorder,
    window_from: Instant,
    window_ticks: u32,
    totals: Recorder,
    timeline: Vec<IntervalStats>,
    cpu_at_last: Duration,
    progress: &'p mut dyn Progress,
    /// Percentiles the report windows compute beyond the fixed ones.
    window_percentiles: Vec<f64>,
}

impl<'p> Collector<'p> {
    pub fn new(
        statements: &[StatementInfo],
        transactions: &[String],
        open_loop: bool,
        threads: u32,
        report_every: Option<u32>,
        progress: &'p mut dyn Progress,
    ) -> Self {
        let now = Instant::now();
        Collector {
            threads,
            report_every,
            start: now,
            warmup: Duration::ZERO,
            last: now,
            window: Recorder::new(statements, transactions, open_loop),
            window_from: now,
            window_ticks: 0,
            totals: Recorder::new(statements, transactions, open_loop),
            timeline: Vec::new(),
            cpu_at_last: Duration::ZERO,
            progress,
            window_percentiles: Vec::new(),
        }
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
        let every = self.report_every.unwrap_or(1) as f64;
        let left = self.last.saturating_duration_since(self.window_from).as_secs_f64();
        if self.window_ticks > 0 && left >= every / 5.0 {
            self.flush_window(self.last);
        }
        Collected { totals: self.totals, timeline: self.timeline }
    }

    fn flush_window(&mut self, until: Instant) {
        let from_s = self.window_from.duration_since(self.start).as_secs_f64();
        let secs = until.duration_since(self.window_from).as_secs_f64();
        // A window that began in the warmup holds warmup events.
        let warmup = self.window_from < self.start + self.warmup;
        self.progress.window(&interval_stats(
            &self.window,
            self.start,
            from_s,
            secs,
            self.threads,
            warmup,
            &self.window_percentiles,
        ));
        self.window.reset();
        self.window_ticks = 0;
        self.window_from = until;
    }
}

impl Sink for Collector<'_> {
    fn started(&mut self, start: Instant, warmup: Duration, process_cpu: Duration) {
        self.start = start;
        self.warmup = warmup;
        self.last = start;
        self.window_from = start;
        self.cpu_at_last = process_cpu;
        self.progress.started();
    }

    fn tick(&mut self, t: &Tick<'_>) {
        if t.until <= self.last {
            return;
        }
        let warmup = t.due <= self.start + self.warmup;
        let from_s = self.last.duration_since(self.start).as_secs_f64();
        let secs = t.until.duration_since(self.last).as_secs_f64();
        let mut stats = interval_stats(t.recorder, self.start, from_s, secs, self.threads, warmup, &[]);
        let cpu = t.process_cpu.saturating_sub(self.cpu_at_last);
        stats.client_cpu_pct = Some(cpu.as_secs_f64() / secs.max(1e-9) * 100.0);
        stats.backlog = t.backlog;
        self.cpu_at_last = t.process_cpu;
        self.timeline.push(stats);
        if !warmup {
            self.totals.add(t.recorder);
        }
        if self.report_every.is_some() {
            // The first measured tick: a window holding warmup ends at the warmup boundary,
            // so no line mixes warmup with measured events.
            if !warmup && self.window_ticks > 0 && self.window_from < self.start + self.warmup {
                self.flush_window(self.last);
            }
            self.window.add(t.recorder);
            self.window_ticks += 1;
            // A window ends once it spans (nearly) the interval: the run's last sliver, a
            // few milliseconds after the last whole second, stays for finish() to judge.
            let spans = t.until.saturating_duration_since(self.window_from).as_secs_f64();
            if self.report_every.is_some_and(|every| spans >= every as f64 * 0.8) {
                self.flush_window(t.until);
            }
        }
        self.last = t.until;
    }
}
