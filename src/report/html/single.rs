//! The sections of one result's page: headline, thresholds, repeats, errors, statements and
//! the full conditions (collapsible; the server's variables and counters filterable).

use super::escape::html as esc;
use super::{details, kv_table, table, TableCell};
use crate::model::stats::trim_float;
use crate::model::{ClassStats, Metric, ResultDocument};
use std::fmt::Write;

/// µs as milliseconds: 3 decimals, or 3 significant digits below 1 ms (0.00512).
pub fn ms3(us: f64) -> String {
    let ms = us / 1000.0;
    if ms >= 1.0 || ms == 0.0 {
        format!("{ms:.3}")
    } else {
        let decimals = (2 - ms.log10().floor() as i32).max(3) as usize;
        format!("{ms:.decimals$}")
    }
}

pub fn rate(v: f64) -> String {
    crate::report::thousands(v)
}

/// Closed loop, or open loop at its rate.
pub fn loop_model(d: &ResultDocument) -> String {
    match &d.open_loop {
        Some(ol) => format!("open loop at {} events/s ({} arrivals)", trim_float(ol.rate), ol.arrival.name()),
        None => "closed loop".into(),
    }
}

fn transport(d: &ResultDocument) -> String {
    let t = &d.target;
    let asked = match t.transport {
        crate::model::TransportKind::Embedded => return format!("{} embedded (in-process)", t.driver.name()),
        k => format!("{} over {}, TLS {}, {}", t.driver.name(), k.name(), t.tls.name(), t.statements.describe()),
    };
    match crate::model::TransportSeen::summary(&d.conditions.run.transports) {
        Some(seen) => format!("{asked}; as the server saw it: {seen}"),
        None => asked,
    }
}

/// The headline: what ran where and how, throughput, latency per class.
pub fn headline(file: &str, d: &ResultDocument) -> String {
    let c = &d.conditions;
    let r = &c.run;
    let mut o = String::new();
    let duration = format!(
        "{:.1} s measured after {} s warmup{}",
        r.measured_s,
        r.warmup_s,
        match r.repeats {
            Some(n) if n > 1 => format!(" ({n} repeats)"),
            _ => String::new(),
        }
    );
    let status = match &r.failure {
        Some(f) => format!("{}: {f}", r.status.name()),
        None => r.status.name().to_string(),
    };
    let facts: [(&str, String); 9] = [
        ("workload", c.workload.name.clone()),
        ("target", crate::report::probed::probed_nodes(d).unwrap_or_else(|| crate::report::probed::subject(d))),
        ("transport", transport(d)),
        ("clients", r.threads.to_string()),
        ("loop model", loop_model(d)),
        ("duration", duration),
        ("throughput", throughput(d)),
        ("errors", format!("{} retried, {} reconnects", d.errors.total, d.errors.reconnects)),
        ("status", status),
    ];
    o.push_str("<dl class=\"facts\">");
    for (k, v) in facts {
        let cls = if k == "status" && r.status.name() != "completed" { " class=\"bad\"" } else { "" };
        let _ = write!(o, "<div><dt>{}</dt><dd{cls}>{}</dd></div>", esc(k), esc(&v));
    }
    o.push_str("</dl>");
    let _ = write!(o, "<p class=\"muted\">{} &middot; {}</p>", esc(file), esc(&r.started_at));
    o.push_str(&latency_table(d));
    o
}

/// Queries and events per second; a TPC-C-like result's tpmC and NOPM first.
fn throughput(d: &ResultDocument) -> String {
    let stat = |class: &str| d.stats.get(class).cloned().unwrap_or_default();
    let rates = format!("{} queries/s, {} events/s", rate(stat("total").qps), rate(stat("event").qps));
    match &d.tpcc {
        Some(t) => format!("tpmC {:.0}, NOPM {:.0}; {rates}", t.tpmc, t.nopm),
        None => rates,
    }
}

