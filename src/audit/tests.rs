//! The rules on result documents whose numbers are known: a real MariaDB run over 127.0.0.1
//! (testdata/mariadb_loopback.json: 12 s, 4 clients on 2 cores, host 98% busy, the client
//! 28%, written before the client's saturation was its own CPU) and changes to it.

use super::*;
use crate::model::tpcc::{TpccDeferredRecord, TpccRecord};
use crate::model::{TransactionRecord, TransportKind};
use serde_json::json;

fn loopback_run() -> ResultDocument {
    serde_json::from_str(include_str!("testdata/mariadb_loopback.json")).expect("fixture parses")
}

fn with_id<'a>(findings: &'a [Finding], id: &str) -> Vec<&'a Finding> {
    findings.iter().filter(|f| f.id == id).collect()
}

/// A long, settled, warmed-up run on a host with CPU to spare: nothing about time or CPU.
fn clean(mut d: ResultDocument) -> ResultDocument {
    d.conditions.run.measured_s = 600.0;
    d.conditions.run.warmup_s = 60;
    for i in &mut d.intervals {
        i.event.per_s = 700.0;
    }
    d.client_cost.host_cpu_busy_pct = Some(40.0);
    d.client_cost.warning = None;
    d.client_cost.saturated = false;
    d
}

#[test]
fn a_busy_host_is_shared_host_not_client_saturation() {
    let d = loopback_run();
    assert!(d.client_cost.warning.as_deref().unwrap().contains("host's CPUs were 98% busy"));
    let found = audit(&d);
    assert!(with_id(&found, "client-saturated").is_empty(), "{found:#?}");
    let shared = with_id(&found, "shared-host");
    assert_eq!(shared.len(), 1);
    let f = shared[0];
    assert_eq!(f.severity, Severity::Warn);
    assert_eq!(
        f.title,
        "the client and the server shared one host of 2 cores, 98% busy (the client itself used 28%, the server and any other programs the rest): the numbers include their contention for CPU"
    );
    assert_eq!(f.evidence["host_cpu_busy_pct"], json!(98.0));
    assert_eq!(f.evidence["client_cpu_pct_of_all_cores"], json!(28.2));
    assert_eq!(f.evidence["server_and_other_cpu_pct"], json!(69.8));
    assert_eq!(f.evidence["server_address"], json!("127.0.0.1:3306"));
    assert_eq!(f.evidence["transport"], json!("tcp"));
    assert_eq!(f.evidence["server_hostname"], f.evidence["client_hostname"]);
}

#[test]
fn shared_host_is_quiet_on_an_idle_host_a_remote_server_and_an_embedded_database() {
    let quiet = |change: &dyn Fn(&mut ResultDocument)| {
        let mut d = loopback_run();
        change(&mut d);
        with_id(&audit(&d), "shared-host").is_empty()
    };
    assert!(quiet(&|d| d.client_cost.host_cpu_busy_pct = Some(79.0)));
    assert!(quiet(&|d| d.client_cost.host_cpu_busy_pct = None));
    assert!(quiet(&|d| d.conditions.server.same_host_as_client = false));
    // In-process: no second program to contend with (client-saturated's embedded advice).
    assert!(quiet(&|d| d.target.transport = TransportKind::Embedded));
    assert!(!quiet(&|d| d.client_cost.host_cpu_busy_pct = Some(80.0)));
    assert!(!quiet(&|d| d.target.transport = TransportKind::Socket));
    assert!(with_id(&audit(&clean(loopback_run())), "shared-host").is_empty());
}

