//! The audit rules. Each looks at the result document and returns findings with evidence.

use super::{Finding, Severity};
use crate::model::{plural, LoopKind, ResultDocument, RunStatus, TransportKind};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// A run shorter than this is too short to show steady state (checkpoints, purge, caches).
const LONG_ENOUGH_S: f64 = 300.0;

pub fn all(d: &ResultDocument) -> Vec<Finding> {
    let rules: [fn(&ResultDocument) -> Vec<Finding>; 17] = [
        durability_off,
        dataset_fits_in_memory,
        super::dataset::partial_table,
        super::stalls::stalls,
        super::trend::trend,
        tables_empty,
        mix_mismatch,
        closed_loop_latency,
        too_short,
        no_warmup,
        single_run,
        high_variance,
        errors,
        connections,
        incomplete_run,
        collection_incomplete,
        not_visible,
    ];
    rules.iter().flat_map(|rule| rule(d)).collect()
}

/// The rules that apply to a probe that ran alone: durability is judged per node by the HA
/// rules, errors are what a failover probe measures.
pub fn for_probes(d: &ResultDocument) -> Vec<Finding> {
    let rules: [fn(&ResultDocument) -> Vec<Finding>; 3] = [connections, incomplete_run, not_visible];
    rules.iter().flat_map(|rule| rule(d)).collect()
}

pub(super) fn finding(
    id: &str,
    severity: Severity,
    title: impl Into<String>,
    evidence: Vec<(&str, Value)>,
    advice: impl Into<String>,
) -> Finding {
    Finding {
        id: id.into(),
        severity,
        title: title.into(),
        evidence: evidence.into_iter().map(|(k, v)| (k.to_string(), short_floats(v))).collect::<BTreeMap<_, _>>(),
        advice: advice.into(),
    }
}

/// Fractions at 6 significant digits: evidence reads `measured_s=9.00035`, not the float
/// noise of `9.000345734000001`. Integers stay as they are.
fn short_floats(v: Value) -> Value {
    match v {
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or_default();
            let short: f64 = format!("{f:.5e}").parse().unwrap_or(f);
            serde_json::Number::from_f64(short).map_or(Value::Number(n), Value::Number)
        }
        Value::Array(a) => Value::Array(a.into_iter().map(short_floats).collect()),
        Value::Object(o) => Value::Object(o.into_iter().map(|(k, v)| (k, short_floats(v))).collect()),
        other => other,
    }
}

fn var<'a>(d: &'a ResultDocument, name: &str) -> Option<&'a str> {
    d.conditions.server.variables.get(name).map(String::as_str)
}

/// From the durability the driver found in effect (`conditions.server.facts`); results
/// written before facts were recorded are read by their settings.
fn durability_off(d: &ResultDocument) -> Vec<Finding> {
    // Results read from files older than the facts get them in the app (app::read_result).
    let Some(f) = d.conditions.server.facts.as_ref().filter(|f| f.durability.is_off()) else {
        return vec![];
    };
    let evidence = f.durability.off_because.iter().map(|(k, v)| (k.as_str(), json!(v))).collect();
    vec![finding(
        "durability-off",
        Severity::Critical,
        format!(
            "durability is switched off: committed transactions can be lost on a crash ({})",
            f.durability.describe()
        ),
        evidence,
        DURABILITY_ADVICE,
    )]
}

const DURABILITY_ADVICE: &str = "compare products only with the same durability (innodb_flush_log_at_trx_commit=1 and sync_binlog=1; fsync, synchronous_commit and full_page_writes on; SQLite synchronous FULL with a journal); the study \"Are Aurora Performance Claims True?\" found innodb_flush_log_at_trx_commit=0 in the vendor's benchmark template, unannounced";

