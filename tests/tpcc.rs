//! The TPC-C-like recipe on each database: the population of clause 4.3 exactly, the twelve
//! consistency conditions after prepare and after a run (each shown to fail on a row broken
//! for it), the mix dealt from decks, New-Order's intended rollbacks, and the server's
//! counters agreeing with the result.

mod common;
use common::*;
use serde_json::Value;
use std::collections::BTreeSet;

/// Rows per table for `w` warehouses (clause 4.3.1); ORDER_LINE's are drawn (below).
fn cardinalities(w: i64) -> [(&'static str, i64); 8] {
    [
        ("warehouse", w),
        ("district", 10 * w),
        ("customer", 30_000 * w),
        ("history", 30_000 * w),
        ("item", 100_000),
        ("stock", 100_000 * w),
        ("orders", 30_000 * w),
        ("new_order", 9_000 * w),
    ]
}

/// The population's exact rows, and ORDER_LINE's: each initial order has 5..15 lines
/// (uniform, mean 10), so the table holds the sum of O_OL_CNT, about 300,000 per warehouse
/// (a standard deviation of about 550: the bounds are 9 of them).
fn assert_population(db: &TestDb, w: i64) {
    for (table, rows) in cardinalities(w) {
        assert_eq!(db.count(table), rows, "{:?} {table}", db.kind);
    }
    let lines = db.count("order_line");
    assert_eq!(lines, db.count_sql("SELECT SUM(o_ol_cnt) FROM orders"), "{:?}", db.kind);
    assert!((300_000 * w - 5_000 * w..=300_000 * w + 5_000 * w).contains(&lines), "{:?}: {lines} lines", db.kind);
    let counts = db.count_sql("SELECT COUNT(DISTINCT o_ol_cnt) FROM orders");
    let outside = db.count_sql("SELECT COUNT(*) FROM orders WHERE o_ol_cnt < 5 OR o_ol_cnt > 15");
    assert_eq!((counts, outside), (11, 0), "{:?}: every count 5..15 occurs, no other", db.kind);
}

fn prepare(db: &TestDb, warehouses: i64) -> String {
    let set = format!("--set=warehouses={warehouses}");
    let out = db.fairbench(&["prepare", "tpcc", &set, "--threads=2"]);
    let said = text(&out);
    assert!(out.status.success(), "{:?}: {said}", db.kind);
    for n in 1..=12 {
        assert!(said.contains(&format!("check {n}: ")) && !said.contains("FAILED"), "{:?}: {said}", db.kind);
    }
    set
}

/// The New-Orders the database gained (the change in the sum of D_NEXT_O_ID, read around the
/// measured phase) are the ones the clients counted as committed: a run of --events leaves
/// none in flight at either edge.
fn assert_nopm_agrees(doc: &Value, kind: Kind) {
    let t = &doc["tpcc"];
    let new_order = &t["types"][0];
    let committed = new_order["count"].as_i64().unwrap() - new_order["rollbacks"].as_i64().unwrap();
    assert_eq!(t["new_orders_database"].as_i64(), Some(committed), "{kind:?}: {t}");
    let tally = &doc["tallies"][0];
    assert_eq!(tally["name"], "new_orders", "{kind:?}: {tally}");
    assert_eq!(tally["after"].as_i64().unwrap() - tally["before"].as_i64().unwrap(), committed, "{kind:?}: {tally}");
    assert!((t["nopm_database"].as_f64().unwrap() - t["nopm"].as_f64().unwrap()).abs() < 1e-9, "{kind:?}: {t}");
}

fn assert_checks_passed(doc: &Value, kind: Kind) {
    let checks = doc["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 13, "{kind:?}: the tables' size, then conditions 1-12 of clause 3.3.2");
    for c in checks {
        assert_eq!(c["passed"], true, "{kind:?}: {c}");
    }
}

/// SQLite, 2 warehouses: every table holds the specification's rows, each district's
/// customers take every last name among their first 1,000 and 10% bad credit, the orders'
/// customers are a permutation; one terminal dealing 23 decks of 100 runs the mix exactly, New-Order
/// rolls back about 1% (seeded: the same every time), and the checks hold after the run.
#[test]
fn sqlite_two_warehouses_population_mix_and_checks() {
    let db = TestDb::new(Kind::Sqlite);
    let set = prepare(&db, 2);
    assert_population(&db, 2);
    let names =
        db.count_sql("SELECT COUNT(DISTINCT c_last) FROM customer WHERE c_w_id = 2 AND c_d_id = 7 AND c_id <= 1000");
    assert_eq!(names, 1000, "customers 1..1000 of a district take every last name once");
    assert_eq!(db.count_sql("SELECT COUNT(*) FROM customer WHERE c_id = 1 AND c_last <> 'BARBARBAR'"), 0);
    let bad = db.count_sql("SELECT COUNT(*) FROM customer WHERE c_credit = 'BC'");
    assert!((5_400..6_600).contains(&bad), "{bad} of 60000 customers with bad credit (10%)");
    let permuted = db.count_sql(
        "SELECT COUNT(*) FROM (SELECT o_w_id, o_d_id FROM orders GROUP BY o_w_id, o_d_id HAVING COUNT(DISTINCT o_c_id) = 3000 AND MIN(o_c_id) = 1 AND MAX(o_c_id) = 3000) x",
    );
    assert_eq!(permuted, 20, "each district's orders belong to its 3000 customers, one each");
    assert_eq!(db.count_sql("SELECT COUNT(*) FROM orders WHERE (o_id <= 2100) = (o_carrier_id IS NULL)"), 0);
    let original = db.count_sql("SELECT COUNT(*) FROM item WHERE i_data LIKE '%ORIGINAL%'");
    assert!((9_000..11_000).contains(&original), "{original} of 100000 items hold ORIGINAL (10%)");

    // Tables of 2 warehouses are not run as 3: terminals would be bound to a missing one.
    let out = db.fairbench(&["run", "tpcc", "--set=warehouses=3", "--events=10"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("fails before the run") && text(&out).contains("--set"), "{}", text(&out));
    let doc = db.run_json(&["run", "tpcc", &set, "--threads=1", "--events=2300", "--rand-seed=7"]);
    assert_checks_passed(&doc, Kind::Sqlite);
    assert_nopm_agrees(&doc, Kind::Sqlite);
    let t = &doc["tpcc"];
    assert_eq!(t["mode"], "no-wait");
    assert_eq!(t["warehouses"], 2);
    assert_eq!(t["mix_ok"], true, "{t}");
    let count = |i: usize| t["types"][i]["count"].as_u64().unwrap();
    assert_eq!([count(0), count(1), count(2), count(3), count(4)], [1035, 989, 92, 92, 92], "23 whole decks of 100");
    // Payment exactly at its 43% minimum is not below it.
    assert_eq!(t["types"][1]["share_pct"].as_f64().map(|s| (s * 100.0).round()), Some(4300.0), "{t}");
    let rollbacks = t["types"][0]["rollbacks"].as_u64().unwrap();
    assert!((3..=25).contains(&rollbacks), "{rollbacks} of 1035 New-Orders rolled back (1%)");
    let minutes = t["measured_minutes"].as_f64().unwrap();
    assert!((t["tpmc"].as_f64().unwrap() - 1035.0 / minutes).abs() < 1e-6 * t["tpmc"].as_f64().unwrap());
    let committed = (1035 - rollbacks) as f64;
    assert!((t["nopm"].as_f64().unwrap() - committed / minutes).abs() < 1e-6 * committed / minutes);
    // Committed New-Orders are exactly the orders added: 3000 per district at first.
    assert_eq!(db.count("orders"), 60_000 + (1035 - rollbacks) as i64);
    // Remote lines (1%) come from the other warehouse, and O_ALL_LOCAL says whether an order
    // has one; remote payments (15%) are for the other warehouse's customers (the initial
    // history has none). Drawn from all warehouses, half of both would be home.
    let remote_lines = db.count_sql("SELECT COUNT(*) FROM order_line WHERE ol_supply_w_id <> ol_w_id");
    assert!((40..=200).contains(&remote_lines), "{remote_lines} remote lines of about 10,000 (1%)");
    let not_local = db.count_sql("SELECT COUNT(*) FROM orders WHERE o_all_local = 0");
    assert!(not_local > 0 && not_local <= remote_lines, "{not_local} orders not all local");
    let wrong_flag = db.count_sql("SELECT COUNT(*) FROM orders o WHERE o.o_all_local <> CASE WHEN EXISTS (SELECT 1 FROM order_line l WHERE l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id AND l.ol_o_id = o.o_id AND l.ol_supply_w_id <> o.o_w_id) THEN 0 ELSE 1 END");
    assert_eq!(wrong_flag, 0, "O_ALL_LOCAL is 1 exactly when every line is from the home warehouse");
    let remote_payments = db.count_sql("SELECT COUNT(*) FROM history WHERE h_c_w_id <> h_w_id");
    assert!((100..=200).contains(&remote_payments), "{remote_payments} remote payments of 989 (15%)");
    let ids: Vec<&str> = doc["audit"].as_array().unwrap().iter().map(|f| f["id"].as_str().unwrap()).collect();
    assert!(ids.contains(&"tpcc-no-wait") && ids.contains(&"tpcc-short"), "{ids:?}");
    let short = doc["audit"].as_array().unwrap().iter().find(|f| f["id"] == "tpcc-short").unwrap();
    assert!(short["title"].as_str().unwrap().ends_with("lasts at least 120 minutes"), "{short}");
    assert!(!ids.contains(&"tpcc-few-warehouses") && !ids.contains(&"tpcc-mix"), "{ids:?}");
    let report = text(&db.fairbench(&["run", "tpcc", &set, "--threads=1", "--events=23"]));
    assert!(report.contains("TPC-C-like figures (no-wait mode") && report.contains("tpmC "), "{report}");
    assert!(report.contains("as HammerDB counts): the same as the clients' count"), "{report}");
    // C_LAST's C: the population's C_LOAD, and a C_RUN the delta rule allows (clause 2.1.6.1).
    let (c_load, c_run) = (t["c_load"].as_i64().unwrap(), t["c_run"].as_i64().unwrap());
    let delta = (c_run - c_load).abs();
    assert!((65..=119).contains(&delta) && delta != 96 && delta != 112, "{t}");
    assert!(report.contains(&format!("C_LOAD {c_load} (the population), C_RUN ")), "{report}");
    let saved = db.dir.path().join("tpcc.json");
    std::fs::write(&saved, doc.to_string()).unwrap();
    let page = db.dir.path().join("tpcc.html");
    let args = ["report".to_string(), saved.display().to_string(), "-o".into(), page.display().to_string()];
    let out = fairbench_in(db.dir.path(), &args);
    assert!(out.status.success(), "{}", text(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    let tpmc = format!("<strong>tpmC {:.0}</strong>", t["tpmc"].as_f64().unwrap());
    assert!(html.contains("TPC-C-like figures") && html.contains(&tpmc), "the page shows the figures");
    // And its headline facts, beside the queries and events per second.
    let facts = format!("tpmC {:.0}, NOPM {:.0}; ", t["tpmc"].as_f64().unwrap(), t["nopm"].as_f64().unwrap());
    assert!(html.contains(&facts), "the headline facts lack {facts}");
    each_condition_fails_on_a_broken_row(&db, &set);
    delivery_is_deferred_in_spec_mode(&db, &set);
    let out = db.fairbench(&["verify", "oltp_read_write"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!((out.status.code(), said.lines().count()), (Some(2), 1), "{said}");
    assert!(said.contains("built-in workloads have no checks"), "{said}");
    assert!(db.fairbench(&["cleanup", "tpcc"]).status.success());
}

/// Spec mode defers Delivery (clause 2.7): 10 terminals key for 2 s, then queue their
/// Delivery; the delivery worker executes each, deleting one NEW-ORDER row per district it
/// does not skip. Each queued request was executed or is counted as still queued; the
/// NEW-ORDER rows gone are the districts the executions delivered; Delivery's own response
/// time (the queueing) is judged at 5 s and the execution's at 80 s; the conditions hold.
fn delivery_is_deferred_in_spec_mode(db: &TestDb, set: &str) {
    let before = db.count("new_order");
    let only_delivery = ["new_order", "payment", "order_status", "stock_level"].map(|t| format!("--set={t}_weight=0"));
    let mut args = vec!["run", "tpcc", set, "--set=waits=1", "--threads=10", "--time=6"];
    args.extend(only_delivery.iter().map(String::as_str));
    let doc = db.run_json(&args);
    assert_checks_passed(&doc, db.kind);
    let t = &doc["tpcc"];
    let d = &t["deferred_delivery"];
    let (executed, left) = (d["executed"].as_i64().unwrap(), d["left_queued"].as_i64().unwrap());
    let queued = t["types"][3]["count"].as_i64().unwrap();
    assert!(executed >= 1 && executed + left == queued, "{:?}: {t}", db.kind);
    let skipped = d["skipped_districts"].as_i64().unwrap();
    assert_eq!(before - db.count("new_order"), 10 * executed - skipped, "{:?}: {t}", db.kind);
    assert_eq!(doc["statements"]["delivery.delete"]["count"].as_i64(), Some(10 * executed - skipped));
    assert_eq!((t["types"][3]["p90_limit_ms"].as_f64(), d["p90_limit_ms"].as_f64()), (Some(5000.0), Some(80000.0)));
    assert!(d["p90_ms"].as_f64().unwrap() > 0.0 && t["response_times_ok"] == true, "{:?}: {t}", db.kind);
    let ids: Vec<&str> = doc["audit"].as_array().unwrap().iter().map(|f| f["id"].as_str().unwrap()).collect();
    assert!(!ids.contains(&"tpcc-delivery-inline") && !ids.contains(&"tpcc-delivery-backlog"), "{ids:?}");
    // Without waits, Delivery runs in the terminal's transaction, as HammerDB runs it (no
    // New-Orders either: the callers count the orders their first run added).
    let mut args = vec!["run", "tpcc", set, "--events=20"];
    args.extend(only_delivery.iter().map(String::as_str));
    let inline = db.run_json(&args);
    assert!(inline["tpcc"].get("deferred_delivery").is_none(), "{:?}: {}", db.kind, inline["tpcc"]);
    assert!(inline["transactions"].get("delivery_deferred").is_none());
}

/// The conditions `fairbench verify` finds broken, by number.
fn broken_conditions(db: &TestDb, set: &str) -> BTreeSet<u32> {
    let out = db.fairbench(&["verify", "tpcc", set]);
    let said = text(&out);
    let failed: BTreeSet<u32> = said
        .lines()
        .filter_map(|l| l.strip_prefix("check FAILED: "))
        .map(|l| l.split([':', ' ']).next().unwrap().parse().unwrap_or_else(|_| panic!("{l}")))
        .collect();
    assert_eq!(out.status.code(), Some(if failed.is_empty() { 0 } else { 1 }), "{said}");
    assert!(failed.is_empty() || said.contains("offending row"), "{said}");
    failed
}

/// Each consistency condition fails on a row broken for it (with the others a broken row
/// also breaks), and holds again once the row is put back. Works on a run's tables: the rows
/// it picks are found first.
fn each_condition_fails_on_a_broken_row(db: &TestDb, set: &str) {
    // SUM: a 64-bit integer on every database (PostgreSQL's MAX of an integer column is not).
    let one = |sql: &str| db.count_sql(&format!("SELECT SUM(m) FROM ({sql}) x"));
    let undelivered = one("SELECT MAX(no_o_id) AS m FROM new_order WHERE no_w_id = 1 AND no_d_id = 2");
    let middle = one("SELECT MIN(no_o_id) + 3 AS m FROM new_order WHERE no_w_id = 1 AND no_d_id = 4");
    let next = one("SELECT d_next_o_id AS m FROM district WHERE d_w_id = 1 AND d_id = 5");
    let gap = db.count_sql("SELECT COUNT(*) FROM orders WHERE o_w_id = 1 AND o_d_id = 5")
        - db.count_sql("SELECT COUNT(*) FROM new_order WHERE no_w_id = 1 AND no_d_id = 5");
    let extra: Vec<String> = (next..next + gap - 2099).map(|o| format!("({o}, 5, 1)")).collect();
    let history = "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES";
    let cases: Vec<(u32, String, String, &[u32])> = vec![
        (1, "UPDATE warehouse SET w_ytd = w_ytd + 1 WHERE w_id = 1".into(), "UPDATE warehouse SET w_ytd = w_ytd - 1 WHERE w_id = 1".into(), &[1, 8]),
        (2, "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = 1 AND d_id = 3".into(), "UPDATE district SET d_next_o_id = d_next_o_id - 1 WHERE d_w_id = 1 AND d_id = 3".into(), &[2]),
        (3, format!("DELETE FROM new_order WHERE no_w_id = 1 AND no_d_id = 4 AND no_o_id = {middle}"), format!("INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES ({middle}, 4, 1)"), &[3, 5]),
        (4, "UPDATE orders SET o_ol_cnt = o_ol_cnt + 1 WHERE o_w_id = 1 AND o_d_id = 2 AND o_id = 5".into(), "UPDATE orders SET o_ol_cnt = o_ol_cnt - 1 WHERE o_w_id = 1 AND o_d_id = 2 AND o_id = 5".into(), &[4, 6]),
        (5, format!("UPDATE orders SET o_carrier_id = 3 WHERE o_w_id = 1 AND o_d_id = 2 AND o_id = {undelivered}"), format!("UPDATE orders SET o_carrier_id = NULL WHERE o_w_id = 1 AND o_d_id = 2 AND o_id = {undelivered}"), &[5, 7]),
        (6, "UPDATE order_line SET ol_o_id = 6, ol_number = 99 WHERE ol_w_id = 1 AND ol_d_id = 2 AND ol_o_id = 5 AND ol_number = 1".into(), "UPDATE order_line SET ol_o_id = 5, ol_number = 1 WHERE ol_w_id = 1 AND ol_d_id = 2 AND ol_o_id = 6 AND ol_number = 99".into(), &[6]),
        (7, "UPDATE order_line SET ol_delivery_d = NULL WHERE ol_w_id = 1 AND ol_d_id = 2 AND ol_o_id = 5 AND ol_number = 2".into(), "UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP WHERE ol_w_id = 1 AND ol_d_id = 2 AND ol_o_id = 5 AND ol_number = 2".into(), &[7]),
        (8, format!("{history} (1, 1, 1, 1, 1, CURRENT_TIMESTAMP, 1.00, 'broken')"), "DELETE FROM history WHERE h_data = 'broken'".into(), &[8, 9, 10]),
        (9, format!("{history} (1, 1, 1, 1, 1, CURRENT_TIMESTAMP, 1.00, 'broken'), (1, 1, 1, 2, 1, CURRENT_TIMESTAMP, -1.00, 'broken')"), "DELETE FROM history WHERE h_data = 'broken'".into(), &[9]),
        (10, "UPDATE customer SET c_balance = c_balance + 1 WHERE c_w_id = 1 AND c_d_id = 1 AND c_id = 7".into(), "UPDATE customer SET c_balance = c_balance - 1 WHERE c_w_id = 1 AND c_d_id = 1 AND c_id = 7".into(), &[10, 12]),
        (11, format!("INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES {}", extra.join(", ")), format!("DELETE FROM new_order WHERE no_w_id = 1 AND no_d_id = 5 AND no_o_id >= {next}"), &[2, 11]),
        (12, "UPDATE customer SET c_ytd_payment = c_ytd_payment + 1 WHERE c_w_id = 1 AND c_d_id = 1 AND c_id = 7".into(), "UPDATE customer SET c_ytd_payment = c_ytd_payment - 1 WHERE c_w_id = 1 AND c_d_id = 1 AND c_id = 7".into(), &[12]),
    ];
    for (n, broken, restored, fails) in cases {
        db.exec(&broken);
        let found = broken_conditions(db, set);
        db.exec(&restored);
        assert_eq!(found, fails.iter().copied().collect(), "{:?}: condition {n} broken by {broken}", db.kind);
    }
    assert_eq!(broken_conditions(db, set), BTreeSet::new(), "{:?}: every row put back", db.kind);
}

/// One warehouse prepared (its cardinalities exact), a run of 4 terminals, its checks passed.
fn one_warehouse_run(kind: Kind, events: &str) -> (TestDb, Value) {
    let db = TestDb::new(kind);
    let set = prepare(&db, 1);
    assert_population(&db, 1);
    let doc = db.run_json(&["run", "tpcc", &set, "--threads=4", events]);
    assert_checks_passed(&doc, kind);
    assert_nopm_agrees(&doc, kind);
    each_condition_fails_on_a_broken_row(&db, &set);
    delivery_is_deferred_in_spec_mode(&db, &set);
    (db, doc)
}

/// MariaDB, 1 warehouse, 4 terminals: the checks hold after the run, and the server counted
/// what the result says: a COMMIT per completed transaction but the intended rollbacks, a
/// ROLLBACK for each of those and each retried deadlock.
#[test]
fn mariadb_one_warehouse_checks_and_counters() {
    let (db, doc) = one_warehouse_run(Kind::Mysql, "--events=2000");
    let delta = &doc["conditions"]["server"]["status_delta"];
    let types = doc["tpcc"]["types"].as_array().unwrap();
    let completed: u64 = types.iter().map(|t| t["count"].as_u64().unwrap()).sum();
    let rollbacks: u64 = types.iter().map(|t| t["rollbacks"].as_u64().unwrap()).sum();
    assert_eq!(completed, 2000);
    assert!(rollbacks > 0, "some of about 900 New-Orders roll back");
    assert_eq!(delta["Com_commit"].as_u64().unwrap(), completed - rollbacks, "{delta}");
    let retried = doc["errors"]["total"].as_u64().unwrap();
    let by_type: u64 = types.iter().map(|t| t["errors"].as_u64().unwrap()).sum();
    assert_eq!(by_type, retried, "each retried error is counted under its transaction type");
    assert_eq!(delta["Com_rollback"].as_u64().unwrap(), rollbacks + retried, "{delta}");
    assert_eq!(doc["tpcc"]["terminals"], 4);
    assert!(db.fairbench(&["cleanup", "tpcc"]).status.success());
}

/// PostgreSQL, 1 warehouse, 4 terminals: the checks hold after the run, and the New-Orders
/// the result counts as committed are the orders the tables gained.
#[test]
fn postgres_one_warehouse_checks_and_orders() {
    let (db, doc) = one_warehouse_run(Kind::Postgres, "--events=1500");
    let new_order = &doc["tpcc"]["types"][0];
    let committed = new_order["count"].as_i64().unwrap() - new_order["rollbacks"].as_i64().unwrap();
    assert_eq!(db.count("orders"), 30_000 + committed);
    assert!(db.fairbench(&["cleanup", "tpcc"]).status.success());
}
