//! Every condition that differs between results, grouped as a reviewer reads them, and the
//! differences that make a comparison unfair, as findings with ids, evidence and advice.

use crate::model::comparison::Difference;
use crate::model::{Finding, ResultDocument, ServerFacts, Severity};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

/// How the server saw the connections arrive, under the transport group.
const SEEN: &str = "as the server saw it";
/// The durability the driver found in effect, under the durability group.
const IN_EFFECT: &str = "in effect";
/// The product's own settings behind it.
const IN_EFFECT_BY: &str = "in effect, by the settings";
/// The key of [`IN_EFFECT_BY`] when every side's durability means the same.
const SAME_IN_EFFECT: &str = "same in effect";

/// Every condition of a result as (group, key) -> value.
pub fn conditions(d: &ResultDocument) -> BTreeMap<(String, String), String> {
    let mut out = Grouped::default();
    server(&mut out, d);
    client_host(&mut out, d);
    dataset(&mut out, d);
    workload(&mut out, d);
    run(&mut out, d);
    out.0
}

/// Conditions by (group, key).
#[derive(Default)]
struct Grouped(BTreeMap<(String, String), String>);

impl Grouped {
    fn put(&mut self, group: &str, key: &str, value: String) {
        self.0.insert((group.to_string(), key.to_string()), value);
    }
}

/// The server, its durability in effect, and its settings grouped by its driver's
/// knowledge of the product (an old result without facts: every setting is "other").
fn server(out: &mut Grouped, d: &ResultDocument) {
    let c = &d.conditions;
    out.put("server", "product", c.server.product.clone());
    out.put("server", "version", c.server.version.clone());
    out.put("server", "replication role", c.server.replication_role.clone());
    if let Some(f) = &c.server.facts {
        let d = &f.durability;
        let settings: Vec<String> = d.settings.iter().map(|(k, v)| format!("{k}={v}")).collect();
        out.put("durability", IN_EFFECT, d.describe());
        out.put("durability", IN_EFFECT_BY, settings.join(", "));
        if let Some(i) = &f.isolation {
            out.put("server", "isolation", i.clone());
        }
        if let Some(redo) = f.redo_bytes {
            out.put("logging/redo", "redo capacity (in effect)", mib(redo));
        }
    }
    for (k, v) in &c.server.host {
        out.put("server", &format!("host {k}"), v.clone());
    }
    let facts = c.server.facts.clone().unwrap_or_default();
    for (k, v) in &c.server.variables {
        match facts.setting_group(k) {
            ServerFacts::VOLATILE => {}
            group => out.put(group, k, v.clone()),
        }
    }
}

fn client_host(out: &mut Grouped, d: &ResultDocument) {
    let c = &d.conditions;
    let h = &c.client.host;
    out.put("client host", "hostname", h.hostname.clone());
    out.put("client host", "cpu model", h.cpu_model.clone());
    out.put("client host", "cores", h.cores.to_string());
    out.put("client host", "memory", gib(h.memory_bytes));
    out.put("client host", "os", h.os.clone());
    out.put("client host", "kernel", h.kernel.clone());
    for (k, v) in
        [("clocksource", &h.clocksource), ("cpu governor", &h.cpu_governor), ("THP", &h.transparent_hugepages)]
    {
        if let Some(v) = v {
            out.put("client host", k, v.clone());
        }
    }
    out.put("client host", "fairbench version", c.client.fairbench_version.clone());
}

fn dataset(out: &mut Grouped, d: &ResultDocument) {
    let c = &d.conditions;
    let ds = &c.dataset;
    out.put("dataset", "tables", ds.tables_at_start.len().to_string());
    out.put("dataset", "declared rows per table", ds.declared_rows_per_table.to_string());
    out.put("dataset", "rows", ds.tables_at_start.iter().map(|t| t.rows).sum::<u64>().to_string());
    out.put("dataset", "bytes", mib(ds.total_bytes));
    // Caches set by the server's variables; a reading (the OS page cache: the host's
    // available RAM) moves from run to run and counts only through the fit below.
    for (k, v) in ds.cache.iter().filter(|(k, _)| c.server.variables.contains_key(*k)) {
        out.put("dataset", &format!("cache {k}"), mib(*v));
    }
    out.put("dataset", "bytes vs cache", fit(d).1);
    if !ds.foreign_tables.is_empty() {
        out.put("dataset", "foreign tables", ds.foreign_tables.join(", "));
    }
}

