//! The terminal report: conditions, sysbench's SQL statistics, the wide per-class table (µs, as Finch prints) and
//! every percentile per class.

use super::{thousands, Report, ReportOptions, Section as _};
use crate::model::stats::trim_float;
use crate::model::ClassStats;
use crate::model::{plural, ResultDocument, Transport};
use std::fmt::Write;

pub struct TextReport;

impl Report for TextReport {
    fn render(&self, d: &ResultDocument, opts: &ReportOptions) -> String {
        let mut o = String::new();
        super::headline::headline(&mut o, d, opts.shown_percentile());
        let _ = writeln!(o);
        conditions(&mut o, d);
        sql_statistics(&mut o, d);
        if opts.verbose {
            summary_table(&mut o, d, opts.shown_percentile());
        }
        let title = if d.open_loop.is_some() {
            "Latency by class (microseconds, from each event's intended start):"
        } else {
            "Latency by class (microseconds):"
        };
        class_table(&mut o, title, &d.stats);
        if let Some(service) = &d.service {
            class_table(&mut o, "Service time by class (microseconds, from each event's actual start):", service);
        }
        if let Some(ol) = &d.open_loop {
            let q = &ol.start_delay;
            let _ = writeln!(
                o,
                "Open loop: {} events/s, {} arrivals; late (started > 1 ms after due): {}; dropped (backlog over {}): {}; start delay p50 {:.1} / p99 {:.1} / max {:.1} us",
                ol.rate, ol.arrival.name(), ol.late, ol.max_backlog, ol.dropped, q.p50_us, q.p99_us, q.max_us
            );
        }
        if d.conditions.workload.file.is_some() {
            named_table(
                &mut o,
                "Latency by transaction (microseconds, BEGIN to COMMIT; rate per second):",
                &d.transactions,
            );
            transaction_notes(&mut o, d);
            super::sections::Tpcc.text(&mut o, d, opts);
            named_table(&mut o, "Latency by statement (microseconds; rate per second):", &d.statements);
        }
        let _ = writeln!(o, "{}", d.conditions.run.percentile_method);
        for section in super::sections::TEXT_AFTER_LATENCY {
            section.text(&mut o, d, opts);
        }
        checks(&mut o, d);
        client_cost(&mut o, d);
        for section in super::sections::TEXT_AFTER_COST {
            section.text(&mut o, d, opts);
        }
        o
    }
}

/// Under the transactions' table: intended rollbacks, skipped repetitions, and what a
/// deferred transaction's two rows measure.
fn transaction_notes(o: &mut String, d: &ResultDocument) {
    for (name, t) in d.transactions.iter().filter(|(_, t)| t.rollbacks.is_some()) {
        let n = t.rollbacks.unwrap_or(0);
        let share = n as f64 * 100.0 / t.count.max(1) as f64;
        let _ = writeln!(o, "{name}: {n} of {} rolled back as the workload intends ({share:.1}%)", t.count);
    }
    for (name, t) in d.transactions.iter().filter(|(_, t)| t.skipped.is_some()) {
        let n = t.skipped.unwrap_or(0);
        let _ = writeln!(o, "{name}: {n} group repetitions skipped (skip_if: a query returned no row)");
    }
    for name in d.conditions.workload.transactions.iter().filter(|(_, t)| t.deferred).map(|(n, _)| n) {
        let left = d.conditions.run.deferred_left.unwrap_or(0);
        let _ = writeln!(
            o,
            "{name} is deferred: its row is the client's queueing; {name}_deferred is the deferred worker's executions, from queued to COMMIT; {left} still queued at the end"
        );
    }
}

