//! `fairbench show FILE` (and `report --text`) prints a saved result as the command that
//! made it printed it: a run, its repeats, a sweep, an ab comparison, a recovered run.
//! sysbench's `--rate=0` ("no limit") is a closed loop in fairbench's own word order too.

mod common;
use common::*;
use std::process::Output;

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `show FILE` and `report --text FILE` print exactly what `made` printed on stdout.
fn shows_the_same(dir: &std::path::Path, made: &Output, file: &str) {
    assert!(made.status.success(), "{}", text(made));
    for args in [vec!["show", file], vec!["report", "--text", file]] {
        let shown = fairbench_in(dir, &args.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert!(shown.status.success(), "{args:?}: {}", text(&shown));
        assert_eq!(stdout(&shown), stdout(made), "{args:?}");
    }
}

#[test]
fn sqlite_show_prints_what_run_repeats_sweep_and_ab_printed() {
    let db = TestDb::new(Kind::Sqlite);
    let dir = db.dir.path();
    let quick = ["--table-size=200", "--events=100", "--time=0", "--quiet"];
    let mut bench = vec!["bench", "oltp_point_select", "--out=r.json"];
    bench.extend(quick);
    let run = db.fairbench(&bench);
    shows_the_same(dir, &run, "r.json");
    assert!(stdout(&run).contains("Audit"), "{}", stdout(&run));

    let mut repeats = vec!["bench", "oltp_point_select", "--repeat=2", "--out=rep.json"];
    repeats.extend(quick);
    shows_the_same(dir, &db.fairbench(&repeats), "rep.json");

    let mut sweep = vec!["sweep", "oltp_point_select", "--threads=1,2", "--out=s.json"];
    sweep.extend(quick);
    shows_the_same(dir, &db.fairbench(&sweep), "s.json");

    let other = format!("sqlite://{}", dir.join("other.db").display());
    let ab: Vec<String> = ["ab", "oltp_point_select", "--target", &db.url, "--target", &other, "--out-dir=ab"]
        .iter()
        .chain(&quick)
        .map(|s| s.to_string())
        .collect();
    let ab = fairbench_in(dir, &ab);
    shows_the_same(dir, &ab, "ab/comparison.json");
    // Each side of the ab is a result like any other.
    let side = fairbench_in(dir, &["show".into(), "ab/A.json".into()]);
    assert!(side.status.success() && stdout(&side).contains("oltp_point_select"), "{}", text(&side));

    // Not a result: one line, exit 2.
    std::fs::write(dir.join("junk.json"), "{\"schema\": \"something.else\"}").unwrap();
    let junk = fairbench_in(dir, &["show".into(), "junk.json".into()]);
    let err = String::from_utf8_lossy(&junk.stderr);
    assert_eq!(junk.status.code(), Some(2), "{}", text(&junk));
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn sqlite_rate_zero_is_a_closed_loop_said_once() {
    let db = TestDb::new(Kind::Sqlite);
    let o = db.fairbench(&[
        "bench",
        "oltp_point_select",
        "--table-size=200",
        "--events=100",
        "--time=0",
        "--rate",
        "0",
        "--out=r.json",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.matches("--rate 0 is sysbench's \"no rate limit\": a closed loop").count(), 1, "{err}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(db.dir.path().join("r.json")).unwrap()).unwrap();
    assert_eq!(doc["conditions"]["run"]["loop_model"], "closed");
    assert!(doc["open_loop"].is_null(), "{}", doc["open_loop"]);
    // What no reading makes sense of is still refused.
    for bad in ["-5", "nan"] {
        let o = db.fairbench(&["run", "oltp_point_select", "--rate", bad]);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", text(&o));
    }
}
