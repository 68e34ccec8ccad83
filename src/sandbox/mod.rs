//! Sandboxes: server instances started on this host from its installed server binaries, a
//! primary and N asynchronous replicas, for HA probes (kill -9, promote) and for the A/B of
//! one setting (two sandboxes that differ in one `--set`).
//!
//! Each sandbox is a directory `<home>/NAME/` holding `sandbox.json` (what fairbench knows
//! about it) and one directory per node (data, log, socket, pid file). Nothing runs in the
//! background on fairbench's side: the servers are detached processes, their state is read
//! from their pid files and /proc, their role from the servers themselves.
//!
//! One file per database ([`mariadb`], [`postgres`]) behind [`Engine`]; a new engine is one
//! new file plus a line in [`engines::ENGINES`].

mod engine;
mod engines;
mod etcd;
mod exec;
pub mod fault;
mod galera;
mod http;
mod lifecycle;
mod lines;
mod mariadb;
pub mod patroni;
mod patroni_settings;
pub mod patronictl;
mod ports;
mod postgres;
mod process;
pub mod proxy;
pub mod settings;
mod sql;
mod up;
mod verify;

pub use engine::Engine;
pub use engines::{engine, engine_managed};
pub use lifecycle::{down, kill, ls, promote, start};
pub use lines::NodeLine;
pub use mariadb::check_log_bin;
pub use process::{ProcessStatus, Signal};
pub use up::{parse_settings, up, UpOptions};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// How long a server may take to answer after it is started (crash recovery included).
pub(crate) const START_DEADLINE: std::time::Duration = std::time::Duration::from_secs(90);
/// How long a replica may take to show a marker written on its source.
pub(crate) const REPLICATION_DEADLINE: std::time::Duration = std::time::Duration::from_secs(30);
/// How long a server may take to stop after TERM before it gets KILL.
pub(crate) const STOP_DEADLINE: std::time::Duration = std::time::Duration::from_secs(30);

/// Everything a sandbox command can fail with; each is one line naming the problem.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("{what} not found on this host: install the server with `apt-get install {package}`")]
    Missing { what: String, package: &'static str },
    #[error("unknown engine {0:?}: use {1}")]
    UnknownEngine(String, String),
    #[error("port {port}{of} is taken: choose another with --port")]
    PortTaken { port: u16, of: String },
    #[error("sandbox {name} already exists in {dir}: remove it with `fairbench sandbox down {name}` first")]
    Exists { name: String, dir: PathBuf },
    #[error("no sandbox {name} in {home}{known}")]
    UnknownSandbox { name: String, home: PathBuf, known: String },
    #[error("sandbox {sandbox} has no node {node}: its nodes are {nodes}")]
    UnknownNode { sandbox: String, node: String, nodes: String },
    #[error("{0}")]
    Invalid(String),
    #[error("unknown manager {manager:?} for engine {engine}: use --manager patroni with --engine postgres")]
    UnknownManager { manager: String, engine: String },
    #[error("sandbox {sandbox} is managed by {manager}, which promotes by itself: use a `switchover NODE @T` or `failover NODE @T` fault (patronictl) instead")]
    Managed { sandbox: String, manager: &'static str },
    #[error(
        "--fault {step:?}: {action} needs a Patroni sandbox (`sandbox up --manager patroni`), and {sandbox} is not one"
    )]
    NeedsPatroni { step: String, action: &'static str, sandbox: String },
    #[error("{node} did not {what} within {secs} s; the end of {log}: {tail}")]
    NotUp { node: String, what: String, secs: u64, log: PathBuf, tail: String },
    #[error("{0}")]
    Failed(String),
    #[error("{what} {path}: {source}")]
    Io { what: &'static str, path: PathBuf, source: std::io::Error },
}

impl SandboxError {
    pub(crate) fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> SandboxError {
        let path = path.to_path_buf();
        move |source| SandboxError::Io { what, path, source }
    }
}

/// What fairbench last made of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Role {
    #[serde(rename = "primary")]
    Primary,
    #[serde(rename = "replica")]
    Replica,
    /// A primary one of whose replicas was promoted; left as it was (running or stopped).
    #[serde(rename = "former-primary")]
    FormerPrimary,
    /// A node of a multi-primary cluster (Galera): takes writes beside the others.
    #[serde(rename = "member")]
    Member,
}

impl Role {
    pub fn name(self) -> &'static str {
        match self {
            Role::Primary => "primary",
            Role::Replica => "replica",
            Role::FormerPrimary => "former-primary",
            Role::Member => "member",
        }
    }
}

