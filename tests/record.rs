//! One record per run, one builder: the result a run writes at its end is `build` of the
//! record it streamed, read back from disk (byte for byte, once the streamed files' names
//! are the same), on SQLite, MariaDB and PostgreSQL; and `recover` of a finished run's
//! record cut before its ends has every figure the entries hold, status `incomplete`.

mod common;
use common::*;
use fairbench::model::{pretty_json, ResultDocument};
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};

fn prepared(kind: Kind, workload: &str) -> TestDb {
    let db = TestDb::new(kind);
    let p = db.fairbench(&["prepare", workload, "--table-size=1000"]);
    assert!(p.status.success(), "{}", text(&p));
    db
}

/// Runs, then returns the result written and its record's path.
fn run(db: &TestDb, name: &str, args: &[&str]) -> (ResultDocument, PathBuf) {
    let out = db.dir.path().join(format!("{name}.json"));
    let mut all = args.to_vec();
    let out_arg = format!("--out={}", out.display());
    all.extend(["-q", &out_arg]);
    let o = db.fairbench(&all);
    assert!(o.status.success(), "{}", text(&o));
    let doc = ResultDocument::read(&out).unwrap();
    (doc, fairbench::timeline::record_path_for(&out))
}

/// `build` of the record read back, as the run finishes it (streamed files named, audited).
fn built(record: &Path, streamed: &[fairbench::model::StreamedFile]) -> ResultDocument {
    let read = fairbench::timeline::read_record(record).unwrap();
    assert!(!read.torn);
    let mut doc = fairbench::result::build(&read.record).unwrap();
    doc.streamed = streamed.to_vec();
    doc.audit = fairbench::audit::audit(&doc);
    doc
}

fn assert_built_equals_written(kind: Kind) {
    let db = prepared(kind, "oltp_read_write");
    let args = ["run", "oltp_read_write", "--table-size=1000", "--time=2", "--warmup=1", "--threads=2"];
    let (written, record) = run(&db, "r", &args);
    assert!(written.stats["event"].count > 0 && written.statements.len() >= 10);
    let rebuilt = built(&record, &written.streamed);
    assert_eq!(pretty_json(&rebuilt), pretty_json(&written));
}

#[test]
fn sqlite_the_result_is_build_of_its_record() {
    assert_built_equals_written(Kind::Sqlite);
}

#[test]
fn mariadb_the_result_is_build_of_its_record() {
    assert_built_equals_written(Kind::Mysql);
}

#[test]
fn postgres_the_result_is_build_of_its_record() {
    assert_built_equals_written(Kind::Postgres);
}

#[test]
fn sqlite_repeats_and_the_open_loop_are_built_from_the_record_too() {
    let db = prepared(Kind::Sqlite, "oltp_point_select");
    let base = ["run", "oltp_point_select", "--table-size=1000", "--time=1"];
    let (written, record) = run(&db, "repeats", &[&base[..], &["--repeat=2", "--threshold=errors==0"]].concat());
    assert_eq!(written.repeats.len(), 2);
    assert_eq!(written.thresholds.len(), 1);
    assert_eq!(pretty_json(&built(&record, &written.streamed)), pretty_json(&written));
    let (written, record) = run(&db, "open", &[&base[..], &["--rate=200", "--percentile=99.9"]].concat());
    assert!(written.service.is_some() && written.open_loop.as_ref().unwrap().start_delay.count > 0);
    assert_eq!(pretty_json(&built(&record, &written.streamed)), pretty_json(&written));
}

/// The record's lines up to (not including) its ends: what a run killed just before its
/// end leaves.
fn cut_before_the_ends(record: &Path, into: &Path) {
    let lines = fairbench::timeline::IntervalLines::open(record).unwrap();
    let mut gz = flate2::write::GzEncoder::new(std::fs::File::create(into).unwrap(), Default::default());
    for line in lines {
        let line = line.unwrap();
        let kind: Value = serde_json::from_str(&line).unwrap();
        if kind["record"] == "phase_end" || kind["record"] == "end" {
            break;
        }
        gz.write_all(line.as_bytes()).unwrap();
        gz.write_all(b"\n").unwrap();
    }
    gz.finish().unwrap();
}

