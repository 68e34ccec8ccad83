//! Workload files run end to end on SQLite, MariaDB and PostgreSQL: prepare, run, checks,
//! per-transaction statistics and cleanup; values carried between statements arrive; the
//! money-transfer workload conserves money under concurrency; bad files and foreign tables
//! are refused.

mod common;
use common::*;

fn fixture(name: &str) -> String {
    format!("{}/tests/workloads/{name}", env!("CARGO_MANIFEST_DIR"))
}

const ALL: [Kind; 3] = [Kind::Sqlite, Kind::Mysql, Kind::Postgres];

/// 8 clients moving money between 50 customers (so they contend and deadlock): every
/// transfer retried to completion, the check passes, cleanup leaves nothing.
#[test]
fn xfer_conserves_money_under_eight_clients() {
    let xfer = fixture("xfer.toml");
    for kind in ALL {
        let db = TestDb::new(kind);
        let doc = db.run_json(&["bench", &xfer, "--set", "customers=50", "--threads=8", "--events=2000"]);
        let checks = doc["checks"].as_array().unwrap();
        assert_eq!(checks.len(), 1, "{kind:?}");
        assert_eq!(checks[0]["name"], "money is conserved");
        assert_eq!(checks[0]["passed"], true, "{kind:?}: {}", checks[0]);
        // Every event is one transaction of one kind, and both kinds ran.
        let tx = &doc["transactions"];
        let (transfers, audits) = (tx["transfer"]["count"].as_u64().unwrap(), tx["audit"]["count"].as_u64().unwrap());
        assert_eq!(transfers + audits, 2000, "{kind:?}");
        assert!(transfers > audits && audits > 0, "{kind:?}: {transfers} transfers, {audits} audits");
        // Each statement of a completed transfer ran once per transfer (retried attempts
        // count their statements too, so at least that many).
        for s in ["lock_from", "debit", "credit", "record", "settle", "commit"] {
            let n = doc["statements"][format!("transfer.{s}")]["count"].as_u64().unwrap();
            assert!(n >= transfers, "{kind:?}: transfer.{s} {n} < {transfers}");
        }
        assert_eq!(doc["statements"]["transfer.commit"]["count"].as_u64().unwrap(), transfers, "{kind:?}");
        // The file itself is in the result, with its hash and the override.
        let file = &doc["conditions"]["workload"]["file"];
        assert_eq!(file["overrides"]["customers"], "50");
        assert_eq!(file["sha256"].as_str().unwrap().len(), 64);
        assert!(file["content"].as_str().unwrap().contains("money is conserved"));
        assert_eq!(db.count("xfers"), transfers as i64, "{kind:?}: one recorded transfer per committed transfer");
        // The dataset the run started on: the file's tables, by name.
        let mut start: Vec<(String, u64)> = doc["conditions"]["dataset"]["tables_at_start"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| (t["name"].as_str().unwrap().to_string(), t["rows"].as_u64().unwrap()))
            .collect();
        start.sort();
        assert_eq!(start, [("balances".to_string(), 50), ("xfers".to_string(), 0)], "{kind:?}");
        let out = db.fairbench(&["cleanup", &xfer]);
        assert!(out.status.success(), "{}", text(&out));
        assert!(db.tables().is_empty(), "{kind:?}: left {:?}", db.tables());
    }
}

/// The INSERT stores the value the SELECT read; the UPDATE finds the row by the id the
/// INSERT generated (RETURNING on PostgreSQL). The checks fail unless both arrive.
#[test]
fn values_carried_between_statements_arrive() {
    let carry = fixture("carry.toml");
    for kind in ALL {
        let db = TestDb::new(kind);
        let doc = db.run_json(&["bench", &carry, "--threads=2", "--events=200"]);
        for c in doc["checks"].as_array().unwrap() {
            assert_eq!(c["passed"], true, "{kind:?}: {c}");
        }
        assert_eq!(db.count("carry_log"), 200, "{kind:?}");
        assert!(db.fairbench(&["cleanup", &carry]).status.success());
    }
}

