//! prepare / run / cleanup on all three targets, and the statement mix of every workload
//! counted by fairbench per statement (MariaDB's own counters: tests/mariadb_counters.rs).

mod common;
use common::*;

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn lifecycle(kind: Kind) {
    let db = TestDb::new(kind);
    let p = db.fairbench(&["prepare", "oltp_read_write", "--tables=2", "--table-size=500", "--threads=2"]);
    assert!(p.status.success(), "{}", text(&p));
    assert_eq!(db.tables(), vec!["sbtest1", "sbtest2"]);
    assert_eq!((db.count("sbtest1"), db.count("sbtest2")), (500, 500));

    // Existing tables are never overwritten silently.
    let again = db.fairbench(&["prepare", "oltp_read_write", "--tables=2", "--table-size=500"]);
    assert_eq!(again.status.code(), Some(2), "{}", text(&again));
    assert!(stderr(&again).contains("already exists"), "{}", text(&again));
    let over = db.fairbench(&["prepare", "oltp_read_write", "--tables=2", "--table-size=300", "--overwrite"]);
    assert!(over.status.success(), "{}", text(&over));
    assert_eq!(db.count("sbtest2"), 300);

    // --events=0 is no limit, as in sysbench: the time limit ends the run.
    let doc = db.run_json(&["run", "oltp_point_select", "--tables=2", "--table-size=300", "--events=0", "--time=1"]);
    assert_eq!(doc["conditions"]["run"]["events_limit"], serde_json::Value::Null);
    assert!(doc["conditions"]["run"]["events"].as_u64().unwrap() > 0);

    // A run of N events on prepared tables.
    let doc = db.run_json(&["run", "oltp_read_write", "--tables=2", "--table-size=300", "--events=40", "--threads=2"]);
    assert_eq!(doc["conditions"]["run"]["status"], "completed");
    assert_eq!(doc["conditions"]["run"]["events"], 40);
    assert_eq!(doc["conditions"]["run"]["loop_model"], "closed");
    assert!(!doc["intervals"].as_array().unwrap().is_empty());
    assert!(!doc.to_string().contains("fairbench_test:fairbench_test"), "no password in results");
    for class in ["total", "read", "write", "commit", "other", "event"] {
        let s = &doc["stats"][class];
        for key in ["count", "min_us", "max_us", "mean_us", "p50_us", "p95_us", "p99_us", "p999_us", "qps", "histogram"]
        {
            assert!(!s[key].is_null(), "stats.{class}.{key} missing");
        }
        assert!(s["min_us"].as_f64() <= s["p50_us"].as_f64() && s["p999_us"].as_f64() <= s["max_us"].as_f64());
    }

    // sysbench's cleanup --tables N drops sbtest1..N only.
    let c = db.fairbench(&["cleanup", "oltp_read_write", "--tables=1"]);
    assert!(c.status.success(), "{}", text(&c));
    assert_eq!(db.tables(), vec!["sbtest2"]);
    let p = db.fairbench(&["prepare", "oltp_read_write", "--tables=2", "--table-size=300", "--overwrite"]);
    assert!(p.status.success(), "{}", text(&p));

    // A table fairbench did not create survives cleanup, and blocks writes.
    db.exec("CREATE TABLE sbtest9 (id INTEGER PRIMARY KEY)");
    let c = db.fairbench(&["cleanup", "oltp_read_write"]);
    assert!(c.status.success(), "{}", text(&c));
    assert!(stderr(&c).contains("left sbtest9 alone"), "{}", text(&c));
    assert_eq!(db.tables(), vec!["sbtest9"]);

    // Run before prepare: one clear line, exit 2.
    let r = db.fairbench(&["run", "oltp_point_select", "--time=1"]);
    assert_eq!(r.status.code(), Some(2), "{}", text(&r));
    let err = stderr(&r);
    assert!(err.contains("sbtest1 does not exist") && err.contains("fairbench prepare"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");

    db.exec("CREATE TABLE sbtest1 (id INTEGER PRIMARY KEY, k INTEGER, c CHAR(120), pad CHAR(60))");
    let w = db.fairbench(&["run", "oltp_update_index", "--events=5"]);
    assert_eq!(w.status.code(), Some(2), "{}", text(&w));
    assert!(stderr(&w).contains("not created by fairbench"), "{}", text(&w));
    let p = db.fairbench(&["prepare", "oltp_update_index", "--overwrite"]);
    assert_eq!(p.status.code(), Some(2), "{}", text(&p));
    assert_eq!(db.count("sbtest1"), 0, "foreign table untouched");
    db.exec("DROP TABLE sbtest1");
    db.exec("DROP TABLE sbtest9");

    // sysbench's quirk: oltp_insert with --auto-inc=off prepares EMPTY tables.
    let p = db.fairbench(&["prepare", "oltp_insert", "--auto-inc=off", "--table-size=1000"]);
    assert!(p.status.success(), "{}", text(&p));
    assert_eq!(db.count("sbtest1"), 0);
    let doc = db.run_json(&["run", "oltp_insert", "--auto-inc=off", "--table-size=1000", "--events=50", "--threads=2"]);
    assert_eq!(doc["statements"]["inserts"]["count"], 50);
    assert_eq!(db.count("sbtest1"), 50);
    let c = db.fairbench(&["cleanup"]);
    assert!(c.status.success(), "{}", text(&c));
    assert!(db.tables().is_empty());
}

fn mix(kind: Kind, events: u64) {
    let db = TestDb::new(kind);
    for w in WORKLOADS {
        let p = db.fairbench(&["prepare", w, "--tables=2", "--table-size=2000", "--threads=2"]);
        assert!(p.status.success(), "{}", text(&p));
        let ev = events.to_string();
        let ev_arg = format!("--events={ev}");
        let doc = db.run_json(&["run", w, "--tables=2", "--table-size=2000", &ev_arg, "--threads=2"]);
        assert_statement_counts(&doc, w, events);
        let c = db.fairbench(&["cleanup"]);
        assert!(c.status.success(), "{}", text(&c));
    }
}

#[test]
fn sqlite_prepare_run_cleanup() {
    lifecycle(Kind::Sqlite);
}

#[test]
fn mysql_prepare_run_cleanup() {
    lifecycle(Kind::Mysql);
}

#[test]
fn postgres_prepare_run_cleanup() {
    lifecycle(Kind::Postgres);
}

#[test]
fn sqlite_every_workload_sends_the_contract_mix() {
    mix(Kind::Sqlite, 300);
}

#[test]
fn postgres_every_workload_sends_the_contract_mix() {
    mix(Kind::Postgres, 300);
}

#[test]
fn skip_trx_and_range_selects_off_change_the_mix() {
    let db = TestDb::new(Kind::Sqlite);
    assert!(db.fairbench(&["prepare", "oltp_read_only", "--table-size=500"]).status.success());
    let doc = db.run_json(&[
        "run",
        "oltp_read_only",
        "--table-size=500",
        "--events=20",
        "--skip-trx=on",
        "--range_selects=off",
    ]);
    let st = doc["statements"].as_object().unwrap();
    assert_eq!(st.keys().collect::<Vec<_>>(), vec!["point_selects"]);
    assert_eq!(st["point_selects"]["count"], 200);
}

/// A MariaDB user granted only `ALL ON db.*` (enough for sysbench) can prepare, run and
/// clean up: what it may not read (replication status) is recorded as not visible.
#[test]
fn mariadb_user_with_only_database_privileges_can_benchmark() {
    struct User(String);
    impl Drop for User {
        fn drop(&mut self) {
            mysql_exec(&format!("DROP USER IF EXISTS '{}'@'127.0.0.1'", self.0));
        }
    }
    let db = TestDb::new(Kind::Mysql);
    let user = User(format!("fbl_{}", std::process::id()));
    mysql_exec(&format!(
        "CREATE USER '{u}'@'127.0.0.1' IDENTIFIED BY 'limited_pw'; GRANT ALL ON {d}.* TO '{u}'@'127.0.0.1'",
        u = user.0,
        d = db.name
    ));
    let host = mysql_base().rsplit('@').next().unwrap().to_string();
    let target = format!("--target=mysql://{}:limited_pw@{host}/{}", user.0, db.name);
    let out = db.dir.path().join("limited.json");
    let args: Vec<String> = ["bench", "oltp_point_select", "--table-size=500", "--events=50"]
        .iter()
        .map(|s| s.to_string())
        .chain([target.clone(), format!("--out={}", out.display())])
        .collect();
    let o = fairbench_in(db.dir.path(), &args);
    assert!(o.status.success(), "{}", text(&o));
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let role = doc["conditions"]["server"]["replication_role"].as_str().unwrap();
    assert!(role.starts_with("unknown: not visible to this user"), "{role}");
    // ... and the audit says what the result cannot tell.
    let ids: Vec<&str> = doc["audit"].as_array().unwrap().iter().filter_map(|f| f["id"].as_str()).collect();
    assert!(ids.contains(&"not-visible"), "{ids:?}");
    let o = fairbench_in(db.dir.path(), &["cleanup".to_string(), target]);
    assert!(o.status.success(), "{}", text(&o));
}
