//! The committed JSON Schema (docs/result-schema.json) is the one the types generate, real
//! result files validate against it, and unreadable files are rejected naming the field.
//! Embedded SQLite only: no server needed.

mod common;
use common::*;
use fairbench::model::{ResultDocument, ResultFileError};
use serde_json::Value;

fn committed_schema() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/result-schema.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn the_committed_schema_is_the_generated_one() {
    assert!(
        committed_schema() == fairbench::model::json_schema(),
        "docs/result-schema.json is stale: regenerate it with `cargo run -q -- schema > docs/result-schema.json` \
         and describe the change in docs/result-schema.md"
    );
}

fn assert_valid(doc: &Value) {
    let schema = committed_schema();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let errors: Vec<String> =
        validator.iter_errors(doc).map(|e| format!("{} at {}", e, e.instance_path())).take(5).collect();
    assert!(errors.is_empty(), "result does not match docs/result-schema.json:\n{}", errors.join("\n"));
}

#[test]
fn sqlite_closed_and_open_loop_results_validate_and_read_back() {
    let db = TestDb::new(Kind::Sqlite);
    let prepared = db.fairbench(&["prepare", "oltp_read_write", "--table-size=200"]);
    assert!(prepared.status.success(), "{}", text(&prepared));
    let closed = db.run_json(&["run", "oltp_read_write", "--table-size=200", "--events=50", "--percentiles=90,99.99"]);
    assert_valid(&closed);
    let open =
        db.run_json(&["run", "oltp_point_select", "--table-size=200", "--time=1", "--rate=200", "--arrival=poisson"]);
    assert_valid(&open);
    assert_eq!(open["conditions"]["run"]["loop_model"], "open");
    assert_eq!(open["open_loop"]["arrival"], "poisson");
    for doc in [closed, open] {
        let back = ResultDocument::parse(&doc.to_string()).expect("reads back");
        assert_eq!(serde_json::to_value(&back).unwrap(), doc, "a read and re-written result is unchanged");
    }
}

#[test]
fn sqlite_unreadable_results_name_the_field_and_the_version() {
    let db = TestDb::new(Kind::Sqlite);
    assert!(db.fairbench(&["prepare", "oltp_point_select", "--table-size=100"]).status.success());
    let doc = db.run_json(&["run", "oltp_point_select", "--table-size=100", "--events=10"]);

    let mut wrong_type = doc.clone();
    wrong_type["conditions"]["run"]["threads"] = Value::from("eight");
    match ResultDocument::parse(&wrong_type.to_string()) {
        Err(ResultFileError::Field { field, .. }) => assert_eq!(field, "conditions.run.threads"),
        other => panic!("expected a field error, got {other:?}"),
    }
    let mut bad_status = doc.clone();
    bad_status["conditions"]["run"]["status"] = Value::from("done");
    let e = ResultDocument::parse(&bad_status.to_string()).unwrap_err().to_string();
    assert!(e.contains("conditions.run.status") && e.contains("done"), "{e}");

    let mut negative = doc.clone();
    negative["conditions"]["run"]["measured_s"] = Value::from(-3.0);
    let e = ResultDocument::parse(&negative.to_string()).unwrap_err().to_string();
    assert!(e.contains("conditions.run.measured_s") && e.contains("-3"), "{e}");

    let mut newer = doc.clone();
    newer["schema_version"] = Value::from(99);
    let e = ResultDocument::parse(&newer.to_string()).unwrap_err().to_string();
    assert!(e.contains("version 99") && e.contains("up to version 2"), "{e}");

    // The command says the same, in one line, exit 2.
    let path = db.dir.path().join("bad.json");
    std::fs::write(&path, wrong_type.to_string()).unwrap();
    let o = fairbench_in(db.dir.path(), &["audit".into(), path.display().to_string()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(err.trim().lines().count() == 1 && err.contains("conditions.run.threads"), "{err}");
}