/// `save_row = "middle"` keeps row ceil(n/2) of a result of 1, 2 and 3 rows, on every
/// database, through prepared statements and plain text queries (--ps off).
#[test]
fn the_middle_row_is_saved_from_results_of_one_two_and_three_rows() {
    let middle = fixture("middle.toml");
    for kind in ALL {
        for ps in ["--ps=on", "--ps=off"] {
            let db = TestDb::new(kind);
            let doc = db.run_json(&["bench", &middle, ps, "--threads=2", "--events=300"]);
            for c in doc["checks"].as_array().unwrap() {
                assert_eq!(c["passed"], true, "{kind:?} {ps}: {c}");
            }
            assert_eq!(db.count("middle_picks"), 300, "{kind:?} {ps}");
            let wrong = db.count_sql(
                "SELECT COUNT(*) FROM middle_picks WHERE picked <> CASE g WHEN 1 THEN 1 WHEN 2 THEN 3 ELSE 5 END",
            );
            assert_eq!(wrong, 0, "{kind:?} {ps}");
            assert!(db.fairbench(&["cleanup", &middle]).status.success());
        }
    }
}

/// `deferred = true`: each client's event is the queueing of its shipment; the deferred
/// worker executes each as the client that queued it (the log names a terminal, never the
/// worker), records it as `ship_deferred`, and an empty bin is skipped and counted. What is
/// guaranteed however the run ends: every queued shipment was executed or is counted as
/// still queued, and each execution either shipped or skipped each of the 3 bins.
#[test]
fn deferred_transactions_run_as_the_client_that_queued_them() {
    let deferred = fixture("deferred.toml");
    for kind in ALL {
        let db = TestDb::new(kind);
        let doc = db.run_json(&["bench", &deferred, "--threads=2", "--time=3"]);
        for c in doc["checks"].as_array().unwrap() {
            assert_eq!(c["passed"], true, "{kind:?}: {c}");
        }
        let (queued, runs) = (&doc["transactions"]["ship"], &doc["transactions"]["ship_deferred"]);
        let executed = runs["count"].as_i64().unwrap();
        let left = doc["conditions"]["run"]["deferred_left"].as_i64().unwrap();
        assert_eq!(queued["count"].as_i64().unwrap(), executed + left, "{kind:?}: {runs} {left}");
        assert_eq!(doc["conditions"]["run"]["events"], queued["count"], "{kind:?}: the queueing is the event");
        // 3 s of 2 clients pausing 20 ms queue about 300; 5 executions empty the 12 parcels.
        assert!(executed >= 5, "{kind:?}: {executed} executed");
        assert_eq!(doc["conditions"]["workload"]["transactions"]["ship"]["deferred"], true);
        let shipped = db.count("deferred_shipped");
        let skipped = runs["skipped"].as_i64().unwrap();
        assert_eq!(shipped + skipped, 3 * executed, "{kind:?}: {runs}");
        assert_eq!((shipped, db.count("deferred_parcels")), (12, 0), "{kind:?}");
        assert!(skipped > 0 && queued.get("skipped").is_none(), "{kind:?}: the parcels ran out: {queued}");
        // The queueing is no transaction on the server: BEGIN and the queries are the worker's.
        let statements = &doc["statements"];
        assert_eq!(statements["ship.begin"]["count"].as_i64(), Some(executed), "{kind:?}");
        assert_eq!(statements["ship.lowest"]["count"].as_i64(), Some(3 * executed), "{kind:?}");
        assert!(db.fairbench(&["cleanup", &deferred]).status.success());
    }
}

