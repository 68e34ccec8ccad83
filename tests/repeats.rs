//! `--repeat`, `--threshold` and `--cost-per-hour` on real runs (SQLite: no server needed).

mod common;
use common::*;
use serde_json::Value;

fn ids(doc: &Value) -> Vec<String> {
    doc["audit"].as_array().unwrap().iter().map(|f| f["id"].as_str().unwrap().to_string()).collect()
}

#[test]
fn sqlite_repeats_keep_each_repeat_and_merge_them_exactly() {
    let db = TestDb::new(Kind::Sqlite);
    let prep = db.fairbench(&["prepare", "oltp_read_write", "--table-size=200", "-q"]);
    assert!(prep.status.success(), "{}", text(&prep));
    let doc =
        db.run_json(&["run", "oltp_read_write", "--table-size=200", "--events=30", "--time=0", "--repeat=3", "-q"]);
    let repeats = doc["repeats"].as_array().unwrap();
    assert_eq!(repeats.len(), 3);
    assert_eq!(doc["conditions"]["run"]["repeats"], 3);
    // Each repeat ran its 30 events; the top level holds all of them, histograms merged.
    let count = |v: &Value| v["stats"]["event"]["count"].as_u64().unwrap();
    assert!(repeats.iter().all(|r| count(r) == 30 && r["events"] == 30));
    assert_eq!(count(&doc), 90);
    assert_eq!(doc["conditions"]["run"]["events"], 90);
    let writes: u64 = repeats.iter().map(|r| r["stats"]["write"]["count"].as_u64().unwrap()).sum();
    assert_eq!(doc["stats"]["write"]["count"].as_u64().unwrap(), writes);
    let max = repeats.iter().map(|r| r["stats"]["event"]["max_us"].as_f64().unwrap()).fold(0.0, f64::max);
    assert_eq!(doc["stats"]["event"]["max_us"].as_f64().unwrap(), max);
    // The timeline: every second tagged with its repeat, in time order.
    let tags: Vec<u64> = doc["intervals"].as_array().unwrap().iter().map(|i| i["repeat"].as_u64().unwrap()).collect();
    assert!(tags.windows(2).all(|w| w[0] <= w[1]) && tags.first() == Some(&1) && tags.last() == Some(&3), "{tags:?}");
    // The summary: median and spread of each headline metric over the three repeats.
    let tps = &doc["repeat_summary"]["tps"];
    let mut values: Vec<f64> = tps["values"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    assert_eq!(values.len(), 3);
    values.sort_by(f64::total_cmp);
    assert_eq!(tps["median"].as_f64().unwrap(), values[1]);
    assert!(doc["repeat_summary"]["commit.p99"].is_object());
    // Three repeats: the spread is known, so no single-run finding.
    assert!(!ids(&doc).contains(&"single-run".to_string()), "{:?}", ids(&doc));
    let once = db.run_json(&["run", "oltp_read_write", "--table-size=200", "--events=10", "--time=0", "-q"]);
    assert!(ids(&once).contains(&"single-run".to_string()));
    assert!(once.get("repeats").is_none());
}

#[test]
fn sqlite_thresholds_pass_fail_and_exit_3_with_the_result_saved() {
    let db = TestDb::new(Kind::Sqlite);
    assert!(db.fairbench(&["prepare", "oltp_point_select", "--table-size=200", "-q"]).status.success());
    let out = db.dir.path().join("t.json");
    let o = db.fairbench(&[
        "run",
        "oltp_point_select",
        "--table-size=200",
        "--events=200",
        "--time=0",
        "--threshold=errors==0",
        "--threshold",
        "p99 < 10s",
        "--threshold=qps>1e12",
        "--threshold=commit.p99<1ms",
        "--cost-per-hour=2.5",
        &format!("--out={}", out.display()),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("threshold failed: qps>1e12, commit.p99<1ms"), "{stderr}");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("threshold:   errors==0 pass (0)"), "{stdout}");
    assert!(stdout.contains("threshold:   commit.p99<1ms FAIL (not measured)"), "{stdout}");
    assert!(stdout.contains("per million queries"), "{stdout}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let t = doc["thresholds"].as_array().unwrap();
    assert_eq!(t.iter().map(|t| t["passed"].as_bool().unwrap()).collect::<Vec<_>>(), [true, true, false, false]);
    assert_eq!(t[1]["bound"], 10_000_000.0);
    assert_eq!(doc["conditions"]["run"]["cost_per_hour"], 2.5);
    // All pass: exit 0.
    let o = db.fairbench(&[
        "run",
        "oltp_point_select",
        "--table-size=200",
        "--events=50",
        "--time=0",
        "--threshold=errors==0",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn bad_thresholds_are_one_line_naming_the_grammar() {
    let db = TestDb::new(Kind::Sqlite);
    for bad in ["p99<10", "qps>>5", "latency<3ms", "qps>=5x"] {
        let o = db.fairbench(&["run", "oltp_point_select", "--time=1", &format!("--threshold={bad}")]);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("error: --threshold: "), "{err}");
    }
    let o = db.fairbench(&["run", "oltp_point_select", "--time=1", "--repeat=0"]);
    assert_eq!(o.status.code(), Some(2));
}

/// The server's counters of a repeated run cover the measured phases only: the warmups and
/// reconnections between repeats ran statements too, and must not make the mix look wrong.
#[test]
fn mariadb_repeats_count_server_statements_of_the_measured_phases_only() {
    let db = TestDb::new(Kind::Mysql);
    assert!(db.fairbench(&["prepare", "oltp_read_write", "--table-size=200", "-q"]).status.success());
    let doc =
        db.run_json(&["run", "oltp_read_write", "--table-size=200", "--warmup=1", "--time=2", "--repeat=3", "-q"]);
    let ids = ids(&doc);
    assert!(!ids.contains(&"mix-mismatch".to_string()), "{ids:?}: {}", doc["conditions"]["server"]["status_delta"]);
    let delta = &doc["conditions"]["server"]["status_delta"];
    let per_repeat: i64 =
        doc["repeats"].as_array().unwrap().iter().map(|r| r["status_delta"]["Com_commit"].as_i64().unwrap()).sum();
    assert_eq!(delta["Com_commit"].as_i64().unwrap(), per_repeat);
    // The COMMITs of the measured phases, not the hundreds of the warmups between them. The
    // counters are read a moment after each warmup ends: the events around that moment (an
    // event of the warmup committing after the read, measured ones committing before it)
    // make a difference of a few, whose size depends on how long the read took; the
    // warmups' COMMITs would make one of hundreds.
    let measured = doc["stats"]["commit"]["count"].as_i64().unwrap();
    let warmup_commits: i64 = doc["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["warmup"] == true)
        .map(|i| i["commit"]["count"].as_i64().unwrap())
        .sum();
    assert!(warmup_commits > 3 * 10, "the warmups ran too few commits to tell: {warmup_commits}");
    assert!(
        (per_repeat - measured).abs() * 10 < warmup_commits,
        "server counted {per_repeat} COMMITs, fairbench measured {measured}, the warmups ran {warmup_commits}"
    );
}