fn workload(out: &mut Grouped, d: &ResultDocument) {
    let w = &d.conditions.workload;
    out.put("workload", "name", w.name.clone());
    if let Value::Object(options) = &w.options {
        // The data's size is the dataset's (compared there), not the workload's.
        for (k, v) in options.iter().filter(|(k, _)| !matches!(k.as_str(), "tables" | "table_size")) {
            out.put("workload", &format!("option {k}"), scalar(v));
        }
    }
    out.put("workload", "distribution", w.distribution_description.clone());
    let mix: Vec<String> = w.mix_per_event.iter().map(|(k, n)| format!("{k}={n}")).collect();
    out.put("workload", "statements per event", mix.join(" "));
    if let Some(f) = &w.file {
        out.put("workload", "file sha256", f.sha256.clone());
    }
}

/// How the run was made, and how the client reached the server.
fn run(out: &mut Grouped, d: &ResultDocument) {
    let r = &d.conditions.run;
    out.put("run", "loop model", r.loop_model_description.clone());
    out.put("run", "threads", r.threads.to_string());
    out.put("run", "time limit s", r.time_limit_s.map_or("none".into(), |t| format!("{t}")));
    out.put("run", "events limit", r.events_limit.map_or("none".into(), |e| e.to_string()));
    out.put("run", "warmup s", r.warmup_s.to_string());
    out.put("run", "repeats", r.repeats.unwrap_or(1).to_string());
    out.put("run", "status", r.status.name().to_string());
    if let Some(cost) = r.cost_per_hour {
        out.put("run", "cost per hour", format!("{cost}"));
    }
    let t = &d.target;
    out.put("transport", "driver", t.driver.name().to_string());
    out.put("transport", "transport", format!("{:?}", t.transport).to_lowercase());
    out.put("transport", "tls", format!("{:?}", t.tls).to_lowercase());
    // What the server said each connection used: a result without it is unknown, a finding
    // against one with it (TLS costs CPU per statement, as a socket saves a round trip).
    out.put("transport", SEEN, crate::model::TransportSeen::kinds(&r.transports));
    out.put("transport", "statements", format!("{:?}", t.statements).to_lowercase());
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / 1_048_576.0)
}

fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / 1_073_741_824.0)
}

/// Whether the dataset fits in the largest cache, and how that reads.
fn fit(d: &ResultDocument) -> (Option<bool>, String) {
    match d.conditions.dataset.cache_ratio() {
        Some((name, ratio)) => {
            let fits = ratio <= 1.0;
            (Some(fits), format!("{ratio:.1}x {name} ({})", if fits { "fits" } else { "does not fit" }))
        }
        None => (None, "unknown".into()),
    }
}

/// Every (group, key) whose value is not the same on all sides.
pub fn differences(docs: &[&ResultDocument]) -> Vec<Difference> {
    let all: Vec<BTreeMap<(String, String), String>> = docs.iter().map(|d| conditions(d)).collect();
    let keys: BTreeSet<&(String, String)> = all.iter().flat_map(|m| m.keys()).collect();
    let order = |g: &str| {
        [
            "server",
            "durability",
            "memory/cache",
            "logging/redo",
            "replication",
            "connections",
            "dataset",
            "workload",
            "run",
            "transport",
            "client host",
            "other variables",
        ]
        .iter()
        .position(|x| *x == g)
        .unwrap_or(99)
    };
    let mut out: Vec<Difference> = keys
        .into_iter()
        .filter_map(|key| {
            let values: Vec<Option<String>> = all.iter().map(|m| m.get(key).cloned()).collect();
            let first = &values[0];
            values.iter().any(|v| v != first).then(|| Difference::new(&key.0, &key.1, values))
        })
        .collect();
    out.sort_by_key(|d| order(&d.group));
    same_durability_in_other_words(&mut out, docs);
    out
}

/// The durability each driver found in effect, or the settings behind it.
pub fn is_durability_in_effect(d: &Difference) -> bool {
    d.group == "durability" && (d.key.starts_with(IN_EFFECT) || d.key.starts_with(SAME_IN_EFFECT))
}

/// Products that reach the same durability through settings of their own (MariaDB's
/// innodb_flush_log_at_trx_commit=1, PostgreSQL's fsync and synchronous_commit on): the
/// settings differ, the meaning does not, and the row says so.
fn same_durability_in_other_words(diffs: &mut [Difference], docs: &[&ResultDocument]) {
    if diffs.iter().any(|d| d.group == "durability" && d.key == IN_EFFECT) {
        return;
    }
    let Some(facts) = docs.first().and_then(|d| d.conditions.server.facts.as_ref()) else {
        return;
    };
    if let Some(d) = diffs.iter_mut().find(|d| d.group == "durability" && d.key == IN_EFFECT_BY) {
        d.key = format!("{SAME_IN_EFFECT} ({}), by the settings", facts.durability.describe());
        d.negligible = true;
    }
}

