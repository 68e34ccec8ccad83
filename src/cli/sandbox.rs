//! `fairbench sandbox ...`: local server instances with replication (docs/sandbox.md).

use clap::{Args, Subcommand};

#[derive(Args, Debug, Clone)]
pub struct SandboxArgs {
    #[command(subcommand)]
    pub command: SandboxCommand,
}

#[derive(Subcommand, Debug, Clone)]
pub enum SandboxCommand {
    /// Create and start a primary and --replicas N replicas from the server binaries installed
    /// here, replication verified, with a database `fairbench` on the primary; prints each
    /// node's URL (a --target).
    Up(UpArgs),
    /// One line per node: sandbox, engine, node, role, URL, pid, status.
    Ls(LsArgs),
    /// Send a signal to a node's server (KILL simulates a crash, STOP pauses, CONT resumes).
    Kill(KillArgs),
    /// Start the stopped nodes (all by default) and wait until they answer; replicas resume
    /// replicating.
    Start(StartArgs),
    /// Make a replica a writable primary.
    Promote(PromoteArgs),
    /// Stop every node and delete the sandbox's directory.
    Down(NameArg),
}

#[derive(Args, Debug, Clone)]
pub struct UpArgs {
    /// The sandbox's name (letters, digits, - and _): its directory under the sandbox home
    /// ($FAIRBENCH_SANDBOX_HOME, else ~/.fairbench/sandboxes).
    pub name: String,
    /// mariadb, postgres, or galera (MariaDB with wsrep: every node writable).
    #[arg(long)]
    pub engine: String,
    /// A failover manager that runs the nodes: patroni (with --engine postgres; one etcd,
    /// each node on its own loopback address, all on one port).
    #[arg(long)]
    pub manager: Option<String>,
    /// Asynchronous replicas of the primary.
    #[arg(long, default_value_t = 0, conflicts_with = "nodes")]
    pub replicas: u32,
    /// Nodes in all: a primary and N-1 replicas, or N Galera members (galera's default: 3).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=10))]
    pub nodes: Option<u32>,
    /// A server setting for every node, e.g. --set innodb_flush_log_at_trx_commit=2 (repeatable;
    /// two sandboxes that differ in one --set are the A/B of that setting).
    #[arg(long = "set", value_name = "VAR=VALUE")]
    pub set: Vec<String>,
    /// The primary's port; replica N takes PORT+N (default: the first free block from 13306
    /// for mariadb, 15432 for postgres).
    #[arg(long)]
    pub port: Option<u16>,
    /// HAProxy in front of the nodes, the one endpoint an application would use: a writer
    /// port (the primary; the others as backups while it is down) and a reader port.
    #[arg(long)]
    pub proxy: bool,
}

#[derive(Args, Debug, Clone)]
pub struct LsArgs {
    /// One sandbox (default: every sandbox).
    pub name: Option<String>,
}

#[derive(Args, Debug, Clone)]
pub struct KillArgs {
    pub name: String,
    /// The node (repeatable): primary, replica1, ...
    #[arg(long, default_value = "primary")]
    pub node: Vec<String>,
    /// KILL, STOP, CONT or TERM.
    #[arg(long, default_value = "KILL")]
    pub signal: String,
}

#[derive(Args, Debug, Clone)]
pub struct StartArgs {
    pub name: String,
    /// The node (repeatable; default: every node).
    #[arg(long)]
    pub node: Vec<String>,
}

#[derive(Args, Debug, Clone)]
pub struct PromoteArgs {
    pub name: String,
    /// The replica to promote.
    #[arg(long)]
    pub node: String,
}

#[derive(Args, Debug, Clone)]
pub struct NameArg {
    pub name: String,
}
