//! `fairbench sandbox` with real servers started from the binaries installed on this host
//! (MariaDB, PostgreSQL): up with a replica, a row that replicates, kill -9 and start,
//! promote, down; and the one-line errors. Each test has a sandbox home of its own (a temp
//! dir) and ports of its own; a guard runs `sandbox down` however the test ends.

mod common;
use common::sandbox::{client, client_as, free_ports, wait_for};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Command, Output};

/// A sandbox home for one test; dropping it takes its sandbox down, then deletes the home.
struct Home {
    dir: tempfile::TempDir,
    /// The sandbox to take down at the end.
    name: &'static str,
}

impl Home {
    fn new(name: &'static str) -> Home {
        Home { dir: tempfile::tempdir().unwrap(), name }
    }

    fn fairbench(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_fairbench"))
            .args(args)
            .env("FAIRBENCH_SANDBOX_HOME", self.dir.path())
            .output()
            .unwrap()
    }

    /// Runs `fairbench sandbox ARGS`, which must succeed; returns its stdout.
    fn ok(&self, args: &[&str]) -> String {
        let mut all = vec!["sandbox"];
        all.extend_from_slice(args);
        let o = self.fairbench(&all);
        assert!(o.status.success(), "fairbench {all:?} failed: {}{}", stdout(&o), String::from_utf8_lossy(&o.stderr));
        stdout(&o)
    }

    /// Runs `fairbench sandbox ARGS`, which must fail with exit code 2 and one line on stderr.
    fn fails(&self, args: &[&str]) -> String {
        let mut all = vec!["sandbox"];
        all.extend_from_slice(args);
        let o = self.fairbench(&all);
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(2), "fairbench {all:?}: {err}");
        assert_eq!(err.lines().count(), 1, "fairbench {all:?} printed more than one line: {err}");
        assert!(err.starts_with("error: "), "{err}");
        assert!(stdout(&o).is_empty(), "{}", stdout(&o));
        err
    }

    fn sandbox_dir(&self) -> PathBuf {
        self.dir.path().join(self.name)
    }

    /// `sandbox ls NAME`: (node, role, status) per line.
    fn ls(&self) -> Vec<(String, String, String)> {
        let out = self.ok(&["ls", self.name]);
        let rows = out.lines().map(|l| l.split_whitespace().map(String::from).collect::<Vec<_>>());
        rows.map(|r| (r[2].clone(), r[3].clone(), r[6].clone())).collect()
    }

    /// The roles sandbox.json records, by node.
    fn recorded_roles(&self) -> Vec<(String, String)> {
        let text = std::fs::read_to_string(self.sandbox_dir().join("sandbox.json")).unwrap();
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        let nodes = doc["nodes"].as_array().unwrap().iter();
        nodes.map(|n| (n["name"].as_str().unwrap().into(), n["role"].as_str().unwrap().into())).collect()
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        if self.sandbox_dir().exists() {
            let o = self.fairbench(&["sandbox", "down", self.name]);
            if !o.status.success() {
                eprintln!("cleanup: sandbox down {} failed: {}", self.name, String::from_utf8_lossy(&o.stderr));
            }
        }
    }
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn query(engine: &str, port: u16, sql: &str) -> String {
    client(engine, port, sql).unwrap_or_else(|e| panic!("{engine} on port {port}: {sql}: {e}"))
}