/// Latency of every class that ran anything: count, rate and percentiles in ms.
pub fn latency_table(d: &ResultDocument) -> String {
    let open = if d.open_loop.is_some() { " (open loop: from each event's intended start)" } else { "" };
    let mut rows = vec![];
    for (class, what) in super::data::classes_with_statements(&d.stats) {
        rows.push(stats_row(&format!("{class} ({what})"), &d.stats[class]));
    }
    if let Some(svc) = d.service.as_ref().and_then(|s| s.get("event")) {
        rows.push(stats_row("event service time (actual start to end)", svc));
    }
    format!(
        "<h3>Latency per class{}</h3>{}",
        esc(open),
        table(&["class", "count", "per s", "p50 ms", "p95 ms", "p99 ms", "p99.9 ms", "max ms"], rows, "num")
    )
}

fn stats_row(name: &str, s: &ClassStats) -> Vec<TableCell> {
    vec![
        TableCell::text(name),
        TableCell::num(s.count.to_string()),
        TableCell::num(format!("{:.1}", s.qps)),
        TableCell::num(ms3(s.p50_us)),
        TableCell::num(ms3(s.p95_us)),
        TableCell::num(ms3(s.p99_us)).strong(),
        TableCell::num(ms3(s.p999_us)),
        TableCell::num(ms3(s.max_us)),
    ]
}

/// `--threshold`s with pass/fail.
pub fn thresholds(d: &ResultDocument) -> String {
    if d.thresholds.is_empty() {
        return String::new();
    }
    let rows = d
        .thresholds
        .iter()
        .map(|t| {
            let value = match (t.value, Metric::parse(&t.metric)) {
                (Some(v), Ok(m)) => m.show(v),
                _ => "not measured".into(),
            };
            vec![
                TableCell::text(&t.threshold),
                TableCell::text(&value),
                if t.passed { TableCell::text("pass").class("pass") } else { TableCell::text("FAIL").class("fail") },
            ]
        })
        .collect();
    format!("<section><h2>Thresholds</h2>{}</section>", table(&["threshold", "value", "verdict"], rows, ""))
}

/// Each repeat's events/s and p99, and the median and spread over them.
pub fn repeats(d: &ResultDocument) -> String {
    if d.repeats.is_empty() {
        return String::new();
    }
    let mut rows: Vec<Vec<TableCell>> = d
        .repeats
        .iter()
        .map(|r| {
            let ev = r.stats.get("event").cloned().unwrap_or_default();
            vec![
                TableCell::text(&format!("repeat {}", r.index)),
                TableCell::text(r.status.name()),
                TableCell::num(format!("{:.1}", r.measured_s)),
                TableCell::num(format!("{:.1}", ev.qps)),
                TableCell::num(ms3(ev.p99_us)),
            ]
        })
        .collect();
    if let Some(tps) = d.repeat_summary.get("tps") {
        let p99 = d.repeat_summary.get("p99");
        rows.push(vec![
            TableCell::text("median").strong(),
            TableCell::text(""),
            TableCell::text(""),
            TableCell::num(format!("{:.1}", tps.median)).strong(),
            TableCell::num(p99.map_or("-".into(), |s| ms3(s.median))).strong(),
        ]);
        rows.push(vec![
            TableCell::text("spread (min to max, cv)"),
            TableCell::text(""),
            TableCell::text(""),
            TableCell::num(format!("{:.1} to {:.1}, {:.1}%", tps.min, tps.max, tps.cv * 100.0)),
            TableCell::num(
                p99.map_or("-".into(), |s| format!("{} to {}, {:.1}%", ms3(s.min), ms3(s.max), s.cv * 100.0)),
            ),
        ]);
    }
    format!(
        "<section><h2>Repeats</h2>{}</section>",
        table(&["repeat", "status", "measured s", "events/s", "p99 ms"], rows, "num")
    )
}

/// Errors by the database's own code.
pub fn errors(d: &ResultDocument) -> String {
    let e = &d.errors;
    let mut o = format!(
        "<section><h2>Errors</h2><p>{} retried error{}, {} reconnect{}.</p>",
        e.total,
        if e.total == 1 { "" } else { "s" },
        e.reconnects,
        if e.reconnects == 1 { "" } else { "s" }
    );
    if !e.by_code.is_empty() {
        let rows =
            e.by_code.iter().map(|(code, n)| vec![TableCell::text(code), TableCell::num(n.to_string())]).collect();
        o.push_str(&table(&["code", "count"], rows, "num"));
    }
    o.push_str("</section>");
    o
}

