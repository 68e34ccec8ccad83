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

/// From data that fits SQLite's own page cache (2,000 KiB by default) to data that does
/// not: the data is still held by the OS page cache (the host's available RAM), the larger
/// cache, so no cache cliff is named; each point records both caches.
#[test]
fn sqlite_sweep_past_its_page_cache_stays_within_the_os_page_cache() {
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
    let sizes: Vec<(u64, u64, u64)> = doc["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let ds = &p["result"]["conditions"]["dataset"];
            let cache = |name: &str| ds["cache"][name].as_u64().unwrap();
            (ds["total_bytes"].as_u64().unwrap(), cache("cache_size"), cache("os_page_cache"))
        })
        .collect();
    let [(small, own, _), (large, _, os)] = sizes[..] else { panic!("two points: {sizes:?}") };
    assert!(small <= own && large > own, "the sizes do not straddle SQLite's own cache: {sizes:?}");
    assert!(large < os, "the OS page cache holds the larger size: {sizes:?}");
    assert!(doc.get("cache_cliffs").is_none(), "{}", doc["cache_cliffs"]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(!stdout.contains("Past the cache") && stdout.contains("x os_page_cache"), "{stdout}");
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
