//! Every command a message suggests works as printed: followed word for word, it does what
//! the message says, and the command that failed then runs.

mod common;
use common::*;

/// The `fairbench ...` commands between backticks in a message, as argument lists.
fn suggested(message: &str) -> Vec<Vec<String>> {
    message
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|c| c.starts_with("fairbench "))
        .map(|c| c.split_whitespace().skip(1).map(str::to_string).collect())
        .collect()
}

/// fairbench with exactly these arguments (the target among them), in the test's directory.
fn fb(db: &TestDb, args: &[&str]) -> std::process::Output {
    fairbench_in(db.dir.path(), &args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
}

fn fails_with_hints(db: &TestDb, args: &[&str]) -> Vec<Vec<String>> {
    let o = fb(db, args);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let hints = suggested(&err);
    assert!(!hints.is_empty(), "{args:?} suggests nothing: {err}");
    hints
}

fn follow(db: &TestDb, hint: &[String]) {
    let o = fairbench_in(db.dir.path(), hint);
    assert!(o.status.success(), "the hint {hint:?} failed:\n{}", text(&o));
}

#[test]
fn sqlite_hints_work_as_printed() {
    let db = TestDb::new(Kind::Sqlite);
    let target = format!("--target={}", db.url);
    let run = ["run", "oltp_read_write", "--tables=2", "--table-size=300", "--auto-inc=off", "--time=1", &target];
    // Nothing prepared: the hint prepares these tables, with their options.
    let hints = fails_with_hints(&db, &run);
    assert_eq!(hints.len(), 1);
    let h = hints[0].join(" ");
    assert!(h.contains("--tables 2") && h.contains("--table-size 300") && h.contains("--auto-inc=off"), "{h}");
    assert!(h.contains(&format!("--target {}", db.url)), "{h}");
    follow(&db, &hints[0]);
    assert!(fb(&db, &run).status.success());

    // Prepared already: one hint drops them, the other rebuilds them.
    let prepare = ["prepare", "oltp_read_write", "--tables=2", "--table-size=300", "--auto-inc=off", &target];
    let hints = fails_with_hints(&db, &prepare);
    assert_eq!(hints.len(), 2, "{hints:?}");
    assert!(hints[1].contains(&"--overwrite".to_string()));
    follow(&db, &hints[1]);
    assert_eq!(db.count("sbtest2"), 300);
    follow(&db, &hints[0]);
    assert!(db.tables().is_empty(), "the cleanup hint drops the tables: {:?}", db.tables());
    assert!(fb(&db, &prepare).status.success());

    // Fewer tables than the run wants: the hint rebuilds all of them.
    let more = ["run", "oltp_read_write", "--tables=3", "--table-size=300", "--auto-inc=off", "--time=1", &target];
    let o = fb(&db, &more);
    assert!(String::from_utf8_lossy(&o.stderr).contains("(2 of 3 are)"), "{}", text(&o));
    let hints = fails_with_hints(&db, &more);
    assert!(hints[0].contains(&"--overwrite".to_string()) && hints[0].join(" ").contains("--tables 3"), "{hints:?}");
    follow(&db, &hints[0]);
    assert!(fb(&db, &more).status.success());

    // Tables of another size: measured anyway, with a warning whose hint rebuilds them.
    let bigger = ["run", "oltp_read_write", "--tables=3", "--table-size=1000", "--auto-inc=off", "--time=1", &target];
    let o = fb(&db, &bigger);
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    let warning =
        err.lines().find(|l| l.starts_with("warning: sbtest1 holds 300 rows")).unwrap_or_else(|| panic!("{err}"));
    let hints = suggested(warning);
    assert!(hints[0].join(" ").contains("--table-size 1000") && hints[0].contains(&"--overwrite".to_string()));
    follow(&db, &hints[0]);
    assert_eq!(db.count("sbtest3"), 1000);
    let o = fb(&db, &bigger);
    assert!(o.status.success() && !String::from_utf8_lossy(&o.stderr).contains("warning:"), "{}", text(&o));
}
