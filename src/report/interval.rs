//! sysbench's `--report-interval` line, extended with commit latency.

use crate::model::stats::trim_float;
use crate::model::IntervalStats;
use std::io::Write;

pub struct IntervalPrinter<W: Write> {
    out: W,
    percentile: f64,
    /// The report interval, seconds.
    every: f64,
    /// sysbench's line exactly (no commit latency, no open-loop fields).
    sysbench: bool,
}

impl<W: Write> IntervalPrinter<W> {
    pub fn new(out: W, percentile: f64, every_s: u32) -> Self {
        IntervalPrinter { out, percentile, every: every_s.max(1) as f64, sysbench: false }
    }

    /// Lines as sysbench 1.0.20 prints them, for scripts that parse them.
    pub fn sysbench(out: W, percentile: f64, every_s: u32) -> Self {
        IntervalPrinter { sysbench: true, ..Self::new(out, percentile, every_s) }
    }

    /// sysbench's line: `[ 10s ] thds: 16 tps: ... lat (ms,95%): ... err/s: ... reconn/s: ...`
    /// (the last, shorter window is labelled with its length, as in fairbench's line).
    pub fn sysbench_line(s: &IntervalStats, percentile: f64, every: f64) -> String {
        let full = Self::line(s, percentile, every);
        let (head, _) = full.split_once(" commit (ms,").unwrap_or((&full, ""));
        let secs = s.duration_s.max(1e-9);
        format!("{head} err/s: {:.2} reconn/s: {:.2}", s.errors as f64 / secs, s.reconnects as f64 / secs)
    }

    /// One window's line; `every`: the report interval in seconds.
    pub fn line(s: &IntervalStats, percentile: f64, every: f64) -> String {
        let secs = s.duration_s.max(1e-9);
        // A full window is labelled by its end; the run's last, shorter one says so.
        // A warmup window ends at the warmup boundary, a whole second.
        let end = if s.duration_s >= every * 0.9 || s.warmup {
            format!("{}s", (s.from_s + s.duration_s).round())
        } else {
            format!("{:.1}s, last {:.1} s", s.from_s + s.duration_s, s.duration_s)
        };
        let ms = |us: f64| us / 1000.0;
        format!(
            "[ {end}{} ] thds: {} tps: {:.2} qps: {:.2} (r/w/o: {:.2}/{:.2}/{:.2}) lat (ms,{}%): {:.2} commit (ms,{}%): {} err/s: {:.2} reconn/s: {:.2}",
            if s.warmup { " warmup" } else { "" },
            s.threads,
            s.event.per_s,
            s.total.per_s,
            s.read.per_s,
            s.write.per_s,
            s.commit.per_s + s.other.per_s,
            trim_float(percentile),
            ms(s.event.pick(percentile).unwrap_or(s.event.p95_us)),
            trim_float(percentile),
            // No COMMIT in the window (autocommit, or none finished): nothing to show.
            match s.commit.count {
                0 => "-".to_string(),
                _ => format!("{:.2}", ms(s.commit.pick(percentile).unwrap_or(s.commit.p95_us))),
            },
            s.errors as f64 / secs,
            s.reconnects as f64 / secs,
        ) + &match (s.late, s.dropped) {
            (Some(late), Some(dropped)) => format!(" late/s: {:.2} dropped/s: {:.2}", late as f64 / secs, dropped as f64 / secs),
            _ => String::new(),
        }
    }
}

impl<W: Write> IntervalPrinter<W> {
    /// sysbench's announcement that measurement starts.
    pub fn started(&mut self) {
        let _ = writeln!(self.out, "Threads started!");
    }

    pub fn print(&mut self, s: &IntervalStats) {
        let line = match self.sysbench {
            true => Self::sysbench_line(s, self.percentile, self.every),
            false => Self::line(s, self.percentile, self.every),
        };
        let _ = writeln!(self.out, "{line}");
    }
}