/// Per statement kind and per transaction, collapsible.
pub fn statements(d: &ResultDocument) -> String {
    let mut rows = vec![];
    for (name, s) in &d.statements {
        rows.push(stats_row(name, s));
    }
    for (name, s) in &d.transactions {
        rows.push(stats_row(&format!("transaction {name}"), s));
    }
    let head = ["statement", "count", "per s", "p50 ms", "p95 ms", "p99 ms", "p99.9 ms", "max ms"];
    details("Statements and transactions", &table(&head, rows, "num"), false, "")
}

/// Every recorded condition, one collapsible table per part.
pub fn conditions(d: &ResultDocument) -> String {
    let mut o = String::from("<section><h2>Conditions</h2>");
    o.push_str(&target(d));
    o.push_str(&run(d));
    o.push_str(&workload(d));
    o.push_str(&dataset(d));
    o.push_str(&server(d));
    o.push_str(&client_host(d));
    o.push_str(&client_cost(d));
    o.push_str("</section>");
    o
}

fn or_dash(v: Option<String>) -> String {
    v.unwrap_or_else(|| "-".into())
}

fn target(d: &ResultDocument) -> String {
    let t = &d.target;
    let target = vec![
        kv("url", &t.url),
        kv("driver", t.driver.name()),
        kv("transport", t.transport.name()),
        kv("address", &t.address),
        kv("tls", t.tls.name()),
        kv("statements", t.statements.describe()),
    ];
    details("Target", &kv_table(&target, None), false, "")
}

fn run(d: &ResultDocument) -> String {
    let r = &d.conditions.run;
    let run = vec![
        kv("loop model", &r.loop_model_description),
        kv("threads", &r.threads.to_string()),
        kv("time limit s", &or_dash(r.time_limit_s.map(|v| v.to_string()))),
        kv("events limit", &or_dash(r.events_limit.map(|v| v.to_string()))),
        kv("warmup s", &r.warmup_s.to_string()),
        kv("measured s", &format!("{:.3}", r.measured_s)),
        kv("events", &r.events.to_string()),
        kv("random seed", &r.rand_seed.to_string()),
        kv("percentile method", &r.percentile_method),
        kv("status", r.status.name()),
        kv("failure", &or_dash(r.failure.clone())),
        kv("repeats", &or_dash(r.repeats.map(|v| v.to_string()))),
        kv("cost per hour", &or_dash(r.cost_per_hour.map(|v| v.to_string()))),
        kv("started at", &r.started_at),
        kv("ended at", &r.ended_at),
    ];
    details("Run", &kv_table(&run, None), false, "")
}

/// The server: what it is, its variables and its counters before and after, filterable.
fn server(d: &ResultDocument) -> String {
    let mut o = String::new();
    let s = &d.conditions.server;
    let mut server = vec![
        kv("product", &s.product),
        kv("version", &s.version),
        kv("replication role", &s.replication_role),
        kv("same host as client", &s.same_host_as_client.to_string()),
    ];
    server.extend(s.host.iter().map(|(k, v)| kv(&format!("host {k}"), v)));
    o.push_str(&details("Server", &kv_table(&server, None), false, ""));
    let vars: Vec<(String, String)> = s.variables.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    o.push_str(&details(
        &format!("Server variables ({})", vars.len()),
        &filtered(&kv_table(&vars, Some("vars")), "vars", "filter variables"),
        false,
        "print-hide",
    ));
    let mut names: Vec<&String> = s.status_before.keys().chain(s.status_after.keys()).collect();
    names.sort();
    names.dedup();
    let show = |m: &std::collections::BTreeMap<String, i64>, k: &str| m.get(k).map_or("-".into(), |v| v.to_string());
    let rows = names
        .iter()
        .map(|k| {
            vec![
                TableCell::text(k),
                TableCell::num(show(&s.status_before, k)),
                TableCell::num(show(&s.status_after, k)),
                TableCell::num(show(&s.status_delta, k)).strong(),
            ]
        })
        .collect();
    let counters =
        table(&["counter", "before", "after", "delta"], rows, "num").replacen("<table", "<table id=\"status\"", 1);
    o.push_str(&details(
        &format!("Server counters ({}, {} changed)", names.len(), s.status_delta.len()),
        &filtered(&counters, "status", "filter counters"),
        false,
        "print-hide",
    ));

    o
}