/// One server of a sandbox.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Node {
    pub name: String,
    pub role: Role,
    /// The loopback address the node listens on: its own one when nodes are placed as on
    /// separate hosts (Patroni), else 127.0.0.1 (also for sandbox.json files from before).
    #[serde(default = "loopback")]
    pub host: String,
    pub port: u16,
    /// The node's own directory: data/, server.log, socket, pid file.
    pub dir: PathBuf,
    /// The node a replica replicates from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// MariaDB's server_id (unique in the sandbox).
    pub server_id: u32,
}

fn loopback() -> String {
    "127.0.0.1".into()
}

impl Node {
    /// Where the server keeps its data (and works: its processes' directory).
    pub fn data_dir(&self) -> PathBuf {
        self.dir.join("data")
    }
}

/// A sandbox as `sandbox.json` records it.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Sandbox {
    #[serde(skip)]
    pub name: String,
    /// The sandbox's directory.
    #[serde(skip)]
    pub dir: PathBuf,
    pub engine: String,
    /// The `--set` values every node's server runs with.
    pub settings: BTreeMap<String, String>,
    pub nodes: Vec<Node>,
    /// HAProxy in front of the nodes (`up --proxy`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy: Option<proxy::Proxy>,
    /// Patroni's ports and timings (`up --manager patroni`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patroni: Option<patroni_settings::Settings>,
}

/// `$FAIRBENCH_SANDBOX_HOME`, else `$HOME/.fairbench/sandboxes`; absolute (servers run in
/// their own directories and are given their paths on the command line).
pub fn home() -> Result<PathBuf, SandboxError> {
    let home = match std::env::var_os("FAIRBENCH_SANDBOX_HOME").filter(|h| !h.is_empty()) {
        Some(h) => PathBuf::from(h),
        None => std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(|h| PathBuf::from(h).join(".fairbench").join("sandboxes"))
            .ok_or_else(|| SandboxError::Invalid("neither FAIRBENCH_SANDBOX_HOME nor HOME is set".into()))?,
    };
    std::path::absolute(&home).map_err(SandboxError::io("cannot resolve", &home))
}

/// Names become directory names and server cluster names: letters, digits, `-` and `_`.
fn check_name(name: &str) -> Result<(), SandboxError> {
    let ok = !name.is_empty()
        && name.len() <= 40
        && !name.starts_with('-')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(SandboxError::Invalid(format!(
            "invalid sandbox name {name:?}: use up to 40 letters, digits, '-' and '_' (not starting with '-')"
        )))
    }
}

impl Sandbox {
    const FILE: &'static str = "sandbox.json";

    /// The sandbox NAME under `home`, as its sandbox.json records it.
    pub fn load(home: &Path, name: &str) -> Result<Sandbox, SandboxError> {
        check_name(name)?;
        let dir = home.join(name);
        let file = dir.join(Self::FILE);
        if !file.exists() {
            let known = names(home);
            let known = if known.is_empty() { String::new() } else { format!(" (sandboxes: {})", known.join(", ")) };
            return Err(SandboxError::UnknownSandbox { name: name.into(), home: home.to_path_buf(), known });
        }
        let text = std::fs::read_to_string(&file).map_err(SandboxError::io("cannot read", &file))?;
        let mut sb: Sandbox = serde_json::from_str(&text)
            .map_err(|e| SandboxError::Invalid(format!("{} is not a sandbox file: {e}", file.display())))?;
        sb.name = name.to_string();
        sb.dir = dir;
        Ok(sb)
    }

    /// Writes sandbox.json whole (a temporary file renamed over it: never half written).
    pub fn save(&self) -> Result<(), SandboxError> {
        let file = self.dir.join(Self::FILE);
        let tmp = self.dir.join(".sandbox.json.tmp");
        let text = serde_json::to_string_pretty(self).expect("sandbox serializes") + "\n";
        std::fs::write(&tmp, text).map_err(SandboxError::io("cannot write", &tmp))?;
        std::fs::rename(&tmp, &file).map_err(SandboxError::io("cannot write", &file))
    }

    pub fn node(&self, name: &str) -> Result<&Node, SandboxError> {
        self.nodes.iter().find(|n| n.name == name).ok_or_else(|| SandboxError::UnknownNode {
            sandbox: self.name.clone(),
            node: name.into(),
            nodes: self.nodes.iter().map(|n| n.name.as_str()).collect::<Vec<_>>().join(", "),
        })
    }

    /// The node `replica` replicates from, when it is a replica.
    pub(crate) fn source_of(&self, replica: &Node) -> Option<&Node> {
        let source = replica.source.as_deref().filter(|_| replica.role == Role::Replica)?;
        self.nodes.iter().find(|n| n.name == source)
    }
}

/// The sandboxes under `home`, by name.
pub fn names(home: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(home)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().join(Sandbox::FILE).exists())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    out.sort();
    out
}
