//! `fairbench check` on workload files: a good file compiles for every database and shows
//! its positional SQL; a bad one fails with `file:line:col` lines and exit 2. No server.

use std::process::Command;

fn check(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_fairbench")).arg("check").args(args).output().unwrap()
}

#[test]
fn check_shows_what_a_file_runs_on_each_database() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/workloads/xfer.toml");
    let out = check(&[file, "--set", "customers=50"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for db in ["mysql", "postgres", "sqlite"] {
        assert!(text.contains(&format!("xfer on {db}:")), "{db}: {text}");
    }
    assert!(!text.contains("not runnable"), "{text}");
    assert!(
        text.contains("table balances (50 rows): customer_id integer <- row number, balance bigint <- 1000"),
        "{text}"
    );
    assert!(text.contains("check money is conserved: SELECT SUM(balance) = 50 * 1000 FROM balances"), "{text}");
    // Per-database SQL: FOR UPDATE where the database has it, RETURNING on PostgreSQL.
    assert!(text.contains("WHERE customer_id = ? FOR UPDATE   -- ? = from"), "{text}");
    assert!(text.contains("VALUES (?, ?, ?, 'new') RETURNING id"), "{text}");
    assert!(text.contains("transaction transfer (90.0% of the mix, BEGIN ... COMMIT)"), "{text}");
    // Example draws: ids inside the table, amounts inside their range.
    let out = check(&[file, "--dialect", "sqlite", "--set", "customers=20", "--sample", "50"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let draws: Vec<&str> = text.lines().filter(|l| l.trim_start().starts_with("transfer #")).collect();
    assert_eq!(draws.len(), 50, "{text}");
    for line in draws {
        for part in line.split(": ").nth(1).unwrap().split(", ") {
            let (name, value) = part.split_once('=').unwrap();
            let v: i64 = value.parse().unwrap();
            match name {
                "from" | "to" => assert!((1..=20).contains(&v), "{line}"),
                "amount" => assert!((1..=100).contains(&v), "{line}"),
                "who" => assert_eq!(v, 0),
                other => panic!("{other} in {line}"),
            }
        }
    }
    assert!(text.contains("balances row 3: (3, 1000)"), "{text}");
    // A deferred transaction and a skip point are said where they are.
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/workloads/deferred.toml");
    let out = check(&[file, "--dialect", "sqlite"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("think 20 ms, deferred: queued, executed by the deferred worker):"), "{text}");
    assert!(text.contains("LIMIT 1   -- ? = b   -- no row: skips the rest of this repetition"), "{text}");
}

#[test]
fn bad_files_fail_naming_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let good = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/workloads/xfer.toml")).unwrap();
    let bad = good
        .replace(":amount WHERE customer_id = :to", ":amout WHERE customer_id = :to")
        .replace("weight = 1\n", "weight = 0\n");
    let path = dir.path().join("bad.toml");
    std::fs::write(&path, bad).unwrap();
    let out = check(&[path.to_str().unwrap(), "--dialect", "mysql"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let p = path.display().to_string();
    assert!(
        err.lines()
            .any(|l| l.starts_with(&format!("error: {p}:54:")) && l.contains("uses :amout, which is not defined")),
        "{err}"
    );
    assert!(err.lines().any(|l| l.contains("weight 0 must be")), "{err}");
    assert_eq!(err.lines().count(), 2, "{err}");
    // TOML syntax, unknown --set names, unreadable files: one line each.
    std::fs::write(&path, "[workload\nname = 1").unwrap();
    let out = check(&[path.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code() == Some(2) && err.starts_with(&format!("error: {p}:1:")) && err.lines().count() == 1,
        "{err}"
    );
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/workloads/xfer.toml");
    let out = check(&[file, "--set", "custmers=5"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("has no parameter custmers"));
    let out = check(&["/nonexistent/w.toml"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.code() == Some(2) && err.contains("cannot read workload file /nonexistent/w.toml"), "{err}");
}

/// `check` as a gate: a statement on a table the file does not declare is an error at its
/// line (fairbench runs only on tables it creates); a database the file must run on and
/// cannot is a non-zero exit, naming it.
#[test]
fn check_fails_on_undeclared_tables_and_databases_it_cannot_run_on() {
    let dir = tempfile::tempdir().unwrap();
    let good = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/workloads/xfer.toml")).unwrap();
    let path = dir.path().join("w.toml");
    let p = path.display().to_string();
    let undeclared = good.replace(
        "UPDATE balances SET balance = balance + :amount WHERE customer_id = :to",
        "UPDATE balances SET balance = balance + (SELECT MAX(x) FROM audit_log) WHERE customer_id = :to",
    );
    std::fs::write(&path, undeclared).unwrap();
    let out = check(&[&p]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.lines().any(|l| l.starts_with(&format!("error: {p}:54:"))
            && l.contains("uses table audit_log, which the file does not declare")),
        "{err}"
    );

    // SQL for PostgreSQL only: not runnable on the others.
    let only_pg = good.replace(
        "  sql = \"UPDATE balances SET balance = balance + :amount WHERE customer_id = :to\"",
        "  postgres = \"UPDATE balances SET balance = balance + :amount WHERE customer_id = :to\"",
    );
    std::fs::write(&path, only_pg).unwrap();
    let out = check(&[&p]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("error: not runnable on mysql") && err.contains("error: not runnable on sqlite"), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("xfer on postgres:"));
    let out = check(&[&p, "--dialect", "postgres"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = check(&[&p, "--dialect", "postgres,mysql"]);
    assert_eq!(out.status.code(), Some(1));
}