#[test]
fn the_clients_own_cpu_is_client_saturation() {
    let saturated = |pct: f64, worker: f64| {
        let mut d = clean(loopback_run());
        d.client_cost.cpu_utilization_pct = pct;
        d.client_cost.busiest_worker_pct = worker;
        d.client_cost.warning = Some("the client used 95% of all 2 cores".into());
        audit(&d).into_iter().find(|f| f.id == "client-saturated")
    };
    let f = saturated(95.0, 50.0).expect("all cores busy");
    assert_eq!((f.severity, f.title.as_str()), (Severity::Warn, "the client used 95% of all 2 cores"));
    assert_eq!(f.evidence["client_cpu_pct_of_all_cores"], json!(95.0));
    assert!(!f.evidence.contains_key("host_cpu_busy_pct"));
    assert!(saturated(40.0, 93.0).is_some(), "an event loop at 93% of its core");
    // A stored warning its numbers do not bear out (a busy host) is not the finding.
    assert!(saturated(28.0, 27.0).is_none());
    assert!(with_id(&audit(&clean(loopback_run())), "client-saturated").is_empty());
}

/// 2 clients at 6371 ± 4367 events (a SQLite lock held one back): unequal; the loopback
/// run's 4 clients within a few percent: not, nor an open loop's or a handful of events.
#[test]
fn clients_served_unequally_are_a_finding() {
    let fairness = |avg: f64, sd: f64| crate::model::FairnessRecord {
        clients: 2,
        events_avg: avg,
        events_stddev: sd,
        events_min: (avg - sd) as u64,
        events_max: (avg + sd) as u64,
        busy_s_avg: 1.0,
        busy_s_stddev: 0.0,
    };
    let mut d = loopback_run();
    d.fairness = Some(fairness(6371.0, 4367.0));
    let found = audit(&d);
    let unequal = with_id(&found, "clients-unequal");
    assert_eq!(unequal.len(), 1, "{found:#?}");
    assert!(unequal[0]
        .title
        .starts_with("clients were served unequally: 6371 ± 4367 events per client (from 2004 to 10738)"));
    d.fairness = Some(fairness(6371.0, 120.0));
    assert!(with_id(&audit(&d), "clients-unequal").is_empty());
    d.fairness = Some(fairness(10.0, 8.0));
    assert!(with_id(&audit(&d), "clients-unequal").is_empty(), "too few events to judge");
    // An open loop's free client takes the next arrival: no client is owed a share.
    d.fairness = Some(fairness(6371.0, 4367.0));
    d.open_loop = Some(crate::model::OpenLoopRecord {
        rate: 100.0,
        arrival: crate::plan::Arrival::Fixed,
        max_backlog: 1000,
        late: 0,
        dropped: 0,
        start_delay: Default::default(),
    });
    assert!(with_id(&audit(&d), "clients-unequal").is_empty(), "open loop");
}

#[test]
fn a_run_both_short_and_unsettled_is_one_too_short_finding() {
    let found = audit(&loopback_run());
    let short = with_id(&found, "too-short");
    assert_eq!(short.len(), 1, "{short:#?}");
    let f = short[0];
    assert_eq!(
        f.title,
        "the run measured only 12 s; and throughput had not settled: the last third of the run differs by more than 20% from the middle third"
    );
    for key in ["measured_s", "minimum_s", "middle_third_tps", "last_third_tps"] {
        assert!(f.evidence.contains_key(key), "{key} missing: {:?}", f.evidence);
    }
    let mut ids: Vec<&str> = found.iter().map(|f| f.id.as_str()).collect();
    let all = ids.len();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), all, "an id twice: {ids:?}");
    assert!(with_id(&audit(&clean(loopback_run())), "too-short").is_empty());
}

#[test]
fn merging_keeps_every_piece_of_evidence_and_the_worse_severity_first() {
    let f = |severity, title: &str, key: &str, value| Finding {
        id: "x".into(),
        severity,
        title: title.into(),
        evidence: [(key.to_string(), json!(value))].into(),
        advice: format!("fix {title}"),
    };
    let merged = merge_same_ids(
        [f(Severity::Info, "a", "n", 1), f(Severity::Warn, "b", "n", 2), f(Severity::Info, "c", "m", 3)].into_iter(),
    );
    assert_eq!(merged.len(), 1);
    let m = &merged[0];
    assert_eq!((m.severity, m.title.as_str()), (Severity::Warn, "b; and a; and c"));
    assert_eq!(m.evidence, [("n".into(), json!(1)), ("n_2".into(), json!(2)), ("m".into(), json!(3))].into());
    assert_eq!(m.advice, "fix a; fix b; fix c");
}

