//! The streamed timeline: each interval appended beside the result as the run goes, the same
//! entries as the result's `intervals[]`, an HdrHistogram interval log that the
//! `hdrhistogram` Python package reads back with the same counts, and a run killed with
//! SIGKILL leaves every closed interval readable.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

fn plural(n: usize, word: &str) -> String {
    fairbench::model::plural(n as u64, word)
}

fn prepared_sqlite() -> TestDb {
    let db = TestDb::new(Kind::Sqlite);
    let p = db.fairbench(&["prepare", "oltp_point_select", "--table-size=1000"]);
    assert!(p.status.success(), "{}", text(&p));
    db
}

/// The intervals file's whole lines (its gzip stream is flushed after each).
fn lines(path: &Path) -> Vec<Value> {
    let lines = fairbench::timeline::IntervalLines::open(path).unwrap();
    lines.map(|l| serde_json::from_str(&l.unwrap()).unwrap()).collect()
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
    assert_eq!(streamed.len(), 3, "{streamed:?}");
    assert_eq!(streamed[2]["format"], "fairbench-record-jsonl-gz");
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

    // export reads every interval from the streamed file while it is as the result names it
    // (a long run's result keeps fewer, merged entries): here the result is cut to one.
    let mut cut = doc.clone();
    cut["intervals"] = Value::Array(vec![doc["intervals"][0].clone()]);
    std::fs::write(dir.join("cut.json"), serde_json::to_string(&cut).unwrap()).unwrap();
    let export = |name: &str| {
        let o = fairbench_in(dir, &["export", "--csv", name].map(String::from));
        assert!(o.status.success(), "{}", text(&o));
        String::from_utf8(o.stdout).unwrap().lines().count() - 1
    };
    assert_eq!(export("cut.json"), intervals.len() * 6, "every streamed interval, 6 classes each");
    // report draws every streamed interval too: the throughput line has a point per second.
    let o = fairbench_in(dir, &["report", "cut.json", "-o", "cut.html"].map(String::from));
    assert!(o.status.success(), "{}", text(&o));
    let page = std::fs::read_to_string(dir.join("cut.html")).unwrap();
    let data = &page[page.find("id=\"fb-data\">").unwrap() + 13..];
    let data: Value = serde_json::from_str(&data[..data.find("</script>").unwrap()]).unwrap();
    let tps = data["charts"].as_array().unwrap().iter().find(|c| c["id"] == "tps").unwrap();
    let drawn = tps["series"][0]["y"].as_array().unwrap().len();
    assert!(drawn >= intervals.len() - 2 && drawn > 1, "{drawn} points of {} intervals", intervals.len());
    let mut changed = std::fs::read(&jsonl).unwrap();
    changed.extend_from_slice(b"\n");
    std::fs::write(&jsonl, changed).unwrap();
    assert_eq!(export("cut.json"), 6, "a changed file is not taken for the run's");

    // A device as --out gets no files beside it.
    let o = db.fairbench(&["run", "oltp_point_select", "--table-size=1000", "--time=1", "--out=/dev/null", "-q"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(!Path::new("/dev/null.intervals.jsonl.gz").exists() && !Path::new("/dev/null.hlog").exists());
}

/// Waits for the state (`intervals` lines on disk), not for a time; then SIGKILL: nothing of
/// fairbench runs after it.
fn kill_after(child: &mut std::process::Child, jsonl: &Path, intervals: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !jsonl.exists() || lines(jsonl).len() < intervals {
        assert!(Instant::now() < deadline, "no intervals streamed");
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn sqlite_a_killed_run_leaves_every_closed_interval_readable() {
    let db = prepared_sqlite();
    let out = db.dir.path().join("killed.json");
    let mut child = spawn_run(&db, &["run", "oltp_point_select", "--table-size=1000", "--time=60", "-q"], &out);
    let jsonl = db.dir.path().join("killed.intervals.jsonl.gz");
    kill_after(&mut child, &jsonl, 3);
    // What was written when measuring started: the conditions, status running.
    let started: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(started["conditions"]["run"]["status"], "running");
    assert_eq!(started["conditions"]["run"]["threads"], 1);
    assert!(started["conditions"]["server"]["product"].as_str().unwrap().contains("SQLite"));
    let intervals = lines(&jsonl);
    assert!(intervals.len() >= 3, "{}", intervals.len());
    for (i, w) in intervals.windows(2).enumerate() {
        let end = w[0]["from_s"].as_f64().unwrap() + w[0]["duration_s"].as_f64().unwrap();
        assert!((w[1]["from_s"].as_f64().unwrap() - end).abs() < 1e-6, "interval {i} is followed by the next");
    }
    // The record has each entry (here an interval) as it closed; the interval log is
    // written from it at the end, or by recover.
    let record = fairbench::timeline::read_record(&db.dir.path().join("killed.record.jsonl.gz")).unwrap();
    let entries = record.record.phases[0].entries.len();
    assert!(entries + 1 >= intervals.len() && entries <= intervals.len(), "{entries} of {}", intervals.len());
    let hlog = db.dir.path().join("killed.hlog");
    assert!(!hlog.exists(), "no interval log before the run ends");

    // recover: every entry the record holds, totals added from them, and their histograms
    // in the interval log.
    let o = fairbench_in(db.dir.path(), &["recover", "killed.json"].map(String::from));
    assert!(o.status.success(), "{}", text(&o));
    let read = python_read(&hlog);
    assert_eq!(read["event"]["counts"].as_array().unwrap().len(), entries);
    let said = format!("Recovered {}", plural(entries, "timeline segment"));
    assert!(String::from_utf8_lossy(&o.stdout).contains(&said), "{}", text(&o));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let run = &doc["conditions"]["run"];
    assert_eq!(run["status"], "incomplete");
    let kept = &intervals[..entries];
    let events: u64 = kept.iter().map(|i| i["event"]["count"].as_u64().unwrap()).sum();
    let reads: u64 = kept.iter().map(|i| i["read"]["count"].as_u64().unwrap()).sum();
    assert_eq!(run["events"].as_u64().unwrap(), events);
    assert_eq!(doc["stats"]["event"]["count"].as_u64().unwrap(), events);
    assert_eq!(doc["stats"]["read"]["count"].as_u64().unwrap(), reads);
    assert_eq!(doc["statements"]["point_selects"]["count"].as_u64().unwrap(), reads, "per statement too");
    let max = kept.iter().map(|i| i["event"]["max_us"].as_f64().unwrap()).fold(0.0, f64::max);
    assert_eq!(doc["stats"]["event"]["max_us"].as_f64().unwrap(), max);
    assert_eq!(doc["intervals"].as_array().unwrap().len(), entries);
    let ids: Vec<&str> = doc["audit"].as_array().unwrap().iter().map(|f| f["id"].as_str().unwrap()).collect();
    assert!(ids.contains(&"incomplete-run") && !ids.contains(&"mix-mismatch"), "{ids:?}");
    assert_eq!(doc["streamed"].as_array().unwrap().len(), 3);
    // Every reader takes it; a finished result is not recovered twice.
    assert!(fairbench_in(db.dir.path(), &["audit", "killed.json"].map(String::from)).status.success());
    assert!(fairbench_in(db.dir.path(), &["report", "killed.json", "-o", "killed.html"].map(String::from))
        .status
        .success());
    let again = fairbench_in(db.dir.path(), &["recover", "killed.json"].map(String::from));
    assert_eq!(again.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("is a finished result (status incomplete)"),
        "{}",
        text(&again)
    );
}

#[test]
fn sqlite_a_killed_long_run_recovers_up_to_its_last_logged_entry() {
    // 3,000 planned intervals of 10 ms: the result keeps entries of 11 intervals each (at
    // most 300 over the run), and the interval log receives each entry as it closes.
    let db = prepared_sqlite();
    let out = db.dir.path().join("long.json");
    let args = ["run", "oltp_point_select", "--table-size=1000", "--time=30", "--report-interval=0.01", "-q"];
    let mut child = spawn_run(&db, &args, &out);
    let jsonl = db.dir.path().join("long.intervals.jsonl.gz");
    kill_after(&mut child, &jsonl, 60);
    let intervals = lines(&jsonl);
    let record = fairbench::timeline::read_record(&db.dir.path().join("long.record.jsonl.gz")).unwrap();
    let entries = record.record.phases[0].entries.len();
    assert!(entries >= 5 && entries * 11 <= intervals.len() && intervals.len() < (entries + 1) * 11 + 2);

    let o = fairbench_in(db.dir.path(), &["recover", "long.json"].map(String::from));
    assert!(o.status.success(), "{}", text(&o));
    let read = python_read(&db.dir.path().join("long.hlog"));
    assert_eq!(read["event"]["counts"].as_array().unwrap().len(), entries, "the log has every recovered entry");
    let said = String::from_utf8_lossy(&o.stdout).into_owned();
    let recovered = entries * 11;
    assert!(said.contains(&format!("Recovered {entries} timeline segments")), "{said}");
    let unlogged = intervals.len() - recovered;
    if unlogged > 0 {
        assert!(said.contains(&format!("The last {unlogged} interval")), "{said}");
    }
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(doc["intervals"].as_array().unwrap().len(), entries);
    // Each entry's figures are those of the 11 streamed intervals it covers.
    for (k, entry) in doc["intervals"].as_array().unwrap().iter().enumerate() {
        let covered = &intervals[k * 11..(k + 1) * 11];
        let events: u64 = covered.iter().map(|i| i["event"]["count"].as_u64().unwrap()).sum();
        assert_eq!(entry["event"]["count"].as_u64().unwrap(), events, "entry {k}");
        let max = covered.iter().map(|i| i["event"]["max_us"].as_f64().unwrap()).fold(0.0, f64::max);
        assert_eq!(entry["event"]["max_us"].as_f64().unwrap(), max, "entry {k}");
    }
    let events: u64 = intervals[..recovered].iter().map(|i| i["event"]["count"].as_u64().unwrap()).sum();
    assert_eq!(doc["conditions"]["run"]["events"].as_u64().unwrap(), events);

    // Entries wider than an interval: each line keeps the event class whole and every other
    // class's count and max; export writes those, and leaves the percentiles' cells empty.
    for i in &intervals {
        assert!(i["event"]["p99_us"].is_number(), "{i}");
        let read = i["read"].as_object().unwrap();
        assert_eq!(read.keys().collect::<Vec<_>>(), ["count", "max_us"], "{i}");
    }
    let o = fairbench_in(db.dir.path(), &["export", "--csv", "long.json"].map(String::from));
    assert!(o.status.success(), "{}", text(&o));
    let csv = String::from_utf8(o.stdout).unwrap();
    assert_eq!(csv.lines().count() - 1, intervals.len() * 6, "every streamed interval, 6 classes each");
    let busy = intervals.iter().position(|i| i["read"]["count"].as_u64().unwrap() > 0).unwrap();
    let row: Vec<&str> = csv.lines().skip(1 + busy * 6).find(|r| r.contains(",read,")).unwrap().split(',').collect();
    assert_eq!(row[5], intervals[busy]["read"]["count"].to_string(), "{row:?}");
    assert_eq!(&row[7..12], ["", "", "", "", ""], "no min or percentiles: {row:?}");
    assert_eq!(row[12].parse::<f64>().unwrap(), intervals[busy]["read"]["max_us"].as_f64().unwrap(), "{row:?}");
    let event: Vec<&str> = csv.lines().nth(1 + busy * 6).unwrap().split(',').collect();
    assert_eq!((event[4], event[9].is_empty()), ("event", false), "{event:?}");
}
