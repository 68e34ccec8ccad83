//! A trend across repeats is a finding with its slope: the first repeats after prepare on
//! a cold server run slower, and repeats of one side in a row give that side the warm ones.

mod common;

use common::*;
use serde_json::{json, Value};

fn audit_with_tps(db: &TestDb, doc: &Value, tps: &[f64]) -> Vec<Value> {
    let mut doc = doc.clone();
    doc["repeat_summary"]["tps"]["values"] = json!(tps);
    doc["repeat_summary"]["tps"]["mean"] = json!(tps.iter().sum::<f64>() / tps.len() as f64);
    let file = db.dir.path().join("edited.json");
    std::fs::write(&file, serde_json::to_string(&doc).unwrap()).unwrap();
    let o = fairbench_in(db.dir.path(), &["audit".into(), "--json".into(), file.display().to_string()]);
    let findings: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
    findings.as_array().unwrap().iter().filter(|f| f["id"] == "trend").cloned().collect()
}

#[test]
fn a_trend_across_repeats_is_a_finding_with_its_slope() {
    let db = TestDb::new(Kind::Sqlite);
    let doc = db.run_json(&["bench", "oltp_point_select", "--table-size=1000", "--repeat=3", "--time=1"]);
    assert_eq!(doc["repeats"].as_array().unwrap().len(), 3);
    // Warming after prepare, as measured on MariaDB: 557, 644, 651 events/s.
    let warming = audit_with_tps(&db, &doc, &[557.0, 644.0, 651.0]);
    assert_eq!(warming.len(), 1, "{warming:?}");
    assert_eq!(warming[0]["evidence"]["slope_per_repeat"], 47.0);
    assert!(warming[0]["title"].as_str().unwrap().contains("rose"), "{}", warming[0]);
    let slowing = audit_with_tps(&db, &doc, &[900.0, 800.0, 700.0, 600.0]);
    assert!(slowing[0]["title"].as_str().unwrap().contains("fell"), "{slowing:?}");
    // Noise without a direction, and a steady rise too small to matter: none.
    assert!(audit_with_tps(&db, &doc, &[600.0, 660.0, 610.0]).is_empty());
    assert!(audit_with_tps(&db, &doc, &[600.0, 610.0, 620.0]).is_empty());
}
