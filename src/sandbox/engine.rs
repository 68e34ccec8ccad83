//! The seam between sandboxes and a database server: what it takes to create, start,
//! replicate and promote one, and what every engine's file shares. One file per engine;
//! engines.rs lists them.

use super::patroni_settings::Settings as PatroniSettings;
use super::process::ProcessStatus;
use super::process::{self, OsUser, Signal};
use super::{Node, Sandbox, SandboxError, START_DEADLINE};
use crate::db::DbError;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The database every sandbox creates on its primary, named in the URLs it prints.
pub const DATABASE: &str = "fairbench";
/// The benchmark user in the URLs a sandbox prints: no administrative privilege, so that
/// `read_only` binds it as it binds an application (root stays for fairbench's own work).
pub const BENCH_USER: &str = "fairbench";

/// A database server that sandboxes can run. SQL goes through fairbench's own drivers.
pub trait Engine: Sync {
    /// The name `--engine` takes and sandbox.json records.
    fn name(&self) -> &'static str;
    /// Other names `--engine` accepts.
    fn aliases(&self) -> &'static [&'static str] {
        &[]
    }
    /// The failover manager that runs the servers (`--manager`), if any.
    fn manager(&self) -> Option<&'static str> {
        None
    }
    /// What the manager records in sandbox.json, from the sandbox's first port.
    fn manager_settings(&self, first_port: u16) -> Option<PatroniSettings> {
        let _ = first_port;
        None
    }
    /// Nodes are placed as on separate hosts: each on its own loopback address (127.0.0.2,
    /// 127.0.0.3, ...), all on the same ports.
    fn spread(&self) -> bool {
        false
    }
    /// Services the nodes share (Patroni's etcd): started before any node starts.
    fn start_shared(&self, sb: &Sandbox) -> Result<(), SandboxError> {
        let _ = sb;
        Ok(())
    }
    /// Stops what `start_shared` started (and what a node's crash left); says what it stopped.
    fn stop_shared(&self, sb: &Sandbox) -> Result<Vec<String>, SandboxError> {
        let _ = sb;
        Ok(Vec::new())
    }
    /// Where the first sandbox's primary listens when no --port is given.
    fn default_port(&self) -> u16;
    /// The server's process name in /proc: a pid file's pid reused by another program is
    /// not the server.
    fn process_name(&self) -> &'static str;
    /// The directory the node's process works in (how /proc tells it from another program).
    fn process_dir(&self, node: &Node) -> PathBuf {
        node.data_dir()
    }
    /// Sends `signal` to the node's process `pid` (and whatever else a host's crash ends).
    fn signal(&self, node: &Node, pid: i32, signal: Signal) -> Result<(), SandboxError> {
        process::send(pid, signal, self.process_name(), &self.process_dir(node))
    }
    /// The OS user the server runs as when fairbench runs as root (None: fairbench's own).
    fn os_user(&self) -> Result<Option<OsUser>, SandboxError> {
        Ok(None)
    }
    /// Every node takes writes (a multi-primary cluster): nodes are members, not a primary
    /// and replicas.
    fn multi_primary(&self) -> bool {
        false
    }
    /// Consecutive ports each node needs (SQL first).
    fn ports_per_node(&self) -> usize {
        1
    }
    /// HAProxy's health check (`--proxy`) for the writer or the reader, in the database's
    /// protocol unless `proxy_check_port` says otherwise.
    fn proxy_check(&self, reader: bool) -> String;
    /// The port HAProxy checks on each node instead of the database's (a manager's REST API,
    /// whose answer knows the node's role: no backup servers then).
    fn proxy_check_port(&self, sb: &Sandbox) -> Option<u16> {
        let _ = sb;
        None
    }
    /// The server binaries are installed (else: which package to install).
    fn check_installed(&self) -> Result<(), SandboxError>;
    /// Every server setting the engine's server program knows, as it lists them itself (no
    /// server started); `settings` (NAME=VALUE) may add some (a plugin loaded).
    fn known_settings(&self, settings: &[String]) -> Result<super::settings::KnownSettings, SandboxError>;
    /// The URL of the node's `fairbench` database as the benchmark user, as fairbench's
    /// `--target`.
    fn url(&self, host: &str, port: u16) -> String;
    fn pid_file(&self, node: &Node) -> PathBuf;
    /// Creates the first primary's data directory.
    fn init(&self, sb: &Sandbox, node: &Node) -> Result<(), SandboxError>;
    /// Creates a replica's data directory; its source runs.
    fn init_replica(&self, sb: &Sandbox, source: &Node, replica: &Node) -> Result<(), SandboxError>;
    /// Starts the server and returns once it answers (crash recovery done).
    fn start(&self, sb: &Sandbox, node: &Node) -> Result<(), SandboxError>;
    /// Once, after a node's first start: what the node needs that is not replicated.
    fn bootstrap(&self, node: &Node) -> Result<(), SandboxError> {
        let _ = node;
        Ok(())
    }
    /// Makes a started replica replicate from its source.
    fn follow(&self, source: &Node, replica: &Node) -> Result<(), SandboxError>;
    /// What is wrong with the replica's replication threads or stream (None: all is well).
    fn replication_problem(&self, sb: &Sandbox, source: &Node, replica: &Node) -> Result<Option<String>, DbError>;
    /// Writes `token` where replicas of `node` will read it.
    fn write_marker(&self, node: &Node, token: &str) -> Result<(), DbError>;
    /// The token last written on the node's source, as the node sees it.
    fn read_marker(&self, node: &Node) -> Result<Option<String>, DbError>;
    /// Creates the `fairbench` database (on a primary: replicated).
    fn create_database(&self, node: &Node) -> Result<(), DbError>;
    fn has_database(&self, node: &Node) -> Result<bool, DbError>;
    /// Makes a replica a writable primary.
    fn promote(&self, node: &Node) -> Result<(), SandboxError>;
    /// `primary` or `replica`, as the running server says.
    fn role(&self, node: &Node) -> Result<&'static str, DbError>;
    /// The server answers a query.
    fn answers(&self, node: &Node) -> Result<(), DbError>;
}