/// Every advice that quotes a study's figures names the study, so that they do not read as
/// this host's.
#[test]
fn advice_quoting_a_study_names_it() {
    const TITLES: [&str; 2] = ["\"Are Aurora Performance Claims True?\"", "\"Amazon Aurora in sysbench benchmarks\""];
    let mut d = loopback_run();
    // As MySQL's driver reads innodb_flush_log_at_trx_commit=0.
    let durability = crate::model::Durability {
        commit: crate::model::CommitFlush::Periodic,
        off_because: [("innodb_flush_log_at_trx_commit".to_string(), "0".to_string())].into(),
        ..Default::default()
    };
    d.conditions.server.facts = Some(crate::model::ServerFacts { durability, ..Default::default() });
    for name in ["index_updates", "non_index_updates", "deletes"] {
        d.statements.get_mut(name).unwrap().count = 0;
    }
    let found = audit(&d);
    for id in ["durability-off", "dataset-fits-in-memory", "mix-mismatch", "too-short"] {
        let f = found.iter().find(|f| f.id == id).unwrap_or_else(|| panic!("{id} not triggered"));
        assert!(TITLES.iter().any(|t| f.advice.contains(t)), "{id}: {}", f.advice);
    }
    for f in &found {
        let quotes = ["vendor", "244 GB", "UPDATEs", "2 hours"].iter().any(|w| f.advice.contains(w));
        assert!(!quotes || f.advice.contains("the study"), "{}: {}", f.id, f.advice);
    }
}

/// SQLite's data is held by its own small cache and the OS page cache: data beyond the
/// first and within the second measures memory.
#[test]
fn data_within_the_os_page_cache_fits_in_memory() {
    let mut d = clean(loopback_run());
    d.conditions.dataset.total_bytes = 4_000_000;
    d.conditions.dataset.cache = [("cache_size".into(), 2_048_000), ("os_page_cache".into(), 8 << 30)].into();
    let f = audit(&d).into_iter().find(|f| f.id == "dataset-fits-in-memory").expect("fits");
    assert_eq!(f.severity, Severity::Warn);
    assert!(f.title.contains("fits in os_page_cache"), "{}", f.title);
    // Larger than every cache and than half the host's RAM: nothing to say.
    d.conditions.dataset.total_bytes = 20 << 30;
    d.conditions.dataset.server_host_memory_bytes = Some(24 << 30);
    assert!(with_id(&audit(&d), "dataset-fits-in-memory").is_empty());
}

/// InnoDB with O_DIRECT reads past the OS page cache (its driver names no such cache): data
/// larger than the buffer pool does not fit in memory however much RAM the host has; the
/// same data read through the page cache does.
#[test]
fn data_past_the_buffer_pool_with_o_direct_does_not_fit_in_ram() {
    let mut d = clean(loopback_run());
    d.conditions.dataset.total_bytes = 1 << 30;
    d.conditions.dataset.server_host_memory_bytes = Some(24 << 30);
    d.conditions.dataset.cache = [("innodb_buffer_pool_size".into(), 128 << 20)].into();
    assert!(with_id(&audit(&d), "dataset-fits-in-memory").is_empty(), "O_DIRECT: only the buffer pool holds data");
    d.conditions.dataset.cache.insert("os_page_cache".into(), 512 << 20);
    let f = audit(&d).into_iter().find(|f| f.id == "dataset-fits-in-memory").expect("through the page cache");
    assert!(f.title.contains("RAM (page cache)"), "{}", f.title);
}

