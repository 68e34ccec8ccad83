//! sysbench 1.0.20's end-of-run report, section for section and label for label, so that
//! scripts parsing sysbench's output read fairbench's unchanged. Values keep fairbench's
//! measurement (HdrHistogram percentiles, see `percentile_method` in the result).

use super::{Report, ReportOptions};
use crate::model::stats::trim_float;
use crate::model::{ClassStats, ResultDocument};
use crate::stats::LatencyHistogram;
use std::fmt::Write;

pub struct SysbenchReport {
    /// Print the latency histogram first (`--histogram`).
    pub histogram: bool,
}

impl Report for SysbenchReport {
    fn render(&self, d: &ResultDocument, opts: &ReportOptions) -> String {
        let mut o = String::new();
        if self.histogram {
            histogram(&mut o, d);
        }
        let stat = |class: &str| d.stats.get(class).cloned().unwrap_or_default();
        let (event, total) = (stat("event"), stat("total"));
        let (read, write, other) =
            (stat("read").count, stat("write").count, stat("commit").count + stat("other").count);
        let secs = d.conditions.run.measured_s.max(1e-9);
        let rate = |n: u64| format!("{n:<6} ({:.2} per sec.)", n as f64 / secs);
        let ms = |us: f64| us / 1000.0;
        let _ = writeln!(o, "SQL statistics:");
        let _ = writeln!(o, "    queries performed:");
        let _ = writeln!(o, "        read:                            {read}");
        let _ = writeln!(o, "        write:                           {write}");
        let _ = writeln!(o, "        other:                           {other}");
        let _ = writeln!(o, "        total:                           {}", total.count);
        let _ = writeln!(o, "    transactions:                        {}", rate(event.count));
        let _ = writeln!(o, "    queries:                             {}", rate(total.count));
        let _ = writeln!(o, "    ignored errors:                      {}", rate(d.errors.total));
        let _ = writeln!(o, "    reconnects:                          {}", rate(d.errors.reconnects));
        let _ = writeln!(o);
        let _ = writeln!(o, "General statistics:");
        let _ = writeln!(o, "    total time:                          {:.4}s", d.conditions.run.measured_s);
        let _ = writeln!(o, "    total number of events:              {}", event.count);
        let _ = writeln!(o);
        let _ = writeln!(o, "Latency (ms):");
        let _ = writeln!(o, "         min: {:>39.2}", ms(event.min_us));
        let _ = writeln!(o, "         avg: {:>39.2}", ms(event.mean_us));
        let _ = writeln!(o, "         max: {:>39.2}", ms(event.max_us));
        let p = opts.percentile;
        if p > 0.0 {
            let value = event.at(p).unwrap_or(event.p95_us);
            let _ = writeln!(o, "        {:>3}th percentile: {:>27.2}", trim_float(p), ms(value));
        } else {
            // sysbench 1.0.20's line for --percentile=0.
            let _ = writeln!(o, "         percentile stats:               disabled");
        }
        let _ = writeln!(o, "         sum: {:>39.2}", ms(event.sum_us));
        let _ = writeln!(o);
        if let Some(f) = &d.fairness {
            let _ = writeln!(o, "Threads fairness:");
            let _ = writeln!(o, "    events (avg/stddev):           {:.4}/{:3.2}", f.events_avg, f.events_stddev);
            let _ = writeln!(o, "    execution time (avg/stddev):   {:.4}/{:3.2}", f.busy_s_avg, f.busy_s_stddev);
            let _ = writeln!(o);
        }
        o
    }
}

impl SysbenchReport {
    /// The histogram alone (`--histogram` with fairbench's own report).
    pub fn histogram_only(d: &ResultDocument) -> String {
        let mut o = String::new();
        histogram(&mut o, d);
        o
    }
}

/// sysbench's histogram: 1024 logarithmic buckets from 0.001 ms to 100 s, each printed
/// with its value in ms, a bar of up to 40 stars and its count.
fn histogram(o: &mut String, d: &ResultDocument) {
    let Some(h) = decode(d.stats.get("event")) else { return };
    const SLOTS: usize = 1024;
    let deduct = 0.001f64.ln();
    let mult = (SLOTS - 1) as f64 / (100_000f64.ln() - deduct);
    let mut slots = vec![0u64; SLOTS];
    for (ns, count) in h.buckets() {
        let ms = ns as f64 / 1e6;
        let i = ((ms.ln() - deduct) * mult + 0.5).floor().clamp(0.0, (SLOTS - 1) as f64) as usize;
        slots[i] += count;
    }
    let most = slots.iter().copied().max().unwrap_or(0);
    if most == 0 {
        return;
    }
    let _ = writeln!(o, "Latency histogram (values are in milliseconds)");
    let _ = writeln!(o, "       value  ------------- distribution ------------- count");
    for (i, &n) in slots.iter().enumerate().filter(|(_, &n)| n > 0) {
        let width = (n as f64 * 40.0 / most as f64 + 0.5).floor() as usize;
        let _ = writeln!(o, "{:>12.3} |{:<40} {n}", (i as f64 / mult + deduct).exp(), "*".repeat(width));
    }
    let _ = writeln!(o, " ");
}

fn decode(c: Option<&ClassStats>) -> Option<LatencyHistogram> {
    let c = c.filter(|c| c.count > 0)?;
    let ns = |us: f64| (us * 1000.0).round() as u64;
    LatencyHistogram::decode(&c.histogram, ns(c.min_us), ns(c.max_us), (c.sum_us * 1000.0).round() as u128).ok()
}
