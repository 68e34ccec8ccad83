//! Runs split over client hosts: a shard's own line, and a combined result's table of one
//! row per shard plus the combined row (as Finch prints its clients).

use crate::model::shard::{ShardRecord, StartSpread};
use crate::model::ResultDocument;
use std::fmt::Write;

pub fn text(o: &mut String, d: &ResultDocument) {
    if let Some(s) = &d.conditions.run.shard {
        shard_line(o, s);
    }
    if !d.shards.is_empty() {
        table(o, d);
    }
}

fn ms(us: i64) -> f64 {
    us as f64 / 1000.0
}

fn shard_line(o: &mut String, s: &ShardRecord) {
    let _ = write!(
        o,
        "Shard {} of {} (run {}): clients {}-{} of {}",
        s.index,
        s.count,
        s.key,
        s.first_client,
        s.first_client + s.threads.max(1) - 1,
        s.total_threads
    );
    if let Some(start) = s.starts.first() {
        let _ = write!(
            o,
            "; started {:+.3} ms from the agreed instant (bound {:.3} ms), clock offset to the database {:+.3} ms (within {:.3})",
            ms(start.started_us - start.agreed_us),
            ms(start.bound_us),
            ms(start.clock_offset_us),
            ms(start.clock_uncertainty_us)
        );
    }
    let _ = writeln!(o, "; the run's numbers are all shards combined: fairbench combine");
}

fn table(o: &mut String, d: &ResultDocument) {
    let rows = &d.shards;
    let hosts: std::collections::BTreeSet<&str> = rows.iter().map(|r| r.client.host.hostname.as_str()).collect();
    let _ = write!(o, "\nClient hosts: {} shards on {} host(s)", rows.len(), hosts.len());
    if let Some(s) = StartSpread::of(rows) {
        let _ = write!(
            o,
            "; started within {:.3} ms of each other (each within {:.3} ms of the agreed instant), ended within {:.3} ms",
            ms(s.starts_us),
            ms(s.bound_us),
            ms(s.ends_us)
        );
    }
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "{:<6} {:<20} {:>8} {:>11} {:>11} {:>12} {:>12} {:>7} {:>11} {:>10} {:>10}",
        "shard",
        "host",
        "clients",
        "events/s",
        "queries/s",
        "p95_event_ms",
        "p95_stmt_ms",
        "errors",
        "client_cpu",
        "offset_ms",
        "start_ms"
    );
    for r in rows {
        let start = r.shard.starts.first();
        let _ = writeln!(
            o,
            "{:<6} {:<20} {:>8} {:>11.1} {:>11.1} {:>12} {:>12.3} {:>7} {:>10.1}% {:>+10.3} {:>+10.3}{}",
            r.shard.index,
            r.client.host.hostname,
            r.shard.threads,
            r.tps,
            r.qps,
            r.event_p95_us.map_or("-".into(), |us| format!("{:.3}", us / 1000.0)),
            r.p95_us / 1000.0,
            r.errors,
            r.client_cost.cpu_utilization_pct,
            start.map_or(0.0, |s| ms(s.clock_offset_us)),
            start.map_or(0.0, |s| ms(s.started_us - s.agreed_us)),
            if r.client_cost.saturated { "  saturated" } else { "" }
        );
    }
    let total = |k: &str| d.stats.get(k).cloned().unwrap_or_default();
    let _ = writeln!(
        o,
        "{:<6} {:<20} {:>8} {:>11.1} {:>11.1} {:>12.3} {:>12.3} {:>7} {:>10.1}%",
        "all",
        format!("{} host(s)", hosts.len()),
        d.conditions.run.threads,
        total("event").qps,
        total("total").qps,
        total("event").p95_us / 1000.0,
        total("total").p95_us / 1000.0,
        d.errors.total,
        d.client_cost.cpu_utilization_pct
    );
    let _ = writeln!(
        o,
        "(p95 of whole events, as the headline's, and of every statement; the combined row's from the shards' histograms summed, not averaged; client_cpu: percent of the host's cores)"
    );
}
