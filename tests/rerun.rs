//! `fairbench rerun`: a result's command line run again, with its seed and its workload
//! file, sends exactly the same statements (counted by fairbench, and by the server).

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn counts(doc: &Value, section: &str) -> Vec<(String, u64)> {
    doc[section].as_object().unwrap().iter().map(|(k, v)| (k.clone(), v["count"].as_u64().unwrap())).collect()
}

fn rerun(dir: &Path, args: &[&str], password: Option<&str>) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fairbench"));
    cmd.current_dir(dir).arg("rerun").args(args);
    if let Some(p) = password {
        cmd.env("FAIRBENCH_PASSWORD", p);
    }
    cmd.output().unwrap()
}

/// A workload file that is gone by the rerun: the recorded one runs, with the same seed, and
/// every statement and transaction count is the same.
#[test]
fn sqlite_a_rerun_with_its_file_gone_sends_the_same_statements() {
    let db = TestDb::new(Kind::Sqlite);
    let file = db.dir.path().join("xfer.toml");
    std::fs::copy(concat!(env!("CARGO_MANIFEST_DIR"), "/recipes/xfer.toml"), &file).unwrap();
    let first = db.dir.path().join("first.json");
    let o = db.fairbench(&[
        "bench",
        "xfer.toml",
        "--threads=1",
        "--events=300",
        "--time=0",
        "--set",
        "customers=500",
        "--out=first.json",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    std::fs::remove_file(&file).unwrap();
    let o = rerun(db.dir.path(), &["first.json", "--out", "second.json"], None);
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("xfer.toml is not the workload file that ran (changed or gone)"), "{err}");
    let (a, b) = (read(&first), read(&db.dir.path().join("second.json")));
    let seed = &a["conditions"]["run"]["rand_seed"];
    assert!(err.contains(&format!("(seed {seed})")), "{err}");
    assert_eq!(b["conditions"]["run"]["rand_seed"], *seed);
    assert_eq!(b["conditions"]["workload"]["file"]["content"], a["conditions"]["workload"]["file"]["content"]);
    assert_eq!(b["conditions"]["workload"]["file"]["overrides"], a["conditions"]["workload"]["file"]["overrides"]);
    assert_eq!(counts(&a, "statements"), counts(&b, "statements"));
    assert_eq!(counts(&a, "transactions"), counts(&b, "transactions"));
    assert_eq!(a["conditions"]["run"]["events"], 300);
    assert_eq!(b["conditions"]["run"]["events"], 300);
    // The copy it ran is beside the first result; a rerun of something else is refused.
    assert!(db.dir.path().join("first.workload.toml").exists());
    let o = rerun(db.dir.path(), &["missing.json"], None);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert_eq!(String::from_utf8_lossy(&o.stderr).trim().lines().count(), 1, "{}", text(&o));
}

/// The password was never stored: the rerun takes it from FAIRBENCH_PASSWORD, and the server
/// counts the same statements for both runs.
#[test]
fn mariadb_a_rerun_sends_the_server_the_same_statements() {
    let db = TestDb::new(Kind::Mysql);
    let o = db.fairbench(&[
        "bench",
        "oltp_read_write",
        "--table-size=1000",
        "--threads=1",
        "--events=200",
        "--time=0",
        "--out=first.json",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let a = read(&db.dir.path().join("first.json"));
    let recorded: Vec<&str> =
        a["conditions"]["client"]["command_line"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert!(recorded.iter().any(|a| a.contains(":***@")), "{recorded:?}");
    let o = rerun(db.dir.path(), &["first.json", "--out", "second.json"], Some("fairbench_test"));
    assert!(o.status.success(), "{}", text(&o));
    assert!(!String::from_utf8_lossy(&o.stderr).contains(":fairbench_test@"), "{}", text(&o));
    let b = read(&db.dir.path().join("second.json"));
    assert_eq!(counts(&a, "statements"), counts(&b, "statements"));
    for counter in ["Com_select", "Com_update", "Com_insert", "Com_delete", "Com_commit"] {
        assert_eq!(
            a["conditions"]["server"]["status_delta"][counter], b["conditions"]["server"]["status_delta"][counter],
            "{counter}"
        );
    }
}

/// A result keeps what it was asked to do as typed data, and rerun executes that, not the
/// command line (kept for display): a line that no longer means anything still reruns, and
/// options given after `--` replace only themselves.
#[test]
fn sqlite_a_rerun_executes_the_recorded_request() {
    let db = TestDb::new(Kind::Sqlite);
    let o = db.fairbench(&[
        "bench",
        "oltp_point_select",
        "--table-size=500",
        "--threads=2",
        "--events=120",
        "--time=0",
        "--out=first.json",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let first = db.dir.path().join("first.json");
    let mut a = read(&first);
    let request = &a["conditions"]["client"]["request"];
    let workload = &request["workload"];
    assert_eq!((request["threads"].as_u64(), workload["table_size"].as_u64()), (Some(2), Some(500)), "{request}");
    assert_eq!(workload["rand_seed"], a["conditions"]["run"]["rand_seed"], "the seed drawn is the one kept");
    assert_eq!(request["bench"], true);
    a["conditions"]["client"]["command_line"] = serde_json::json!(["fairbench", "nosuchcommand", "--nosuch"]);
    std::fs::write(&first, serde_json::to_string(&a).unwrap()).unwrap();
    let o = rerun(db.dir.path(), &["first.json", "--out", "second.json", "--", "--threads=3"], None);
    assert!(o.status.success(), "{}", text(&o));
    let b = read(&db.dir.path().join("second.json"));
    let run = &b["conditions"]["run"];
    assert_eq!((run["threads"].as_u64(), run["events"].as_u64()), (Some(3), Some(120)), "{run}");
    assert_eq!(run["rand_seed"], a["conditions"]["run"]["rand_seed"]);
    assert_eq!(b["conditions"]["client"]["request"]["workload"]["table_size"], 500);
}
