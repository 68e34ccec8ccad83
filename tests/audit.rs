//! The audit: each rule that can be triggered here is triggered against a real server and
//! its finding and severity asserted; a clean, durable setup yields no critical finding.

mod common;
use common::*;
use serde_json::Value;
use std::sync::Mutex;

/// Tests that change MariaDB globals or read its global counters run one at a time.
static MARIADB: Mutex<()> = Mutex::new(());

fn findings<'a>(doc: &'a Value, id: &str) -> Vec<&'a Value> {
    doc["audit"].as_array().unwrap().iter().filter(|f| f["id"] == id).collect()
}

fn severity(doc: &Value, id: &str) -> Option<String> {
    findings(doc, id).iter().map(|f| f["severity"].as_str().unwrap().to_string()).max_by_key(|s| match s.as_str() {
        "critical" => 2,
        "warn" => 1,
        _ => 0,
    })
}

fn criticals(doc: &Value) -> Vec<String> {
    doc["audit"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "critical")
        .map(|f| f["id"].as_str().unwrap().to_string())
        .collect()
}

fn prepared(kind: Kind, workload: &str, size: u32) -> TestDb {
    let db = TestDb::new(kind);
    let size = format!("--table-size={size}");
    let p = db.fairbench(&["prepare", workload, &size]);
    assert!(p.status.success(), "{}", text(&p));
    db
}

#[test]
fn mariadb_with_flush_log_at_trx_commit_0_is_critical_durability_off() {
    let _lock = MARIADB.lock().unwrap_or_else(|e| e.into_inner());
    let db = prepared(Kind::Mysql, "oltp_read_write", 1000);
    let out = db.dir.path().join("r.json");
    let o = {
        let _off = GlobalSetting::set("innodb_flush_log_at_trx_commit", "0");
        db.fairbench(&[
            "run",
            "oltp_read_write",
            "--table-size=1000",
            "--events=200",
            &format!("--out={}", out.display()),
        ])
    };
    assert!(o.status.success(), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("[critical] durability-off"), "{}", text(&o));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let f = findings(&doc, "durability-off");
    assert_eq!(f.len(), 1);
    assert_eq!(f[0]["severity"], "critical");
    assert_eq!(f[0]["evidence"]["innodb_flush_log_at_trx_commit"], "0");
    assert!(!f[0]["advice"].as_str().unwrap().is_empty() && !f[0]["title"].as_str().unwrap().is_empty());
    // `fairbench audit --json` on the saved file finds the same.
    let a = fairbench_in(db.dir.path(), &["audit".into(), out.display().to_string(), "--json".into()]);
    assert!(a.status.success(), "{}", text(&a));
    let again: Value = serde_json::from_slice(&a.stdout).unwrap();
    let ids: Vec<&str> = again.as_array().unwrap().iter().map(|f| f["id"].as_str().unwrap()).collect();
    assert!(ids.contains(&"durability-off"), "{ids:?}");
    for f in again.as_array().unwrap() {
        for key in ["id", "severity", "title", "evidence", "advice"] {
            assert!(!f[key].is_null(), "{key} missing in {f}");
        }
    }
}

#[test]
fn a_clean_durable_setup_has_no_critical_finding() {
    let _lock = MARIADB.lock().unwrap_or_else(|e| e.into_inner());
    assert_eq!(mysql_global("innodb_flush_log_at_trx_commit"), "1", "the test server must be durable");
    let db = prepared(Kind::Mysql, "oltp_read_write", 2000);
    let doc = db.run_json(&["run", "oltp_read_write", "--table-size=2000", "--time=3", "--warmup=1", "--threads=2"]);
    assert_eq!(criticals(&doc), Vec::<String>::new(), "{}", doc["audit"]);
    // The conditions are all recorded.
    let c = &doc["conditions"];
    assert!(c["client"]["cpu_model"].as_str().is_some() && c["client"]["memory_bytes"].as_u64().unwrap() > 0);
    assert!(c["client"]["kernel"].as_str().is_some() && c["client"]["os"].as_str().is_some());
    assert_eq!(c["server"]["product"], "MariaDB");
    assert!(c["server"]["variables"].as_object().unwrap().len() > 300);
    assert!(c["server"]["status_before"].as_object().unwrap().len() > 100);
    assert!(c["server"]["replication_role"].as_str().unwrap().starts_with("standalone"));
    let t = &c["dataset"]["tables_at_start"][0];
    assert!(t["data_bytes"].as_u64().unwrap() > 0 && t["rows"].as_u64().unwrap() > 1000);
    assert!(c["dataset"]["cache"]["innodb_buffer_pool_size"].as_u64().unwrap() > 0);
    assert_eq!(c["run"]["warmup_s"], 1);
    assert!(findings(&doc, "no-warmup").is_empty());
    assert!(!c["client"]["command_line"].to_string().contains("fairbench_test:fairbench_test"));
}