fn client_host(d: &ResultDocument) -> String {
    let h = &d.conditions.client;
    let client = vec![
        kv("hostname", &h.host.hostname),
        kv("CPU", &h.host.cpu_model),
        kv("cores", &h.host.cores.to_string()),
        kv("memory", &bytes(h.host.memory_bytes)),
        kv("OS", &h.host.os),
        kv("kernel", &h.host.kernel),
        kv("clocksource", &or_dash(h.host.clocksource.clone())),
        kv("CPU governor", &or_dash(h.host.cpu_governor.clone())),
        kv("transparent hugepages", &or_dash(h.host.transparent_hugepages.clone())),
        kv("fairbench version", &h.fairbench_version),
        kv("command line", &h.command_line.join(" ")),
    ];
    details("Client host", &kv_table(&client, None), false, "")
}

fn client_cost(d: &ResultDocument) -> String {
    let cc = &d.client_cost;
    let f1 = |v: Option<f64>| or_dash(v.map(|v| format!("{v:.1}")));
    let mut cost = vec![
        kv("CPU s", &format!("{:.2}", cc.cpu_s)),
        kv("CPU per event us", &f1(cc.cpu_per_event_us)),
        kv("CPU per query us", &f1(cc.cpu_per_query_us)),
        kv("CPU utilization % (all cores)", &format!("{:.1}", cc.cpu_utilization_pct)),
        kv("cores / worker threads", &format!("{} / {}", cc.cores, cc.worker_threads)),
        kv("busiest worker % (one core)", &format!("{:.1}", cc.busiest_worker_pct)),
        kv("host CPU busy %", &f1(cc.host_cpu_busy_pct)),
        kv("peak RSS", &bytes(cc.peak_rss_bytes)),
        kv("saturated", &cc.saturated.to_string()),
    ];
    if let Some(w) = &cc.warning {
        cost.push(kv("warning", w));
    }
    if let Some(f) = &d.fairness {
        cost.push(kv(
            "events per client",
            &format!(
                "avg {:.1}, stddev {:.1}, min {}, max {} ({} clients)",
                f.events_avg, f.events_stddev, f.events_min, f.events_max, f.clients
            ),
        ));
        cost.push(kv("busy s per client", &format!("avg {:.2}, stddev {:.2}", f.busy_s_avg, f.busy_s_stddev)));
    }
    details("Client cost and fairness", &kv_table(&cost, None), false, "")
}

fn workload(d: &ResultDocument) -> String {
    let w = &d.conditions.workload;
    let mut rows = vec![kv("name", &w.name), kv("distribution", &w.distribution_description)];
    let mut flat = vec![];
    flatten("option", &w.options, &mut flat);
    flatten("distribution", &w.distribution, &mut flat);
    rows.extend(flat);
    rows.extend(w.mix_per_event.iter().map(|(k, n)| kv(&format!("per event: {k}"), &n.to_string())));
    for (name, t) in &w.transactions {
        rows.push(kv(
            &format!("transaction {name}"),
            &format!(
                "weight {}, share {:.3}, {}think {} ms: {}",
                t.weight,
                t.share,
                if t.begin { "BEGIN..COMMIT, " } else { "" },
                t.think_ms,
                t.statements.join(", ")
            ),
        ));
    }
    let mut o = kv_table(&rows, None);
    let sql: Vec<Vec<TableCell>> = w
        .statements_sql
        .iter()
        .map(|(k, sql)| {
            let class = w.statement_classes.get(k).map_or("", |s| s.as_str());
            vec![TableCell::text(k), TableCell::text(class), TableCell::code(sql)]
        })
        .collect();
    o.push_str(&table(&["statement", "class", "SQL"], sql, ""));
    if let Some(f) = &w.file {
        let mut file = vec![kv("file", &f.path), kv("SHA-256", &f.sha256)];
        file.extend(f.overrides.iter().map(|(k, v)| kv(&format!("--set {k}"), v)));
        file.extend(f.params.iter().map(|(k, v)| kv(&format!("param {k}"), v)));
        o.push_str(&kv_table(&file, None));
        let _ = write!(o, "<pre class=\"file\">{}</pre>", esc(&f.content));
    }
    if !d.checks.is_empty() {
        let rows = d
            .checks
            .iter()
            .map(|c| {
                vec![
                    TableCell::text(&c.name),
                    TableCell::code(&c.sql),
                    TableCell::text(c.value.as_deref().unwrap_or("-")),
                    if c.passed {
                        TableCell::text("pass").class("pass")
                    } else {
                        TableCell::text("FAIL").class("fail")
                    },
                    TableCell::text(c.error.as_deref().unwrap_or("")),
                ]
            })
            .collect();
        o.push_str(&table(&["check", "SQL", "value", "verdict", "error"], rows, ""));
    }
    details("Workload", &o, false, "")
}

