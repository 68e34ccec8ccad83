//! Measurement you can trust: a server stall shows in an open loop's p99 and hides in a
//! closed loop's; merged histograms are exact; timelines, scatter and memory stay bounded.

mod common;
use common::*;
use fairbench::stats::LatencyHistogram;
use serde_json::Value;
use std::time::Duration;

/// Holds an exclusive lock on sbtest1 for one second (every query on it waits).
fn stall(db: &TestDb) {
    db.exec("BEGIN; LOCK TABLE sbtest1 IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(1); COMMIT;");
}

#[test]
fn a_one_second_stall_shows_in_open_loop_p99_and_hides_in_closed_loop() {
    let db = TestDb::new(Kind::Postgres);
    assert!(db.fairbench(&["prepare", "oltp_point_select", "--table-size=1000"]).status.success());

    let open_out = db.dir.path().join("open.json");
    let mut child = spawn_run(
        &db,
        &["run", "oltp_point_select", "--table-size=1000", "--threads=4", "--time=6", "--rate=200"],
        &open_out,
    );
    let (_, rest) = wait_until_measuring(&mut child);
    let drain = std::thread::spawn(move || std::io::copy(&mut { rest }, &mut std::io::sink()));
    stall(&db);
    let open = finish(child, &open_out);
    drain.join().unwrap().unwrap();

    let closed_out = db.dir.path().join("closed.json");
    let mut child =
        spawn_run(&db, &["run", "oltp_point_select", "--table-size=1000", "--threads=4", "--time=6"], &closed_out);
    let (_, rest) = wait_until_measuring(&mut child);
    let drain = std::thread::spawn(move || std::io::copy(&mut { rest }, &mut std::io::sink()));
    stall(&db);
    let closed = finish(child, &closed_out);
    drain.join().unwrap().unwrap();

    assert_eq!(open["conditions"]["run"]["loop_model"], "open");
    assert_eq!(closed["conditions"]["run"]["loop_model"], "closed");
    let us = |d: &Value, path: &[&str]| path.iter().fold(d, |v, k| &v[*k]).as_f64().unwrap();
    // Open loop: ~200 events were due during the stall and waited up to 1 s: p99 sees it.
    let open_p99 = us(&open, &["stats", "event", "p99_us"]);
    assert!(open_p99 > 500_000.0, "open-loop p99 {open_p99} us should show the 1 s stall");
    // ... while service time (from the actual start) does not: only 4 events were in flight.
    let service_p99 = us(&open, &["service", "event", "p99_us"]);
    assert!(service_p99 < 100_000.0, "service p99 {service_p99} us");
    assert!(open["open_loop"]["late"].as_u64().unwrap() >= 100, "{}", open["open_loop"]);
    // Closed loop: the stall is in the max but hidden from p99.
    let closed_max = us(&closed, &["stats", "event", "max_us"]);
    let closed_p99 = us(&closed, &["stats", "event", "p99_us"]);
    assert!(closed_max > 800_000.0, "closed-loop max {closed_max} us should hold the stall");
    assert!(closed_p99 < 100_000.0, "closed-loop p99 {closed_p99} us hides the stall");
}

fn decode(stats: &Value) -> LatencyHistogram {
    let ns = |k: &str| (stats[k].as_f64().unwrap() * 1000.0).round() as u64;
    LatencyHistogram::decode(
        stats["histogram"].as_str().unwrap(),
        ns("min_us"),
        ns("max_us"),
        (stats["sum_us"].as_f64().unwrap() * 1000.0) as u128,
    )
    .unwrap()
}

#[test]
fn sqlite_merged_histograms_equal_the_histogram_of_all_samples() {
    let db = TestDb::new(Kind::Sqlite);
    assert!(db.fairbench(&["prepare", "oltp_read_write", "--table-size=2000"]).status.success());
    let doc = db.run_json(&["run", "oltp_read_write", "--table-size=2000", "--threads=3", "--time=3"]);
    // Per-statement histograms (from three client threads) merged = the total class.
    let mut merged = LatencyHistogram::new();
    for (_, s) in doc["statements"].as_object().unwrap() {
        merged.add(&decode(s));
    }
    let total = decode(&doc["stats"]["total"]);
    assert_eq!(merged.count(), total.count());
    for p in [50.0, 90.0, 95.0, 99.0, 99.9, 100.0] {
        assert_eq!(merged.percentile_ns(p), total.percentile_ns(p), "p{p}");
    }
    // Reads = the five SELECT kinds merged.
    let mut reads = LatencyHistogram::new();
    for k in ["point_selects", "simple_ranges", "sum_ranges", "order_ranges", "distinct_ranges"] {
        reads.add(&decode(&doc["statements"][k]));
    }
    assert_eq!(reads.percentile_ns(99.0), decode(&doc["stats"]["read"]).percentile_ns(99.0));
    // The timeline accounts for every event exactly once.
    let per_interval: u64 =
        doc["intervals"].as_array().unwrap().iter().map(|i| i["event"]["count"].as_u64().unwrap()).sum();
    assert_eq!(per_interval, doc["stats"]["event"]["count"].as_u64().unwrap());
}

