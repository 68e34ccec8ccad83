//! A sweep as a table: one line per point, and where throughput saturated.

use crate::model::plural;
use crate::model::sweep::SweepDocument;
use std::fmt::Write;

use super::{Report, ReportOptions};

/// A sweep as a table.
pub struct SweepTable;

impl Report<SweepDocument> for SweepTable {
    fn render(&self, d: &SweepDocument, _: &ReportOptions) -> String {
        table(d)
    }
}

fn table(d: &SweepDocument) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "Sweep of {} on {} ({} points):", d.workload, d.target, d.points.len());
    let _ = writeln!(
        o,
        "{:>6} {:>12} {:>7} {:>12} {:>12} {:>10} {:>10} {:>11}  data vs cache",
        "tables", "rows/table", "clients", "queries/s", "events/s", "p95 ms", "p99 ms", "data MiB"
    );
    for p in &d.points {
        let r = &p.result;
        let stat = |class: &str| r.stats.get(class).cloned().unwrap_or_default();
        let (ev, total) = (stat("event"), stat("total"));
        let ds = &r.conditions.dataset;
        let cache = ds.describe_cache_fit();
        let _ = writeln!(
            o,
            "{:>6} {:>12} {:>7} {:>12.1} {:>12.1} {:>10.3} {:>10.3} {:>11.1}  {cache}{}",
            p.tables,
            p.table_size,
            p.threads,
            total.qps,
            ev.qps,
            ev.p95_us / 1e3,
            ev.p99_us / 1e3,
            ds.total_bytes as f64 / 1_048_576.0,
            match r.conditions.run.status.name() {
                "completed" => String::new(),
                s => format!("  [{s}]"),
            }
        );
    }
    let _ = writeln!(
        o,
        "Latency: per event, {} loop.",
        if d.points.iter().any(|p| p.result.open_loop.is_some()) { "open" } else { "closed" }
    );
    if d.saturation.is_empty() {
        let _ = writeln!(o, "Saturation: not reached (throughput grew, or latency did not rise, at every step).");
    }
    for s in &d.saturation {
        let _ = writeln!(
            o,
            "Saturation at {} ({} of {} rows, {:.1} events/s): {}",
            plural(s.threads as u64, "client"),
            plural(s.tables as u64, "table"),
            s.table_size,
            s.tps,
            s.reason
        );
    }
    for c in &d.cache_cliffs {
        let _ = writeln!(o, "Past the cache: {}", c.reason);
    }
    o
}