/// A repeat count drawn for each transaction, and an intended rollback: every order kept has
/// 5 to 15 lines; over 1,000 orders the lines average 10 (uniform: the mean of 1,000 draws
/// is within 0.3 of it but once in 10^10); the orders that looked up a missing item (10%)
/// rolled back, each counted as a rollback of its transaction (not an error), and left no
/// line behind.
#[test]
fn drawn_repeat_counts_and_intended_rollbacks() {
    let orders = fixture("orders.toml");
    for kind in ALL {
        let db = TestDb::new(kind);
        let doc = db.run_json(&["bench", &orders, "--threads=2", "--events=1000"]);
        for c in doc["checks"].as_array().unwrap() {
            assert_eq!(c["passed"], true, "{kind:?}: {c}");
        }
        let order = &doc["transactions"]["order"];
        assert_eq!(order["count"], 1000, "{kind:?}: a rolled back order is a completed event");
        let rollbacks = order["rollbacks"].as_u64().unwrap();
        let statements = &doc["statements"];
        assert_eq!(statements["order.rollback"]["count"], rollbacks, "{kind:?}");
        let committed = statements["order.commit"]["count"].as_u64().unwrap();
        assert_eq!(committed + rollbacks, 1000, "{kind:?}");
        assert!(rollbacks > 30 && rollbacks < 200, "{kind:?}: {rollbacks} of 1000 (10% expected)");
        assert_eq!(doc["errors"]["total"], 0, "{kind:?}: an intended rollback is not an error");
        let kept = db.count_sql("SELECT COUNT(DISTINCT client * 1000000 + seq) FROM order_lines");
        assert_eq!(kept, committed as i64, "{kind:?}: a rolled back order left its lines");
        let lines = db.count("order_lines") as f64;
        assert!((lines / committed as f64 - 10.0).abs() < 0.35, "{kind:?}: {lines} lines in {committed} orders");
        assert!(db.fairbench(&["cleanup", &orders]).status.success());
    }
}

/// Keying and think times pause a closed-loop client outside the event's latency: with 20
/// ms of keying before each transaction, 1 client in 2 s runs at most 100 events, and the
/// pauses are recorded in the result.
#[test]
fn keying_and_think_times_pause_outside_the_latency() {
    let db = TestDb::new(Kind::Sqlite);
    let text_of = std::fs::read_to_string(fixture("carry.toml")).unwrap();
    let paced = text_of.replacen("begin = true", "begin = true\nkeying_ms = 20\nthink_ms = { exponential = 5 }", 1);
    let path = db.dir.path().join("paced.toml");
    std::fs::write(&path, paced).unwrap();
    let doc = db.run_json(&["bench", path.to_str().unwrap(), "--time=2"]);
    let events = doc["conditions"]["run"]["events"].as_u64().unwrap();
    assert!(events > 0 && events <= 2_000 / 20 + 1, "{events} events in 2 s with 20 ms keying each");
    assert!(doc["stats"]["event"]["p50_us"].as_f64().unwrap() < 20_000.0, "keying is not in the latency");
    let t = &doc["conditions"]["workload"]["transactions"]["carry"];
    assert_eq!(t["keying"], "20 ms");
    assert_eq!(t["think"], "negative exponential, mean 5 ms, at most 50 ms");
    assert_eq!(t["think_ms"], 5);
}

/// A check that fails: exit 1, named on stderr, and the result is still saved.
#[test]
fn a_failing_check_exits_one_with_the_result_saved() {
    let db = TestDb::new(Kind::Sqlite);
    let text_of = std::fs::read_to_string(fixture("carry.toml")).unwrap();
    let broken = text_of.replace("MAX(v) = 42 FROM", "MAX(v) = 43 FROM");
    let path = db.dir.path().join("broken.toml");
    std::fs::write(&path, broken).unwrap();
    let out_file = db.dir.path().join("r.json");
    let out = db.fairbench(&["bench", path.to_str().unwrap(), "--events=20", &format!("--out={}", out_file.display())]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("check failed: the read value arrived"), "{}", text(&out));
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out_file).unwrap()).unwrap();
    assert_eq!(doc["checks"][0]["passed"], false);
    assert_eq!(doc["checks"][1]["passed"], true);
}