#[test]
fn timelines_keep_commit_latency_and_a_bounded_scatter() {
    let db = TestDb::new(Kind::Mysql);
    assert!(db.fairbench(&["prepare", "oltp_read_write", "--table-size=2000"]).status.success());
    let doc = db.run_json(&["run", "oltp_read_write", "--table-size=2000", "--threads=2", "--time=3"]);
    let intervals = doc["intervals"].as_array().unwrap();
    assert!(intervals.len() >= 3);
    let mut commits = 0;
    for i in intervals {
        let c = &i["commit"];
        assert!(c["min_us"].as_f64() <= c["p50_us"].as_f64() && c["p999_us"].as_f64() <= c["max_us"].as_f64());
        let scatter = &i["scatter"];
        assert_eq!(scatter["of"], "commit");
        let points = scatter["points"].as_array().unwrap();
        assert!(points.len() <= 100);
        assert_eq!(scatter["seen"].as_u64().unwrap(), c["count"].as_u64().unwrap());
        assert_eq!(points.len() as u64, c["count"].as_u64().unwrap().min(100));
        for p in points {
            // Guaranteed: a point is recorded before the swap that ends its interval. Not
            // guaranteed: after the interval's start (a thread preempted between finishing a
            // COMMIT and recording it lands in the next interval).
            let (t, lat) = (p[0].as_f64().unwrap(), p[1].as_f64().unwrap());
            let end = i["from_s"].as_f64().unwrap() + i["duration_s"].as_f64().unwrap();
            assert!(t >= 0.0 && t <= end + 1e-6, "{t} in {i}");
            assert!(lat >= c["min_us"].as_f64().unwrap() - 0.01 && lat <= c["max_us"].as_f64().unwrap() + 0.01);
        }
        commits += c["count"].as_u64().unwrap();
        assert!(i["client_cpu_pct"].as_f64().unwrap() >= 0.0);
    }
    assert_eq!(commits, doc["stats"]["commit"]["count"].as_u64().unwrap());
    let client = &doc["client_cost"];
    assert!(client["cpu_s"].as_f64().unwrap() > 0.0 && client["cpu_per_query_us"].as_f64().unwrap() > 0.0);
    assert!(client["busiest_worker_pct"].as_f64().unwrap() > 0.0);
}

fn rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status.lines().find(|l| l.starts_with("VmRSS:")).unwrap().split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn sqlite_memory_stays_bounded_over_a_long_run() {
    let db = TestDb::new(Kind::Sqlite);
    assert!(db.fairbench(&["prepare", "oltp_read_write", "--table-size=2000"]).status.success());
    let out = db.dir.path().join("long.json");
    let child = spawn_run(&db, &["run", "oltp_read_write", "--table-size=2000", "--threads=2", "--time=16"], &out);
    std::thread::sleep(Duration::from_secs(4));
    let early = rss_kb(child.id());
    std::thread::sleep(Duration::from_secs(10));
    let late = rss_kb(child.id());
    let doc = finish(child, &out);
    // Busy the whole time (a floor far below this machine's rate, even with CPUs shared).
    assert!(doc["stats"]["event"]["count"].as_u64().unwrap() > 1_000);
    // The timeline grows by about one small entry a second. Histograms grow only with the
    // largest latency recorded: each to at most the size that latency needs (1,024 counts
    // of 8 bytes per power of two above 2^10 ns, plus two). A run holds one per statement
    // and one for events in each of its recorders (one per client thread, the merge, its
    // spare, the report window and the totals), plus at most 16 of the classes.
    let statements = doc["statements"].as_object().unwrap().len() as u64;
    let histograms = (2 + 4) * (statements + 1) + 16;
    let max_ns = (doc["stats"]["event"]["max_us"].as_f64().unwrap() * 1e3).max(2.0);
    let kb_each = ((max_ns.log2().ceil() as u64).saturating_sub(10) + 2) * 8;
    let allowance = histograms * kb_each;
    assert!(
        late <= early + 2_048 + allowance,
        "RSS grew from {early} kB to {late} kB (histograms may take {allowance} kB)"
    );
}

#[test]
fn sqlite_poisson_open_loop_meets_its_rate_and_says_so() {
    let db = TestDb::new(Kind::Sqlite);
    assert!(db.fairbench(&["prepare", "oltp_point_select", "--table-size=1000"]).status.success());
    let o = db.fairbench(&[
        "run",
        "oltp_point_select",
        "--table-size=1000",
        "--rate=400",
        "--arrival=poisson",
        "--time=3",
        "--threads=2",
        "--out=r.json",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("open loop at 400 events/s, Poisson arrivals"), "{stdout}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(db.dir.path().join("r.json")).unwrap()).unwrap();
    let tps = doc["stats"]["event"]["qps"].as_f64().unwrap();
    assert!((tps - 400.0).abs() < 60.0, "{tps}");
    assert_eq!(doc["open_loop"]["arrival"], "poisson");
    assert_eq!(doc["open_loop"]["dropped"], 0);
}

#[test]
fn sqlite_overloaded_open_loop_drops_beyond_its_backlog_and_never_aborts() {
    let db = TestDb::new(Kind::Sqlite);
    assert!(db.fairbench(&["prepare", "oltp_read_write", "--table-size=1000"]).status.success());
    // Far more than one client can do: the backlog fills, the oldest events are dropped.
    let doc = db.run_json(&[
        "run",
        "oltp_read_write",
        "--table-size=1000",
        "--rate=1000000",
        "--max-backlog=2000",
        "--time=2",
        "--threads=1",
    ]);
    assert_eq!(doc["conditions"]["run"]["status"], "completed");
    let ol = &doc["open_loop"];
    assert!(ol["dropped"].as_u64().unwrap() > 100_000, "{ol}");
    assert!(ol["late"].as_u64().unwrap() > 0, "{ol}");
    // Dropped events were never sent; the ones sent waited at most ~the backlog's 2 ms of
    // arrivals plus one event's service time, not the whole run.
    assert!(doc["stats"]["event"]["p50_us"].as_f64().unwrap() < 500_000.0);
}
