//! HA where production runs it: a probe through a proxy knows each node by the identity the
//! node reports, watches and reads every node of the sandbox directly, and names them; an
//! indeterminate write is settled by the lookup after the run; the probe notices when its
//! own process stalls. Counts are checked against SQL run on each node with its own client.

mod common;
use common::ha::{findings, has_finding, wait_for, Sandbox};
use serde_json::Value;
use std::time::Duration;

/// This run's rows on the node at `port`, by the engine's own client.
fn rows_of(sb: &Sandbox, port: u16, run_id: i64) -> u64 {
    sb.rows_on(port, &format!("run_id = {run_id}"))
}

fn check_of<'a>(f: &'a Value, name: &str) -> &'a Value {
    let key = f["servers"].as_array().unwrap().iter().find(|s| s["name"] == name);
    let key = key.unwrap_or_else(|| panic!("no server {name}: {}", f["servers"]))["key"].clone();
    let check = f["checks"].as_array().unwrap().iter().find(|c| c["server"] == key);
    check.unwrap_or_else(|| panic!("no check of {name}: {}", f["checks"]))
}

/// Through HAProxy: the primary killed, the replica promoted, the old primary started again
/// (writable). Two nodes take writes at once: a critical `ha-two-primaries` naming both, and
/// each node's rows, read on the node itself, equal to what SQL counts there.
#[test]
fn two_primaries_behind_the_proxy_are_named_and_counted_on_each_node() {
    let sb = Sandbox::up_with("ha_nodes_proxy", "mariadb", 1, 25806, &[], &["--proxy"]);
    let writer = sb.url("writer");
    let faults = "kill primary @3s; promote replica1 @4s; start primary @6s";
    let args = ["failover", "--target", &writer, "--rate", "20", "--time", "10", "--fault", faults];
    let (doc, report) = sb.finish(sb.spawn_probe(&args, "proxy.json"), "proxy.json");
    let f = &doc["ha"]["failover"];
    let two = doc["audit"].as_array().unwrap().iter().find(|x| x["id"] == "ha-two-primaries");
    let two = two.unwrap_or_else(|| panic!("no ha-two-primaries: {:?}", findings(&doc)));
    assert_eq!(two["severity"], "critical", "{two}");
    let title = two["title"].as_str().unwrap();
    assert!(title.contains("primary") && title.contains("replica1"), "both nodes named: {title}");
    let run_id = f["run_id"].as_i64().unwrap();
    for (name, port) in [("primary", sb.port), ("replica1", sb.port + 1)] {
        let c = check_of(f, name);
        assert!(c["through"].is_null(), "{name} read directly: {c}");
        assert_eq!(c["present"].as_u64(), Some(rows_of(&sb, port, run_id)), "{name}: {c}");
    }
    // The verdict names the servers, not "target2", and the report says beside it that two
    // were primaries at once, naming both (the writes' own failover can read as clean).
    assert!(report.contains("replica1") && !report.contains("target2"), "{report}");
    let line = report.lines().find(|l| l.trim_start().starts_with("TWO PRIMARIES: "));
    let line = line.unwrap_or_else(|| panic!("no TWO PRIMARIES line: {report}"));
    assert!(line.contains("primary and replica1") || line.contains("replica1 and primary"), "{line}");
}

/// The primary paused (SIGSTOP) for 2 s with a 1 s attempt timeout: the write in flight
/// gets no answer in time and is indeterminate, then the server commits it when it resumes.
/// The lookup after the run settles each indeterminate write by its row on the primary.
#[test]
fn an_indeterminate_write_is_settled_by_the_lookup() {
    let sb = Sandbox::up("ha_nodes_indet", "mariadb", 0, 25906, &[]);
    let primary = sb.url("primary");
    let args = ["failover", "--target", &primary, "--rate", "20", "--time", "7", "--fault", "pause primary @2s for 2s"];
    let (doc, report) = sb.finish(sb.spawn_probe(&args, "indet.json"), "indet.json");
    let f = &doc["ha"]["failover"];
    let run_id = f["run_id"].as_i64().unwrap();
    let indeterminate: Vec<&Value> =
        f["attempts"].as_array().unwrap().iter().filter(|a| a["outcome"] == "indeterminate").collect();
    assert!(!indeterminate.is_empty(), "the write in flight at the pause: {}", f["outcomes"]);
    for a in &indeterminate {
        let seq = a["seq"].as_u64().unwrap();
        let present = sb.rows_on(sb.port, &format!("run_id = {run_id} AND seq = {seq}")) == 1;
        assert_eq!(a["settled"].as_bool(), Some(present), "{a}");
    }
    assert!(report.contains("indeterminate write(s)"), "{report}");
}

