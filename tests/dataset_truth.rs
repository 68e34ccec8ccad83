//! The result describes the data the run used: a run that draws ids from part of its
//! tables says so (and judges cache fit on that part); a run on all of them does not.

mod common;

use common::*;
use serde_json::Value;

fn finding<'a>(doc: &'a Value, id: &str) -> Option<&'a Value> {
    doc["audit"].as_array().unwrap().iter().find(|f| f["id"] == id)
}

#[test]
fn a_run_on_part_of_the_tables_is_flagged_and_judged_on_that_part() {
    for kind in [Kind::Sqlite, Kind::Mysql, Kind::Postgres] {
        let db = TestDb::new(kind);
        let p = db.fairbench(&["prepare", "oltp_point_select", "--table-size=30000"]);
        assert!(p.status.success(), "{}", text(&p));
        // Without --table-size: ids 1..10,000 (the default) of 30,000 rows.
        let part = db.run_json(&["run", "oltp_point_select", "--events=300"]);
        let touched = &part["conditions"]["dataset"]["touched"];
        assert_eq!(touched["drawn_rows"], 10_000, "{kind:?}: {touched}");
        assert_eq!(touched["partial_tables"], serde_json::json!(["sbtest1"]), "{kind:?}: {touched}");
        let total = part["conditions"]["dataset"]["total_bytes"].as_u64().unwrap();
        let drawn = touched["bytes"].as_u64().unwrap();
        // About a third (InnoDB's estimated row count moves the share a little).
        assert!(drawn * 4 < total * 2 && drawn * 4 > total, "{kind:?}: {drawn} of {total}");
        let f = finding(&part, "partial-table").unwrap_or_else(|| panic!("{kind:?}: {}", part["audit"]));
        assert_eq!(f["evidence"]["drawn_rows"], 10_000, "{kind:?}: {f}");
        if let Some(fit) = finding(&part, "dataset-fits-in-memory") {
            assert_eq!(fit["evidence"]["drawn_from_bytes"], drawn, "{kind:?}: {fit}");
        }
        // With the size they were prepared with: the whole tables, no finding.
        let whole = db.run_json(&["run", "oltp_point_select", "--table-size=30000", "--events=300"]);
        assert!(finding(&whole, "partial-table").is_none(), "{kind:?}: {}", whole["audit"]);
        let touched = &whole["conditions"]["dataset"]["touched"];
        assert_eq!(touched["drawn_rows"], 30_000, "{kind:?}: {touched}");
        assert!(touched.get("partial_tables").is_none(), "{kind:?}: {touched}");
        assert!(db.fairbench(&["cleanup"]).status.success());
    }
}