/// A TPC-C-like result's own findings: quiet on a spec-mode run of 2 hours on enough
/// warehouses; each problem named when it is there.
#[test]
fn tpcc_rules_read_the_figures() {
    use crate::model::tpcc::{TpccTypeRecord, TYPES};
    let types = |shares: [f64; 5], p90_ms: f64| -> Vec<TpccTypeRecord> {
        TYPES
            .iter()
            .zip(shares)
            .map(|((name, spec_name, min, limit_s), share)| TpccTypeRecord {
                name: name.to_string(),
                spec_name: spec_name.to_string(),
                count: (share * 100.0) as u64,
                per_minute: share,
                rollbacks: 0,
                errors: 0,
                share_pct: share,
                min_share_pct: *min,
                p90_ms,
                p90_limit_ms: limit_s * 1000.0,
            })
            .collect()
    };
    let good = TpccRecord {
        mode: "spec".into(),
        warehouses: 10,
        terminals: 100,
        measured_minutes: 120.0,
        tpmc: 1200.0,
        nopm: 1188.0,
        // Within the 100 terminals that may be in flight at the phase's edges.
        new_orders_database: Some(4348 + 60),
        nopm_database: Some(1190.0),
        tpm: 2760.0,
        c_load: Some(157),
        c_run: Some(223),
        types: types([43.48, 43.48, 4.35, 4.35, 4.34], 300.0),
        deferred_delivery: Some(TpccDeferredRecord {
            executed: 5200,
            p90_ms: 120.0,
            p90_limit_ms: 80_000.0,
            skipped_districts: 0,
            left_queued: 1,
        }),
        mix_ok: true,
        response_times_ok: Some(true),
    };
    let ids = |t: TpccRecord| {
        let mut d = clean(loopback_run());
        d.tpcc = Some(t);
        super::audit(&d)
            .into_iter()
            .filter(|f| f.id.starts_with("tpcc-"))
            .map(|f| (f.id, f.severity))
            .collect::<Vec<_>>()
    };
    assert!(ids(good.clone()).is_empty(), "{:?}", ids(good.clone()));
    let bad = TpccRecord {
        mode: "no-wait".into(),
        terminals: 101,
        measured_minutes: 10.0,
        mix_ok: false,
        types: types([46.0, 42.0, 4.0, 4.0, 4.0], 6000.0),
        response_times_ok: Some(false),
        new_orders_database: Some(4000),
        ..good.clone()
    };
    let found = ids(bad);
    for (id, severity) in [
        ("tpcc-no-wait", Severity::Warn),
        ("tpcc-few-warehouses", Severity::Warn),
        ("tpcc-short", Severity::Info),
        ("tpcc-mix", Severity::Warn),
        ("tpcc-response-times", Severity::Critical),
        ("tpcc-nopm-differs", Severity::Warn),
    ] {
        assert!(found.contains(&(id.to_string(), severity)), "{id}: {found:?}");
    }
    delivery_deferred_keeping_up_and_skipping_little(&good, &ids);
    mix_names_the_decks_dealt(good);
}

/// Spec mode wants Delivery deferred; a deferred one's worker must keep up, and more than 1%
/// of districts skipped is said.
fn delivery_deferred_keeping_up_and_skipping_little(
    good: &TpccRecord,
    ids: &dyn Fn(TpccRecord) -> Vec<(String, Severity)>,
) {
    let inline = TpccRecord { deferred_delivery: None, ..good.clone() };
    assert_eq!(ids(inline), [("tpcc-delivery-inline".to_string(), Severity::Info)]);
    let no_wait_inline = TpccRecord { deferred_delivery: None, mode: "no-wait".into(), ..good.clone() };
    assert_eq!(
        ids(no_wait_inline),
        [("tpcc-no-wait".to_string(), Severity::Warn)],
        "no-wait runs it inline, as HammerDB"
    );
    let d = good.deferred_delivery.clone().unwrap();
    let behind = TpccDeferredRecord { left_queued: 60, ..d.clone() };
    let found = ids(TpccRecord { deferred_delivery: Some(behind), ..good.clone() });
    assert_eq!(found, [("tpcc-delivery-backlog".to_string(), Severity::Warn)]);
    // 1% of 52,000 districts is 520: at it nothing is said, above it the skips are.
    let at = TpccDeferredRecord { skipped_districts: 520, ..d.clone() };
    assert!(ids(TpccRecord { deferred_delivery: Some(at), ..good.clone() }).is_empty());
    let over = TpccDeferredRecord { skipped_districts: 521, ..d };
    let found = ids(TpccRecord { deferred_delivery: Some(over), ..good.clone() });
    assert_eq!(found, [("tpcc-delivery-skipped".to_string(), Severity::Info)]);
}

