//! A study's claims on a COMMIT's floor (`commit.min`, as studies/commit-latency.toml
//! judges its seed's "about 2 ms at the least"), judged on real runs of the seed's
//! money-transfer transaction against a MariaDB database of the test's own.

mod common;
use common::*;

#[test]
fn a_claim_on_commit_min_is_judged_on_the_fastest_commit_of_the_runs() {
    let db = TestDb::new(Kind::Mysql);
    let dir = tempfile::tempdir().unwrap();
    let study = format!(
        r#"
[study]
title = "COMMIT floor"
repeats = 3
time_s = 2
seed = 1

[targets.local]
url = "{url}"

[[workloads]]
name = "xfer"
options = {{ set = "customers=50", threads = 2 }}

[[claims]]
says = "a COMMIT takes at most 10 s at the least"
check = "commit.min<=10s"

[[claims]]
says = "a COMMIT over TCP takes under a microsecond at the least"
check = "commit.min<1us"
"#,
        url = db.url
    );
    std::fs::write(dir.path().join("s.toml"), study).unwrap();
    let o = fairbench_in(dir.path(), &["study", "run", "s.toml", "--out", "out"].map(String::from));
    assert!(o.status.success(), "{}", text(&o));
    let read = |path: std::path::PathBuf| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    let doc = read(dir.path().join("out/study.json"));
    // The fastest COMMIT of the three runs, as each run's result has it.
    let fastest = (1..=3)
        .map(|r| {
            let run = read(dir.path().join(format!("out/runs/c01-r{r}.json")));
            assert!(run["stats"]["commit"]["count"].as_u64().unwrap() > 0, "{r}: no COMMIT measured");
            run["stats"]["commit"]["min_us"].as_f64().unwrap()
        })
        .fold(f64::INFINITY, f64::min);
    let claims = doc["claims"].as_array().unwrap();
    assert_eq!(claims[0]["verdict"], "supported", "{}", claims[0]);
    assert_eq!(claims[1]["verdict"], "refuted", "{}", claims[1]);
    for claim in claims {
        let evidence = &claim["checks"][0]["evidence"];
        let estimate = evidence["estimate"].as_f64().unwrap_or_else(|| panic!("no evidence: {claim}"));
        assert!((estimate - fastest).abs() < 1e-6 * fastest.max(1.0), "{estimate} vs the runs' fastest {fastest}");
        assert!(evidence["low"].as_f64().unwrap() <= estimate && estimate <= evidence["high"].as_f64().unwrap());
    }
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("commit.min"), "the verdicts name the metric: {out}");
}