/// A save of a column the statement does not return is found before anything is measured.
#[test]
fn a_save_of_a_column_not_returned_is_refused_before_the_run() {
    for kind in [Kind::Sqlite, Kind::Postgres, Kind::Mysql] {
        let db = TestDb::new(kind);
        let bad = std::fs::read_to_string(fixture("carry.toml"))
            .unwrap()
            .replace("save = { top = \"top\" }", "save = { top = \"k\" }");
        let path = db.dir.path().join("bad.toml");
        std::fs::write(&path, bad).unwrap();
        let out = db.fairbench(&["bench", path.to_str().unwrap(), "--events=5", "--out=/dev/null"]);
        assert_eq!(out.status.code(), Some(2), "{kind:?}: {}", text(&out));
        assert!(
            text(&out).contains("statement carry.read saves column k, which it does not return (it returns: top)"),
            "{kind:?}: {}",
            text(&out)
        );
        assert!(db.fairbench(&["cleanup", path.to_str().unwrap()]).status.success());
    }
}

/// A table of the file's name that fairbench did not create is never loaded, written or dropped.
#[test]
fn foreign_tables_of_a_files_name_are_left_alone() {
    let xfer = fixture("xfer.toml");
    for kind in ALL {
        let db = TestDb::new(kind);
        db.exec("CREATE TABLE balances (customer_id INTEGER PRIMARY KEY, balance BIGINT)");
        db.exec("INSERT INTO balances VALUES (1, 5)");
        let out = db.fairbench(&["prepare", &xfer]);
        assert_eq!(out.status.code(), Some(2), "{kind:?}: {}", text(&out));
        assert!(
            text(&out).contains("table balances already exists and was not created by fairbench"),
            "{}",
            text(&out)
        );
        let out = db.fairbench(&["run", &xfer, "--events=5", "--out=/dev/null"]);
        assert_eq!(out.status.code(), Some(2), "{kind:?}: {}", text(&out));
        let out = db.fairbench(&["cleanup", &xfer]);
        assert!(out.status.success(), "{}", text(&out));
        assert!(text(&out).contains("left balances alone"), "{}", text(&out));
        assert_eq!(db.count("balances"), 1, "{kind:?}: the user's row is still there");
        db.exec("DROP TABLE balances");
    }
}

/// Every recipe prepares, runs (its checks passing) and cleans up on the three databases,
/// and each statement ran as many times per transaction of its kind as the mix says.
#[test]
fn every_recipe_runs_on_all_three_databases() {
    let mut recipes: Vec<_> = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/recipes"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    recipes.sort();
    assert!(recipes.len() >= 11, "{recipes:?}");
    for kind in ALL {
        let db = TestDb::new(kind);
        for recipe in &recipes {
            let path = recipe.to_str().unwrap();
            let doc = db.run_json(&["bench", path, "--threads=1", "--events=150"]);
            let name = recipe.file_name().unwrap().to_string_lossy();
            for c in doc["checks"].as_array().map(Vec::as_slice).unwrap_or_default() {
                assert_eq!(c["passed"], true, "{kind:?} {name}: {c}");
            }
            let declared = doc["conditions"]["workload"]["transactions"].as_object().unwrap();
            let per_event = &doc["conditions"]["workload"]["mix_per_event"];
            let mut events = 0;
            for (tx, record) in declared {
                let n = doc["transactions"][tx]["count"].as_u64().unwrap_or(0);
                events += n;
                for s in record["statements"].as_array().unwrap() {
                    let s = s.as_str().unwrap();
                    let got = doc["statements"][s]["count"].as_u64().unwrap_or(0);
                    // A count drawn per transaction is not listed (tests/tpcc.rs and
                    // drawn_repeat_counts_and_intended_rollbacks check those).
                    if let Some(times) = per_event[s].as_u64() {
                        assert_eq!(got, n * times, "{kind:?} {name}: {s} {times} times per {tx}");
                    }
                }
            }
            assert_eq!(events, 150, "{kind:?} {name}");
            // PostgreSQL counted what was sent (its statistics are per database, so the
            // tests running beside this one do not count; MariaDB's counters are
            // server-wide: tests/mariadb_counters.rs checks them alone).
            let counted_other =
                doc["audit"].as_array().unwrap().iter().find(|f| {
                    f["id"] == "mix-mismatch" && f["title"].as_str().unwrap().starts_with("the server counted")
                });
            assert!(kind != Kind::Postgres || counted_other.is_none(), "{name}: {counted_other:?}");
            let out = db.fairbench(&["cleanup", path]);
            assert!(out.status.success(), "{kind:?} {name}: {}", text(&out));
            assert!(db.tables().is_empty(), "{kind:?} {name}: left {:?}", db.tables());
        }
    }
}

