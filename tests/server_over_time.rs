//! The server over time: each interval of a run carries the server's own figures its driver
//! follows (`intervals[].server`), read on a connection of fairbench's own; the text report
//! prints them as a table, and cleanup removes fairbench's own bookkeeping tables.

mod common;
use common::*;
use serde_json::Value;

/// The measured intervals that carry the server's figures.
fn sampled(doc: &Value) -> Vec<&Value> {
    let intervals = doc["intervals"].as_array().unwrap();
    intervals.iter().filter(|i| i["warmup"] == false && i["server"].is_object()).map(|i| &i["server"]).collect()
}

/// Every listed figure the server has, in every sampled interval; rates of what the
/// workload does above zero in each (`busy`: MariaDB's counters are live, and a closed loop
/// commits every second) or in one at least (`seen`: PostgreSQL's backends publish their
/// counts at most once a second, so a second may show none and the next two).
fn assert_followed(doc: &Value, keys: &[&str], busy: &[&str], seen: &[&str]) {
    let s = sampled(doc);
    assert!(s.len() >= 2, "{} sampled intervals: {}", s.len(), doc["intervals"]);
    for server in &s {
        for k in keys {
            assert!(server[*k].is_number(), "{k} missing: {server}");
        }
        for k in busy {
            assert!(server[*k].as_f64().unwrap() > 0.0, "{k}: {server}");
        }
    }
    for k in seen {
        assert!(s.iter().any(|server| server[*k].as_f64().unwrap() > 0.0), "{k}: {s:?}");
    }
    let listed: Vec<&str> = doc["conditions"]["server"]["facts"]["sampled"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["key"].as_str().unwrap())
        .collect();
    assert!(keys.iter().all(|k| listed.contains(k)), "{listed:?}");
}

#[test]
fn mariadb_figures_per_interval_and_in_the_report() {
    let db = TestDb::new(Kind::Mysql);
    assert!(db.fairbench(&["prepare", "oltp_read_write", "--table-size=2000"]).status.success());
    let out = db.dir.path().join("r.json");
    let out_arg = format!("--out={}", out.display());
    let o = db.fairbench(&["run", "oltp_read_write", "--table-size=2000", "--time=4", "--threads=2", &out_arg]);
    assert!(o.status.success(), "{}", text(&o));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let keys = [
        "Innodb_data_reads/s",
        "Innodb_os_log_written/s",
        "Innodb_buffer_pool_read_requests/s",
        "Innodb_history_list_length",
        "Innodb_checkpoint_age",
        "Com_commit/s",
    ];
    assert_followed(&doc, &keys, &["Com_commit/s", "Com_select/s", "Innodb_buffer_pool_read_requests/s"], &[]);
    let report = text(&o);
    assert!(report.contains("Server over time ("), "{report}");
    assert!(report.contains("redo log written (bytes/s)"), "{report}");
    assert!(report.contains("undo history list length (transactions)"), "{report}");
    assert!(db.fairbench(&["cleanup"]).status.success());
}

/// PostgreSQL's figures; each reading is one transaction of its own (never a failed one),
/// so a slow open loop's commits still match the server's count (no mix-mismatch).
#[test]
fn postgres_figures_per_interval_without_disturbing_the_counters() {
    let db = TestDb::new(Kind::Postgres);
    assert!(db.fairbench(&["prepare", "oltp_point_select", "--table-size=1000"]).status.success());
    let doc = db.run_json(&["run", "oltp_write_only", "--table-size=1000", "--time=4", "--rate=20"]);
    let keys = ["xact_commit/s", "blks_hit/s", "tup_updated/s", "wal.wal_bytes/s"];
    assert_followed(&doc, &keys, &[], &["xact_commit/s", "tup_updated/s", "wal.wal_bytes/s"]);
    let audit = doc["audit"].as_array().unwrap();
    assert!(audit.iter().all(|f| f["id"] != "mix-mismatch"), "{audit:#?}");
    // The readings rolled nothing back: the workload's own rollbacks are none.
    assert_eq!(doc["conditions"]["server"]["status_delta"]["xact_rollback"].as_i64().unwrap_or(0), 0);
    assert!(db.fairbench(&["cleanup"]).status.success());
}

#[test]
fn sqlite_figures_are_the_files_own() {
    let db = TestDb::new(Kind::Sqlite);
    assert!(db.fairbench(&["prepare", "oltp_read_only", "--table-size=1000"]).status.success());
    let doc = db.run_json(&["run", "oltp_read_only", "--table-size=1000", "--time=3"]);
    assert_followed(&doc, &["page_count", "freelist_count"], &["page_count"], &[]);
}

/// Shards say which part of the run they are, the combined table which p95 it shows;
/// cleanup then drops the shard barrier's table the finished run left, and compacts the
/// SQLite file it emptied.
#[test]
fn cleanup_removes_fairbench_own_tables_and_compacts_sqlite() {
    let db = TestDb::new(Kind::Sqlite);
    assert!(db.fairbench(&["prepare", "oltp_point_select", "--table-size=20000"]).status.success());
    let shard = |i: &str| {
        let (shard, out) = (format!("--shard={i}/2"), format!("--out=shard-{i}.json"));
        let args = ["run", "oltp_point_select", "--table-size=20000", "--time=1", "--threads=2", &shard, &out];
        let o = db.fairbench(&[&args[..], &["--shard-key=own-tables"]].concat());
        assert!(o.status.success(), "{}", text(&o));
        text(&o)
    };
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| shard("0"));
        let b = s.spawn(|| shard("1"));
        (a.join().unwrap(), b.join().unwrap())
    });
    // Each shard's banner says which part of the run it is.
    assert!(a.contains("; shard 0 of 2, 1 of 2 clients, 1 s;"), "{a}");
    assert!(b.contains("; shard 1 of 2, 1 of 2 clients, 1 s;"), "{b}");
    // The combined table's p95 columns say what they are: whole events (as the headline's)
    // and statements.
    let c =
        fairbench_in(db.dir.path(), &["combine", "shard-0.json", "shard-1.json", "--out=all.json"].map(String::from));
    assert!(c.status.success(), "{}", text(&c));
    let combined = text(&c);
    assert!(combined.contains("p95_event_ms  p95_stmt_ms"), "{combined}");
    assert!(db.tables().contains(&"fairbench_shards".to_string()), "{:?}", db.tables());
    let path = db.url.trim_start_matches("sqlite://").to_string();
    let before = std::fs::metadata(&path).unwrap().len();
    let o = db.fairbench(&["cleanup"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(db.tables().is_empty(), "{:?}", db.tables());
    let out = text(&o);
    assert!(out.contains("Dropped table fairbench_shards"), "{out}");
    assert!(out.contains("(VACUUM)"), "{out}");
    let after = std::fs::metadata(&path).unwrap().len();
    assert!(before > 1 << 20 && after < 64 << 10, "{before} -> {after} bytes");
}
