//! `study plan` refuses what `study run` would fail on, before any sandbox starts (issue 62):
//! an unknown workload, an unknown option, a claim on a latency class no workload records,
//! a server setting the target's engine does not list (asked of the installed mariadbd and
//! postgres themselves), an unknown engine or manager. `study run` makes the same checks
//! first; a sandbox that fails to start during a run is removed and the run says why the
//! other targets go on. Each test has a directory and sandbox home of its own.

mod common;
use common::*;
use std::process::{Command, Output};

/// A study's directory and sandbox home; dropping it takes down any sandbox left.
struct Lab {
    dir: tempfile::TempDir,
}

impl Lab {
    fn new(study: &str) -> Lab {
        let lab = Lab { dir: tempfile::tempdir().unwrap() };
        std::fs::write(lab.dir.path().join("s.toml"), study).unwrap();
        lab
    }

    fn fairbench(&self, args: &[&str]) -> Output {
        let mut c = Command::new(bin());
        c.args(args).current_dir(self.dir.path()).env("FAIRBENCH_SANDBOX_HOME", self.dir.path().join("sandboxes"));
        c.env_remove("FAIRBENCH_TARGET").output().unwrap()
    }

    /// The sandboxes in this lab's home, as `fairbench sandbox ls` and the directory say.
    fn sandboxes(&self) -> (String, Vec<String>) {
        let ls = self.fairbench(&["sandbox", "ls"]);
        let names = std::fs::read_dir(self.dir.path().join("sandboxes")).into_iter().flatten().flatten();
        (
            String::from_utf8_lossy(&ls.stdout).trim().to_string(),
            names.map(|e| e.file_name().to_string_lossy().into()).collect(),
        )
    }

    /// `study plan` and `study run` both refuse with this one line and exit 2, and no
    /// sandbox (or study directory) is left.
    fn refused(&self, line: &str) -> String {
        let mut said = String::new();
        for command in ["plan", "run"] {
            let o =
                self.fairbench(&["study", command, "s.toml", "--out", "out"][..if command == "plan" { 3 } else { 5 }]);
            assert_eq!(o.status.code(), Some(2), "study {command}: {}", text(&o));
            let err = String::from_utf8_lossy(&o.stderr).into_owned();
            assert_eq!(err.lines().count(), 1, "study {command}: one line: {err}");
            assert!(err.starts_with(&format!("error: s.toml: {line}")), "study {command}: {err}");
            said = err.trim_end().to_string();
        }
        let (ls, dirs) = self.sandboxes();
        assert!(dirs.is_empty(), "sandboxes left: {dirs:?} ({ls})");
        assert!(!self.dir.path().join("out").exists(), "study run made its directory");
        said
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for name in self.sandboxes().1 {
            let _ = self.fairbench(&["sandbox", "down", &name]);
        }
    }
}

const STUDY: &str = r#"
[study]
title = "Durability"
time_s = 2

[targets.durable]
sandbox = "mariadb"
set = ["innodb_flush_log_at_trx_commit=1"]

[targets.fast]
sandbox = "mariadb"
set = ["innodb_flush_log_at_trx_commit=0"]

[[workloads]]
name = "oltp_write_only"
options = { tables = 1, table_size = 100 }

[[claims]]
says = "COMMIT under 2 ms"
check = "commit.p99<2ms"
"#;