/// The probe's own process stopped (SIGSTOP) for 1.5 s during a clean run: a `probe-stalled`
/// finding names the span, and no downtime is made of the probe's own stall.
#[test]
fn a_stopped_probe_says_it_stalled_and_reports_no_downtime() {
    let sb = Sandbox::up("ha_nodes_stall", "mariadb", 0, 26006, &[]);
    let primary = sb.url("primary");
    let before = sb.later_runs();
    let child = sb.spawn_probe(&["failover", "--target", &primary, "--rate", "20", "--time", "6"], "stall.json");
    wait_for(30, "the probe writes", || sb.probe_rows(&before) >= 10);
    let pid = child.id().to_string();
    let signal = |s: &str| assert!(std::process::Command::new("kill").args([s, &pid]).status().unwrap().success());
    signal("-STOP");
    std::thread::sleep(Duration::from_millis(1500));
    signal("-CONT");
    let (doc, _) = sb.finish(child, "stall.json");
    let f = &doc["ha"]["failover"];
    assert!(has_finding(&doc, "probe-stalled", "warn"), "{:?}", findings(&doc));
    let longest = f["timing"]["stalls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["to_us"].as_u64().unwrap() - s["from_us"].as_u64().unwrap());
    assert!(longest.max().unwrap() >= 1_400_000, "the 1.5 s stop: {}", f["timing"]);
    assert_eq!(f["downtime_ms"].as_f64(), Some(0.0), "outages: {}", f["outages"]);
    assert!(f["timing"]["dropped_slots"].as_u64().unwrap() >= 20, "{}", f["timing"]);
}

/// A failover fairbench does not perform: the primary killed, then a user's command promotes
/// the replica (as `aws rds failover-db-cluster` or `patronictl failover` would) on the
/// run's clock. The command's start, end, status and output are recorded, the writer moves
/// only after it began, and a failing command is recorded as failed with its status.
#[test]
fn an_exec_step_places_an_external_failover_on_the_runs_clock() {
    let sb = Sandbox::up("ha_nodes_exec", "mariadb", 1, 26106, &[]);
    let (primary, replica) = (sb.url("primary"), sb.url("replica1"));
    let promote = format!("exec '{} sandbox promote {} --node replica1' @3s", env!("CARGO_BIN_EXE_fairbench"), sb.name);
    let faults = format!("kill primary @2s; {promote}; exec 'echo checked; exit 3' @4s");
    let args = ["failover", "--target", &primary, "--target", &replica, "--time", "7", "--fault", &faults];
    let (doc, report) = sb.finish(sb.spawn_probe(&args, "exec.json"), "exec.json");
    let events = doc["faults"]["events"].as_array().unwrap();
    let (promoted, failing) = (&events[1], &events[2]);
    assert_eq!((promoted["action"].as_str(), promoted["outcome"].as_str()), (Some("exec"), Some("done")), "{promoted}");
    assert_eq!(promoted["exit_code"].as_i64(), Some(0), "{promoted}");
    let began = promoted["at_us"].as_u64().unwrap();
    assert!(began >= 3_000_000 && promoted["done_us"].as_u64().unwrap() > began, "{promoted}");
    assert_eq!((failing["outcome"].as_str(), failing["exit_code"].as_i64()), (Some("failed"), Some(3)), "{failing}");
    assert_eq!(failing["output"][0], "checked", "{failing}");
    let f = &doc["ha"]["failover"];
    let on_replica =
        f["attempts"].as_array().unwrap().iter().filter(|a| a["outcome"] == "acknowledged" && a["target"] == 2);
    let first = on_replica.map(|a| a["at_us"].as_u64().unwrap() + a["took_us"].as_u64().unwrap()).min();
    assert!(first.is_some_and(|t| t >= began), "the writer moved after the command began at {began}: {first:?}");
    assert!(report.contains("exec ") && report.contains("exit status 3: checked"), "{report}");
}
