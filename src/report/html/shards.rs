//! A combined result on the single-result page: one row per shard (client host) and the
//! combined row, with how closely the shards started.

use super::{esc, table, TableCell};
use crate::model::ResultDocument;

pub fn section(d: &ResultDocument) -> String {
    if d.shards.is_empty() {
        return String::new();
    }
    let ms = |us: i64| format!("{:+.3}", us as f64 / 1000.0);
    let mut rows: Vec<Vec<TableCell>> = d
        .shards
        .iter()
        .map(|r| {
            let start = r.shard.starts.first();
            vec![
                TableCell::num(r.shard.index.to_string()),
                TableCell::text(&r.client.host.hostname),
                TableCell::num(r.shard.threads.to_string()),
                TableCell::num(format!("{:.1}", r.tps)),
                TableCell::num(format!("{:.1}", r.qps)),
                TableCell::num(r.event_p95_us.map_or("-".into(), |us| format!("{:.3}", us / 1000.0))),
                TableCell::num(format!("{:.3}", r.p95_us / 1000.0)),
                TableCell::num(r.errors.to_string()),
                TableCell::num(format!("{:.1}%", r.client_cost.cpu_utilization_pct)),
                TableCell::num(start.map_or("-".into(), |s| ms(s.clock_offset_us))),
                TableCell::num(start.map_or("-".into(), |s| ms(s.started_us - s.agreed_us))),
                TableCell::text(if r.client_cost.saturated { "saturated" } else { "" }),
            ]
        })
        .collect();
    let total = |k: &str| d.stats.get(k).cloned().unwrap_or_default();
    rows.push(vec![
        TableCell::text("all"),
        TableCell::text(&format!("{} shards", d.shards.len())),
        TableCell::num(d.conditions.run.threads.to_string()),
        TableCell::num(format!("{:.1}", total("event").qps)),
        TableCell::num(format!("{:.1}", total("total").qps)),
        TableCell::num(format!("{:.3}", total("event").p95_us / 1000.0)),
        TableCell::num(format!("{:.3}", total("total").p95_us / 1000.0)),
        TableCell::num(d.errors.total.to_string()),
        TableCell::num(format!("{:.1}%", d.client_cost.cpu_utilization_pct)),
        TableCell::text(""),
        TableCell::text(""),
        TableCell::text(if d.client_cost.saturated { "saturated" } else { "" }),
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