#[test]
fn the_study_as_written_plans() {
    let lab = Lab::new(STUDY);
    let o = lab.fairbench(&["study", "plan", "s.toml"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(!String::from_utf8_lossy(&o.stdout).contains("Not checked"), "{}", text(&o));
}

#[test]
fn an_unknown_workload_is_refused_with_the_nearest_name() {
    let lab = Lab::new(&STUDY.replace("\"oltp_write_only\"", "\"oltp_write_onyl\""));
    assert_eq!(
        lab.refused(""),
        "error: s.toml: workload \"oltp_write_onyl\": unknown workload \"oltp_write_onyl\": did you mean oltp_write_only? (`fairbench list` shows them all; a workload file ends in .toml)"
    );
    // A workload file is looked for beside the study file, as its run looks for it.
    let lab = Lab::new(&STUDY.replace("\"oltp_write_only\"", "\"mine.toml\""));
    lab.refused("workload \"mine.toml\": ");
}

#[test]
fn an_unknown_workload_option_is_refused() {
    let lab = Lab::new(&STUDY.replace("tables = 1", "tabels = 1"));
    lab.refused("workload \"oltp_write_only\": study: unexpected argument '--tabels'");
}

#[test]
fn a_claim_on_a_latency_class_no_workload_records_is_refused() {
    let lab = Lab::new(&STUDY.replace("commit.p99<2ms", "comit.p99<2ms"));
    let said = lab.refused(
        "claim \"COMMIT under 2 ms\": check \"comit.p99<2ms\": no workload it covers (oltp_write_only) records latency class \"comit\": did you mean commit?",
    );
    assert!(said.contains("(they record begin, commit, deletes, event,"), "{said}");
    // An autocommit workload has no COMMIT to time.
    let lab = Lab::new(&STUDY.replace("\"oltp_write_only\"", "\"oltp_point_select\""));
    lab.refused("claim \"COMMIT under 2 ms\": check \"commit.p99<2ms\": no workload it covers (oltp_point_select) records latency class \"commit\"");
}

#[test]
fn a_setting_the_mariadb_server_does_not_list_is_refused() {
    let lab = Lab::new(&STUDY.replace("trx_commit=0", "trx_comit=0"));
    let said = lab.refused(
        "target \"fast\": set \"innodb_flush_log_at_trx_comit=0\": mariadb has no setting \"innodb_flush_log_at_trx_comit\": did you mean innodb_flush_log_at_trx_commit? (`",
    );
    assert!(said.contains("mariadbd --no-defaults --verbose --help` lists the "), "{said}");
    // As a matrix axis, on Galera too (its servers are mariadbd); `-` spells `_`.
    let galera =
        STUDY.replace("sandbox = \"mariadb\"\nset = [\"innodb_flush_log_at_trx_commit=0\"]", "sandbox = \"galera\"");
    let lab = Lab::new(&format!("{galera}\n[matrix]\n\"set.sync-binlog\" = [0, 1]\n\"set.sync_binlogs\" = [0, 1]\n"));
    lab.refused("matrix axis \"set.sync_binlogs\": mariadb has no setting \"sync_binlogs\": did you mean sync_binlog?");
    // A name without a value is not a setting either.
    lab.refused_with(
        &STUDY.replace("trx_commit=0", "trx_commit"),
        "target \"fast\": set \"innodb_flush_log_at_trx_commit\": --set",
    );
}

impl Lab {
    fn refused_with(&self, study: &str, line: &str) -> String {
        std::fs::write(self.dir.path().join("s.toml"), study).unwrap();
        self.refused(line)
    }
}

#[test]
fn a_setting_the_postgres_server_does_not_list_is_refused() {
    let pg = STUDY
        .replace("\"mariadb\"", "\"postgres\"")
        .replace("innodb_flush_log_at_trx_commit=1", "synchronous_commit=on");
    let lab = Lab::new(&pg.replace("innodb_flush_log_at_trx_commit=0", "synchronous_comit=off"));
    let said = lab.refused(
        "target \"fast\": set \"synchronous_comit=off\": postgres has no setting \"synchronous_comit\": did you mean synchronous_commit? (`",
    );
    assert!(said.contains("postgres --describe-config` lists the "), "{said}");
    // PostgreSQL's configuration file takes `_` only; under Patroni the same list holds.
    let patroni = pg.replace("innodb_flush_log_at_trx_commit=0", "shared-buffers=64MB");
    let patroni = patroni.replacen(
        "sandbox = \"postgres\"\nset = [\"shared",
        "sandbox = \"postgres\"\nmanager = \"patroni\"\nset = [\"shared",
        1,
    );
    lab.refused_with(&patroni, "target \"fast\": set \"shared-buffers=64MB\": postgres has no setting \"shared-buffers\": did you mean shared_buffers?");
    let fine = pg.replace("innodb_flush_log_at_trx_commit=0", "synchronous_commit=off");
    std::fs::write(lab.dir.path().join("s.toml"), fine).unwrap();
    let o = lab.fairbench(&["study", "plan", "s.toml"]);
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn an_engine_or_manager_fairbench_does_not_have_is_refused() {
    let lab = Lab::new(&STUDY.replacen("\"mariadb\"", "\"oracle\"", 1));
    lab.refused("target \"durable\": unknown engine \"oracle\"");
    lab.refused_with(
        &STUDY.replacen("sandbox = \"mariadb\"", "sandbox = \"mariadb\"\nmanager = \"mha\"", 1),
        "target \"durable\": unknown manager \"mha\"",
    );
}

#[test]
fn a_count_is_given_no_unit_in_the_example_of_a_probe_bound() {
    let probe = STUDY.replace("table_size = 100 }", "table_size = 100 }\nprobe = \"failover\"");
    for (check, example) in [("lost<=0.5x", "(e.g. lost==0)"), ("downtime<=0.5x", "(e.g. downtime<10s)")] {
        let study = probe.replace(
            "check = \"commit.p99<2ms\"",
            &format!("check = \"{check}\"\nbaseline = \"durable\"\nsubject = \"fast\""),
        );
        let lab = Lab::new(&study);
        let said = lab.refused("claim \"COMMIT under 2 ms\": ");
        assert!(said.contains(example), "{said}");
    }
}

#[test]
fn study_run_help_names_its_default_directory() {
    let o = Command::new(bin()).args(["study", "run", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&o.stdout).split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        help.contains("[default: fairbench-results/study-<file stem>: study-commit-latency for commit-latency.toml]"),
        "{help}"
    );
}

#[test]
fn every_shipped_study_passes_the_checks_with_the_engines_lists_read() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("studies");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).collect();
    files.retain(|p| p.extension().is_some_and(|e| e == "toml"));
    assert_eq!(files.len(), 5, "{files:?}");
    for f in files {
        let o = fairbench_in(&dir, &["study".into(), "plan".into(), f.display().to_string()]);
        assert!(o.status.success(), "{}: {}", f.display(), text(&o));
        // Every target is a sandbox whose engine is installed here: nothing went unchecked.
        assert!(!String::from_utf8_lossy(&o.stdout).contains("Not checked"), "{}: {}", f.display(), text(&o));
    }
}

/// A sandbox whose server will not start (a setting it knows, a value it refuses): the
/// study's other target runs, the output says why, and the sandbox is removed.
#[test]
fn a_sandbox_that_does_not_start_is_removed_and_the_other_target_runs() {
    let study = r#"
[study]
title = "One side broken"
time_s = 1

[targets.lite]
url = "sqlite://lite.db"

[targets.broken]
sandbox = "mariadb"
set = ["innodb_buffer_pool_size=lots"]

[[workloads]]
name = "oltp_point_select"
options = { tables = 1, table_size = 100 }
"#;
    let lab = Lab::new(study);
    let o = lab.fairbench(&["study", "run", "s.toml", "--out", "out"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("study: target broken's sandbox did not start: its runs are recorded as failed; the other targets' runs go on"),
        "{err}"
    );
    assert!(err.contains("study: lite oltp_point_select repeat 1: completed"), "{err}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(lab.dir.path().join("out/study.json")).unwrap()).unwrap();
    let failure = doc["runs"].as_array().unwrap().iter().find_map(|r| r["failure"].as_str()).unwrap_or("").to_string();
    assert!(failure.contains("the sandbox did not start") && failure.contains("removed)"), "{failure}");
    let (ls, dirs) = lab.sandboxes();
    assert!(dirs.is_empty(), "sandboxes left: {dirs:?} ({ls})");
    // `sandbox up` itself keeps a failed sandbox's files to be read (the lab removes it).
    let o = lab.fairbench(&["sandbox", "up", "kept", "--engine", "mariadb", "--set", "innodb_buffer_pool_size=lots"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("files kept in"), "{}", text(&o));
    assert_eq!(lab.sandboxes().1, ["kept"]);
}