fn dataset(d: &ResultDocument) -> String {
    let ds = &d.conditions.dataset;
    let mut rows = vec![
        kv("declared rows per table", &ds.declared_rows_per_table.to_string()),
        kv("total bytes at start", &bytes(ds.total_bytes)),
        kv("server host memory", &ds.server_host_memory_bytes.map_or("unknown".into(), bytes)),
    ];
    rows.extend(ds.declared_rows.iter().map(|(k, v)| kv(&format!("declared rows of {k}"), &v.to_string())));
    rows.extend(ds.cache.iter().map(|(k, v)| kv(&format!("cache: {k}"), &bytes(*v))));
    if !ds.foreign_tables.is_empty() {
        rows.push(kv("foreign tables", &ds.foreign_tables.join(", ")));
    }
    let mut o = kv_table(&rows, None);
    let tables = |when: &str, list: &[crate::model::TableSize]| {
        list.iter()
            .map(|t| {
                vec![
                    TableCell::text(when),
                    TableCell::text(&t.name),
                    TableCell::num(format!("{}{}", t.rows, if t.rows_exact { "" } else { " (estimate)" })),
                    TableCell::num(bytes(t.data_bytes)),
                    TableCell::num(bytes(t.index_bytes)),
                ]
            })
            .collect::<Vec<_>>()
    };
    let mut trs = tables("start", &ds.tables_at_start);
    trs.extend(tables("end", &ds.tables_at_end));
    o.push_str(&table(&["when", "table", "rows", "data", "index"], trs, "num"));
    details("Dataset", &o, false, "")
}

fn kv(k: &str, v: &str) -> (String, String) {
    (k.to_string(), v.to_string())
}

/// A table behind a small filter box (report.js hides the rows that do not match).
fn filtered(table_html: &str, id: &str, placeholder: &str) -> String {
    format!(
        "<input type=\"search\" class=\"filter\" data-filter=\"{}\" placeholder=\"{}\" aria-label=\"{}\">{table_html}",
        esc(id),
        esc(placeholder),
        esc(placeholder)
    )
}

/// Bytes in binary units.
pub fn bytes(b: u64) -> String {
    let v = b as f64;
    match b {
        0..=1023 => format!("{b} B"),
        1024..=1_048_575 => format!("{:.1} KiB", v / 1024.0),
        1_048_576..=1_073_741_823 => format!("{:.1} MiB", v / 1_048_576.0),
        _ => format!("{:.2} GiB", v / 1_073_741_824.0),
    }
}

fn flatten(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, String)>) {
    use serde_json::Value;
    match v {
        Value::Object(m) => m.iter().for_each(|(k, v)| flatten(&format!("{prefix} {k}"), v, out)),
        Value::Array(a) => a.iter().enumerate().for_each(|(i, v)| flatten(&format!("{prefix}[{i}]"), v, out)),
        Value::String(s) => out.push((prefix.to_string(), s.clone())),
        Value::Null => out.push((prefix.to_string(), "-".into())),
        v => out.push((prefix.to_string(), v.to_string())),
    }
}