/// The server's pid (from its pid file) and state.
pub fn process_of(engine: &dyn Engine, node: &Node) -> (Option<i32>, ProcessStatus) {
    let pid = process::read_pid(&engine.pid_file(node));
    let status = process::status(pid, engine.process_name(), &engine.process_dir(node));
    (pid.filter(|_| status != ProcessStatus::Stopped), status)
}

/// `name` in PATH or the usual system directories (sbin is often not in a user's PATH).
pub fn find_binary(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let system = ["/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin", "/sbin", "/bin"];
    std::env::split_paths(&path).chain(system.iter().map(PathBuf::from)).map(|d| d.join(name)).find(|p| is_exec(p))
}

pub fn is_exec(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

pub fn log_file(node: &Node) -> PathBuf {
    node.dir.join("server.log")
}

/// Polls the node until it answers; a server that exits or misses the deadline is reported
/// with its log's last lines.
pub fn await_answer(
    engine: &dyn Engine,
    node: &Node,
    mut child: Option<&mut std::process::Child>,
) -> Result<(), SandboxError> {
    let start = Instant::now();
    loop {
        let answer = engine.answers(node);
        if answer.is_ok() {
            return Ok(());
        }
        let log = log_file(node);
        if let Some(Ok(Some(status))) = child.as_mut().map(|c| c.try_wait()) {
            let tail = process::log_tail(&log, 3);
            return Err(SandboxError::Failed(format!(
                "{} exited while starting ({status}); the end of {}: {tail}",
                node.name,
                log.display()
            )));
        }
        if start.elapsed() >= START_DEADLINE {
            let tail = format!("{} (last attempt: {})", process::log_tail(&log, 3), answer.unwrap_err());
            let secs = START_DEADLINE.as_secs();
            return Err(SandboxError::NotUp { node: node.name.clone(), what: "answer".into(), secs, log, tail });
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The node's directory, created empty and owned by the server's user.
pub fn make_node_dir(node: &Node, user: Option<OsUser>) -> Result<(), SandboxError> {
    std::fs::create_dir_all(&node.dir).map_err(SandboxError::io("cannot create", &node.dir))?;
    match user {
        Some(u) => process::chown(&node.dir, u),
        None => Ok(()),
    }
}

/// A node's error in one line, naming it.
pub fn on(node: &Node, what: &str) -> impl FnOnce(DbError) -> SandboxError {
    let name = node.name.clone();
    let what = what.to_string();
    move |e| SandboxError::Failed(format!("{what} on {name}: {e}"))
}
