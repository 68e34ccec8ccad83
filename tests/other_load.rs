//! Other load on the server during a run shows in the audit: the server's own counters
//! (MariaDB's Com_*, PostgreSQL's pg_stat_database) count statements fairbench did not send.
//! (That every recipe and built-in workload runs without this finding is asserted where
//! they run: tests/file_workloads.rs and tests/mariadb_counters.rs.)

mod common;

use common::*;
use mysql_async::prelude::Queryable;
use serde_json::Value;

const UPDATES: usize = 400;

/// Runs read-only load, and while it measures, sends UPDATEs from a connection of the
/// test's own; the run is then stopped with Ctrl-C (its result is still written).
fn run_with_other_load(db: &TestDb, inject: impl FnOnce()) -> Value {
    assert!(db.fairbench(&["prepare", "oltp_read_only", "--table-size=1000"]).status.success());
    let out = db.dir.path().join("r.json");
    let args = ["run", "oltp_read_only", "--table-size=1000", "--time=600", "--threads=1"];
    let run = Measuring::start(db, &args, &out);
    inject();
    assert_eq!(run.finish(Some(libc::SIGINT)), Some(130));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert!(db.fairbench(&["cleanup"]).status.success());
    doc
}

fn mix_finding(doc: &Value) -> Option<&Value> {
    doc["audit"].as_array().unwrap().iter().find(|f| f["id"] == "mix-mismatch")
}

#[test]
fn mariadb_counts_other_load() {
    let db = TestDb::new(Kind::Mysql);
    let doc = run_with_other_load(&db, || {
        rt().block_on(async {
            let mut c = mysql_async::Conn::from_url(db.url.as_str()).await.unwrap();
            for i in 0..UPDATES {
                c.query_drop(format!("UPDATE sbtest1 SET k = k + 1 WHERE id = {}", i % 1000 + 1)).await.unwrap();
            }
            c.disconnect().await.unwrap();
        })
    });
    let f = mix_finding(&doc).unwrap_or_else(|| panic!("no mix finding: {}", doc["audit"]));
    let update = &f["evidence"]["Com_update"];
    assert_eq!(update["sent"], 0, "{f}");
    assert!(update["server_counted"].as_i64().unwrap() >= UPDATES as i64, "{f}");
}

#[test]
fn postgres_counts_other_load() {
    let db = TestDb::new(Kind::Postgres);
    let doc = run_with_other_load(&db, || {
        let updates: String =
            (0..UPDATES).map(|i| format!("UPDATE sbtest1 SET k = k + 1 WHERE id = {};", i % 1000 + 1)).collect();
        // Backends report their statistics at most once a second; this one now, before the
        // run's counters are read.
        pg_exec(&db.url, &format!("{updates} SELECT pg_stat_force_next_flush();"));
    });
    let f = mix_finding(&doc).unwrap_or_else(|| panic!("no mix finding: {}", doc["audit"]));
    let updated = &f["evidence"]["tup_updated"];
    assert_eq!(updated["sent"], 0, "{f}");
    assert!(updated["server_counted"].as_i64().unwrap() >= UPDATES as i64, "{f}");
}