/// up with a replica, a row replicated, kill -9 and start, promote, down.
fn lifecycle(engine: &'static str, name: &'static str, base: u16, setting: &str) {
    let home = Home::new(name);
    let port = free_ports(base, 2);
    let replica = port + 1;
    let set = format!("{setting}=77");
    let out = home.ok(&["up", name, "--engine", engine, "--replicas", "1", "--port", &port.to_string(), "--set", &set]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(lines[0].starts_with("primary") && lines[0].contains(&format!("127.0.0.1:{port}/fairbench")), "{out}");
    assert!(lines[1].starts_with("replica1") && lines[1].contains(&format!("127.0.0.1:{replica}/fairbench")), "{out}");
    // The printed URLs are the benchmark user's, whom read_only binds.
    assert!(lines.iter().all(|l| l.contains("://fairbench@127.0.0.1:")), "{out}");
    let up = |n: &str, r: &str| (n.to_string(), r.to_string(), "running".to_string());
    assert_eq!(home.ls(), vec![up("primary", "primary"), up("replica1", "replica")]);
    // --set reaches every node.
    for p in [port, replica] {
        let shown = match engine {
            "mariadb" => query(engine, p, &format!("SELECT @@{setting}")),
            _ => query(engine, p, &format!("SHOW {setting}")),
        };
        assert_eq!(shown, "77", "{setting} on port {p}");
    }
    assert!(home.fails(&["up", name, "--engine", engine]).contains("already exists"));
    // Durable by default: the settings --set did not change are the durable ones.
    let durable = match engine {
        "mariadb" => query(engine, port, "SELECT CONCAT(@@sync_binlog, ' ', @@innodb_flush_log_at_trx_commit)"),
        _ => query(engine, port, "SELECT current_setting('fsync') || ' ' || current_setting('synchronous_commit')"),
    };
    assert_eq!(durable, if engine == "mariadb" { "1 1" } else { "on on" });
    // The benchmark user writes its own tables on the primary and is refused on the replica.
    client_as(engine, port, "fairbench", "CREATE TABLE bench_own (id INT PRIMARY KEY)").unwrap();
    let has = |p: u16| client_as(engine, p, "fairbench", "SELECT count(*) FROM bench_own").ok();
    wait_for(30, "the benchmark user's table on the replica", || has(replica));
    let refused = client_as(engine, replica, "fairbench", "INSERT INTO bench_own VALUES (1)").unwrap_err();
    assert!(refused.contains("read-only") || refused.contains("read only") || refused.contains("1290"), "{refused}");

    query(engine, port, "CREATE TABLE probe (id INT PRIMARY KEY, v VARCHAR(20))");
    query(engine, port, "INSERT INTO probe VALUES (1, 'before the crash')");
    let read = |p: u16, id: u32| client(engine, p, &format!("SELECT v FROM probe WHERE id = {id}")).ok();
    let seen = wait_for(30, "the row on the replica", || read(replica, 1).filter(|v| !v.is_empty()));
    assert_eq!(seen, "before the crash");

    // A crash of the primary, then crash recovery.
    let killed = home.ok(&["kill", name]);
    assert!(killed.contains("SIGKILL") && killed.contains("now stopped"), "{killed}");
    assert_eq!(home.ls()[0], ("primary".into(), "primary".into(), "stopped".into()));
    assert!(client(engine, port, "SELECT 1").is_err(), "the killed primary still answers");
    home.ok(&["start", name]);
    assert_eq!(home.ls(), vec![up("primary", "primary"), up("replica1", "replica")]);
    assert_eq!(query(engine, port, "SELECT v FROM probe WHERE id = 1"), "before the crash");
    query(engine, port, "INSERT INTO probe VALUES (2, 'after the crash')");
    assert_eq!(
        wait_for(30, "the row after the restart", || read(replica, 2).filter(|v| !v.is_empty())),
        "after the crash"
    );

    // A pause and a resume.
    home.ok(&["kill", name, "--node", "replica1", "--signal", "STOP"]);
    assert_eq!(home.ls()[1].2, "paused");
    home.ok(&["kill", name, "--node", "replica1", "--signal", "CONT"]);
    assert_eq!(home.ls()[1].2, "running");
    assert!(home.fails(&["kill", name, "--node", "replica9"]).contains("no node replica9"));

    // The replica takes over.
    home.ok(&["promote", name, "--node", "replica1"]);
    query(engine, replica, "INSERT INTO probe VALUES (3, 'on the new primary')");
    assert_eq!(query(engine, replica, "SELECT count(*) FROM probe"), "3");
    assert_eq!(home.ls()[1], up("replica1", "primary"));
    let roles = home.recorded_roles();
    assert_eq!(roles, vec![("primary".into(), "former-primary".into()), ("replica1".into(), "primary".into())]);

    home.ok(&["down", name]);
    assert!(!home.sandbox_dir().exists(), "the sandbox's directory is still there");
    assert!(client(engine, port, "SELECT 1").is_err() && client(engine, replica, "SELECT 1").is_err());
}

#[test]
fn mariadb_primary_and_replica() {
    lifecycle("mariadb", "maria", 23306, "max_connections");
}

#[test]
fn postgres_primary_and_replica() {
    lifecycle("postgres", "pg", 25432, "max_connections");
}

#[test]
fn errors_are_one_line_with_exit_code_2() {
    let home = Home::new("e");
    let e = home.fails(&["up", "e", "--engine", "oracle"]);
    assert!(e.contains("unknown engine \"oracle\"") && e.contains("mariadb or postgres"), "{e}");

    let port = free_ports(27306, 1);
    let _taken = TcpListener::bind(("127.0.0.1", port)).unwrap();
    let e = home.fails(&["up", "e", "--engine", "mariadb", "--port", &port.to_string()]);
    assert!(e.contains(&format!("port {port}")) && e.contains("is taken: choose another with --port"), "{e}");
    assert!(!home.sandbox_dir().exists(), "a refused up left {}", home.sandbox_dir().display());

    std::fs::create_dir_all(home.sandbox_dir()).unwrap();
    let e = home.fails(&["up", "e", "--engine", "postgres"]);
    assert!(e.contains("already exists") && e.contains("fairbench sandbox down e"), "{e}");
    std::fs::remove_dir(home.sandbox_dir()).unwrap();

    for args in [
        &["ls", "nope"][..],
        &["kill", "nope"],
        &["start", "nope"],
        &["promote", "nope", "--node", "replica1"],
        &["down", "nope"],
    ] {
        let e = home.fails(args);
        assert!(e.contains("no sandbox nope in"), "{args:?}: {e}");
    }
    let e = home.fails(&["up", "../e", "--engine", "mariadb"]);
    assert!(e.contains("invalid sandbox name"), "{e}");
    let e = home.fails(&["up", "e", "--engine", "mariadb", "--set", "no_value"]);
    assert!(e.contains("--set name=value"), "{e}");
    assert!(std::fs::read_dir(home.dir.path()).unwrap().next().is_none(), "errors left files in the home");
}
