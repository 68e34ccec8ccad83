//! `fairbench ab`: two targets measured in turns, both results saved and compared.

mod common;

use common::*;
use serde_json::Value;

fn read(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn ab_alternates_the_sides_and_saves_both_results_and_the_comparison() {
    let db = TestDb::new(Kind::Sqlite);
    let dir = db.dir.path();
    let (a, b) =
        (format!("sqlite://{}", dir.join("a.db").display()), format!("sqlite://{}", dir.join("b.db").display()));
    let args: Vec<String> = [
        "ab",
        "oltp_point_select",
        "--target",
        &a,
        "--target",
        &b,
        "--table-size=1000",
        "--repeat=3",
        "--events=2000",
        "--out-dir=out",
        "--under-test=target",
        "--claim=tps>=100x",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let o = fairbench_in(dir, &args);
    // The claim (B 100 times A's speed) is refuted: exit code 4, as compare's.
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("measured in turns: A1 B1 A2 B2 A3 B3"), "{stdout}");
    let cmp = read(&dir.join("out/comparison.json"));
    assert_eq!(cmp["order"], serde_json::json!(["A1", "B1", "A2", "B2", "A3", "B3"]));
    assert_eq!(cmp["under_test"]["name"], "target");
    assert_eq!(cmp["claims"][0]["verdict"], "refuted");
    let (ra, rb) = (read(&dir.join("out/A.json")), read(&dir.join("out/B.json")));
    // Both prepared by ab, run with the same seed, each repeat of A before B's.
    assert_eq!(ra["conditions"]["run"]["rand_seed"], rb["conditions"]["run"]["rand_seed"]);
    let times = |r: &Value, k: usize, at: &str| r["repeats"][k][at].as_str().unwrap().to_string();
    for k in 0..3 {
        assert_eq!(ra["repeats"][k]["events"], 2000);
        assert!(times(&ra, k, "ended_at") <= times(&rb, k, "started_at"), "A{k} then B{k}");
        if k > 0 {
            assert!(times(&rb, k - 1, "ended_at") <= times(&ra, k, "started_at"), "B{} then A{k}", k - 1);
        }
    }
    // One target is one line and exit code 2.
    let o = fairbench_in(dir, &["ab".into(), "oltp_point_select".into(), "--target".into(), a]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("exactly two --target URLs"), "{}", text(&o));
}
