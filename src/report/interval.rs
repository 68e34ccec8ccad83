//! sysbench's `--report-interval` line, extended with commit latency.

use crate::model::stats::trim_float;
use crate::model::IntervalStats;
use std::io::Write;

pub struct IntervalPrinter<W: Write> {
    out: W,
    percentile: f64,
}

impl<W: Write> IntervalPrinter<W> {
    pub fn new(out: W, percentile: f64) -> Self {
        IntervalPrinter { out, percentile }
    }

    pub fn line(s: &IntervalStats, percentile: f64) -> String {
        let secs = s.duration_s.max(1e-9);
        let end = (s.from_s + s.duration_s).round();
        let ms = |us: f64| us / 1000.0;
        format!(
            "[ {end}s{} ] thds: {} tps: {:.2} qps: {:.2} (r/w/o: {:.2}/{:.2}/{:.2}) lat (ms,{}%): {:.2} commit (ms,{}%): {:.2} err/s: {:.2} reconn/s: {:.2}",
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
            ms(s.commit.pick(percentile).unwrap_or(s.commit.p95_us)),
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
        let _ = writeln!(self.out, "{}", Self::line(s, self.percentile));
    }
}