fn dataset_fits_in_memory(d: &ResultDocument) -> Vec<Finding> {
    let ds = &d.conditions.dataset;
    if ds.total_bytes == 0 {
        return vec![];
    }
    // Judged on the part the run drew from (all of it unless the tables hold more rows).
    let data = ds.working_set_bytes();
    let partial = data < ds.total_bytes;
    let mut evidence = vec![("dataset_bytes", json!(ds.total_bytes))];
    if partial {
        evidence.push(("drawn_from_bytes", json!(data)));
    }
    let in_cache = ds.cache.iter().find(|(_, bytes)| data <= **bytes);
    for (name, bytes) in &ds.cache {
        evidence.push((name.as_str(), json!(bytes)));
    }
    if let Some(ram) = ds.server_host_memory_bytes {
        evidence.push(("host_memory_bytes", json!(ram)));
    }
    // RAM holds data only for an engine that reads through the OS page cache: InnoDB with
    // O_DIRECT reads past it, so only its buffer pool can hold the data.
    let in_ram = ds.reads_through_os_cache() && ds.server_host_memory_bytes.is_some_and(|ram| data * 2 <= ram);
    let what = if partial { "the part of the data the run drew from" } else { "the whole dataset" };
    let (severity, title) = match (in_cache, in_ram) {
        (Some((name, _)), _) => (Severity::Warn, format!("{what} fits in {name}: this measures memory, not storage")),
        (None, true) => (Severity::Info, format!("{what} fits in the server host's RAM (page cache)")),
        _ => return vec![],
    };
    vec![finding(
        "dataset-fits-in-memory",
        severity,
        title,
        evidence,
        "size the data like production (sweep --table-size and --tables until it exceeds the cache) before claiming storage or write performance; the study \"Amazon Aurora in sysbench benchmarks\" found the vendor's own benchmark used 4.5 GB of data on hosts with 244 GB of RAM: it measured memory, not storage",
    )]
}

fn tables_empty(d: &ResultDocument) -> Vec<Finding> {
    let ds = &d.conditions.dataset;
    let table_size = d.conditions.workload.options.get("table_size").and_then(Value::as_u64).unwrap_or(0);
    // A workload file declares each table's rows (some meant empty); sysbench one size.
    let declared_of = |t: &str| match ds.declared_rows.is_empty() {
        true => Some(table_size),
        false => ds.declared_rows.get(t).copied(),
    };
    let declared = ds.declared_rows.values().copied().max().unwrap_or(table_size);
    let insert_only = d.conditions.workload.name == "oltp_insert";
    let meant_full = |t: &str| ds.declared_rows.is_empty() || declared_of(t).is_some_and(|n| n > 0);
    let empty: Vec<&str> =
        ds.tables_at_start.iter().filter(|t| t.rows == 0 && meant_full(&t.name)).map(|t| t.name.as_str()).collect();
    let thin: Vec<&str> = ds
        .tables_at_start
        .iter()
        .filter(|t| t.rows > 0 && declared_of(&t.name).is_some_and(|n| n > 0 && t.rows < n / 2))
        .map(|t| t.name.as_str())
        .collect();
    if empty.is_empty() && thin.is_empty() {
        return vec![];
    }
    let rows: Vec<Value> =
        ds.tables_at_start.iter().map(|t| json!({"table": t.name, "rows": t.rows, "exact": t.rows_exact})).collect();
    let (severity, title) = if !empty.is_empty() {
        let sev = if insert_only { Severity::Warn } else { Severity::Critical };
        let were = if empty.len() == 1 { "was" } else { "were" };
        (
            sev,
            format!(
                "{} of {} {were} EMPTY when the run started",
                empty.len(),
                plural(ds.tables_at_start.len() as u64, "table")
            ),
        )
    } else {
        let whose = if thin.len() == 1 { "its" } else { "their" };
        (
            Severity::Warn,
            format!("{} held less than half of {whose} declared rows ({declared})", plural(thin.len() as u64, "table")),
        )
    };
    vec![finding(
        "tables-empty",
        severity,
        title,
        vec![("declared_rows", json!(declared)), ("tables", Value::Array(rows))],
        "reads of empty tables find nothing and writes into them skip index maintenance; sysbench's oltp_insert --auto-inc=off prepares empty tables: prepare with the size you mean to test",
    )]
}

fn mix_mismatch(d: &ResultDocument) -> Vec<Finding> {
    let mut out = Vec::new();
    if unwritten(d) {
        return out; // what each statement sent was never written: nothing to judge
    }
    let w = &d.conditions.workload;
    use crate::model::SqlCommand::{Delete, Insert, InsertSelect, Replace, ReplaceSelect, Update};
    let sent = super::counters::Sent::of(d);
    // 1. A workload presented as read-write or write that changed nothing but inserts.
    let presented_as_write = w.name.contains("write");
    let updates_or_deletes = sent.statements(&[Update, Delete]);
    if (presented_as_write || w.name == "oltp_insert") && updates_or_deletes == 0 && d.conditions.run.events > 0 {
        out.push(finding(
            "mix-mismatch",
            if presented_as_write { Severity::Critical } else { Severity::Warn },
            format!("{} performed no UPDATE or DELETE", w.name),
            vec![("workload", json!(w.name)), ("inserts", json!(sent.statements(&[Insert, InsertSelect, Replace, ReplaceSelect]))), ("updates_and_deletes", json!(0))],
            "an INSERT-only run is not a write or read-write benchmark (in the study \"Are Aurora Performance Claims True?\", the vendor's \"100,000 UPDATEs/sec\" benchmark ran oltp_insert and the server's Com_update stayed 0): say what was measured, or run oltp_write_only / oltp_read_write",
        ));
    }
    // 2. The server counted a different mix than the workload sent.
    out.extend(super::counters::server_counted_other_load(d, &sent));
    out
}