#[test]
fn sqlite_recover_of_a_finished_runs_record_keeps_every_figure_its_entries_hold() {
    let db = prepared(Kind::Sqlite, "oltp_read_write");
    let args = ["run", "oltp_read_write", "--table-size=1000", "--time=2", "--warmup=1"];
    let (written, record) = run(&db, "done", &args);
    // The start document and the record without its ends, as a killed run leaves them.
    let dir = db.dir.path();
    let mut started = fairbench::timeline::read_record(&record).unwrap().record.start.document;
    started.audit = fairbench::audit::audit(&started);
    started.write(&dir.join("killed.json")).unwrap();
    cut_before_the_ends(&record, &fairbench::timeline::record_path_for(&dir.join("killed.json")));
    let [done_intervals, done_log] = fairbench::timeline::paths_for(&dir.join("done.json"));
    let [killed_intervals, killed_log] = fairbench::timeline::paths_for(&dir.join("killed.json"));
    std::fs::copy(done_intervals, killed_intervals).unwrap();
    let o = fairbench_in(dir, &["recover", "killed.json"].map(String::from));
    assert!(o.status.success(), "{}", text(&o));
    // The interval log a killed run never wrote, written by recover from its record: the
    // finished run's, byte for byte.
    assert_eq!(std::fs::read_to_string(killed_log).unwrap(), std::fs::read_to_string(done_log).unwrap());
    let recovered = ResultDocument::read(&dir.join("killed.json")).unwrap();
    let run = &recovered.conditions.run;
    assert_eq!(run.status.name(), "incomplete");
    assert!(run.failure.as_deref().unwrap().starts_with("the run never ended"), "{:?}", run.failure);
    // Every figure the entries hold is the finished result's. Rates divide by the measured
    // time, which a record without its end knows only as its entries' (the run's own ends at
    // --time's deadline): compared apart.
    let json = |v: &dyn erased::Json| without_rates(v.json());
    assert_eq!(json(&recovered.stats), json(&written.stats));
    assert_eq!(json(&recovered.statements), json(&written.statements));
    assert_eq!(json(&recovered.transactions), json(&written.transactions));
    assert_eq!(json(&recovered.errors), json(&written.errors));
    assert_eq!(json(&recovered.intervals), json(&written.intervals));
    assert_eq!(json(&recovered.conditions.workload), json(&written.conditions.workload));
    assert_eq!(run.events, written.conditions.run.events);
    let measured = recovered.intervals.iter().filter(|i| !i.warmup).map(|i| i.duration_s);
    assert_eq!(run.measured_s, measured.sum::<f64>(), "measured: what its entries cover");
    let events = recovered.stats["event"].count as f64;
    assert_eq!(recovered.stats["event"].qps, events / run.measured_s);
    // What only the end reads is missing, and said to be.
    assert!(recovered.conditions.dataset.tables_at_end.is_empty());
    assert!(!written.conditions.dataset.tables_at_end.is_empty());
}

/// Where two JSON values first differ, and how.
fn first_difference(a: &Value, b: &Value, at: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter().find_map(|k| match (x.get(k), y.get(k)) {
                (Some(p), Some(q)) => first_difference(p, q, &format!("{at}.{k}")),
                (p, q) => Some(format!("{at}.{k}: {p:?} vs {q:?}")),
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            x.iter().zip(y).enumerate().find_map(|(i, (p, q))| first_difference(p, q, &format!("{at}[{i}]")))
        }
        _ if a == b => None,
        _ => Some(format!("{at}: {a} vs {b}")),
    }
}

/// JSON without its `qps` rates.
fn without_rates(json: String) -> Value {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(m) => {
                m.remove("qps");
                m.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut v: Value = serde_json::from_str(&json).unwrap();
    strip(&mut v);
    v
}

/// Values compared as their JSON.
mod erased {
    pub trait Json {
        fn json(&self) -> String;
    }
    impl<T: serde::Serialize> Json for T {
        fn json(&self) -> String {
            serde_json::to_string(self).unwrap()
        }
    }
}

/// `combine` builds from the shards' merged records: of a one-shard run, the shard's
/// figures; of a combined result, itself (it is built from a record like any other).
#[test]
fn mariadb_combine_of_one_shard_is_that_shard_and_combined_again_is_itself() {
    let db = prepared(Kind::Mysql, "oltp_read_write");
    let key = format!("one-{}", db.name);
    let args = ["run", "oltp_read_write", "--table-size=1000", "--time=2", "--threads=2", "--shard=0/1"];
    let (shard, _) = run(&db, "shard", &[&args[..], &["--shard-key", &key]].concat());
    let dir = db.dir.path();
    let combine = |inputs: &[&str], out: &str| {
        let mut all: Vec<String> = vec!["combine".into()];
        all.extend(inputs.iter().map(|s| s.to_string()));
        all.extend(["-o".into(), out.into()]);
        let o = fairbench_in(dir, &all);
        assert!(o.status.success(), "{}", text(&o));
        ResultDocument::read(&dir.join(out)).unwrap()
    };
    let combined = combine(&["shard.json"], "all.json");
    assert_eq!(combined.shards.len(), 1);
    // What only a shard has, or only a combined result, set aside: the rest is the shard's.
    let figures = |d: &ResultDocument| {
        let mut v = serde_json::to_value(d).unwrap();
        for key in ["shards", "streamed", "audit"] {
            v.as_object_mut().unwrap().remove(key);
        }
        v["conditions"]["run"].as_object_mut().unwrap().remove("shard");
        for entry in v["intervals"].as_array_mut().unwrap() {
            entry.as_object_mut().unwrap().remove("histograms");
        }
        v
    };
    let differs = first_difference(&figures(&combined), &figures(&shard), "");
    assert!(differs.is_none(), "the combined result differs from its one shard at {differs:?}");
    assert!(combined.stats["event"].count > 0);
    // Combined again: the same result, byte for byte once its files are named alike.
    let mut again = combine(&["all.json"], "again.json");
    again.streamed = combined.streamed.clone();
    assert_eq!(pretty_json(&again), pretty_json(&combined));
}
