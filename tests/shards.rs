//! Runs split over client hosts (`--shard I/N`), with the shards as processes on this
//! machine against real MariaDB and PostgreSQL: a common start through the barrier in the
//! database, `combine`'s exact merge, client ids and random streams of their own, server
//! counters read once, a missing shard, shards that do not belong together.

mod common;

use base64::Engine;
use common::{text, Kind, TestDb};
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use mysql_async::prelude::Queryable;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

/// One test at a time: three shards of one run on two cores are load enough; shards of
/// several tests at once would wake late for their common start for want of a core.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Starts shard `i` of `n`: `fairbench ARGS --shard i/n --out DIR/shard-i.json`. Given a
/// key in `pod`, as a Kubernetes Indexed Job's pod would: `--shard n`, the index in
/// JOB_COMPLETION_INDEX and the key in FAIRBENCH_SHARD_KEY.
fn start(db: &TestDb, args: &[&str], i: u32, n: u32, pod: Option<&str>) -> Child {
    let mut cmd = Command::new(common::bin());
    cmd.args(args).arg(format!("--target={}", db.url));
    match pod {
        None => cmd.arg(format!("--shard={i}/{n}")),
        Some(key) => {
            cmd.arg(format!("--shard={n}")).env("JOB_COMPLETION_INDEX", i.to_string()).env("FAIRBENCH_SHARD_KEY", key)
        }
    };
    // prepare writes no result.
    if args.first() != Some(&"prepare") {
        cmd.arg(format!("--out={}", shard_file(db, i).display()));
    }
    cmd.current_dir(db.dir.path()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
}

fn shard_file(db: &TestDb, i: u32) -> PathBuf {
    db.dir.path().join(format!("shard-{i}.json"))
}

/// Runs `n` shards at once and waits for all of them.
fn run_shards(db: &TestDb, args: &[&str], n: u32) -> Vec<Output> {
    run_pods(db, args, n, None)
}

/// [`run_shards`], started as pods (see [`start`]) when given a key.
fn run_pods(db: &TestDb, args: &[&str], n: u32, pod: Option<&str>) -> Vec<Output> {
    let children: Vec<Child> = (0..n).map(|i| start(db, args, i, n, pod)).collect();
    let outputs: Vec<Output> = children.into_iter().map(|c| c.wait_with_output().unwrap()).collect();
    if outputs.iter().any(|o| !o.status.success()) {
        let all: Vec<String> = outputs.iter().enumerate().map(|(i, o)| format!("shard {i}: {}", text(o))).collect();
        panic!("a shard failed:\n{}", all.join("\n"));
    }
    outputs
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn combine(db: &TestDb, inputs: &[PathBuf]) -> (Output, PathBuf) {
    let out = db.dir.path().join(format!("all-{}.json", inputs.len()));
    let mut args: Vec<String> = vec!["combine".into()];
    args.extend(inputs.iter().map(|p| p.display().to_string()));
    args.extend(["-o".into(), out.display().to_string()]);
    (common::fairbench_in(db.dir.path(), &args), out)
}

fn histogram(stats: &Value) -> Histogram<u64> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(stats["histogram"].as_str().unwrap()).unwrap();
    Deserializer::new().deserialize(&mut bytes.as_slice()).unwrap()
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

/// Three shards of a closed-loop run start together (one agreed instant; starts beyond their
/// stated bound are said by combine), and the combined result is the exact merge: counts
/// add up, and every percentile is the one of a histogram holding every shard's samples;
/// the server's counters count the run once.
#[test]
fn mariadb_shards_start_together_and_combine_exactly() {
    let _serial = serial();
    let db = TestDb::new(Kind::Mysql);
    let o = db.fairbench(&["prepare", "oltp_point_select", "--table-size", "5000"]);
    assert!(o.status.success(), "{}", text(&o));
    let key = format!("test-{}", db.name);
    let args = ["run", "oltp_point_select", "--table-size", "5000", "--threads", "6", "--time", "3"];
    let args: Vec<&str> = args.into_iter().chain(["--shard-key", &key, "--print-result"]).collect();
    let outputs = run_shards(&db, &args, 3);
    let shards: Vec<Value> = (0..3).map(|i| read(&shard_file(&db, i))).collect();

    // A common start: one agreed instant for all, none starting before it. Within its bound
    // when the host kept time; a host too busy to wake in time (these tests share 2 cores
    // with the server and each other) is what combine's shard-skew finding is for, so the
    // bound is checked there, on the shards' own figures, not assumed.
    let agreed = u(&shards[0]["conditions"]["run"]["shard"]["starts"][0]["agreed_us"]);
    let mut started = Vec::new();
    for (i, s) in shards.iter().enumerate() {
        let r = &s["conditions"]["run"]["shard"];
        assert_eq!(u(&r["index"]), i as u64);
        assert_eq!(u(&r["first_client"]), 2 * i as u64, "clients 0-1, 2-3, 4-5");
        assert_eq!(u(&s["conditions"]["run"]["threads"]), 2);
        let start = &r["starts"][0];
        assert_eq!(u(&start["agreed_us"]), agreed);
        let late = start["started_us"].as_i64().unwrap() - agreed as i64;
        let uncertainty = start["clock_uncertainty_us"].as_i64().unwrap();
        assert!(
            late >= -uncertainty,
            "shard {i} started {late} us after the agreed instant (its clock: +-{uncertainty} us)"
        );
        assert!(late < 1_000_000, "shard {i} started {late} us after the agreed instant");
        started.push((late, start["bound_us"].as_i64().unwrap()));
        // Only shard 0 reads the server's counters.
        let delta = s["conditions"]["server"]["status_delta"].as_object().unwrap();
        assert_eq!(delta.is_empty(), i != 0, "shard {i}'s counters: {delta:?}");
    }

    let files: Vec<PathBuf> = (0..3).map(|i| shard_file(&db, i)).collect();
    let (o, out) = combine(&db, &files);
    assert!(o.status.success(), "{}", text(&o));
    let all = read(&out);
    let report = String::from_utf8_lossy(&o.stdout);
    assert!(report.contains("Client hosts: 3 shards"), "{report}");
    // Starts farther apart than two shards' bounds are said, never hidden.
    let spread = started.iter().map(|s| s.0).max().unwrap() - started.iter().map(|s| s.0).min().unwrap();
    let bound = started.iter().map(|s| s.1).max().unwrap();
    let skew = all["audit"].as_array().unwrap().iter().any(|f| f["id"] == "shard-skew");
    if spread > 2 * bound {
        assert!(skew, "starts {spread} us apart (bound {bound} us each) without shard-skew: {}", all["audit"]);
    }
    assert!(report.lines().any(|l| l.starts_with("all ")), "the combined row:\n{report}");

    // Counts add up; the timeline holds every event.
    let events: u64 = shards.iter().map(|s| u(&s["conditions"]["run"]["events"])).sum();
    assert!(events > 0);
    assert_eq!(u(&all["conditions"]["run"]["events"]), events);
    assert_eq!(u(&all["stats"]["event"]["count"]), events);
    assert_eq!(u(&all["conditions"]["run"]["threads"]), 6);
    // One client host (this machine) counted once, whatever the number of shards on it.
    assert_eq!(all["client_cost"]["cores"], shards[0]["client_cost"]["cores"]);
    let timeline: u64 = all["intervals"].as_array().unwrap().iter().map(|i| u(&i["event"]["count"])).sum();
    assert_eq!(timeline, events, "the merged timeline's entries hold every event");
    let qps: f64 = shards.iter().map(|s| s["stats"]["total"]["qps"].as_f64().unwrap()).sum();
    assert!((all["stats"]["total"]["qps"].as_f64().unwrap() - qps).abs() < 1e-6 * qps);

    // One histogram fed every shard's samples gives the combined percentiles exactly.
    let mut every: Histogram<u64> = Histogram::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
    for s in &shards {
        for v in histogram(&s["stats"]["total"]).iter_recorded() {
            every.record_n(v.value_iterated_to(), v.count_at_value()).unwrap();
        }
    }
    let total = &all["stats"]["total"];
    assert_eq!(every.len(), u(&total["count"]));
    let min = shards.iter().map(|s| s["stats"]["total"]["min_us"].as_f64().unwrap()).fold(f64::MAX, f64::min);
    let max = shards.iter().map(|s| s["stats"]["total"]["max_us"].as_f64().unwrap()).fold(0.0, f64::max);
    assert_eq!(total["min_us"].as_f64().unwrap(), min);
    assert_eq!(total["max_us"].as_f64().unwrap(), max);
    for (key, q) in [("p50_us", 0.5), ("p95_us", 0.95), ("p99_us", 0.99), ("p999_us", 0.999)] {
        let expected = (every.value_at_quantile(q) as f64 / 1000.0).clamp(min, max);
        assert_eq!(total[key].as_f64().unwrap(), expected, "{key}");
    }

    // And so says HdrHistogram's own Python package, an implementation independent of ours.
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/merge-check.py");
    let check = Command::new("python3").arg(script).arg(&out).args(&files).output().unwrap();
    assert!(check.status.success(), "scripts/merge-check.py (scripts/test.sh installs hdrh): {}", text(&check));

    // Server counters: shard 0 read them once, after every shard ended: every SELECT of
    // every shard is in them (and barely anything else).
    let selects = u(&all["conditions"]["server"]["status_delta"]["Com_select"]);
    assert!(selects >= events && selects <= events + 50, "Com_select {selects} for {events} point selects");
    let rows = all["shards"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    assert!(all["audit"].as_array().unwrap().iter().all(|f| f["id"] != "shard-skew"), "{}", all["audit"]);

    // A combined result is a result: audit, report and export read it.
    let html = db.dir.path().join("all.html");
    for args in [
        vec!["audit".to_string(), out.display().to_string()],
        vec!["report".into(), out.display().to_string(), "-o".into(), html.display().to_string()],
        vec!["export".into(), out.display().to_string(), "--csv".into()],
    ] {
        let o = common::fairbench_in(db.dir.path(), &args);
        assert!(o.status.success(), "{args:?}: {}", text(&o));
    }
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<h2>Client hosts</h2><p>3 shards combined"), "the report's shard table");

    // The same shards from their logs (--print-result) combine to the same numbers.
    let log = db.dir.path().join("pods.log");
    let text_of_logs: String = outputs.iter().map(|o| String::from_utf8_lossy(&o.stdout).into_owned()).collect();
    std::fs::write(&log, text_of_logs).unwrap();
    let (o, from_log) = combine(&db, &[log]);
    assert!(o.status.success(), "{}", text(&o));
    let from_log = read(&from_log);
    assert_eq!(from_log["stats"]["total"], all["stats"]["total"]);
}

/// Client ids, `unique` values and random streams differ across shards that share one
/// --rand-seed: what the clients wrote says so.
#[test]
fn mariadb_shards_have_clients_and_streams_of_their_own() {
    let _serial = serial();
    let db = TestDb::new(Kind::Mysql);
    let file = db.dir.path().join("draws.toml");
    std::fs::write(
        &file,
        r#"
[workload]
name = "draws"
description = "each client writes its id, a unique value and random draws"

[[tables]]
name = "draws"
rows = 0
primary_key = ["id"]
columns = [
  { name = "id", type = "bigint", gen = "row" },
  { name = "client", type = "integer", gen = { const = 0 } },
  { name = "n", type = "bigint", gen = { const = 0 } },
  { name = "u", type = "bigint", gen = { const = 0 } },
  { name = "r", type = "bigint", gen = { const = 0 } },
]

[client]
who = "client_id"

[[transactions]]
name = "draw"
params = { id = "unique", n = { sequence = 1 }, r = { uniform = [1, 1000000000] } }

  [[transactions.statements]]
  name = "write"
  sql = "INSERT INTO draws (id, client, n, u, r) VALUES (:id, :who, :n, :id, :r)"
"#,
    )
    .unwrap();
    let file = file.display().to_string();
    let o = db.fairbench(&["prepare", &file]);
    assert!(o.status.success(), "{}", text(&o));
    let key = format!("streams-{}", db.name);
    let args = ["run", &file, "--threads", "6", "--events", "600", "--time", "0", "--rand-seed", "7"];
    let args: Vec<&str> = args.into_iter().chain(["--shard-key", &key]).collect();
    run_shards(&db, &args, 3);
    assert_eq!(db.count("draws"), 600, "every event wrote a row: no unique value collided");
    assert_eq!(db.count_sql("SELECT COUNT(DISTINCT client) FROM draws"), 6, "clients 0..5, each once");
    assert_eq!(db.count_sql("SELECT MAX(client) FROM draws"), 5);
    // Each client's first draw: six clients, six different streams.
    assert_eq!(db.count_sql("SELECT COUNT(DISTINCT r) FROM draws WHERE n = 1"), 6);
}

/// An open loop at rate R over three shards runs at R in total, each shard at its share;
/// the shards started as a Kubernetes Indexed Job starts its pods (index and key from the
/// environment).
#[test]
fn postgres_open_loop_rate_is_shared_by_the_shards() {
    let _serial = serial();
    let db = TestDb::new(Kind::Postgres);
    let o = db.fairbench(&["prepare", "oltp_point_select", "--table-size", "2000"]);
    assert!(o.status.success(), "{}", text(&o));
    let key = format!("rate-{}", db.name);
    let args = ["run", "oltp_point_select", "--table-size", "2000", "--threads", "3", "--time", "4", "--rate", "300"];
    run_pods(&db, &args, 3, Some(&key));
    let files: Vec<PathBuf> = (0..3).map(|i| shard_file(&db, i)).collect();
    for (i, f) in files.iter().enumerate() {
        let s = read(f);
        assert_eq!(s["open_loop"]["rate"].as_f64().unwrap(), 100.0, "each shard's share");
        assert_eq!(s["conditions"]["run"]["shard"]["index"], i as u64, "JOB_COMPLETION_INDEX");
        assert_eq!(s["conditions"]["run"]["shard"]["key"], key.as_str(), "FAIRBENCH_SHARD_KEY");
    }
    let (o, out) = combine(&db, &files);
    assert!(o.status.success(), "{}", text(&o));
    let all = read(&out);
    assert_eq!(all["open_loop"]["rate"].as_f64().unwrap(), 300.0);
    let dropped = u(&all["open_loop"]["dropped"]);
    let achieved = all["stats"]["event"]["qps"].as_f64().unwrap();
    assert_eq!(dropped, 0, "nothing dropped at 100/s per shard");
    assert!((achieved - 300.0).abs() <= 15.0, "{achieved} events/s in total for --rate 300");
}

/// A shard that never comes fails the run with one line naming it, on every shard that came,
/// before anything is measured.
#[test]
fn mariadb_missing_shard_times_out_cleanly() {
    let _serial = serial();
    let db = TestDb::new(Kind::Mysql);
    let o = db.fairbench(&["prepare", "oltp_point_select", "--table-size", "1000"]);
    assert!(o.status.success(), "{}", text(&o));
    let key = format!("missing-{}", db.name);
    let args = ["run", "oltp_point_select", "--table-size", "1000", "--threads", "3", "--time", "2"];
    let args: Vec<&str> = args.into_iter().chain(["--shard-key", &key, "--shard-timeout", "3"]).collect();
    let children: Vec<Child> = (0..2).map(|i| start(&db, &args, i, 3, None)).collect();
    for (i, c) in children.into_iter().enumerate() {
        let o = c.wait_with_output().unwrap();
        assert!(!o.status.success(), "shard {i}: {}", text(&o));
        let stderr = String::from_utf8_lossy(&o.stderr);
        let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
        assert_eq!(errors.len(), 1, "shard {i}: {stderr}");
        assert!(errors[0].contains("missing: shard 2"), "shard {i}: {stderr}");
        assert!(!stderr.contains("Threads started"), "shard {i} measured: {stderr}");
    }
}

/// combine refuses what is not one run's complete set of shards, naming the problem.
#[test]
fn mariadb_combine_refuses_shards_that_do_not_belong_together() {
    let _serial = serial();
    let db = TestDb::new(Kind::Mysql);
    let o = db.fairbench(&["prepare", "oltp_point_select", "--table-size", "1000"]);
    assert!(o.status.success(), "{}", text(&o));
    let key = format!("refuse-{}", db.name);
    let args = ["run", "oltp_point_select", "--table-size", "1000", "--threads", "2", "--time", "1"];
    // A threshold no run passes: a shard does not judge it (exit 0), combine does (exit 3).
    let args: Vec<&str> = args.into_iter().chain(["--shard-key", &key, "--threshold", "errors>0"]).collect();
    run_shards(&db, &args, 2);
    let (a, b) = (shard_file(&db, 0), shard_file(&db, 1));
    let (o, saved) = combine(&db, &[a.clone(), b.clone()]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("threshold failed: errors>0"), "{}", text(&o));
    std::fs::remove_file(saved).unwrap(); // saved all the same; the refusals below write none
                                          // Shard 1 as if it had run another workload.
    let mut other = read(&b);
    other["conditions"]["workload"]["name"] = "oltp_read_only".into();
    let c = db.dir.path().join("other.json");
    std::fs::write(&c, serde_json::to_string(&other).unwrap()).unwrap();
    // Shard 1 as if it had reached another server, one that does not flush at every commit.
    let mut elsewhere = read(&b);
    elsewhere["conditions"]["server"]["variables"]["innodb_flush_log_at_trx_commit"] = "2".into();
    elsewhere["conditions"]["server"].as_object_mut().unwrap().remove("facts");
    let e = db.dir.path().join("elsewhere.json");
    std::fs::write(&e, serde_json::to_string(&elsewhere).unwrap()).unwrap();
    let single = db.run_json(&["run", "oltp_point_select", "--table-size", "1000", "--time", "1"]);
    let d = db.dir.path().join("single.json");
    std::fs::write(&d, serde_json::to_string(&single).unwrap()).unwrap();
    for (inputs, says) in [
        (vec![a.clone()], "shard 1 of 2 is missing"),
        (vec![a.clone(), a.clone()], "shard 0 is given twice"),
        (vec![a.clone(), c.clone()], "differ in workload (oltp_point_select vs oltp_read_only)"),
        (vec![a.clone(), d.clone()], "is not a shard's result"),
        (vec![a.clone(), e.clone()], "differ in server durability"),
    ] {
        let (o, out) = combine(&db, &inputs);
        assert_eq!(o.status.code(), Some(2), "{inputs:?}: {}", text(&o));
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(says), "{inputs:?}: {stderr}");
        assert!(!out.exists());
    }
    // A shard's result is not rerun alone (it would wait for shards that never come).
    let o = common::fairbench_in(db.dir.path(), &["rerun".into(), a.display().to_string()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("rerun every shard"), "{}", text(&o));
}

/// Runs `prepare ARGS --shard i/n` on `n` shards at once; each says what it loaded.
fn prepare_shards(db: &TestDb, args: &[&str], n: u32) -> Vec<String> {
    run_shards(db, args, n).iter().map(|o| String::from_utf8_lossy(&o.stderr).into_owned()).collect()
}

/// Three hosts load sysbench's tables in parts; the tables are complete (indexed, marked)
/// once all have loaded, and a run measures them.
#[test]
fn postgres_prepare_shards_load_their_parts() {
    let _serial = serial();
    let db = TestDb::new(Kind::Postgres);
    let key = format!("prepare-{}", db.name);
    let args = ["prepare", "oltp_read_write", "--tables", "2", "--table-size", "150000", "--shard-key", &key];
    let said = prepare_shards(&db, &args, 3);
    // Parts of 100,000 rows: 4 parts, shards 0..2 take parts 0 and 3, 1, 2.
    for (i, rows) in [(0, 150_000), (1, 50_000), (2, 100_000)] {
        assert!(said[i].contains(&format!("Prepared shard {i} of 3: {rows} rows")), "shard {i}: {}", said[i]);
    }
    assert!(said[0].contains("the tables are complete"), "{}", said[0]);
    for t in ["sbtest1", "sbtest2"] {
        assert_eq!(db.count(t), 150_000);
        assert_eq!(db.count_sql(&format!("SELECT COUNT(DISTINCT id) FROM {t}")), 150_000);
        let indexes = db.count_sql(&format!("SELECT COUNT(*) FROM pg_indexes WHERE tablename = '{t}'"));
        assert_eq!(indexes, 2, "{t}: the primary key and k_1");
    }
    let doc = db.run_json(&["run", "oltp_read_write", "--tables", "2", "--table-size", "150000", "--time", "1"]);
    assert!(u(&doc["conditions"]["run"]["events"]) > 0);
    assert_eq!(db.count_sql("SELECT COUNT(*) FROM fairbench_shards"), 0, "shard 0 removed the run's rows");
}

/// A workload file's tables load in parts from three hosts, and its population checks pass.
#[test]
fn mariadb_prepare_shards_load_a_workload_file() {
    let _serial = serial();
    let db = TestDb::new(Kind::Mysql);
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/workloads/xfer.toml");
    let key = format!("file-{}", db.name);
    let args = ["prepare", file, "--set", "customers=30000", "--shard-key", &key];
    let said = prepare_shards(&db, &args, 3);
    for (i, s) in said.iter().enumerate() {
        assert!(s.contains(&format!("Prepared shard {i} of 3: 10000 rows")), "shard {i}: {s}");
    }
    assert_eq!(db.count("balances"), 30_000);
    let doc = db.run_json(&["run", file, "--set", "customers=30000", "--time", "1", "--threads", "2"]);
    let checks = doc["checks"].as_array().unwrap();
    assert!(!checks.is_empty() && checks.iter().all(|c| c["passed"] == true), "{checks:?}");
}

/// The password of a sharded run appears in no output, no result, no log of results and no
/// row of the barrier: a user of the test's own with a password found nowhere else.
#[test]
fn mariadb_shards_never_write_the_password() {
    let _serial = serial();
    let mut db = TestDb::new(Kind::Mysql);
    let (user, password) = (format!("{}_u", db.name), "Shard-Pw-7q3z");
    common::mysql_exec(&format!("CREATE USER '{user}'@'%' IDENTIFIED BY '{password}'"));
    let _user = DropUser(user.clone());
    common::mysql_exec(&format!("GRANT ALL ON {}.* TO '{user}'@'%'", db.name));
    let base = common::mysql_base();
    let host = base.rsplit_once('@').map(|(_, h)| h).unwrap();
    db.url = format!("mysql://{user}:{password}@{host}/{}", db.name);
    let with_password = db;
    let o = with_password.fairbench(&["prepare", "oltp_point_select", "--table-size", "1000"]);
    assert!(o.status.success(), "{}", text(&o));
    let key = format!("pw-{}", with_password.name);
    let args = ["run", "oltp_point_select", "--table-size", "1000", "--time", "1", "--threads", "2"];
    let args: Vec<&str> = args.into_iter().chain(["--shard-key", &key, "--print-result"]).collect();
    let outputs = run_shards(&with_password, &args, 2);
    let files: Vec<PathBuf> = (0..2).map(|i| shard_file(&with_password, i)).collect();
    let (o, all) = combine(&with_password, &files);
    assert!(o.status.success(), "{}", text(&o));
    let mut seen: Vec<String> = outputs.iter().chain([&o]).map(text).collect();
    seen.extend(files.iter().chain([&all]).map(|f| std::fs::read_to_string(f).unwrap()));
    for s in &seen {
        assert!(!s.contains(password), "the password is written:\n{s}");
    }
    assert!(read(&all)["target"]["url"].as_str().unwrap().contains("***"), "the URL is recorded redacted");
}

/// Drops the test's MariaDB user however the test ends.
struct DropUser(String);

impl Drop for DropUser {
    fn drop(&mut self) {
        common::mysql_exec(&format!("DROP USER IF EXISTS '{}'@'%'", self.0));
    }
}

/// Shards started the obvious way, without --shard-key (the same options, each its own
/// --out, one printing its result) derive one key and meet; shards whose options differ
/// time out naming each other's keys and --shard-key.
#[test]
fn mariadb_shards_without_a_key_meet_and_mismatched_ones_say_why() {
    let _serial = serial();
    let db = TestDb::new(Kind::Mysql);
    let o = db.fairbench(&["prepare", "oltp_point_select", "--table-size", "1000"]);
    assert!(o.status.success(), "{}", text(&o));
    // The database name differs per test run: another run's shards never share this key.
    let spawn = |i: u32, n: u32, extra: &[&str]| {
        let mut cmd = Command::new(common::bin());
        cmd.args(["run", "oltp_point_select", "--table-size", "1000", "--threads", "3", "--time", "2"])
            .args(extra)
            .arg(format!("--target={}", db.url))
            .arg(format!("--shard={i}/{n}"))
            .arg(format!("--out={}", shard_file(&db, i).display()));
        cmd.current_dir(db.dir.path()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
    };
    let children = [spawn(0, 3, &[]), spawn(1, 3, &["--print-result"]), spawn(2, 3, &["-q", "--format", "json"])];
    for (i, c) in children.into_iter().enumerate() {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "shard {i}: {}", text(&o));
    }
    // Shard 1 starts once shard 0 has registered, so its barrier sees shard 0's row.
    let first = spawn(0, 2, &["--shard-timeout", "3"]);
    let registered = || {
        common::rt().block_on(async {
            let mut c = mysql_async::Conn::from_url(&db.url).await.unwrap();
            let n: Option<u64> =
                c.query_first("SELECT COUNT(*) FROM fairbench_shards WHERE shard = 0").await.unwrap_or(Some(0));
            c.disconnect().await.unwrap();
            n.unwrap_or(0) > 0
        })
    };
    let waiting = std::time::Instant::now();
    while !registered() {
        assert!(waiting.elapsed() < std::time::Duration::from_secs(60), "shard 0 never registered");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let second = spawn(1, 2, &["--shard-timeout", "10", "--ps=off"]);
    let _ = first.wait_with_output().unwrap();
    let o = second.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{}", text(&o));
    let error = stderr.lines().find(|l| l.starts_with("error:")).unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        error.contains("1 of 2 shards reached the barrier")
            && error.contains("meanwhile shards registered under other keys: req-")
            && error.contains("(shard 0)")
            && error.contains("start every shard with the same --shard-key"),
        "{error}"
    );
}