fn closed_loop_latency(d: &ResultDocument) -> Vec<Finding> {
    if d.conditions.run.loop_model != LoopKind::Closed {
        return vec![];
    }
    // Clients that pause between transactions (keying, think times) are not sending at the
    // server's maximum throughput, but each still waits out a stall before its next send.
    let pauses = d.conditions.workload.transactions.values().any(|t| t.think_ms > 0 || t.keying.is_some());
    let title = match pauses {
        true => "latency percentiles come from a closed loop whose clients pause between transactions (keying and think times)",
        false => "latency percentiles come from a closed loop at maximum throughput",
    };
    vec![finding(
        "closed-loop-latency",
        Severity::Info,
        title,
        vec![("loop_model", json!("closed")), ("threads", json!(d.conditions.run.threads)), ("pauses", json!(pauses))],
        "a stalled server also stops a closed-loop client from sending, so stalls hide from the percentiles (coordinated omission); for latency claims, run an open loop with --rate below the measured throughput",
    )]
}

fn too_short(d: &ResultDocument) -> Vec<Finding> {
    let r = &d.conditions.run;
    let mut out = Vec::new();
    // Repeats: each must be long enough on its own; their sum does not settle a server.
    let repeats = d.repeats.len().max(1);
    let each_s = r.measured_s / repeats as f64;
    if each_s < LONG_ENOUGH_S {
        let title = match repeats {
            1 => format!("the run measured only {:.0} s", r.measured_s),
            n => format!("each of the {n} repeats measured only {each_s:.0} s"),
        };
        out.push(finding(
            "too-short",
            Severity::Warn,
            title,
            vec![("measured_s", json!((each_s * 10.0).round() / 10.0)), ("minimum_s", json!(LONG_ENOUGH_S))],
            "run at least several minutes (checkpoints, purge and cache effects take that long to appear); the study \"Amazon Aurora in sysbench benchmarks\" ran each point for 2 hours, \"Are Aurora Performance Claims True?\" for 10 minutes",
        ));
    }
    // Intervals had not settled: throughput of the last third far from the middle third
    // (of each repeat: the repeats' timelines are laid back to back).
    let mut unsettled = Vec::new();
    for k in 0..repeats {
        let repeat = (repeats > 1).then_some(k as u32 + 1);
        let tps: Vec<f64> = crate::model::stats::measured_seconds(&d.intervals)
            .filter(|i| i.repeat == repeat)
            .map(|i| i.event.per_s)
            .collect();
        if tps.len() < 9 {
            continue;
        }
        let third = tps.len() / 3;
        let mid: f64 = tps[third..2 * third].iter().sum::<f64>() / third as f64;
        let last: f64 = tps[2 * third..].iter().sum::<f64>() / (tps.len() - 2 * third) as f64;
        if mid > 0.0 && ((last - mid) / mid).abs() > 0.2 {
            unsettled.push((repeat, mid, last));
        }
    }
    if let Some(&(repeat, mid, last)) = unsettled.first() {
        let mut evidence = vec![("middle_third_tps", json!(mid.round())), ("last_third_tps", json!(last.round()))];
        if let Some(k) = repeat {
            evidence.push(("repeat", json!(k)));
            evidence.push(("repeats_not_settled", json!(unsettled.len())));
        }
        out.push(finding(
            "too-short",
            Severity::Warn,
            match repeat {
                None => "throughput had not settled: the last third of the run differs by more than 20% from the middle third".to_string(),
                Some(_) => format!("throughput had not settled in {} of the {repeats} repeats: the last third differs by more than 20% from the middle third", unsettled.len()),
            },
            evidence,
            "run longer (and with --warmup) until per-interval throughput is flat",
        ));
    }
    out
}

fn no_warmup(d: &ResultDocument) -> Vec<Finding> {
    if d.conditions.run.warmup_s > 0 {
        return vec![];
    }
    vec![finding(
        "no-warmup",
        Severity::Warn,
        "no warmup: the statistics include cold caches and connection start",
        vec![("warmup_s", json!(0))],
        "add --warmup (e.g. 60 s, or until the buffer pool is warm) so that cold-start effects are not averaged into steady state",
    )]
}

