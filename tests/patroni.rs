//! Patroni sandboxes against the real thing (Debian's patroni, etcd-server, PostgreSQL and
//! HAProxy): three nodes on 127.0.0.2-4 sharing one port, the writer port following the
//! leader Patroni elects after a kill, the killed leader rejoining as a replica, a planned
//! switchover performed by the failover probe, and nothing left running after `down`.
//! Every state is waited for with a deadline, never a fixed sleep.

mod common;
use common::sandbox::{free_ports, wait_for};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// Leader election after a kill: ttl (8 s) + a loop or two + HAProxy's checks, with room.
const FAILOVER_DEADLINE: u64 = 60;

struct Sandbox {
    home: tempfile::TempDir,
    name: &'static str,
    port: u16,
}

impl Sandbox {
    fn up(name: &'static str, base: u16, args: &[&str]) -> Sandbox {
        let home = tempfile::tempdir().unwrap();
        // PostgreSQL, REST API, etcd client and peer, writer, reader.
        let port = free_ports(base, 6);
        let sb = Sandbox { home, name, port };
        let port = port.to_string();
        let mut all = vec!["sandbox", "up", name, "--engine", "postgres", "--port", &port];
        all.extend_from_slice(args);
        sb.ok(&all);
        sb
    }

    fn fairbench(&self, args: &[&str]) -> Output {
        let mut c = Command::new(env!("CARGO_BIN_EXE_fairbench"));
        c.env("FAIRBENCH_SANDBOX_HOME", self.home.path()).current_dir(self.home.path());
        c.args(args).output().unwrap()
    }

