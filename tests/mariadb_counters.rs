//! Every workload and recipe against MariaDB: the server's own counters (SHOW GLOBAL
//! STATUS) count exactly the contract's (or the file's) statements per event. One test in
//! its own binary, because the counters are server-wide.

mod common;
use common::*;

/// Server counter -> fairbench statement names it counts.
const COUNTERS: [(&str, &[&str]); 6] = [
    ("Com_select", &["point_selects", "simple_ranges", "sum_ranges", "order_ranges", "distinct_ranges"]),
    ("Com_update", &["index_updates", "non_index_updates"]),
    ("Com_delete", &["deletes"]),
    ("Com_insert", &["inserts"]),
    ("Com_begin", &["begin"]),
    ("Com_commit", &["commit"]),
];

#[test]
fn mariadb_counts_exactly_the_contract_mix() {
    let db = TestDb::new(Kind::Mysql);
    let events = 500u64;
    for w in WORKLOADS {
        let p = db.fairbench(&["prepare", w, "--tables=4", "--table-size=5000", "--threads=2"]);
        assert!(p.status.success(), "{}", text(&p));
        // Writers on one connection: a deadlock retry would resend statements.
        let threads = if w.contains("read_only") || w.contains("point_select") { "--threads=4" } else { "--threads=1" };
        let before = mysql_counters();
        let ev = format!("--events={events}");
        let doc = db.run_json(&["run", w, "--tables=4", "--table-size=5000", &ev, threads]);
        let after = mysql_counters();
        assert_eq!(doc["errors"]["total"], 0, "{w}: retried errors would change the counts");
        let mix = contract_mix(w);
        for (counter, names) in COUNTERS {
            let expected: u64 = names.iter().map(|n| mix.get(n).copied().unwrap_or(0)).sum::<u64>() * events;
            let got = after[counter] - before[counter];
            assert_eq!(got, expected as i64, "{w}: {counter}");
            // fairbench's own reading of the same counters agrees.
            let own = doc["conditions"]["server"]["status_delta"][counter].as_i64().unwrap_or(0);
            assert_eq!(own, expected as i64, "{w}: {counter} in the result file");
        }
        assert_statement_counts(&doc, w, events);
        assert!(db.fairbench(&["cleanup"]).status.success());
        // Every connection said COM_QUIT: the server counts no aborted client.
        let after_cleanup = mysql_counters();
        for counter in ["Aborted_clients", "Aborted_connects"] {
            assert_eq!(after_cleanup[counter] - before[counter], 0, "{w}: {counter} across run and cleanup");
        }
    }
    recipes_count_as_declared(&db);
    timed_runs_count_what_the_server_counts(&db);
}

/// A run stopped by --time counts the events in flight at its end, as sysbench does: their
/// statements reached the server, so its counters after the run and the run's own counts
/// agree exactly, for 1, 2 and 8 clients. With a warmup the measured phase begins between
/// events (clients finish the warmup's events in flight, then the counters are read), so
/// the same holds, closed and open loop. COMMITs always; the other statements when no
/// error was retried (a retried event's failed statements reach the server too).
fn timed_runs_count_what_the_server_counts(db: &TestDb) {
    assert!(db.fairbench(&["prepare", "oltp_read_write", "--table-size=10000"]).status.success());
    let runs: [&[&str]; 7] = [
        &["--threads=1"],
        &["--threads=2"],
        &["--threads=8"],
        &["--threads=1", "--warmup=1"],
        &["--threads=2", "--warmup=1"],
        &["--threads=8", "--warmup=1"],
        &["--threads=4", "--warmup=1", "--rate=150"],
    ];
    for options in runs {
        let mut args = vec!["run", "oltp_read_write", "--table-size=10000", "--time=2"];
        args.extend_from_slice(options);
        let doc = db.run_json(&args);
        let delta = &doc["conditions"]["server"]["status_delta"];
        let counted = |names: &[&str]| -> i64 {
            names.iter().map(|n| doc["statements"][*n]["count"].as_i64().unwrap_or(0)).sum()
        };
        assert!(counted(&["commit"]) > 50, "{options:?}: {}", counted(&["commit"]));
        assert_eq!(delta["Com_commit"].as_i64(), Some(counted(&["commit"])), "{options:?}: {delta}");
        if options.contains(&"--warmup=1") {
            let end = &doc["conditions"]["run"]["warmup_end"];
            assert_eq!(end["events_in_flight"], 0, "{options:?}: {end}");
            assert!(end["pause_ms"].as_f64().unwrap() < 1000.0, "{options:?}: {end}");
        }
        if doc["errors"]["total"] != 0 {
            continue;
        }
        for (counter, names) in COUNTERS {
            assert_eq!(delta[counter].as_i64().unwrap_or(0), counted(names), "{options:?}: {counter}");
        }
    }
    assert!(db.fairbench(&["cleanup"]).status.success());
}

/// Every recipe on one connection: the server's own counters, read by fairbench around the
/// measured phase, count every statement as many times as the client ran it, a COMMIT per
/// committed transaction and a ROLLBACK per intended rollback.
fn recipes_count_as_declared(db: &TestDb) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/recipes");
    let recipes = fairbench::workload::recipes::RECIPES;
    for name in recipes.iter().map(|(name, _)| *name) {
        let path = format!("{dir}/{name}.toml");
        assert!(db.fairbench(&["prepare", &path]).status.success(), "{name}");
        let doc = db.run_json(&["run", &path, "--threads=1", "--events=300"]);
        assert_eq!(doc["errors"]["total"], 0, "{name}");
        let workload = &doc["conditions"]["workload"];
        let mut expected: std::collections::BTreeMap<String, i64> = Default::default();
        let count = |name: &str| doc["statements"][name]["count"].as_i64().unwrap_or(0);
        for (tx, record) in workload["transactions"].as_object().unwrap() {
            let n = doc["transactions"][tx]["count"].as_i64().unwrap();
            let rollbacks = doc["transactions"][tx]["rollbacks"].as_i64().unwrap_or(0);
            if record["begin"] == true {
                *expected.entry("Com_begin".into()).or_default() += n;
                *expected.entry("Com_commit".into()).or_default() += n - rollbacks;
                *expected.entry("Com_rollback".into()).or_default() += rollbacks;
                assert_eq!(count(&format!("{tx}.commit")), n - rollbacks, "{name}: {tx}");
            }
            // Each statement as many times as the client counted it (a repeated one, or one
            // after an intended rollback's point, differs from the transactions).
            for s in record["statements"].as_array().unwrap() {
                let s = s.as_str().unwrap();
                let sql = workload["statements_sql"][s].as_str().unwrap();
                let verb = sql.split_whitespace().next().unwrap().to_ascii_lowercase();
                *expected.entry(format!("Com_{verb}")).or_default() += count(s);
            }
        }
        // The audit's own check of the same counters finds nothing either.
        let mix = doc["audit"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["id"] == "mix-mismatch" && f["title"].as_str().unwrap().starts_with("the server counted"));
        assert!(mix.is_none(), "{name}: {mix:?}");
        for counter in
            ["Com_select", "Com_insert", "Com_update", "Com_delete", "Com_begin", "Com_commit", "Com_rollback"]
        {
            let own = doc["conditions"]["server"]["status_delta"][counter].as_i64().unwrap_or(0);
            assert_eq!(own, expected.get(counter).copied().unwrap_or(0), "{name}: {counter}");
        }
        assert!(db.fairbench(&["cleanup", &path]).status.success(), "{name}");
    }
}