/// Fewer than 3 measured phases: no spread between runs to compare against.
fn single_run(d: &ResultDocument) -> Vec<Finding> {
    let runs = d.repeats.len().max(1);
    if runs >= 3 {
        return vec![];
    }
    let title = match runs {
        1 => "a single run: its spread is unknown".to_string(),
        n => format!("only {n} repeats: too few to estimate their spread"),
    };
    vec![finding(
        "single-run",
        Severity::Info,
        title,
        vec![("runs", json!(runs)), ("workload", json!(d.conditions.workload.name))],
        "repeat the run (--repeat 3 or more) and report the median with its spread before comparing products",
    )]
}

/// Throughput that varies a lot: between repeats when there are 3 or more (each repeat's
/// events/s), else between the seconds of the one run.
fn high_variance(d: &ResultDocument) -> Vec<Finding> {
    if d.repeats.len() >= 3 {
        let Some(s) = d.repeat_summary.get("tps").filter(|s| s.mean > 0.0) else {
            return vec![];
        };
        // Repeats average out second-to-second noise: a smaller spread already matters.
        if s.cv <= 0.1 {
            return vec![];
        }
        return vec![finding(
            "high-variance",
            Severity::Warn,
            format!("throughput varied a lot between repeats (coefficient of variation {:.0}%)", s.cv * 100.0),
            vec![
                ("cv_pct", json!((s.cv * 1000.0).round() / 10.0)),
                ("median_tps", json!(s.median.round())),
                ("min_tps", json!(s.min.round())),
                ("max_tps", json!(s.max.round())),
                ("repeats", json!(s.values.len())),
            ],
            "the server was not in the same state for each repeat (caches warming, checkpoints, other load): warm up longer, or look at each repeat's timeline",
        )];
    }
    let Some(r) = crate::model::RateSpread::of(&d.intervals).filter(|r| r.entries >= 3 && r.mean > 0.0) else {
        return vec![];
    };
    let (cv, mean, min, max) = (r.cv, r.mean, r.min, r.max);
    // At a few events an entry, counting alone spreads the entries (independent arrivals
    // give a CV of 1/sqrt(events per entry)): only the spread beyond it says the throughput
    // varied.
    let beyond_counting = (cv * cv - 1.0 / (mean * r.entry_s)).max(0.0).sqrt();
    if beyond_counting <= 0.2 {
        return vec![];
    }
    vec![finding(
        "high-variance",
        Severity::Warn,
        format!("throughput varied a lot between {} (coefficient of variation {:.0}%)", r.units(), cv * 100.0),
        vec![
            ("cv_pct", json!((cv * 1000.0).round() / 10.0)),
            ("cv_beyond_counting_pct", json!((beyond_counting * 1000.0).round() / 10.0)),
            ("mean_tps", json!(mean.round())),
            ("min_tps", json!(min.round())),
            ("max_tps", json!(max.round())),
            ("intervals", json!(r.entries)),
            ("interval_s", json!((r.entry_s * 1000.0).round() / 1000.0)),
        ],
        "look at the timeline for stalls (checkpoints, flushing, other load); a mean over an unstable run hides them",
    )]
}

fn errors(d: &ResultDocument) -> Vec<Finding> {
    let e = &d.errors;
    let events = d.conditions.run.events;
    if e.total == 0 && e.reconnects == 0 {
        return vec![];
    }
    let rate = e.total as f64 / (events + e.total).max(1) as f64;
    let severity = match rate {
        r if r >= 0.1 => Severity::Critical,
        r if r >= 0.01 => Severity::Warn,
        _ if e.reconnects > 0 => Severity::Warn,
        _ => Severity::Info,
    };
    vec![finding(
        "errors",
        severity,
        format!("{} errors were retried ({:.2}% of attempts), {} reconnects", e.total, rate * 100.0, e.reconnects),
        vec![("by_code", json!(e.by_code)), ("error_rate_pct", json!((rate * 10000.0).round() / 100.0)), ("reconnects", json!(e.reconnects))],
        "deadlocks and retries cost throughput and shape latency: compare products only at similar error rates (fewer clients, more rows, or another distribution)",
    )]
}

