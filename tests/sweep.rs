//! `fairbench sweep` on SQLite: every point a full result, data sizes prepared in turn, one
//! file, a table; bad lists are one line.

mod common;
use common::*;
use serde_json::Value;

#[test]
fn sqlite_sweep_over_three_thread_counts_and_two_sizes() {
    let db = TestDb::new(Kind::Sqlite);
    let out = db.dir.path().join("sweep.json");
    let o = db.fairbench(&[
        "sweep",
        "oltp_point_select",
        "--threads",
        "4,1,2",
        "--table-size=300,100",
        "--events=50",
        "--time=0",
        &format!("--out={}", out.display()),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(doc["schema"], "fairbench.sweep");
    let points = doc["points"].as_array().unwrap();
    // Sizes ascending, clients ascending within each: 2 x 3 points.
    let order: Vec<(u64, u64)> =
        points.iter().map(|p| (p["table_size"].as_u64().unwrap(), p["threads"].as_u64().unwrap())).collect();
    assert_eq!(order, [(100, 1), (100, 2), (100, 4), (300, 1), (300, 2), (300, 4)]);
    for p in points {
        let r = &p["result"];
        assert_eq!(r["schema"], "fairbench.result");
        assert_eq!(r["conditions"]["run"]["threads"], p["threads"]);
        assert_eq!(r["stats"]["event"]["count"], 50);
        // Each size was prepared before its points: the tables hold exactly that many rows.
        let rows = r["conditions"]["dataset"]["tables_at_start"][0]["rows"].as_u64().unwrap();
        assert_eq!(rows, p["table_size"].as_u64().unwrap());
    }
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("Sweep of oltp_point_select") && stdout.contains("data vs cache"), "{stdout}");
    assert_eq!(stdout.lines().filter(|l| l.trim_start().starts_with("1 ")).count(), 6, "{stdout}");
}

/// From data that fits SQLite's page cache (2,000 KiB by default) to data that does not: the
/// sweep names the step, per client count, with the throughput on both sides.
#[test]
fn sqlite_sweep_names_where_the_data_outgrew_the_cache() {
    let db = TestDb::new(Kind::Sqlite);
    let out = db.dir.path().join("sweep.json");
    let o = db.fairbench(&[
        "sweep",
        "oltp_point_select",
        "--table-size=1000,30000",
        "--events=200",
        "--time=0",
        &format!("--out={}", out.display()),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let bytes: Vec<(u64, u64)> = doc["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let ds = &p["result"]["conditions"]["dataset"];
            (ds["total_bytes"].as_u64().unwrap(), ds["cache"]["cache_size"].as_u64().unwrap())
        })
        .collect();
    assert!(bytes[0].0 <= bytes[0].1 && bytes[1].0 > bytes[1].1, "the sizes do not straddle the cache: {bytes:?}");
    let cliffs = doc["cache_cliffs"].as_array().unwrap_or_else(|| panic!("no cache_cliffs: {doc}"));
    assert_eq!(cliffs.len(), 1);
    let c = &cliffs[0];
    assert_eq!((c["threads"].as_u64(), c["cache"].as_str()), (Some(1), Some("cache_size")));
    assert_eq!(c["fits"][1], 1000);
    assert_eq!(c["exceeds"][1], 30000);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("Past the cache: at 1 client the data grew from"), "{stdout}");
}

#[test]
fn bad_sweeps_are_one_line() {
    let db = TestDb::new(Kind::Sqlite);
    for (args, expect) in [
        (vec!["sweep", "oltp_point_select", "--threads", "1,x"], "\"x\" is not a whole number"),
        (vec!["sweep", "oltp_point_select", "--nosuch"], "sweep: unexpected argument '--nosuch'"),
    ] {
        let o = db.fairbench(&args);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(expect), "{err}");
    }
}
