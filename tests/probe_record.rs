//! A probe is a record producer: a failover probe without a workload streams its record as a
//! run does (its own writes as timeline entries, its ledger of attempts and role readings
//! line by line), and the result it writes at its end is `build` of that record read back
//! (the verdict, judged on the ledger read back, is the record's last `ha` line). A probe
//! killed with SIGKILL leaves its ledger; `recover` rebuilds the result (status
//! `incomplete`) and looks its acknowledged writes up on the node.

mod common;
use common::*;
use fairbench::model::{pretty_json, ResultDocument};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn probe_args(db: &TestDb, out: &Path, time: &str) -> Vec<String> {
    let args = ["probe", "failover", "--target", &db.url, "--time", time, "--rate", "20"];
    let mut args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    args.extend(["--out".into(), out.display().to_string()]);
    args
}

fn assert_probe_is_build_of_its_record(kind: Kind) {
    let db = TestDb::new(kind);
    let out = db.dir.path().join("probe.json");
    let o = fairbench_in(db.dir.path(), &probe_args(&db, &out, "2"));
    assert!(o.status.success(), "{}", text(&o));
    let written = ResultDocument::read(&out).unwrap();
    let record = fairbench::timeline::read_record(&fairbench::timeline::record_path_for(&out)).unwrap();
    assert!(!record.torn);
    let mut rebuilt = fairbench::result::build(&record.record).unwrap();
    rebuilt.streamed = written.streamed.clone();
    rebuilt.audit = fairbench::audit::audit(&rebuilt);
    assert_eq!(pretty_json(&rebuilt), pretty_json(&written));
    // What it holds: its own writes as the measured statement, the ledger in `ha`.
    let failover = written.ha.as_ref().and_then(|h| h.failover.as_ref()).unwrap();
    let acked = failover.outcomes.get("acknowledged").copied().unwrap_or(0);
    assert!(acked >= 20, "{:?}", failover.outcomes);
    assert_eq!(written.statements["probe.write"].count, acked);
    assert_eq!(written.stats["write"].count, acked);
    assert!(!written.intervals.is_empty());
    assert_eq!(failover.verification.as_ref().unwrap().lost, 0);
}

#[test]
fn mariadb_a_probes_result_is_build_of_its_record() {
    assert_probe_is_build_of_its_record(Kind::Mysql);
}

#[test]
fn postgres_a_probes_result_is_build_of_its_record() {
    assert_probe_is_build_of_its_record(Kind::Postgres);
}

/// The password in a test URL (`scheme://user:password@...`), or none.
fn password_of(url: &str) -> &str {
    let user = url.split_once("://").and_then(|(_, rest)| rest.split_once('@')).map(|(user, _)| user);
    user.and_then(|u| u.split_once(':')).map_or("", |(_, p)| p)
}

/// Acknowledged attempts in the record on disk (read as a killed probe would leave it).
fn acknowledged_in(record: &Path) -> usize {
    let Ok(read) = fairbench::timeline::read_record(record) else { return 0 };
    read.record
        .ha
        .iter()
        .filter(|l| {
            matches!(l, fairbench::model::ha_ledger::HaLine::Attempt(a)
                if a.outcome == fairbench::model::ha::Outcome::Acknowledged)
        })
        .count()
}