/// A combined result of three shards made from the loopback run: rows whose starts, clocks,
/// rates and CPU the shard rules judge.
fn combined(change: &dyn Fn(&mut [crate::model::shard::ShardRow])) -> Vec<Finding> {
    use crate::model::shard::{ShardRecord, ShardRow, ShardStart};
    let d = clean(loopback_run());
    let mut rows: Vec<ShardRow> = (0..3)
        .map(|i| ShardRow {
            shard: ShardRecord {
                index: i,
                count: 3,
                key: "k".into(),
                total_threads: 6,
                threads: 2,
                first_client: 2 * i,
                total_rate: None,
                reads_server_facts: i == 0,
                starts: vec![ShardStart {
                    agreed_us: 1_000_000,
                    started_us: 1_000_100 + i as i64 * 100,
                    ended_us: 61_000_000 + i as i64 * 1000,
                    clock_offset_us: -20,
                    clock_uncertainty_us: 50,
                    bound_us: 2_050,
                    waited_s: 0.5,
                }],
                not_ended: Vec::new(),
            },
            source: format!("shard-{i}.json"),
            client: d.conditions.client.clone(),
            client_cost: d.client_cost.clone(),
            measured_s: 60.0,
            events: 60_000,
            tps: 1000.0,
            qps: 1000.0,
            p95_us: 900.0,
            event_p95_us: None,
            errors: 0,
            status: crate::model::RunStatus::Completed,
        })
        .collect();
    change(&mut rows);
    audit(&ResultDocument { shards: rows, ..d })
}

#[test]
fn shard_rules_read_the_rows() {
    let ids = |found: Vec<Finding>| -> Vec<String> {
        found.into_iter().map(|f| f.id).filter(|id| id.starts_with("shard")).collect()
    };
    assert!(ids(combined(&|_| {})).is_empty(), "shards that kept together: no finding");
    let late = combined(&|rows| rows[2].shard.starts[0].started_us += 10_000);
    let skew = with_id(&late, "shard-skew");
    assert_eq!(skew.len(), 1, "{late:#?}");
    assert_eq!(skew[0].evidence["start_spread_ms"], json!(10.2));
    assert_eq!(skew[0].evidence["bound_ms"], json!(4.1));
    assert_eq!(ids(combined(&|rows| rows[1].shard.starts[0].ended_us += 30_000)), ["shard-skew"]);
    let off = combined(&|rows| rows[1].shard.starts[0].clock_offset_us = 250_000);
    assert_eq!(with_id(&off, "shard-clock-offset")[0].evidence["offsets_ms"], json!({ "1": 250.0 }));
    let slow = combined(&|rows| rows[2].tps = 700.0);
    let uneven = with_id(&slow, "shard-uneven");
    assert_eq!(uneven[0].evidence["slowest_shard"], json!(2));
    assert!(uneven[0].title.contains("30% fewer"), "{}", uneven[0].title);
    assert!(with_id(&combined(&|rows| rows[2].tps = 850.0), "shard-uneven").is_empty(), "15% is within");
    let busy = combined(&|rows| {
        rows[0].client_cost.saturated = true;
        rows[0].client_cost.warning = Some("a client worker thread was busy 97%".into());
    });
    assert_eq!(with_id(&busy, "shard-client-saturated")[0].evidence["shard"], json!(0));
    assert_eq!(ids(combined(&|rows| rows[0].shard.not_ended = vec![2])), ["shard-counters-partial"]);
}

/// Evidence carries no float noise: a measured 9.000345734000001 s reads 9.00035.
#[test]
fn evidence_numbers_are_short() {
    let mut d = loopback_run();
    d.conditions.run.measured_s = 9.000345734000001;
    d.conditions.run.status = crate::model::RunStatus::Interrupted;
    let found = audit(&d);
    let short = with_id(&found, "incomplete-run");
    assert_eq!(short.len(), 1, "{found:#?}");
    assert_eq!(short[0].evidence["measured_s"], json!(9.00035));
    assert_eq!(serde_json::to_string(&short[0].evidence["measured_s"]).unwrap(), "9.00035");
}