fn finding(id: &str, severity: Severity, title: String, evidence: Vec<(String, Value)>, advice: &str) -> Finding {
    Finding { id: id.into(), severity, title, evidence: evidence.into_iter().collect(), advice: advice.into() }
}

/// Evidence from differences: key -> each side's value.
fn evidence<'a>(diffs: impl Iterator<Item = &'a Difference>) -> Vec<(String, Value)> {
    diffs.map(|d| (d.key.clone(), json!(d.values))).collect()
}

/// The sides commit with different durability: judged by the durability in effect when
/// every side's driver recorded it, else by the durability settings.
fn durability_differs(
    docs: &[&ResultDocument],
    diffs: &[Difference],
    subject: Option<&super::Subject>,
) -> Option<Finding> {
    let in_group = |g: &'static str| diffs.iter().filter(move |d| d.group == g);
    // A side's own finding that the setting under test alone causes is the subject.
    let has =
        |d: &ResultDocument, id: &str| d.audit.iter().any(|f| f.id == id && !subject.is_some_and(|s| s.explains(f)));
    let durability_off: Vec<bool> = docs.iter().map(|d| has(d, "durability-off")).collect();
    // Judged by the durability in effect when every side's driver recorded it: products
    // name their settings differently, and a setting only one side has is no difference.
    let in_effect: Option<Vec<&crate::model::Durability>> =
        docs.iter().map(|d| d.conditions.server.facts.as_ref().map(|f| &f.durability)).collect();
    let raw: Vec<&Difference> = in_group("durability").filter(|d| !d.key.starts_with(IN_EFFECT)).collect();
    let settings_differ = match &in_effect {
        Some(sides) => {
            let explained = subject.is_some_and(|s| s.explains_durability(sides));
            !explained && sides.iter().any(|d| d.describe() != sides[0].describe())
        }
        None => !raw.is_empty(),
    };
    if settings_differ || durability_off.iter().any(|&x| x != durability_off[0]) {
        // The settings both sides have that differ; each product's own are in the diff.
        let mut ev = evidence(raw.into_iter().filter(|d| d.values.iter().all(Option::is_some)));
        if let Some(sides) = &in_effect {
            ev.push(("in_effect".into(), json!(sides.iter().map(|d| d.describe()).collect::<Vec<_>>())));
        }
        ev.push(("durability_off_per_audit".into(), json!(durability_off)));
        return Some(finding(
            "durability-differs",
            Severity::Critical,
            "the sides do not commit with the same durability".into(),
            ev,
            "set the same durability on every side (innodb_flush_log_at_trx_commit=1 and sync_binlog=1; fsync and synchronous_commit on): the study \"Are Aurora Performance Claims True?\" found innodb_flush_log_at_trx_commit=0 in the vendor's benchmark template, unannounced",
        ));
    }
    None
}

/// The sides ran on datasets of different size; or on the same rows in different bytes
/// (bloat: a note, never a different dataset).
fn dataset_differs(docs: &[&ResultDocument], diffs: &[Difference]) -> Option<Finding> {
    // A dataset is its tables and rows: row estimates (InnoDB, pg_class) move between runs
    // on the same data, so rows count when 10% apart; bytes grow with dead rows and page
    // splits on the same rows (two runs back to back on one PostgreSQL table: 2.6 -> 7.7 MiB).
    let sizes: Vec<(usize, u64, u64, u64)> = docs
        .iter()
        .map(|d| {
            let ds = &d.conditions.dataset;
            let rows = ds.tables_at_start.iter().map(|t| t.rows).sum();
            (ds.tables_at_start.len(), ds.declared_rows_per_table, rows, ds.total_bytes)
        })
        .collect();
    let apart = |a: u64, b: u64, tolerance: f64| a.max(b) as f64 > a.min(b) as f64 * (1.0 + tolerance);
    let b = sizes[0];
    let differs = sizes.iter().any(|s| s.0 != b.0 || s.1 != b.1 || apart(s.2, b.2, 0.10));
    let bloated = sizes.iter().any(|s| apart(s.3, b.3, 0.25) && s.3.abs_diff(b.3) > ALLOCATION_SLACK);
    if !differs && bloated {
        let bytes: Vec<String> = sizes.iter().map(|s| mib(s.3)).collect();
        return Some(finding(
            "dataset-bloat",
            Severity::Info,
            format!("the same rows take {} on disk: bloat (dead rows, page splits), not a different dataset", bytes.join(" vs ")),
            vec![("bytes".into(), json!(sizes.iter().map(|s| s.3).collect::<Vec<_>>())), ("rows".into(), json!(sizes.iter().map(|s| s.2).collect::<Vec<_>>()))],
            "a side that reads more pages for the same rows can be slower for it: VACUUM (PostgreSQL) or OPTIMIZE TABLE between runs, or prepare anew, when the sides should start from the same physical state",
        ));
    }
    let dataset: Vec<&Difference> = diffs
        .iter()
        .filter(|d| {
            d.group == "dataset" && ["tables", "declared rows per table", "rows", "bytes"].contains(&d.key.as_str())
        })
        .collect();
    if differs && !dataset.is_empty() {
        return Some(finding(
            "dataset-differs",
            Severity::Critical,
            "the sides ran on datasets of different size".into(),
            evidence(dataset.into_iter()),
            "prepare the same --tables and --table-size on every side: throughput depends on how much of the data the cache holds",
        ));
    }
    None
}

