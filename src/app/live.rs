//! The status line on a terminal while a job runs: a run, its repeats, a sweep's points or
//! an A/B run's turns. Drawn on stderr only when stderr is a terminal and not --quiet,
//! redrawn once per timeline second from what the collector already computed (the measured
//! clients do no extra work), and cleared before anything else prints; piped, nothing is
//! added, so logs and sysbench-format output stay as they were.

use crate::collector::{Progress, Window};
use crate::metrics::LiveMetrics;
use crate::model::IntervalStats;
use crate::report::status::{status_line, RunStage, StatusLine};
use crate::report::{IntervalPrinter, WindowEnd};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The whole job's progress; clones share it (an A/B run's two sides).
#[derive(Clone)]
pub(super) struct Job(Arc<Mutex<JobState>>);

struct JobState {
    /// Draws on a terminal; none when piped or quiet.
    terminal: bool,
    bar: Option<indicatif::ProgressBar>,
    /// Measured parts (phases with their warmup) in the job; 0 until known.
    parts: u32,
    started_parts: u32,
    /// When each part started: the job's pace (prepares and collecting included).
    part_starts: Vec<Instant>,
    /// What the caller says this part is: a sweep point or an A/B turn, then a repeat.
    outer: Option<String>,
    inner: Option<String>,
    /// The current part's warmup.
    warmup_s: u32,
    status: StatusLine,
}

impl Job {
    /// A job of `parts` measured parts (0: set by the first run, from its repeats).
    pub(super) fn new(parts: u32) -> Job {
        use std::io::IsTerminal;
        let terminal = !super::quiet() && std::io::stderr().is_terminal();
        Job(Arc::new(Mutex::new(JobState {
            terminal,
            bar: None,
            parts,
            started_parts: 0,
            part_starts: Vec::new(),
            outer: None,
            inner: None,
            warmup_s: 0,
            status: StatusLine::default(),
        })))
    }

    fn state(&self) -> std::sync::MutexGuard<'_, JobState> {
        crate::lock(&self.0)
    }

    /// The number of parts, unless the job already knows it.
    pub(super) fn expect_parts(&self, parts: u32) {
        let mut s = self.state();
        if s.parts == 0 {
            s.parts = parts;
        }
    }

    /// Prints `line` as `say` does (above the status line when one is shown) and makes it
    /// the status line's label: a sweep point or an A/B turn.
    pub(super) fn point(&self, line: std::fmt::Arguments<'_>) {
        let text = line.to_string();
        self.say(format_args!("{text}"));
        let mut s = self.state();
        s.outer = Some(text);
        s.inner = None;
    }

    /// As [`Job::point`], for a repeat within it.
    pub(super) fn repeat(&self, line: std::fmt::Arguments<'_>) {
        let text = line.to_string();
        self.say(format_args!("{text}"));
        self.state().inner = Some(text);
    }

    /// `say`, above the status line.
    pub(super) fn say(&self, line: std::fmt::Arguments<'_>) {
        self.above(|| super::say(line));
    }

    /// Runs `print` with the status line out of the way (it is redrawn after).
    fn above(&self, print: impl FnOnce()) {
        // Cloned out of the lock: the bar redraws itself through it.
        let bar = self.state().bar.clone();
        match bar {
            Some(bar) => bar.suspend(print),
            None => print(),
        }
    }

    /// A measured part begins: `warmup_s` then `time` (none: limited by events only).
    pub(super) fn part_starts(&self, warmup_s: u32, time: Option<Duration>) {
        let mut s = self.state();
        s.started_parts += 1;
        s.part_starts.push(Instant::now());
        s.warmup_s = warmup_s;
        let mut label: Vec<String> = [&s.outer, &s.inner].into_iter().flatten().cloned().collect();
        // A sweep point or an A/B turn: which of how many parts.
        if s.outer.is_some() && s.parts > 1 {
            label.insert(0, format!("{} of {}", s.started_parts, s.parts));
        }
        s.status = StatusLine {
            planned_s: time.map(|t| warmup_s as f64 + t.as_secs_f64()),
            part: (!label.is_empty()).then(|| label.join(": ")),
            ..StatusLine::default()
        };
        if s.terminal {
            let bar = indicatif::ProgressBar::new_spinner();
            // Drawn at most 20 times a second, as indicatif draws to stderr by default.
            bar.set_draw_target(indicatif::ProgressDrawTarget::term_like_with_hz(Box::new(super::term::Stderr), 20));
            bar.set_style(indicatif::ProgressStyle::with_template("{wide_msg}").expect("valid template"));
            s.bar = Some(bar);
        }
        s.draw();
    }

    /// The part is over (measured, interrupted or failed): the line goes away.
    pub(super) fn part_ends(&self) {
        if let Some(bar) = self.state().bar.take() {
            bar.finish_and_clear();
        }
    }

    /// The terminal's view of one part: interval lines through `printer`, the status line;
    /// and each interval to `metrics` (`--metrics-listen`).
    pub(super) fn progress(
        &self,
        printer: IntervalPrinter<Box<dyn std::io::Write + Send>>,
        metrics: Option<Arc<LiveMetrics>>,
    ) -> LiveProgress {
        LiveProgress { job: self.clone(), printer, metrics }
    }
}

impl JobState {
    fn draw(&mut self) {
        self.status.job_left_s = self.job_left_s();
        if let Some(bar) = &self.bar {
            bar.set_message(status_line(&self.status));
        }
    }

    /// This part's time left plus each part to come at the pace of those done (or as
    /// planned, before any is done); unknown for a run limited by events.
    fn job_left_s(&self) -> Option<f64> {
        let to_come = self.parts.saturating_sub(self.started_parts);
        if self.parts <= 1 {
            return None;
        }
        let left = self.status.left_s()?;
        let pace = match self.part_starts.as_slice() {
            [first, .., last] => last.duration_since(*first).as_secs_f64() / (self.part_starts.len() - 1) as f64,
            _ => self.status.planned_s?,
        };
        Some(left + to_come as f64 * pace)
    }
}

impl Drop for JobState {
    fn drop(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

/// sysbench's "Threads started!" and interval lines, and the status line between them.
pub(super) struct LiveProgress {
    job: Job,
    printer: IntervalPrinter<Box<dyn std::io::Write + Send>>,
    metrics: Option<Arc<LiveMetrics>>,
}

impl LiveProgress {
    fn stage(&mut self, stage: RunStage) {
        let mut s = self.job.state();
        s.status.stage = Some(stage);
        s.draw();
    }
}

impl Progress for LiveProgress {
    fn started(&mut self, _at: Instant) {
        let printer = &mut self.printer;
        self.job.above(|| printer.started());
        let warmup = self.job.state().warmup_s > 0;
        self.stage(if warmup { RunStage::Warmup } else { RunStage::Measuring });
    }

    fn second(&mut self, stats: &IntervalStats, histograms: &crate::recorder::classes::ClassHistograms) {
        if let Some(m) = &self.metrics {
            m.interval(stats, histograms);
        }
        let mut s = self.job.state();
        s.status.second(stats);
        s.draw();
    }

    /// Seconds feed the status line (on a terminal) and `--metrics-listen`.
    fn wants_seconds(&self) -> bool {
        self.metrics.is_some() || self.job.state().terminal
    }

    fn window(&mut self, w: &Window<'_>) {
        let (printer, end) = (&mut self.printer, WindowEnd { end_s: w.end_s, partial: w.partial });
        self.job.above(|| printer.print(w.stats, end));
    }

    fn stopped(&mut self) {
        self.stage(RunStage::Collecting);
    }
}