/// Who ran what where, and how: the lines above the numbers.
fn conditions(o: &mut String, d: &ResultDocument) {
    let r = &d.conditions.run;
    let t = &d.target;
    let server = &d.conditions.server;
    let _ = writeln!(o, "server:       {} {}", server.product, server.version);
    let _ = writeln!(o, "target:       {}", t.url);
    let transport = Transport { kind: t.transport, address: t.address.clone(), tls: t.tls };
    let _ = writeln!(o, "transport:    {transport}; {}", t.statements.describe());
    if let Some(seen) = crate::model::TransportSeen::summary(&r.transports) {
        let _ = writeln!(o, "              as the server saw it: {seen}");
    }
    let _ = writeln!(o, "distribution: {} (rand seed {})", d.conditions.workload.distribution_description, r.rand_seed);
    let _ = writeln!(o, "load:         {}, {}", plural(r.threads as u64, "client"), r.loop_model_description);
    let _ = writeln!(
        o,
        "time:         {:.2} s measured after {} s warmup; status: {}{}",
        r.measured_s,
        r.warmup_s,
        r.status.name(),
        r.failure.as_ref().map(|f| format!(" ({f})")).unwrap_or_default()
    );
    let ds = &d.conditions.dataset;
    let rows: u64 = ds.tables_at_start.iter().map(|t| t.rows).sum();
    let exact = if ds.tables_at_start.iter().all(|t| t.rows_exact) { "exact" } else { "estimated" };
    let cache: Vec<String> = ds.cache.iter().map(|(k, v)| format!("{k} {:.1} MB", *v as f64 / 1_048_576.0)).collect();
    let _ = writeln!(
        o,
        "dataset:      {}, {rows} rows ({exact}), {:.1} MB data+index; cache: {}{}",
        plural(ds.tables_at_start.len() as u64, "table"),
        ds.total_bytes as f64 / 1_048_576.0,
        if cache.is_empty() { "unknown".to_string() } else { cache.join(", ") },
        ds.server_host_memory_bytes
            .map(|b| format!("; host RAM {:.1} GB", b as f64 / 1_073_741_824.0))
            .unwrap_or_default()
    );
    if let Some(t) = ds.touched.as_ref().filter(|t| !t.partial_tables.is_empty()) {
        let _ = writeln!(
            o,
            "drawn from:   {} of the {} rows present ({:.0}%, {:.1} MB): the run measured only this part",
            t.drawn_rows,
            t.rows_present,
            t.share() * 100.0,
            t.bytes as f64 / 1_048_576.0
        );
    }
    if !ds.foreign_tables.is_empty() {
        let _ = writeln!(
            o,
            "foreign:      {} not created by fairbench (their rows are the other tool's)",
            ds.foreign_tables.join(", ")
        );
    }
    let _ = writeln!(o, "server role:  {}", server.replication_role);
}

fn stat(d: &ResultDocument, class: &str) -> ClassStats {
    d.stats.get(class).cloned().unwrap_or_default()
}

/// sysbench's "SQL statistics" block.
fn sql_statistics(o: &mut String, d: &ResultDocument) {
    let (ev, tot, rd, wr, cm, ot) =
        (stat(d, "event"), stat(d, "total"), stat(d, "read"), stat(d, "write"), stat(d, "commit"), stat(d, "other"));
    let _ = writeln!(o, "\nSQL statistics:");
    let _ = writeln!(
        o,
        "    queries performed: read {}, write {}, commit {}, other {}, total {}",
        rd.count, wr.count, cm.count, ot.count, tot.count
    );
    let _ = writeln!(
        o,
        "    transactions: {} ({:.2} per sec.)   queries: {} ({:.2} per sec.)",
        ev.count, ev.qps, tot.count, tot.qps
    );
    let secs = d.conditions.run.measured_s.max(1e-9);
    let _ = writeln!(
        o,
        "    ignored errors: {} ({:.2} per sec.)   reconnects: {} ({:.2} per sec.)",
        d.errors.total,
        d.errors.total as f64 / secs,
        d.errors.reconnects,
        d.errors.reconnects as f64 / secs
    );
    if !d.errors.by_code.is_empty() {
        let codes: Vec<String> = d.errors.by_code.iter().map(|(c, n)| format!("{c}: {n}")).collect();
        let _ = writeln!(o, "    errors by code: {}", codes.join(", "));
    }
}

/// The wide table (as Finch prints it): one row of QPS and latencies per class, and the host that measured.
fn summary_table(o: &mut String, d: &ResultDocument, p: f64) {
    let r = &d.conditions.run;
    let (ev, tot, rd, wr, cm) =
        (stat(d, "event"), stat(d, "total"), stat(d, "read"), stat(d, "write"), stat(d, "commit"));
    // Latencies of a class with no statements are absent ("-"), not zero.
    let us = |c: &ClassStats, v: f64| if c.count == 0 { "-".to_string() } else { thousands(v) };
    let pick = |c: &ClassStats| us(c, c.at(p).unwrap_or(c.p95_us));
    let pname = format!("P{}", trim_float(p));
    // Autocommit (no COMMIT): each statement commits itself and a transaction is one event,
    // as sysbench counts them.
    let autocommit = cm.count == 0 && ev.count > 0;
    let cols: Vec<(String, String)> = vec![
        ("runtime".into(), thousands(r.measured_s)),
        ("clients".into(), r.threads.to_string()),
        ("QPS".into(), thousands(tot.qps)),
        ("min".into(), us(&tot, tot.min_us)),
        (pname.clone(), pick(&tot)),
        ("max".into(), us(&tot, tot.max_us)),
        ("r_QPS".into(), thousands(rd.qps)),
        ("r_min".into(), us(&rd, rd.min_us)),
        (format!("r_{pname}"), pick(&rd)),
        ("r_max".into(), us(&rd, rd.max_us)),
        ("w_QPS".into(), thousands(wr.qps)),
        ("w_min".into(), us(&wr, wr.min_us)),
        (format!("w_{pname}"), pick(&wr)),
        ("w_max".into(), us(&wr, wr.max_us)),
        ("TPS".into(), thousands(if autocommit { ev.qps } else { cm.qps })),
        ("c_min".into(), us(&cm, cm.min_us)),
        (format!("c_{pname}"), pick(&cm)),
        ("c_max".into(), us(&cm, cm.max_us)),
        ("errors".into(), thousands(d.errors.total as f64)),
    ];
    let _ = writeln!(
        o,
        "\nPer query (times in microseconds; QPS, r_ read, w_ write; TPS and c_ = COMMIT; {pname} from HdrHistogram):"
    );
    let widths: Vec<usize> = cols.iter().map(|(h, v)| h.len().max(v.len())).collect();
    let header: Vec<String> = cols.iter().zip(&widths).map(|((h, _), w)| format!("{h:>w$}")).collect();
    let values: Vec<String> = cols.iter().zip(&widths).map(|((_, v), w)| format!("{v:>w$}")).collect();
    let _ = writeln!(o, "{}|compute", header.join("|"));
    // The host recorded in the result, not the one rendering it.
    let _ = writeln!(o, "{}|{}", values.join("|"), d.conditions.client.host.hostname);
    if autocommit {
        let _ = writeln!(
            o,
            "(autocommit: every statement commits itself, so a transaction is one event, as sysbench counts them: TPS = events/s; no COMMIT to time)"
        );
    }
}

