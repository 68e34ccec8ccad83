//! MariaDB against PostgreSQL: judged by what each server is (durability in effect), not by
//! setting names that differ from product to product. One test in its own binary, because
//! it changes a MariaDB global setting for a while.

mod common;

use common::*;
use serde_json::Value;

fn compare(dir: &std::path::Path, a: &std::path::Path, b: &std::path::Path, json: bool) -> String {
    let mut args = vec!["compare".to_string(), a.display().to_string(), b.display().to_string()];
    if json {
        args.push("--json".into());
    }
    let o = fairbench_in(dir, &args);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("panicked"), "{}", text(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn findings(cmp: &Value) -> Vec<&str> {
    cmp["findings"].as_array().unwrap().iter().map(|f| f["id"].as_str().unwrap()).collect()
}

#[test]
fn mariadb_against_postgres_is_judged_by_durability_in_effect() {
    let (maria, pg) = (TestDb::new(Kind::Mysql), TestDb::new(Kind::Postgres));
    let dir = maria.dir.path();
    let run = |db: &TestDb, file: &str| {
        let doc = db.run_json(&["bench", "oltp_point_select", "--table-size=1000", "--events=500", "-q"]);
        let path = dir.join(file);
        std::fs::write(&path, doc.to_string()).unwrap();
        path
    };
    let (a, b) = (run(&maria, "maria.json"), run(&pg, "pg.json"));
    let cmp: Value = serde_json::from_str(&compare(dir, &a, &b, true)).unwrap();
    // Both durable: no durability finding; the protocol is no finding either.
    let ids = findings(&cmp);
    assert!(!ids.contains(&"durability-differs") && !ids.contains(&"transport-differs"), "{ids:?}");
    // Each product's own settings are counted per side by default, not listed as pairs.
    let text = compare(dir, &a, &b, false);
    let diff = text.split("Conditions that differ").nth(1).unwrap().split("Comparison findings").next().unwrap();
    assert!(diff.contains("each product's own settings"), "{diff}");
    assert!(diff.lines().count() <= 40, "{} lines:\n{diff}", diff.lines().count());
    // Each product's settings side by side under the one meaning they share; not marked.
    let same = diff.lines().find(|l| l.contains("same in effect (flushed at every commit")).expect(diff);
    assert!(same.contains("innodb_flush_log_at_trx_commit=1") && same.contains("synchronous_commit=on"), "{same}");
    assert!(!same.trim_start().starts_with('*'), "{same}");
    assert!(diff.lines().any(|l| l.trim_start().starts_with("* product")), "{diff}");

    // MariaDB flushing its redo log about once a second: the durability differs.
    let lax = {
        let _flush = GlobalSetting::set("innodb_flush_log_at_trx_commit", "0");
        run(&maria, "maria-lax.json")
    };
    let cmp: Value = serde_json::from_str(&compare(dir, &lax, &b, true)).unwrap();
    let dd = cmp["findings"].as_array().unwrap().iter().find(|f| f["id"] == "durability-differs");
    let dd = dd.unwrap_or_else(|| panic!("{:?}", findings(&cmp)));
    assert_eq!(dd["severity"], "critical");
    let in_effect = dd["evidence"]["in_effect"].as_array().unwrap();
    assert!(in_effect[0].as_str().unwrap().starts_with("flushed periodically"), "{dd}");
    assert!(in_effect[1].as_str().unwrap().starts_with("flushed at every commit"), "{dd}");
}
