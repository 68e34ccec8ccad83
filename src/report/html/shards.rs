//! A combined result on the single-result page: one row per shard (client host) and the
//! combined row, with how closely the shards started.

use super::{esc, table, Cell};
use crate::model::ResultDocument;

pub fn section(d: &ResultDocument) -> String {
    if d.shards.is_empty() {
        return String::new();
    }
    let ms = |us: i64| format!("{:+.3}", us as f64 / 1000.0);
    let mut rows: Vec<Vec<Cell>> = d
        .shards
        .iter()
        .map(|r| {
            let start = r.shard.starts.first();
            vec![
                Cell::num(r.shard.index.to_string()),
                Cell::text(&r.client.host.hostname),
                Cell::num(r.shard.threads.to_string()),
                Cell::num(format!("{:.1}", r.tps)),
                Cell::num(format!("{:.1}", r.qps)),
                Cell::num(r.event_p95_us.map_or("-".into(), |us| format!("{:.3}", us / 1000.0))),
                Cell::num(format!("{:.3}", r.p95_us / 1000.0)),
                Cell::num(r.errors.to_string()),
                Cell::num(format!("{:.1}%", r.client_cost.cpu_utilization_pct)),
                Cell::num(start.map_or("-".into(), |s| ms(s.clock_offset_us))),
                Cell::num(start.map_or("-".into(), |s| ms(s.started_us - s.agreed_us))),
                Cell::text(if r.client_cost.saturated { "saturated" } else { "" }),
            ]
        })
        .collect();
    let total = |k: &str| d.stats.get(k).cloned().unwrap_or_default();
    rows.push(vec![
        Cell::text("all"),
        Cell::text(&format!("{} shards", d.shards.len())),
        Cell::num(d.conditions.run.threads.to_string()),
        Cell::num(format!("{:.1}", total("event").qps)),
        Cell::num(format!("{:.1}", total("total").qps)),
        Cell::num(format!("{:.3}", total("event").p95_us / 1000.0)),
        Cell::num(format!("{:.3}", total("total").p95_us / 1000.0)),
        Cell::num(d.errors.total.to_string()),
        Cell::num(format!("{:.1}%", d.client_cost.cpu_utilization_pct)),
        Cell::text(""),
        Cell::text(""),
        Cell::text(if d.client_cost.saturated { "saturated" } else { "" }),
    ]);
    let spread = crate::model::shard::StartSpread::of(&d.shards).map_or(String::new(), |s| {
        format!(
            " They started within {:.3} ms of each other (each within {:.3} ms of the agreed instant) and ended within {:.3} ms.",
            s.starts_us as f64 / 1000.0,
            s.bound_us as f64 / 1000.0,
            s.ends_us as f64 / 1000.0
        )
    });
    format!(
        "<section><h2>Client hosts</h2><p>{} shards combined: the combined row's histograms are the shards' summed, never averaged.{}</p>{}</section>",
        d.shards.len(),
        esc(&spread),
        table(
            &["shard", "host", "clients", "events/s", "queries/s", "p95 ms (event)", "p95 ms (statement)", "errors", "client CPU", "clock offset ms", "start ms", ""],
            rows,
            "num"
        )
    )
}
