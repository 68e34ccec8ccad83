//! HA where production runs PostgreSQL: three nodes under Patroni (each on its own loopback
//! address, all on one port, as on separate hosts) behind HAProxy checking Patroni's REST
//! API. The probe writes through HAProxy; Patroni fails over by itself after the leader is
//! killed with SIGKILL, and a manual failover is started by a command of the user's
//! (`exec 'patronictl failover ...'`). The new primary is named by what the servers say, and
//! every count is checked against SQL run on each node with psql.

mod common;
use common::ha::{findings, Sandbox};
use common::sandbox::client_at;
use serde_json::Value;

/// (name, host) of the node whose PostgreSQL is not in recovery, read with psql.
fn leader(sb: &Sandbox) -> Option<(String, String)> {
    let nodes = sb.nodes.iter().filter(|(n, _)| n != "writer" && n != "reader");
    nodes.map(|(n, url)| (n.clone(), host_of(url))).find(|(_, h)| {
        client_at("postgres", h, sb.port, "postgres", "SELECT pg_is_in_recovery()").as_deref() == Ok("f")
    })
}

fn host_of(url: &str) -> String {
    url.split('@').nth(1).and_then(|r| r.split(':').next()).unwrap().to_string()
}

/// Each node's check agrees with psql's count of this run's rows on that node.
fn counts_equal_sql(sb: &Sandbox, f: &Value) {
    let run_id = f["run_id"].as_i64().unwrap();
    let servers = f["servers"].as_array().unwrap();
    for c in f["checks"].as_array().unwrap().iter().filter(|c| c["unverified"].is_null()) {
        let s = servers.iter().find(|s| s["key"] == c["server"]).unwrap_or_else(|| panic!("{c}"));
        let host = s["address"].as_str().unwrap().split(':').next().unwrap().to_string();
        let sql = format!("SELECT COUNT(*) FROM fairbench_probe WHERE run_id = {run_id}");
        let counted: u64 = client_at("postgres", &host, sb.port, "postgres", &sql).unwrap().parse().unwrap();
        assert_eq!(c["present"].as_u64(), Some(counted), "{} at {host}: {c}", s["name"]);
    }
}

fn probe(sb: &Sandbox, faults: &str, out: &str) -> (Value, String) {
    let writer = sb.url("writer");
    let args = ["failover", "--target", &writer, "--rate", "20", "--time", "24", "--fault", faults];
    sb.finish(sb.spawn_probe(&args, out), out)
}

#[test]
fn patroni_fails_over_by_itself_and_by_a_users_command() {
    let sb = Sandbox::up_with("ha_patroni", "postgres", 2, 27606, &[], &["--manager", "patroni", "--proxy"]);
    // The leader killed with SIGKILL (Patroni and its postmaster): Patroni elects another.
    let (doc, report) = probe(&sb, "kill primary @4s", "kill.json");
    let f = &doc["ha"]["failover"];
    let (new, _) = leader(&sb).expect("Patroni elected a leader");
    assert_ne!(new, "primary");
    let v = &f["verification"];
    let final_name = f["servers"].as_array().unwrap().iter().find(|s| s["key"] == v["server"]).unwrap()["name"].clone();
    assert_eq!(final_name, new.as_str(), "the final primary named by what the servers say: {v}");
    assert!(report.contains(&format!("verdict: failover from primary to {new} in ")), "{report}");
    // Patroni chose the leader and when: the downtime is detected, not this run's schedule.
    assert!(report.contains(", detected (no step of this run promoted a node"), "{report}");
    assert!(v["through"].is_null(), "read on the node itself: {v}");
    counts_equal_sql(&sb, f);
    assert!(findings(&doc).iter().all(|(id, _)| id != "ha-two-primaries"), "{:?}", findings(&doc));

    // A manual failover back to the old leader, started by the user's command on the clock.
    sb.sandbox(&["start", sb.name, "--node", "primary"]);
    let config = sb.home.path().join(sb.name).join("primary").join("patroni.yml");
    let command =
        format!("exec 'patronictl -c {} failover {} --candidate primary --force' @4s", config.display(), sb.name);
    let (doc, report) = probe(&sb, &command, "exec.json");
    let e = &doc["faults"]["events"][0];
    assert_eq!((e["action"].as_str(), e["exit_code"].as_i64()), (Some("exec"), Some(0)), "{e}");
    let f = &doc["ha"]["failover"];
    assert_eq!(leader(&sb).map(|(n, _)| n).as_deref(), Some("primary"));
    let began = e["at_us"].as_u64().unwrap();
    let moved = f["outages"].as_array().unwrap().iter().find(|o| o["to_us"].as_u64().is_some_and(|t| t > began));
    let moved = moved.unwrap_or_else(|| panic!("an outage after the command: {}", f["outages"]));
    assert!(report.contains(&format!("failover from {new} to primary")), "{report}");
    assert!(report.contains(", requested (by this run's exec patronictl "), "{report}");
    assert!(moved["to_us"].as_u64().unwrap() > began, "{moved}");
    counts_equal_sql(&sb, f);
}