/// Every column type loads and takes parameters, and values read back bind again
/// (PostgreSQL's NUMERIC both ways, text with quotes and backslashes loaded intact).
#[test]
fn every_column_type_loads_and_binds() {
    let types = fixture("types.toml");
    for kind in ALL {
        let db = TestDb::new(kind);
        let doc = db.run_json(&["bench", &types, "--threads=2", "--events=200"]);
        let checks = doc["checks"].as_array().unwrap();
        assert_eq!(checks.len(), 3, "{kind:?}");
        for c in checks {
            assert_eq!(c["passed"], true, "{kind:?}: {c}");
        }
        assert!(db.fairbench(&["cleanup", &types]).status.success());
    }
}

/// PostgreSQL's own row statistics (pg_stat_user_tables) count what the recipes declare:
/// xfer's two balance updates, one transfer insert and one settle per transfer; tpcb-like's
/// one update of an account, a teller and a branch and one history row per transaction;
/// the fixed Aurora write mix's two updates, one delete and one insert over its table set.
#[test]
fn postgres_statistics_count_the_declared_writes() {
    let db = TestDb::new(Kind::Postgres);
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/recipes");
    let xfer = db.run_json(&["bench", &format!("{dir}/xfer.toml"), "--threads=1", "--events=300"]);
    let tpcb = db.run_json(&["bench", &format!("{dir}/tpcb-like.toml"), "--threads=1", "--events=300"]);
    assert_eq!(tpcb["transactions"]["tpcb"]["count"], 300);
    let fixed = format!("{dir}/aurora-2015-write-fixed.toml");
    db.run_json(&["bench", &fixed, "--set", "tables=2", "--set", "table_size=1000", "--threads=1", "--events=300"]);
    let (t, n) = (xfer["transactions"]["transfer"]["count"].as_i64().unwrap(), 300i64);
    let expected = [
        ("balances", "n_tup_upd", 2 * t),
        ("xfers", "n_tup_ins", t),
        ("xfers", "n_tup_upd", t),
        ("pgbench_accounts", "n_tup_upd", n),
        ("pgbench_tellers", "n_tup_upd", n),
        ("pgbench_branches", "n_tup_upd", n),
        ("pgbench_history", "n_tup_ins", n),
        // 2 UPDATEs, a DELETE and an INSERT per transaction; prepare inserted 2 x 1,000 rows.
        ("sbtest%", "n_tup_upd", 2 * n),
        ("sbtest%", "n_tup_del", n),
        ("sbtest%", "n_tup_ins", 2000 + n),
    ];
    // Backends report their statistics when their sessions end, a moment after fairbench
    // exits: wait (up to 10 s) for the counts to arrive; they never exceed what was sent.
    let read = || -> Vec<i64> {
        rt().block_on(async {
            let (c, conn) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls).await.unwrap();
            tokio::spawn(conn);
            let mut v = Vec::new();
            for (table, column, _) in expected {
                let sql = format!(
                    "SELECT COALESCE(SUM({column}), 0)::int8 FROM pg_stat_user_tables WHERE relname LIKE '{table}'"
                );
                v.push(c.query_one(&sql, &[]).await.unwrap().get::<_, i64>(0));
            }
            v
        })
    };
    let want: Vec<i64> = expected.iter().map(|e| e.2).collect();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut got = read();
    while got != want && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(200));
        got = read();
    }
    assert_eq!(got, want, "{expected:?}");
}