#[test]
fn postgres_synchronous_commit_off_is_critical() {
    let db = prepared(Kind::Postgres, "oltp_update_index", 1000);
    db.exec(&format!("ALTER DATABASE {} SET synchronous_commit = off", db.name));
    let doc = db.run_json(&["run", "oltp_update_index", "--table-size=1000", "--events=100"]);
    assert_eq!(severity(&doc, "durability-off").as_deref(), Some("critical"));
    assert_eq!(findings(&doc, "durability-off")[0]["evidence"]["synchronous_commit"], "off");
    assert!(doc["conditions"]["server"]["variables"]["shared_buffers"].as_str().unwrap().ends_with("8kB"));
}

#[test]
fn sqlite_without_sync_or_journal_is_critical() {
    let db = prepared(Kind::Sqlite, "oltp_update_index", 1000);
    let url = format!("--target={}?synchronous=off&journal_mode=memory", db.url);
    let out = db.dir.path().join("r.json");
    let o = fairbench_in(
        db.dir.path(),
        &[
            "run".into(),
            "oltp_update_index".into(),
            "--table-size=1000".into(),
            "--events=100".into(),
            url,
            format!("--out={}", out.display()),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let f = findings(&doc, "durability-off");
    assert_eq!(f[0]["severity"], "critical");
    assert_eq!(f[0]["evidence"]["synchronous"], "0");
    assert_eq!(f[0]["evidence"]["journal_mode"], "memory");

    // A result written before the driver recorded facts is judged by the settings it kept.
    let mut old = doc.clone();
    old["conditions"]["server"].as_object_mut().unwrap().remove("facts");
    std::fs::write(&out, serde_json::to_string(&old).unwrap()).unwrap();
    let o = fairbench_in(db.dir.path(), &["audit".into(), "--json".into(), out.display().to_string()]);
    assert!(o.status.success(), "{}", text(&o));
    let audited: Value = serde_json::from_slice(&o.stdout).unwrap();
    let f: Vec<&Value> = audited.as_array().unwrap().iter().filter(|f| f["id"] == "durability-off").collect();
    assert_eq!(f.len(), 1, "{audited:#}");
    assert_eq!(f[0]["evidence"]["journal_mode"], "memory");
}

#[test]
fn empty_and_thin_tables() {
    // sysbench's quirk reproduced: oltp_insert --auto-inc=off prepares EMPTY tables.
    let db = prepared(Kind::Sqlite, "oltp_read_write", 1000);
    assert!(db.fairbench(&["cleanup"]).status.success());
    assert!(db.fairbench(&["prepare", "oltp_insert", "--auto-inc=off", "--table-size=1000"]).status.success());
    let doc = db.run_json(&["run", "oltp_point_select", "--table-size=1000", "--events=50"]);
    assert_eq!(severity(&doc, "tables-empty").as_deref(), Some("critical"));
    assert_eq!(doc["conditions"]["dataset"]["tables_at_start"][0]["rows"], 0);

    let db = prepared(Kind::Postgres, "oltp_point_select", 1000);
    db.exec("DELETE FROM sbtest1 WHERE id > 300");
    let doc = db.run_json(&["run", "oltp_point_select", "--table-size=1000", "--events=50"]);
    assert_eq!(severity(&doc, "tables-empty").as_deref(), Some("warn"));
    let t = &doc["conditions"]["dataset"]["tables_at_start"][0];
    assert_eq!((t["rows"].as_u64(), t["rows_exact"].as_bool()), (Some(300), Some(true)));
}

#[test]
fn a_write_workload_without_updates_and_foreign_load_are_mix_mismatches() {
    let _lock = MARIADB.lock().unwrap_or_else(|e| e.into_inner());
    let db = prepared(Kind::Mysql, "oltp_read_write", 1000);
    let doc = db.run_json(&[
        "run",
        "oltp_read_write",
        "--table-size=1000",
        "--events=100",
        "--index-updates=0",
        "--non-index-updates=0",
        "--delete-inserts=0",
    ]);
    let f = findings(&doc, "mix-mismatch");
    assert!(
        f.iter().any(|f| f["severity"] == "critical" && f["title"].as_str().unwrap().contains("no UPDATE or DELETE")),
        "{f:?}"
    );

    // Other load on the server during the run: the server counts SELECTs fairbench never sent.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stop2 = stop.clone();
    let url = db.url.clone();
    let noise = std::thread::spawn(move || {
        rt().block_on(async {
            use mysql_async::prelude::Queryable;
            let mut c = mysql_async::Conn::from_url(url).await.unwrap();
            while !stop2.load(std::sync::atomic::Ordering::Relaxed) {
                let _: Option<i64> = c.query_first("SELECT 1").await.unwrap();
            }
            c.disconnect().await.unwrap();
        })
    });
    let doc = db.run_json(&["run", "oltp_update_index", "--table-size=1000", "--time=2"]);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    noise.join().unwrap();
    let f = findings(&doc, "mix-mismatch");
    assert!(f.iter().any(|f| f["severity"] == "warn" && !f["evidence"]["Com_select"].is_null()), "{}", doc["audit"]);
}

#[test]
fn sqlite_short_closed_loop_runs_say_so() {
    let db = prepared(Kind::Sqlite, "oltp_point_select", 1000);
    let doc = db.run_json(&["run", "oltp_point_select", "--table-size=1000", "--time=2"]);
    assert_eq!(severity(&doc, "too-short").as_deref(), Some("warn"));
    // Each id once, however many of its conditions hold.
    let ids: Vec<&str> = doc["audit"].as_array().unwrap().iter().map(|f| f["id"].as_str().unwrap()).collect();
    let unique: std::collections::BTreeSet<&&str> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "{ids:?}");
    assert_eq!(severity(&doc, "no-warmup").as_deref(), Some("warn"));
    assert_eq!(severity(&doc, "closed-loop-latency").as_deref(), Some("info"));
    assert_eq!(severity(&doc, "single-run").as_deref(), Some("info"));
    assert_eq!(severity(&doc, "dataset-fits-in-memory").as_deref(), Some("warn"));
    let open = db.run_json(&["run", "oltp_point_select", "--table-size=1000", "--time=2", "--rate=100", "--warmup=1"]);
    assert!(findings(&open, "closed-loop-latency").is_empty());
    assert!(findings(&open, "no-warmup").is_empty());
}

/// Saturation is the client's own CPU: with SQLite in-process, its process against all
/// the cores (how much CPU it gets is the machine's doing, so the judgement is asserted to
/// follow the recorded numbers); an embedded database never shares a host with a server.
#[test]
fn sqlite_client_saturation_is_its_own_cpu_and_never_shared_host() {
    let db = prepared(Kind::Sqlite, "oltp_read_only", 2000);
    let threads = format!("--threads={}", 2 * std::thread::available_parallelism().unwrap().get());
    let doc = db.run_json(&["run", "oltp_read_only", "--table-size=2000", "--time=3", &threads]);
    let c = &doc["client_cost"];
    let own_cpu = c["cpu_utilization_pct"].as_f64().unwrap() >= 90.0;
    assert_eq!(c["saturated"], own_cpu, "{c}");
    assert_eq!(findings(&doc, "client-saturated").len(), own_cpu as usize, "{}", doc["audit"]);
    assert!(c["host_cpu_busy_pct"].as_f64().is_some(), "{c}");
    assert_eq!(doc["conditions"]["server"]["same_host_as_client"], true);
    assert!(findings(&doc, "shared-host").is_empty(), "{}", doc["audit"]);
    // Its data is held by its own page cache and, beyond it, the OS page cache.
    let cache = &doc["conditions"]["dataset"]["cache"];
    let (own, os) = (cache["cache_size"].as_u64().unwrap(), cache["os_page_cache"].as_u64().unwrap());
    assert!(own > 0 && os > own, "{cache}");
}

/// MariaDB over 127.0.0.1 shares the client's host: shared-host says so exactly when the
/// host's CPUs were busy (how busy is the machine's doing; the finding must follow it), and
/// the client's saturation is never the host's business.
#[test]
fn mariadb_over_loopback_is_shared_host_exactly_when_the_host_was_busy() {
    let _lock = MARIADB.lock().unwrap_or_else(|e| e.into_inner());
    let db = prepared(Kind::Mysql, "oltp_point_select", 1000);
    let doc = db.run_json(&["run", "oltp_point_select", "--table-size=1000", "--time=2", "--threads=2"]);
    assert_eq!(doc["conditions"]["server"]["same_host_as_client"], true);
    let c = &doc["client_cost"];
    let busy = c["host_cpu_busy_pct"].as_f64().expect("host CPU read from /proc/stat");
    let shared = findings(&doc, "shared-host");
    assert_eq!(shared.len(), (busy >= 80.0) as usize, "host {busy}% busy: {}", doc["audit"]);
    if let Some(f) = shared.first() {
        assert_eq!(f["severity"], "warn");
        assert_eq!(f["evidence"]["host_cpu_busy_pct"].as_f64(), Some((busy * 10.0).round() / 10.0));
        assert!(f["evidence"]["server_address"].as_str().unwrap().starts_with("127.0.0.1:"));
    }
    let own_cpu =
        c["cpu_utilization_pct"].as_f64().unwrap() >= 90.0 || c["busiest_worker_pct"].as_f64().unwrap() >= 90.0;
    assert_eq!(findings(&doc, "client-saturated").len(), own_cpu as usize, "{c}");
}

#[test]
fn a_stall_makes_high_variance() {
    let db = prepared(Kind::Postgres, "oltp_point_select", 1000);
    let out = db.dir.path().join("r.json");
    let mut child = spawn_run(&db, &["run", "oltp_point_select", "--table-size=1000", "--time=5", "--threads=2"], &out);
    // The lock is taken while the run measures (its 1.5 s fall inside the 5 measured seconds).
    let (_, rest) = wait_until_measuring(&mut child);
    let drain = std::thread::spawn(move || std::io::copy(&mut { rest }, &mut std::io::sink()));
    db.exec("BEGIN; LOCK TABLE sbtest1 IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(1.5); COMMIT;");
    let doc = finish(child, &out);
    drain.join().unwrap().unwrap();
    assert_eq!(severity(&doc, "high-variance").as_deref(), Some("warn"), "{}", doc["audit"]);
}

#[test]
fn deadlocks_and_duplicates_are_error_findings() {
    // 8 clients on 10 rows: deadlocks (40P01) and duplicate keys (23505) are retried.
    let db = prepared(Kind::Postgres, "oltp_read_write", 10);
    let doc = db.run_json(&["run", "oltp_read_write", "--table-size=10", "--range-size=5", "--time=3", "--threads=8"]);
    let f = findings(&doc, "errors");
    assert_eq!(f.len(), 1, "{}", doc["errors"]);
    assert!(f[0]["severity"] != "info" || doc["errors"]["total"].as_u64().unwrap() > 0);
    assert!(!f[0]["evidence"]["by_code"].as_object().unwrap().is_empty());
}

#[test]
fn many_more_clients_than_cores() {
    let _lock = MARIADB.lock().unwrap_or_else(|e| e.into_inner());
    let db = prepared(Kind::Mysql, "oltp_point_select", 1000);
    let threads = format!("--threads={}", 4 * std::thread::available_parallelism().unwrap().get() + 1);
    let doc = db.run_json(&["run", "oltp_point_select", "--table-size=1000", "--time=1", &threads]);
    assert_eq!(severity(&doc, "connections").as_deref(), Some("warn"), "{}", doc["audit"]);
}