/// Spec-mode TPC-C: clients that pause between transactions are not "at maximum throughput".
#[test]
fn a_closed_loop_with_pauses_is_not_called_maximum_throughput() {
    let title = |d: &ResultDocument| with_id(&super::audit(d), "closed-loop-latency")[0].title.clone();
    let mut d = loopback_run();
    assert!(title(&d).ends_with("at maximum throughput"), "{}", title(&d));
    let thinking = TransactionRecord {
        weight: 1,
        share: 1.0,
        begin: true,
        think_ms: 12_000,
        think: Some("negative exponential, mean 12000 ms".into()),
        keying: None,
        statements: vec![],
        deferred: false,
    };
    d.conditions.workload.transactions.insert("new_order".into(), thinking);
    assert!(title(&d).contains("whose clients pause between transactions"), "{}", title(&d));
}

/// 100 clients on 2 cores crowd them when they are busy, not when they mostly pause (TPC-C's
/// terminals in spec mode are busy a fraction of a percent of the time).
#[test]
fn many_clients_crowd_the_cores_only_when_they_are_busy() {
    let crowded = |busy_s_avg: f64| {
        let mut d = clean(loopback_run());
        d.conditions.server.same_host_as_client = true;
        d.conditions.run.threads = 100;
        let f = d.fairness.get_or_insert_with(Default::default);
        (f.clients, f.busy_s_avg) = (100, busy_s_avg);
        !with_id(&super::audit(&d), "connections").is_empty()
    };
    assert!(crowded(600.0), "always busy");
    assert!(!crowded(0.3), "busy 0.3 s of 600");
}

/// Seconds that alternate 30% around their mean vary at 700 events a second; at 5 a second
/// (100 TPC-C terminals in spec mode) counting alone spreads them that much.
#[test]
fn few_events_a_second_vary_by_counting_alone() {
    let varied = |mean: f64| {
        let mut d = clean(loopback_run());
        for (n, i) in d.intervals.iter_mut().enumerate() {
            i.event.per_s = if n % 2 == 0 { mean * 1.3 } else { mean * 0.7 };
        }
        !with_id(&super::audit(&d), "high-variance").is_empty()
    };
    assert!(varied(700.0));
    assert!(!varied(5.0));
}

/// The mix finding says how much of a deck each terminal dealt: 100 terminals that
/// completed 2,900 transactions of decks of 100 dealt 0.3 of one.
fn mix_names_the_decks_dealt(good: crate::model::tpcc::TpccRecord) {
    let mut d = clean(loopback_run());
    let weights = [("new_order", 45), ("payment", 43), ("order_status", 4), ("delivery", 4), ("stock_level", 4)];
    for (name, weight) in weights {
        let tx = TransactionRecord {
            weight,
            share: 0.0,
            begin: true,
            think_ms: 0,
            think: None,
            keying: None,
            statements: vec![],
            deferred: false,
        };
        d.conditions.workload.transactions.insert(name.into(), tx);
    }
    d.conditions.workload.file = Some(crate::model::WorkloadFileRecord {
        path: "tpcc".into(),
        sha256: String::new(),
        content: String::new(),
        overrides: Default::default(),
        params: Default::default(),
        pick: Some("deck".into()),
    });
    let mut short = crate::model::tpcc::TpccRecord { terminals: 100, mix_ok: false, ..good };
    for (ty, count) in short.types.iter_mut().zip([1305, 1225, 120, 130, 120]) {
        ty.count = count;
    }
    d.tpcc = Some(short);
    let mix = super::audit(&d).into_iter().find(|f| f.id == "tpcc-mix").expect("tpcc-mix");
    assert!(
        mix.title.ends_with("(each terminal completed about 29 transactions, 0.3 of its decks of 100)"),
        "{}",
        mix.title
    );
}