/// Cache, redo, replication and connection settings both sides have that differ.
fn settings_differ(docs: &[&ResultDocument], diffs: &[Difference]) -> Option<Finding> {
    // A setting only one product has is that product's own, not a difference of setup; a
    // limit on clients far above the clients that ran cannot bind (listed, not a finding).
    let clients = docs.iter().map(|d| d.conditions.run.threads).max().unwrap_or(0);
    let settings: Vec<&Difference> = diffs
        .iter()
        .filter(|d| ["memory/cache", "logging/redo", "replication", "connections"].contains(&d.group.as_str()))
        .filter(|d| !d.one_sided() && !unbinding_client_limit(d, clients))
        .collect();
    (!settings.is_empty()).then(|| {
        finding(
            "settings-differ",
            Severity::Warn,
            format!(
                "{} of cache, redo log, replication or connections {}",
                crate::model::plural(settings.len() as u64, "server setting"),
                if settings.len() == 1 { "differs" } else { "differ" }
            ),
            evidence(settings.into_iter()),
            "check each one: in the study \"Are Aurora Performance Claims True?\", a larger redo log alone (innodb_log_file_size 128 MB -> 1 GB) turned Aurora's \"7.3X faster\" than MySQL into \"1.7x\"",
        )
    })
}

/// Settings that limit clients (connections, their backlog and cached threads): they bind
/// only when a run's clients come near them.
const CLIENT_LIMITS: [&str; 4] = ["max_connections", "max_user_connections", "back_log", "thread_cache_size"];

/// A client limit that every side sets far above the `clients` that ran (twice, and at
/// least 10 more for fairbench's own and other connections) or not at all (0: no limit,
/// for max_user_connections): it could not have changed the result.
fn unbinding_client_limit(d: &Difference, clients: u32) -> bool {
    let floor = u64::from(clients).saturating_mul(2).max(u64::from(clients) + 10);
    let far_above = |v: &Option<String>| match v.as_deref().and_then(|v| v.trim().parse::<u64>().ok()) {
        Some(0) => d.key == "max_user_connections",
        Some(n) => n >= floor,
        None => false,
    };
    CLIENT_LIMITS.contains(&d.key.as_str()) && d.values.iter().all(far_above)
}

/// Bytes a table's size may move by without its data changing: storage engines allocate in
/// steps (InnoDB in 1 MiB extents), so small tables of equal rows differ by a few of them.
const ALLOCATION_SLACK: u64 = 4 << 20;