    fn ok(&self, args: &[&str]) -> String {
        let o = self.fairbench(args);
        assert!(o.status.success(), "{args:?}: {}", text(&o));
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// `sandbox ls`: (node, role, url) per line.
    fn ls(&self) -> Vec<(String, String, String)> {
        let out = self.ok(&["sandbox", "ls", self.name]);
        out.lines()
            .map(|l| {
                let c: Vec<&str> = l.split_whitespace().collect();
                (c[2].to_string(), c[3].to_string(), c[4].to_string())
            })
            .collect()
    }

    fn role(&self, node: &str) -> String {
        self.ls().into_iter().find(|(n, ..)| n == node).map(|(_, r, _)| r).unwrap_or_default()
    }

    /// The one running node `ls` reads as primary, if exactly one is (a stopped node's role
    /// is the one recorded at `up`).
    fn leader(&self) -> Option<String> {
        let out = self.ok(&["sandbox", "ls", self.name]);
        let rows = out.lines().map(|l| l.split_whitespace().collect::<Vec<_>>());
        let running = rows.filter(|c| !is_proxy(c[2]) && c[3] == "primary" && c[6] == "running");
        let nodes: Vec<String> = running.map(|c| c[2].to_string()).collect();
        (nodes.len() == 1).then(|| nodes[0].clone())
    }

    /// `in_recovery|address` of the server behind the writer port, as the benchmark user.
    fn behind_writer(&self) -> Option<String> {
        psql("127.0.0.1", self.port + 4, "SELECT pg_is_in_recovery(), host(inet_server_addr())").ok()
    }

    /// Patroni's own tool: its output, None when it fails.
    fn patronictl(&self, args: &[&str]) -> Option<String> {
        let config = self.home.path().join(self.name).join("replica2").join("patroni.yml");
        let o = Command::new("patronictl").arg("-c").arg(&config).args(args).output().unwrap();
        o.status.success().then(|| String::from_utf8_lossy(&o.stdout).into_owned())
    }

    /// Patroni lists one leader and every other member running on its timeline, lag known.
    fn caught_up(&self) -> bool {
        let Some(list) = self.patronictl(&["list", "-f", "json"]) else { return false };
        let list: Value = serde_json::from_str(&list).unwrap_or_default();
        let members = list.as_array().cloned().unwrap_or_default();
        let leaders: Vec<&Value> = members.iter().filter(|m| m["Role"] == "Leader").collect();
        let [leader] = leaders.as_slice() else { return false };
        members.len() == 3
            && members
                .iter()
                .filter(|m| m["Role"] != "Leader")
                .all(|m| m["State"] == "running" && m["Lag in MB"].is_u64() && m["TL"] == leader["TL"])
    }

    /// Processes whose command line or working directory is under the sandbox home.
    fn processes_left(&self) -> Vec<String> {
        let home = self.home.path();
        let o = Command::new("pgrep").arg("-af").arg(home.as_os_str()).output().unwrap();
        let mut left: Vec<String> = String::from_utf8_lossy(&o.stdout).lines().map(str::to_string).collect();
        left.extend(working_under(home));
        left
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        if self.home.path().join(self.name).exists() {
            let o = self.fairbench(&["sandbox", "down", self.name]);
            if !o.status.success() {
                eprintln!("cleanup: sandbox down {}: {}", self.name, text(&o));
            }
        }
    }
}

fn is_proxy(node: &str) -> bool {
    node == "writer" || node == "reader"
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// SQL through psql as the benchmark user on `host`:`port`.
fn psql(host: &str, port: u16, sql: &str) -> Result<String, String> {
    let port = port.to_string();
    let o = Command::new("psql")
        .args(["-X", "-h", host, "-p", &port, "-U", "fairbench", "-d", "fairbench", "-At", "-c", sql])
        .env("PGCONNECT_TIMEOUT", "3")
        .output()
        .map_err(|e| e.to_string())?;
    if o.status.success() {
        Ok(String::from_utf8_lossy(&o.stdout).trim().to_string())
    } else {
        Err(String::from_utf8_lossy(&o.stderr).into_owned())
    }
}

/// Pids working in a directory under `home` (etcd's command line names only relative paths).
fn working_under(home: &Path) -> Vec<String> {
    let procs = std::fs::read_dir("/proc").into_iter().flatten().flatten();
    procs
        .filter(|e| e.file_name().to_str().is_some_and(|n| n.parse::<u32>().is_ok()))
        .filter(|e| std::fs::read_link(e.path().join("cwd")).is_ok_and(|d| d.starts_with(home)))
        .map(|e| format!("pid {} works in the sandbox home", e.file_name().to_string_lossy()))
        .collect()
}

fn address(node: &str) -> &'static str {
    match node {
        "primary" => "127.0.0.2",
        "replica1" => "127.0.0.3",
        "replica2" => "127.0.0.4",
        other => panic!("no node {other}"),
    }
}

/// Up, kill the leader (Patroni elects another, the writer port follows), start the old
/// leader (it rejoins as a replica), a switchover on the probe's schedule, down.
#[test]
fn patroni_fails_over_and_switches_over() {
    let sb = Sandbox::up("pat", 28432, &["--manager", "patroni", "--replicas", "2", "--proxy"]);
    let p = sb.port;
    let nodes: Vec<(String, String, String)> = sb.ls().into_iter().filter(|(n, ..)| !is_proxy(n)).collect();
    let roles: Vec<&str> = nodes.iter().map(|(_, r, _)| r.as_str()).collect();
    assert_eq!(roles, ["primary", "replica", "replica"], "{nodes:?}");
    for (node, _, url) in &nodes {
        assert_eq!(url, &format!("postgres://fairbench@{}:{p}/fairbench", address(node)), "{node}: one port for all");
    }
    assert_eq!(sb.behind_writer().as_deref(), Some("f|127.0.0.2"), "the writer port reaches the leader");

    let o = sb.fairbench(&["sandbox", "promote", sb.name, "--node", "replica1"]);
    let said = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{said}");
    assert!(said.contains("promotes by itself") && said.trim().lines().count() == 1, "{said}");

    // A host dies: Patroni and its PostgreSQL killed; another node leads, the writer follows.
    sb.ok(&["sandbox", "kill", sb.name, "--node", "primary"]);
    let leader = wait_for(FAILOVER_DEADLINE, "another leader behind the writer port", || {
        let leader = sb.leader().filter(|l| l != "primary")?;
        (sb.behind_writer()? == format!("f|{}", address(&leader))).then_some(leader)
    });
    sb.ok(&["sandbox", "start", sb.name, "--node", "primary"]);
    wait_for(FAILOVER_DEADLINE, "the old leader a replica", || (sb.role("primary") == "replica").then_some(()));
    assert_eq!(sb.role(&leader), "primary");

    if leader == "replica1" {
        // The switchover below needs replica1 to be a replica first: Patroni's own tool,
        // asked again should Patroni refuse (it switches over only to a healthy replica).
        let start = Instant::now();
        while sb.leader().as_deref() != Some("primary") {
            assert!(start.elapsed() < Duration::from_secs(FAILOVER_DEADLINE), "no switchover to primary");
            sb.patronictl(&["switchover", sb.name, "--candidate", "primary", "--force"]);
            let asked = Instant::now();
            while asked.elapsed() < Duration::from_secs(10) && sb.leader().as_deref() != Some("primary") {
                std::thread::sleep(Duration::from_millis(200));
            }
        }
    }
    // Patroni switches over only to a replica that has caught up.
    wait_for(FAILOVER_DEADLINE, "every replica caught up", || sb.caught_up().then_some(()));

    let writer = format!("postgres://fairbench@127.0.0.1:{}/fairbench", p + 4);
    let out = sb.home.path().join("switchover.json");
    sb.ok(&[
        "probe",
        "failover",
        "--target",
        &writer,
        "--time",
        "12",
        "--fault",
        "switchover replica1 @4s",
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let events = doc["faults"]["events"].as_array().unwrap();
    assert_eq!(events.len(), 1, "{}", doc["faults"]);
    assert_eq!((events[0]["action"].as_str(), events[0]["outcome"].as_str()), (Some("switchover"), Some("done")));
    let detail = events[0]["detail"].as_str().unwrap();
    assert!(detail.contains("replica1 leads and takes writes"), "{detail}");
    assert_eq!(sb.role("replica1"), "primary");
    wait_for(FAILOVER_DEADLINE, "the writer port on replica1", || (sb.behind_writer()? == "f|127.0.0.3").then_some(()));

    sb.ok(&["sandbox", "down", sb.name]);
    assert!(!sb.home.path().join(sb.name).exists());
    assert_eq!(sb.processes_left(), Vec::<String>::new(), "left running after down");
}

/// Patroni's actions on a sandbox Patroni does not run: refused before anything starts.
#[test]
fn switchover_needs_a_patroni_sandbox() {
    let sb = Sandbox::up("plain", 29432, &[]);
    let url = format!("postgres://fairbench@127.0.0.1:{}/fairbench", sb.port);
    for action in ["switchover", "failover"] {
        let fault = format!("{action} primary @1s");
        let o = sb.fairbench(&["probe", "failover", "--target", &url, "--time", "3", "--fault", &fault]);
        let said = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(2), "{said}");
        assert!(said.contains("needs a Patroni sandbox") && said.trim().lines().count() == 1, "{said}");
    }
}