#[test]
fn mariadb_a_probe_killed_with_sigkill_is_recovered_with_its_ledger_and_a_loss_verdict() {
    let db = TestDb::new(Kind::Mysql);
    let out = db.dir.path().join("killed.json");
    let record: PathBuf = fairbench::timeline::record_path_for(&out);
    let mut child = std::process::Command::new(bin())
        .args(probe_args(&db, &out, "120"))
        .current_dir(db.dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Waits for the state (acknowledged writes and a closed entry on disk), then SIGKILL.
    let deadline = Instant::now() + Duration::from_secs(60);
    let entries = |p: &Path| fairbench::timeline::read_record(p).map_or(0, |r| r.record.phases.len());
    while !record.exists() || acknowledged_in(&record) < 30 || entries(&record) == 0 {
        assert!(Instant::now() < deadline, "no ledger streamed");
        assert!(child.try_wait().unwrap().is_none(), "the probe ended early");
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let started = ResultDocument::read(&out).unwrap();
    assert_eq!(started.conditions.run.status.name(), "running");
    let acked_on_disk = acknowledged_in(&record);

    // The result holds the nodes' URLs without their password: the environment gives it.
    let password = password_of(&db.url);
    let o = std::process::Command::new(bin())
        .args(["recover".to_string(), out.display().to_string()])
        .current_dir(db.dir.path())
        .env("FAIRBENCH_PASSWORD", password)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(said.contains("looked up on its nodes"), "{said}");
    let doc = ResultDocument::read(&out).unwrap();
    assert_eq!(doc.conditions.run.status.name(), "incomplete");
    let failover = doc.ha.as_ref().and_then(|h| h.failover.as_ref()).unwrap();
    let acked = failover.outcomes.get("acknowledged").copied().unwrap_or(0) as usize;
    assert_eq!(acked, acked_on_disk, "every acknowledged write of the ledger, no more");
    // The loss verdict on the recovered ledger: every acknowledged write is on the node.
    let verification = failover.verification.as_ref().expect("the loss check ran");
    assert_eq!(verification.lost, 0, "{verification:?}");
    assert_eq!(verification.acknowledged as usize, acked_on_disk, "{verification:?}");
    // The figures the entries hold: the probe's own writes, class write.
    assert!(doc.statements["probe.write"].count > 0);
}

/// A probe's result keeps what it was asked (its request, URLs without passwords), and
/// `rerun` runs that request once more into a new result; another target or options are
/// refused in one line that names `fairbench probe`.
#[test]
fn mariadb_a_probes_result_keeps_its_request_and_rerun_runs_it() {
    let db = TestDb::new(Kind::Mysql);
    let out = db.dir.path().join("first.json");
    let o = fairbench_in(db.dir.path(), &probe_args(&db, &out, "1"));
    assert!(o.status.success(), "{}", text(&o));
    let first = ResultDocument::read(&out).unwrap();
    let kept = first.ha.as_ref().and_then(|h| h.request.clone()).expect("the probe's request in its result");
    let fairbench::model::ProbeRequest::Failover(f) = &kept else { panic!("{kept:?}") };
    assert_eq!(f.targets, vec![fairbench::db::redact::redact_str(&db.url)]);
    assert_eq!((f.common.rate, f.common.time_s), (20.0, 1.0));

    let again = db.dir.path().join("again.json");
    // The password was never kept: the environment gives it, as to any rerun.
    let password = password_of(&db.url);
    let o = std::process::Command::new(bin())
        .args(["rerun", &out.display().to_string(), "--out", &again.display().to_string()])
        .current_dir(db.dir.path())
        .env("FAIRBENCH_PASSWORD", password)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let second = ResultDocument::read(&again).unwrap();
    let rerun = second.ha.as_ref().and_then(|h| h.request.clone()).unwrap();
    let fairbench::model::ProbeRequest::Failover(g) = &rerun else { panic!("{rerun:?}") };
    assert_eq!(g.common.out.as_deref(), Some(again.as_path()));
    // The same request but its output (a URL's `***` is gone: the rerun's URL had none).
    let same = fairbench::model::ProbeRequest::Failover(fairbench::model::probe_request::FailoverRequest {
        common: fairbench::model::probe_request::ProbeOptions { out: f.common.out.clone(), ..g.common.clone() },
        ..g.clone()
    });
    let usable = |r: &fairbench::model::ProbeRequest| r.redacted(fairbench::model::request::without_redacted_password);
    assert_eq!(usable(&same), usable(&kept));
    let failover = second.ha.as_ref().and_then(|h| h.failover.as_ref()).unwrap();
    assert_eq!(failover.verification.as_ref().map(|v| v.lost), Some(0));
    assert_ne!(failover.run_id, first.ha.as_ref().unwrap().failover.as_ref().unwrap().run_id);

    let args = ["rerun", &out.display().to_string(), "--", "--rate", "5"].map(String::from);
    let o = fairbench_in(db.dir.path(), &args);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("is a probe's result") && err.contains("fairbench probe"), "{err}");
}

/// `probe --with`: the workload is measured as a run is (its statements in the result, the
/// probe's figures beside them) and the probe's notices reach the terminal through the
/// same watcher as the run's lines: its announce line names its rate and target.
#[test]
fn mariadb_a_probe_with_a_workload_measures_both_and_says_what_it_writes() {
    let db = TestDb::new(Kind::Mysql);
    let prepare = ["prepare", "oltp_point_select", "--target", &db.url, "--table-size", "1000"].map(String::from);
    let o = fairbench_in(db.dir.path(), &prepare);
    assert!(o.status.success(), "{}", text(&o));
    let out = db.dir.path().join("with.json");
    let mut args = probe_args(&db, &out, "2");
    args.extend(["--with", "oltp_point_select --table-size 1000 --time 2"].map(String::from));
    let o = fairbench_in(db.dir.path(), &args);
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    let announce = err
        .lines()
        .find(|l| l.starts_with("probe failover: one write every 50.0 ms to "))
        .unwrap_or_else(|| panic!("no announce line: {err}"));
    assert!(announce.contains("run id "), "{announce}");
    let doc = ResultDocument::read(&out).unwrap();
    assert!(doc.statements.contains_key("point_selects"), "the workload's statements: {:?}", doc.statements.keys());
    assert!(doc.stats["total"].count > 0, "the workload ran: {:?}", doc.stats["total"]);
    let failover = doc.ha.as_ref().and_then(|h| h.failover.as_ref()).expect("the probe's figures beside the workload");
    assert_eq!(failover.verification.as_ref().map(|v| v.lost), Some(0));
    assert!(failover.attempts.iter().any(|a| a.outcome == fairbench::model::ha::Outcome::Acknowledged));
}
