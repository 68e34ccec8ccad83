//! sysbench's `--report-interval` line, extended with commit latency.
//!
//! Labels: a window that reached its boundary is labelled by it, `[ 10s ]`, seconds since
//! the measured start (after the warmup) as sysbench's; a warmup window by seconds since the
//! run started, `[ 5s warmup ]`; the run's last window, ended before its boundary, by its
//! real end and length, `[ 12s, last 2.0 s ]`. sysbench's format prints neither of the last
//! two: sysbench prints none.

use crate::model::stats::trim_float;
use crate::model::IntervalStats;
use std::io::Write;

/// Where a window ends, as the collector decided it.
#[derive(Clone, Copy, Debug)]
pub struct WindowEnd {
    /// Seconds since the window's phase started (the measured start, or the run's start
    /// for a warmup window).
    pub end_s: f64,
    /// Ended by the run's end before reaching its boundary.
    pub partial: bool,
}

pub struct IntervalPrinter<W: Write> {
    out: W,
    percentile: f64,
    /// sysbench's line exactly (no commit latency, no open-loop fields, no warmup or
    /// partial windows).
    sysbench: bool,
}

impl<W: Write> IntervalPrinter<W> {
    pub fn new(out: W, percentile: f64) -> Self {
        IntervalPrinter { out, percentile, sysbench: false }
    }

    /// Lines as sysbench 1.0.20 prints them, for scripts that parse them.
    pub fn sysbench(out: W, percentile: f64) -> Self {
        IntervalPrinter { sysbench: true, ..Self::new(out, percentile) }
    }

    /// sysbench's line: `[ 10s ] thds: 16 tps: ... lat (ms,95%): ... err/s: ... reconn/s: ...`
    pub fn sysbench_line(s: &IntervalStats, end: WindowEnd, percentile: f64) -> String {
        let full = Self::line(s, end, percentile);
        let (head, _) = full.split_once(" commit (ms,").unwrap_or((&full, ""));
        let secs = s.duration_s.max(1e-9);
        format!("{head} err/s: {:.2} reconn/s: {:.2}", s.errors as f64 / secs, s.reconnects as f64 / secs)
    }

    /// The label between the brackets: `10s`, `5s warmup`, `12s, last 2.0 s`.
    pub fn label(s: &IntervalStats, end: WindowEnd) -> String {
        let warmup = if s.warmup { " warmup" } else { "" };
        let at = seconds(end.end_s);
        match end.partial {
            false => format!("{at}s{warmup}"),
            true => format!("{at}s{warmup}, last {:.1} s", s.duration_s),
        }
    }

    /// One window's line.
    pub fn line(s: &IntervalStats, end: WindowEnd, percentile: f64) -> String {
        let secs = s.duration_s.max(1e-9);
        let ms = |us: f64| us / 1000.0;
        format!(
            "[ {} ] thds: {} tps: {:.2} qps: {:.2} (r/w/o: {:.2}/{:.2}/{:.2}) lat (ms,{}%): {:.2} commit (ms,{}%): {} err/s: {:.2} reconn/s: {:.2}",
            Self::label(s, end),
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

    pub fn print(&mut self, s: &IntervalStats, end: WindowEnd) {
        let line = match self.sysbench {
            // sysbench prints whole measured windows only.
            true if s.warmup || end.partial => return,
            true => Self::sysbench_line(s, end, self.percentile),
            false => Self::line(s, end, self.percentile),
        };
        let _ = writeln!(self.out, "{line}");
    }
}

/// A window's end as sysbench writes it (`10`), or to the 10 ms of a fractional
/// --report-interval (`0.25`, `1.5`).
fn seconds(s: f64) -> String {
    let text = format!("{s:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}
