//! `fairbench study plan`: a study file read, checked and planned (cells, the order of the
//! runs, the sandboxes it starts, the time it takes), connecting nowhere.

mod common;
use common::*;

fn plan(dir: &std::path::Path, text: &str) -> std::process::Output {
    std::fs::write(dir.join("s.toml"), text).unwrap();
    fairbench_in(dir, &["study", "plan", "s.toml"].map(String::from))
}

const STUDY: &str = r#"
[study]
title = "Durability on and off"
question = "Does the vendor template's speed come from skipping fsync?"
repeats = 2
warmup_s = 5
time_s = 30

[targets.template]
sandbox = "mariadb"
set = ["sync_binlog=0"]

[targets.local]
url = "mysql://bench:s3cret@127.0.0.1:3306/study"

[[workloads]]
name = "oltp_read_write"
options = { tables = 4 }

[matrix]
threads = [8, 64]
"set.innodb_flush_log_at_trx_commit" = [0, 1]
"#;

#[test]
fn a_study_is_planned_point_by_point_with_every_target_interleaved() {
    let dir = tempfile::tempdir().unwrap();
    let o = plan(dir.path(), STUDY);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    for line in [
        "Study: Durability on and off (s.toml)",
        "  template: a mariadb sandbox with sync_binlog=0, innodb_flush_log_at_trx_commit=0",
        "  template: a mariadb sandbox with sync_binlog=0, innodb_flush_log_at_trx_commit=1",
        "  local: mysql://bench:***@127.0.0.1:3306/study",
        "Workloads: oltp_read_write (tables=4)",
        "Cells: 6, 2 runs each, interleaved point by point: 12 runs",
        "Started and removed: 2 sandboxes; datasets prepared: 3",
        "Time: 12 runs x (5 s warmup + 30 s) = 7.0 min of running, plus preparing and starting sandboxes",
        "     1  local  oltp_read_write  threads=8  repeat 1/2",
        "     2  template (set.innodb_flush_log_at_trx_commit=0)  oltp_read_write  threads=8  repeat 1/2",
        "     4  local  oltp_read_write  threads=8  repeat 2/2",
        "    12  template (set.innodb_flush_log_at_trx_commit=1)  oltp_read_write  threads=64  repeat 2/2",
    ] {
        assert!(out.lines().any(|l| l == line), "missing {line:?} in:\n{out}");
    }
    assert!(!out.contains("s3cret"), "{out}");
}

#[test]
fn a_study_file_that_is_not_one_is_refused_naming_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    for (change, says) in [
        (STUDY.replace("repeats = 2", "repeat = 2"), "unknown field `repeat`"),
        (STUDY.replace("threads = [8, 64]", "clients = [8, 64]"), "matrix axis \"clients\" is neither a run option"),
        (STUDY.replace("threads = [8, 64]", "threads = [\"eight\"]"), "matrix axis \"threads\" takes numbers"),
        (
            STUDY.replace("sandbox = \"mariadb\"", "sandbox = \"mariadb\"\nurl = \"mysql://x\""),
            "has both url and sandbox",
        ),
        (
            STUDY
                .replace("url = \"mysql://bench:s3cret@127.0.0.1:3306/study\"", "url = \"mysql://x\"\nset = [\"a=1\"]"),
            "only a sandbox fairbench starts takes set",
        ),
        (STUDY.replace("time_s = 30", ""), "missing field `time_s`"),
        (
            STUDY.replace("tables = 4", "tabels = 4"),
            "workload \"oltp_read_write\": study: unexpected argument '--tabels'",
        ),
        (STUDY.replace("sandbox = \"mariadb\"", "sandbox = \"oracle\""), "unknown engine \"oracle\""),
    ] {
        let o = plan(dir.path(), &change);
        assert_eq!(o.status.code(), Some(2), "{says}: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        assert!(err.contains(says) && err.contains("s.toml"), "{says}: {err}");
    }
}
