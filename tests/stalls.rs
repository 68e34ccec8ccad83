//! A stall far outside the distribution is a finding that says when, which statement and
//! how long, though the percentiles hide it: here a SQLite lock held by another process.

mod common;

use common::*;
use serde_json::Value;
use std::time::Duration;

const HELD: Duration = Duration::from_secs(3);

fn stall(findings: &Value) -> Option<&Value> {
    findings.as_array().unwrap().iter().find(|f| f["id"] == "stall")
}

#[test]
fn a_sqlite_lock_wait_is_a_stall_naming_its_statement() {
    let db = TestDb::new(Kind::Sqlite);
    assert!(db.fairbench(&["prepare", "oltp_read_write", "--table-size=1000"]).status.success());
    // Another process holds the database's write lock when the run starts: the first
    // write transaction waits for it (fairbench's busy timeout is 10 s); the run then
    // ends by itself after its events.
    let lock = rusqlite::Connection::open(db.url.trim_start_matches("sqlite://")).unwrap();
    lock.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let out = db.dir.path().join("r.json");
    let run =
        Measuring::start(&db, &["run", "oltp_read_write", "--table-size=1000", "--events=3000", "--threads=1"], &out);
    std::thread::sleep(HELD);
    lock.execute_batch("COMMIT").unwrap();
    assert_eq!(run.finish(None), Some(0));

    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let f = stall(&doc["audit"]).unwrap_or_else(|| panic!("no stall finding: {}", doc["audit"]));
    let longest = &f["evidence"]["stalls"][0];
    let held_ms = HELD.as_millis() as f64;
    // The waiting statement is named and took (nearly) the whole time the lock was held.
    assert!(longest["statement"].as_str().is_some_and(|s| !s.is_empty()), "{f}");
    // (It began when the run released its clients, just after the line the test waited
    // for: half the time the lock was held leaves room for a slow start.)
    assert!(longest["statement_ms"].as_f64().unwrap() >= held_ms / 2.0, "{f}");
    assert!(longest["event_ms"].as_f64().unwrap() >= longest["statement_ms"].as_f64().unwrap(), "{f}");
    let (started, ended) = (longest["started_s"].as_f64().unwrap(), longest["ended_s"].as_f64().unwrap());
    assert!(started < held_ms / 2000.0 && ended >= held_ms / 2000.0, "the first event waited: {f}");
    // The span is the event's, as recorded, not its waiting statement's.
    assert_eq!(longest["span_of"], "event", "{f}");
    let event_s = longest["event_ms"].as_f64().unwrap() / 1000.0;
    assert!((ended - started - event_s).abs() < 0.002, "{f}");
    // The percentiles do not show it: one event among thousands.
    assert!(doc["stats"]["event"]["p99_us"].as_f64().unwrap() < held_ms * 1000.0 / 20.0, "{}", doc["stats"]["event"]);

    // The same result with no second's slowest event beyond the run's p99: no finding.
    let p99 = doc["stats"]["event"]["p99_us"].as_f64().unwrap();
    for i in doc["intervals"].as_array_mut().unwrap() {
        let max = i["event"]["max_us"].as_f64().unwrap();
        i["event"]["max_us"] = max.min(p99).into();
    }
    let calm = db.dir.path().join("calm.json");
    std::fs::write(&calm, serde_json::to_string(&doc).unwrap()).unwrap();
    let o = fairbench_in(db.dir.path(), &["audit".into(), "--json".into(), calm.display().to_string()]);
    let findings: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
    assert!(stall(&findings).is_none(), "{findings}");
}