/// The differences that make the comparison unfair.
pub fn findings(docs: &[&ResultDocument], diffs: &[Difference], subject: Option<&super::Subject>) -> Vec<Finding> {
    // The same value written differently is no difference.
    let diffs: Vec<Difference> = diffs.iter().filter(|d| !d.negligible).cloned().collect();
    let diffs = diffs.as_slice();
    let mut out = Vec::new();
    out.extend(durability_differs(docs, diffs, subject));
    // A dataset size under test is the comparison's point, and so is the cache it then
    // fits in or not (or a cache size under test).
    let sized = subject.is_some_and(|s| s.sizes_dataset());
    if !sized {
        out.extend(dataset_differs(docs, diffs));
    }
    let cache_tested = subject.is_some_and(|s| diffs.iter().any(|d| d.group == "memory/cache" && s.covers(d)));
    let fits: Vec<Option<bool>> = docs.iter().map(|d| fit(d).0).collect();
    if fits.contains(&Some(true)) && fits.contains(&Some(false)) && !sized && !cache_tested {
        out.push(finding(
            "cache-fit-differs",
            Severity::Critical,
            "the dataset fits in the cache on one side and not on another: one side measures memory, the other storage".into(),
            vec![("fits_in_cache".into(), json!(fits))],
            "size the data so that it is in (or out of) the cache on every side, or sweep --table-size across the cache size and compare the curves",
        ));
    }
    out.extend(load_differs(diffs));
    out.extend(machines_differ(docs, diffs));
    out.extend(settings_differ(docs, diffs));
    let repeats: Vec<u32> = docs.iter().map(|d| d.repeats.len().max(1) as u32).collect();
    if repeats.iter().any(|&r| r < 3) {
        out.push(finding(
            "too-few-repeats",
            Severity::Warn,
            "a side has fewer than 3 repeats: intervals come from its per-second timeline".into(),
            vec![("repeats".into(), json!(repeats))],
            "run each side with --repeat 3 or more: a timeline's seconds share one server state (caches, checkpoints), repeats show the spread between runs",
        ));
    }
    out
}

/// A finding whose evidence is `found`, when anything was.
fn when_any(found: Vec<&Difference>, id: &str, severity: Severity, title: &str, advice: &str) -> Option<Finding> {
    (!found.is_empty()).then(|| finding(id, severity, title.into(), evidence(found.into_iter()), advice))
}

fn in_group<'a>(diffs: &'a [Difference], group: &'static str) -> impl Iterator<Item = &'a Difference> {
    diffs.iter().filter(move |d| d.group == group)
}

/// Another workload, load model, client count, duration or warmup.
fn load_differs(diffs: &[Difference]) -> Vec<Finding> {
    let load = ["threads", "time limit s", "warmup s", "events limit"];
    [
        when_any(
            in_group(diffs, "workload").collect(),
            "workload-differs",
            Severity::Critical,
            "the sides ran different workloads, options or distributions",
            "compare runs of the same workload with the same options: a \"write\" benchmark that never ran an UPDATE is not the write workload it is named after",
        ),
        when_any(
            in_group(diffs, "run").filter(|d| d.key == "loop model").collect(),
            "loop-model-differs",
            Severity::Critical,
            "the sides used different load models (closed vs open loop, or another rate)",
            "an open loop at a fixed rate and a closed loop at full speed measure different things: run both sides with the same --rate, or both closed",
        ),
        when_any(
            in_group(diffs, "run").filter(|d| load.contains(&d.key.as_str())).collect(),
            "run-differs",
            Severity::Warn,
            "the sides ran with different clients, duration or warmup",
            "give every side the same --threads, --time and --warmup, or sweep --threads on both",
        ),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Other client machines, another version of the same product, another way to reach it.
fn machines_differ(docs: &[&ResultDocument], diffs: &[Difference]) -> Vec<Finding> {
    // The TLS mode asked for (`prefer` here, `require` there) is no difference when every
    // side's server saw its connections arrive the same way.
    let seen_alike = !in_group(diffs, "transport").any(|d| d.key == SEEN)
        && docs.iter().all(|d| !d.conditions.run.transports.is_empty());
    let host = ["cpu model", "cores", "memory"];
    let product_differs = in_group(diffs, "server").any(|d| d.key == "product");
    let version = in_group(diffs, "server").filter(|d| d.key == "version" && !product_differs);
    [
        when_any(
            in_group(diffs, "client host").filter(|d| host.contains(&d.key.as_str())).collect(),
            "client-host-differs",
            Severity::Warn,
            "the load came from different client machines",
            "drive every side from the same client machine type: a slower client lowers throughput and adds latency",
        ),
        when_any(
            version.collect(),
            "server-version-differs",
            Severity::Info,
            "the same product in different versions",
            "fine when the version is what you compare; otherwise run the same version on every side",
        ),
        // The protocol follows the product (MySQL's or PostgreSQL's): not a finding.
        when_any(
            in_group(diffs, "transport").filter(|d| d.key != "driver" && !(d.key == "tls" && seen_alike)).collect(),
            "transport-differs",
            Severity::Warn,
            "the sides reached their servers differently (TCP or socket, TLS or plaintext as the server saw it, prepared or plain statements)",
            "a socket saves a network round trip per statement, and TLS costs round trips at connect and CPU for every statement (sysbench's PostgreSQL point selects: 20% fewer per second with TLS): use the same ?tls= on every side",
        ),
    ]
    .into_iter()
    .flatten()
    .collect()
}
