//! `--report-interval` windows: exactly the interval long, ending on its multiples counted
//! from the measured start (sysbench's labels), the warmup's flagged and never mixed with
//! measured seconds, the run's last shorter window labelled with its real length, and the
//! result's per-second timeline on the same seconds. (sysbench's own lines next to
//! fairbench's: tests/sysbench_corpus.rs.)

mod common;
use common::*;

/// The labels of the interval lines (`[ 2s ]`, `[ 1s warmup ]`, `[ 5s, last 1.0 s ]`).
fn labels(out: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(out);
    text.lines().filter(|l| l.starts_with("[ ")).map(|l| l[..l.find(" ] ").expect(l) + 2].to_string()).collect()
}

/// A last window's label, `[ 5s, last 1.0 s ]`: (end, length).
fn partial(label: &str) -> (f64, f64) {
    let inner = label.strip_prefix("[ ").and_then(|l| l.strip_suffix(" s ]")).unwrap_or_else(|| panic!("{label}"));
    let (end, len) = inner.split_once("s, last ").unwrap_or_else(|| panic!("{label}"));
    (end.parse().unwrap_or_else(|_| panic!("{label}")), len.parse().unwrap_or_else(|_| panic!("{label}")))
}

/// The last window began at the last boundary `from` and ran until the run stopped, at
/// least `min_len` later (the real end: a busy machine stops a little late).
fn assert_last_window(label: &str, from: f64, min_len: f64) {
    let (end, len) = partial(label);
    assert!(len >= min_len && end >= from + min_len, "{label}");
    // The end is rounded to whole seconds, the length to tenths.
    assert!((end - from - len).abs() <= 0.55, "{label}");
}

#[test]
fn sqlite_windows_end_on_the_interval_from_the_measured_start() {
    let db = TestDb::new(Kind::Sqlite);
    assert!(db.fairbench(&["prepare", "oltp_read_write", "--table-size=1000"]).status.success());
    let out = db.dir.path().join("windows.json");
    let run = ["run", "oltp_read_write", "--table-size=1000", "--warmup=1", "--report-interval=2", "--time=5"];
    let o = db.fairbench(&[&run[..], &[&format!("--out={}", out.display())]].concat());
    assert!(o.status.success(), "{}", text(&o));
    let l = labels(&o.stderr);
    assert_eq!(l[..3], ["[ 1s warmup ]", "[ 2s ]", "[ 4s ]"], "{l:?}");
    assert_eq!(l.len(), 4, "{l:?}");
    assert_last_window(&l[3], 4.0, 1.0);

    // The timeline's measured seconds start on whole seconds after the warmup: the k-th
    // from its (k-1)-th second, a swap's lateness (under a second) after it.
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let iv = doc["intervals"].as_array().unwrap();
    let warmup: Vec<&serde_json::Value> = iv.iter().filter(|i| i["warmup"] == true).collect();
    assert_eq!(warmup.len(), 1, "one warmup second");
    let measured: Vec<f64> =
        iv.iter().filter(|i| i["warmup"] == false).map(|i| i["from_s"].as_f64().unwrap()).collect();
    assert!(measured.len() >= 5, "{measured:?}");
    for (k, from) in measured.iter().enumerate() {
        let since_warmup = from - 1.0;
        assert!(since_warmup >= k as f64 - 1e-6 && since_warmup < k as f64 + 1.0, "second {k}: {measured:?}");
    }

    // sysbench's format: its lines only, whole measured windows (sysbench prints neither
    // the warmup's nor a shorter last one).
    let o = db.fairbench(&[&run[..], &["--format=sysbench", "--out=/dev/null"]].concat());
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(labels(&o.stdout), ["[ 2s ]", "[ 4s ]"], "{}", text(&o));
    assert!(labels(&o.stderr).is_empty(), "{}", text(&o));
}

/// One line per whole interval, the warmup's flagged, no sliver line for the milliseconds
/// after the last whole second, a shorter last window labelled as such.
#[test]
fn sqlite_interval_lines_have_no_stub() {
    let db = TestDb::new(Kind::Sqlite);
    assert!(db.fairbench(&["prepare", "oltp_point_select", "--table-size=1000"]).status.success());
    let lines = |extra: &[&str]| -> Vec<String> {
        let args = [&["run", "oltp_point_select", "--table-size=1000", "--time=3", "--out=/dev/null"], extra].concat();
        let o = db.fairbench(&args);
        assert!(o.status.success(), "{}", text(&o));
        labels(&o.stderr)
    };
    // --time 3 is a multiple of 1: the milliseconds after the 3rd second are no line.
    let l = lines(&["--warmup=1", "--report-interval=1"]);
    assert_eq!(l, ["[ 1s warmup ]", "[ 1s ]", "[ 2s ]", "[ 3s ]"]);
    let l = lines(&["--report-interval=2"]);
    assert_eq!(l.len(), 2, "{l:?}");
    assert_eq!(l[0], "[ 2s ]", "{l:?}");
    assert_last_window(&l[1], 2.0, 1.0);
    // A window is never half warmup: the warmup's ends at its boundary, the first measured
    // one starts there.
    let l = lines(&["--warmup=2", "--report-interval=3"]);
    assert_eq!(l, ["[ 2s warmup ]", "[ 3s ]"]);
}

/// A fractional --report-interval: windows of that length on its multiples, and timeline
/// entries as short (the clients' recorders are collected that often).
#[test]
fn sqlite_fractional_windows_and_timeline_entries() {
    let db = TestDb::new(Kind::Sqlite);
    assert!(db.fairbench(&["prepare", "oltp_point_select", "--table-size=1000"]).status.success());
    let out = db.dir.path().join("f.json");
    let out_arg = format!("--out={}", out.display());
    let args =
        ["run", "oltp_point_select", "--table-size=1000", "--warmup=1", "--time=1", "--report-interval=0.25", &out_arg];
    let o = db.fairbench(&args);
    assert!(o.status.success(), "{}", text(&o));
    let seen = labels(&o.stderr);
    assert_eq!(
        seen[..8.min(seen.len())],
        [
            "[ 0.25s warmup ]",
            "[ 0.5s warmup ]",
            "[ 0.75s warmup ]",
            "[ 1s warmup ]",
            "[ 0.25s ]",
            "[ 0.5s ]",
            "[ 0.75s ]",
            "[ 1s ]"
        ],
        "{}",
        text(&o)
    );
    // The stop's last milliseconds make a window only past a fifth of the interval (a
    // client slow to stop), labelled with its real length.
    assert!(seen.len() == 8 || (seen.len() == 9 && seen[8].contains(", last ")), "{seen:?}");
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let lengths: Vec<f64> =
        doc["intervals"].as_array().unwrap().iter().map(|i| i["duration_s"].as_f64().unwrap()).collect();
    assert!(lengths.len() >= 8 && lengths[..8].iter().all(|d| (d - 0.25).abs() < 0.05), "{lengths:?}");
    assert_eq!(doc["intervals"].as_array().unwrap().iter().filter(|i| i["warmup"] == true).count(), 4);
    // Down to 10 ms, in steps of 10 ms; one line naming the rule otherwise.
    for bad in ["0.005", "0.015", "0"] {
        let o = db.fairbench(&["run", "oltp_point_select", "--report-interval", bad]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(String::from_utf8_lossy(&o.stderr).contains("from 0.01 to 86400 in steps of 0.01"), "{}", text(&o));
    }
}
