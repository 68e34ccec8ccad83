//! A sandbox of the HA tests' own (`fairbench sandbox up` in a home of its own, taken down
//! when dropped), and the probe's result read back.

use super::sandbox::{client, free_ports};
use serde_json::Value;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub struct Sandbox {
    pub home: tempfile::TempDir,
    pub name: &'static str,
    pub engine: &'static str,
    /// (node, URL) as `sandbox up` printed them.
    pub nodes: Vec<(String, String)>,
    pub port: u16,
}

impl Sandbox {
    pub fn up(name: &'static str, engine: &'static str, replicas: u32, base: u16, sets: &[&str]) -> Sandbox {
        Sandbox::up_with(name, engine, replicas, base, sets, &[])
    }

    pub fn up_with(
        name: &'static str,
        engine: &'static str,
        replicas: u32,
        base: u16,
        sets: &[&str],
        extra: &[&str],
    ) -> Sandbox {
        let home = tempfile::tempdir().unwrap();
        let per_node = if engine == "galera" { 4 } else { 1 };
        // Patroni's REST API and etcd's two ports besides a proxy's two.
        let port = free_ports(base, (replicas as u16 + 1) * per_node + 5);
        let mut sb = Sandbox { home, name, engine, nodes: Vec::new(), port };
        let (replicas, port) = (replicas.to_string(), port.to_string());
        let mut args = vec!["sandbox", "up", name, "--engine", engine, "--replicas", &replicas, "--port", &port];
        for s in sets {
            args.extend(["--set", s]);
        }
        args.extend(extra);
        let o = sb.fairbench(&args);
        assert!(o.status.success(), "sandbox up: {}", text(&o));
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        sb.nodes = out
            .lines()
            .map(|l| {
                let cols: Vec<&str> = l.split_whitespace().collect();
                (cols[0].to_string(), cols[cols.len() - 1].to_string())
            })
            .collect();
        assert!(!sb.nodes.is_empty(), "{out}");
        sb
    }

    pub fn url(&self, node: &str) -> String {
        self.nodes
            .iter()
            .find(|(n, _)| n == node)
            .unwrap_or_else(|| panic!("no node {node}: {:?}", self.nodes))
            .1
            .clone()
    }

    pub fn command(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_fairbench"));
        c.env("FAIRBENCH_SANDBOX_HOME", self.home.path()).current_dir(self.home.path());
        c
    }

    pub fn fairbench(&self, args: &[&str]) -> Output {
        self.command().args(args).output().unwrap()
    }

    pub fn sandbox(&self, args: &[&str]) {
        let mut all = vec!["sandbox"];
        all.extend_from_slice(args);
        let o = self.fairbench(&all);
        assert!(o.status.success(), "{all:?}: {}", text(&o));
    }

    /// A probe run to its end: its result document.
    pub fn probe(&self, args: &[&str]) -> Value {
        let out = self.home.path().join(format!("probe-{}.json", Instant::now().elapsed().as_nanos()));
        let mut all = vec!["probe"];
        all.extend_from_slice(args);
        all.extend(["--out", out.to_str().unwrap()]);
        let o = self.fairbench(&all);
        assert!(o.status.success(), "{all:?}: {}", text(&o));
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap()
    }

    /// A probe started in the background, its result read by `finish`.
    pub fn spawn_probe(&self, args: &[&str], out: &str) -> Child {
        let out = self.home.path().join(out);
        self.command()
            .arg("probe")
            .args(args)
            .args(["--out", out.to_str().unwrap(), "--quiet"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    pub fn finish(&self, child: Child, out: &str) -> (Value, String) {
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "probe: {}", text(&o));
        let doc = serde_json::from_str(&std::fs::read_to_string(self.home.path().join(out)).unwrap()).unwrap();
        (doc, String::from_utf8_lossy(&o.stdout).into_owned())
    }

    /// SQL on a node through the engine's own client (the sandbox's `fairbench` database).
    pub fn sql(&self, node_port: u16, sql: &str) -> Result<String, String> {
        client(self.engine, node_port, sql)
    }

    /// Rows of the probe table on the primary (0 while it does not exist yet).
    pub fn probe_rows(&self, filter: &str) -> u64 {
        self.rows_on(self.port, filter)
    }

    pub fn rows_on(&self, port: u16, filter: &str) -> u64 {
        let sql = format!("SELECT COUNT(*) FROM fairbench_probe WHERE {filter}");
        self.sql(port, &sql).ok().and_then(|s| s.parse().ok()).unwrap_or(0)
    }

    /// A filter for rows of runs that start from now on (run ids are random, not ordered).
    pub fn later_runs(&self) -> String {
        let ids = self.sql(self.port, "SELECT DISTINCT run_id FROM fairbench_probe").unwrap_or_default();
        let ids: Vec<&str> = ids.split_whitespace().collect();
        if ids.is_empty() {
            return "1 = 1".into();
        }
        format!("run_id NOT IN ({})", ids.join(", "))
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let o = self.fairbench(&["sandbox", "down", self.name]);
        if !o.status.success() {
            eprintln!("cleanup: sandbox down {}: {}", self.name, text(&o));
        }
    }
}

pub fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

pub fn wait_for(secs: u64, what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < Duration::from_secs(secs), "{what}: not within {secs} s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

pub fn findings(doc: &Value) -> Vec<(String, String)> {
    let list = doc["audit"].as_array().unwrap();
    list.iter().map(|f| (f["id"].as_str().unwrap().to_string(), f["severity"].as_str().unwrap().to_string())).collect()
}

pub fn has_finding(doc: &Value, id: &str, severity: &str) -> bool {
    findings(doc).iter().any(|(i, s)| i == id && s == severity)
}
