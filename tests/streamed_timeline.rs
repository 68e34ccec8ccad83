//! The streamed timeline: each interval appended beside the result as the run goes, the same
//! entries as the result's `intervals[]`, an HdrHistogram interval log that the
//! `hdrhistogram` Python package reads back with the same counts, and a run killed with
//! SIGKILL leaves every closed interval readable.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

fn prepared_sqlite() -> TestDb {
    let db = TestDb::new(Kind::Sqlite);
    let p = db.fairbench(&["prepare", "oltp_point_select", "--table-size=1000"]);
    assert!(p.status.success(), "{}", text(&p));
    db
}

fn lines(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    // Complete lines only: a line is written whole, then flushed.
    text.split_inclusive('\n').filter(|l| l.ends_with('\n')).map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The Python reader's view of an interval log: per tag, each interval's count.
fn python_read(hlog: &Path) -> Value {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/support/read_hlog.py");
    let o = std::process::Command::new("python3").arg(script).arg(hlog).output().unwrap();
    assert!(o.status.success(), "the hdrhistogram package reads the log (pip install hdrhistogram): {}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn sqlite_each_interval_is_streamed_and_the_interval_log_reads_back_in_python() {
    let db = prepared_sqlite();
    let doc = db.run_json(&["run", "oltp_point_select", "--table-size=1000", "--time=2", "--repeat=2", "-q"]);
    let streamed = doc["streamed"].as_array().unwrap();
    assert_eq!(streamed.len(), 2, "{streamed:?}");
    let dir = db.dir.path();
    let jsonl = dir.join(streamed[0]["file"].as_str().unwrap());
    let hlog = dir.join(streamed[1]["file"].as_str().unwrap());
    // The same entries as the result's, repeats placed on one time axis alike.
    let intervals = lines(&jsonl);
    assert_eq!(Value::Array(intervals.clone()), doc["intervals"]);
    assert_eq!(intervals.last().unwrap()["repeat"], 2);
    let bytes = std::fs::read(&hlog).unwrap();
    assert_eq!(streamed[1]["bytes"], bytes.len());
    // Every interval with events is in the log, with exactly its count.
    let read = python_read(&hlog);
    let counts: Vec<u64> = intervals.iter().map(|i| i["event"]["count"].as_u64().unwrap()).filter(|&c| c > 0).collect();
    let logged: Vec<u64> = read["event"]["counts"].as_array().unwrap().iter().map(|c| c.as_u64().unwrap()).collect();
    assert_eq!(logged, counts);
    assert_eq!(read["read"]["count"], read["event"]["count"], "one point select per event");

    // A device as --out gets no files beside it.
    let o = db.fairbench(&["run", "oltp_point_select", "--table-size=1000", "--time=1", "--out=/dev/null", "-q"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(!Path::new("/dev/null.intervals.jsonl").exists() && !Path::new("/dev/null.hlog").exists());
}

#[test]
fn sqlite_a_killed_run_leaves_every_closed_interval_readable() {
    let db = prepared_sqlite();
    let out = db.dir.path().join("killed.json");
    let mut child = spawn_run(&db, &["run", "oltp_point_select", "--table-size=1000", "--time=60", "-q"], &out);
    let jsonl = db.dir.path().join("killed.intervals.jsonl");
    // Wait for the state (three intervals on disk), not for a time.
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::fs::read_to_string(&jsonl).map_or(0, |t| t.lines().count()) < 3 {
        assert!(Instant::now() < deadline, "no intervals streamed");
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap(); // SIGKILL: nothing of fairbench runs after this
    child.wait().unwrap();
    assert!(!out.exists(), "no result file: the run never finished");
    let intervals = lines(&jsonl);
    assert!(intervals.len() >= 3, "{}", intervals.len());
    for (i, w) in intervals.windows(2).enumerate() {
        let end = w[0]["from_s"].as_f64().unwrap() + w[0]["duration_s"].as_f64().unwrap();
        assert!((w[1]["from_s"].as_f64().unwrap() - end).abs() < 1e-6, "interval {i} is followed by the next");
    }
    let read = python_read(&db.dir.path().join("killed.hlog"));
    let logged = read["event"]["counts"].as_array().unwrap().len();
    assert!(logged >= intervals.len() - 1 && logged <= intervals.len(), "{logged} of {}", intervals.len());
}