fn client_cost(o: &mut String, d: &ResultDocument) {
    let c = &d.client_cost;
    let _ = writeln!(
        o,
        "Client: {:.2} s CPU ({:.1}% of {}){}; busiest of {} {:.0}% busy; peak RSS {:.1} MB",
        c.cpu_s,
        c.cpu_utilization_pct,
        plural(c.cores as u64, "core"),
        match (c.cpu_per_query_us, c.cpu_per_event_us) {
            (Some(q), Some(e)) => format!(", {q:.2} us CPU per query, {e:.1} us per event"),
            _ => String::new(),
        },
        plural(c.worker_threads as u64, "worker thread"),
        c.busiest_worker_pct,
        c.peak_rss_bytes as f64 / 1_048_576.0
    );
    if let Some(w) = &c.warning {
        let _ = writeln!(o, "warning: {w}");
    }
}

/// One row per class: count, min, mean, p50, p95, p99, p99.9, max and any extra percentiles.
fn class_table(o: &mut String, title: &str, stats: &std::collections::BTreeMap<String, ClassStats>) {
    let _ = writeln!(o, "\n{title}");
    let extra: Vec<String> = stats.get("event").map(|c| c.percentiles_us.keys().cloned().collect()).unwrap_or_default();
    let mut head = format!(
        "{:<8}{:>12}{:>12}{:>12}{:>12}{:>12}{:>12}{:>12}{:>12}",
        "class", "count", "min", "mean", "p50", "p95", "p99", "p99.9", "max"
    );
    for k in &extra {
        head.push_str(&format!("{k:>12}"));
    }
    let _ = writeln!(o, "{head}");
    for class in crate::model::LATENCY_CLASSES {
        let Some(c) = stats.get(class) else { continue };
        if c.count == 0 {
            continue; // a class no statement fell in
        }
        let mut line = format!(
            "{:<8}{:>12}{:>12.1}{:>12.1}{:>12.1}{:>12.1}{:>12.1}{:>12.1}{:>12.1}",
            class, c.count, c.min_us, c.mean_us, c.p50_us, c.p95_us, c.p99_us, c.p999_us, c.max_us
        );
        for k in &extra {
            line.push_str(&format!("{:>12.1}", c.percentiles_us.get(k).copied().unwrap_or(0.0)));
        }
        let _ = writeln!(o, "{line}");
    }
}

/// Every entry of `stats` with its rate: a file's transactions and statements by name.
fn named_table(o: &mut String, title: &str, stats: &std::collections::BTreeMap<String, ClassStats>) {
    let _ = writeln!(o, "\n{title}");
    let width = stats.keys().map(|k| k.len()).max().unwrap_or(4).max(4) + 2;
    let _ = writeln!(
        o,
        "{:<width$}{:>10}{:>10}{:>11}{:>11}{:>11}{:>11}{:>12}",
        "name", "count", "per_s", "mean", "p50", "p95", "p99", "max"
    );
    for (name, c) in stats {
        let _ = writeln!(
            o,
            "{:<width$}{:>10}{:>10.1}{:>11.1}{:>11.1}{:>11.1}{:>11.1}{:>12.1}",
            name, c.count, c.qps, c.mean_us, c.p50_us, c.p95_us, c.p99_us, c.max_us
        );
    }
}

/// A workload file's checks: each passed or failed, with the value it read.
fn checks(o: &mut String, d: &ResultDocument) {
    for c in &d.checks {
        let _ = writeln!(o, "{}", c.line());
    }
}