fn connections(d: &ResultDocument) -> Vec<Finding> {
    let threads = d.conditions.run.threads as u64;
    let mut out = Vec::new();
    // Clients that pause between transactions (TPC-C's terminals in spec mode) are mostly
    // idle: what crowds the cores is how many are busy at once on average.
    let measured_s = d.conditions.run.measured_s;
    let busy = d.fairness.as_ref().filter(|_| measured_s > 0.0).map(|f| f.clients as f64 * f.busy_s_avg / measured_s);
    if d.conditions.server.same_host_as_client && d.target.transport != TransportKind::Embedded {
        let cores = d.conditions.client.host.cores as u64;
        if threads > 4 * cores && busy.is_none_or(|b| b > 4.0 * cores as f64) {
            out.push(finding(
                "connections",
                Severity::Warn,
                format!("{} on a server with {}", plural(threads, "client"), plural(cores, "core")),
                vec![("clients", json!(threads)), ("server_cores", json!(cores)), ("busy_clients_avg", json!(busy))],
                "far more clients than cores measure queueing and context switching; sweep --threads to find where throughput peaks",
            ));
        }
    }
    if let Some(max) = var(d, "max_connections").and_then(|v| v.parse::<u64>().ok()) {
        if max > 0 && threads * 10 >= max * 9 {
            out.push(finding(
                "connections",
                Severity::Warn,
                format!("{} is close to max_connections={max}", plural(threads, "client")),
                vec![("clients", json!(threads)), ("max_connections", json!(max))],
                "near the connection limit, other clients (and reconnects) are refused: raise max_connections or use fewer clients",
            ));
        }
    }
    out
}

fn incomplete_run(d: &ResultDocument) -> Vec<Finding> {
    let r = &d.conditions.run;
    if r.status == RunStatus::Completed {
        return vec![];
    }
    let (severity, title, advice) = match r.status {
        RunStatus::Running => (
            Severity::Critical,
            "the run never ended: this file was written when measuring started".to_string(),
            "`fairbench recover FILE` rebuilds the result from the timeline streamed beside it",
        ),
        RunStatus::Incomplete => (
            Severity::Critical,
            format!(
                "the run never ended: built by recover from its record ({:.0} s measured); \
                 the server's counters after the run and the tables at the end are missing",
                r.measured_s
            ),
            "the numbers cover the intervals that closed before the run stopped; find why it stopped and rerun",
        ),
        status => (
            if status == RunStatus::Failed { Severity::Critical } else { Severity::Warn },
            format!("the run did not complete: {}", r.failure.as_deref().unwrap_or(status.name())),
            "the numbers cover only part of the planned run; rerun before comparing",
        ),
    };
    vec![finding(
        "incomplete-run",
        severity,
        title,
        vec![("status", json!(r.status)), ("measured_s", json!(r.measured_s))],
        advice,
    )]
}

/// A run that never wrote its result (status running, or built by recover): its end-of-run
/// reads do not exist; incomplete-run says so.
fn unwritten(d: &ResultDocument) -> bool {
    matches!(d.conditions.run.status, RunStatus::Running | RunStatus::Incomplete)
}

/// The end-of-run reads are bounded: a server that did not answer leaves parts out, and the
/// document says which instead of presenting them as zero.
fn collection_incomplete(d: &ResultDocument) -> Vec<Finding> {
    // A shard other than 0 reads none of the server-wide facts at the end: shard 0 does.
    if unwritten(d) || d.conditions.run.shard.as_ref().is_some_and(|s| !s.reads_server_facts) {
        return vec![];
    }
    let server = &d.conditions.server;
    let dataset = &d.conditions.dataset;
    let mut missing = Vec::new();
    if !server.status_before.is_empty() && server.status_after.is_empty() {
        missing.push("the server's counters after the run");
    }
    if !dataset.tables_at_start.is_empty() && dataset.tables_at_end.is_empty() {
        missing.push("the table sizes at the end");
    }
    if missing.is_empty() {
        return vec![];
    }
    vec![finding(
        "collection-incomplete",
        Severity::Warn,
        format!(
            "{} could not be read: the server did not answer in time{}",
            missing.join(" and "),
            match d.faults.is_some() || !d.target.nodes.is_empty() {
                true => ", or went away (a fault or failover during the run: the counters after it would be another node's)",
                false => "",
            }
        ),
        vec![("missing", json!(missing))],
        "the statement-count check and the dataset's growth are missing from this result; rerun, or read the server's own counters",
    )]
}

/// Conditions the benchmark user had no privilege to read (least privilege is fine; the
/// reader should know what the result cannot say).
fn not_visible(d: &ResultDocument) -> Vec<Finding> {
    let role = &d.conditions.server.replication_role;
    if !role.starts_with("unknown: not visible") {
        return vec![];
    }
    vec![finding(
        "not-visible",
        Severity::Info,
        "the server's replication role was not visible to this user: whether it is a primary or a replica is unknown",
        vec![("replication_role", json!(role))],
        "grant REPLICATION CLIENT (MySQL) or read the role from the server's configuration; docs/security.md lists what each reading needs",
    )]
}
