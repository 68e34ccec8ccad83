//! Galera clusters: MariaDB nodes with wsrep and galera-4, every node writable, each commit
//! certified by all of them. The first node to start with no other running bootstraps the
//! cluster (`--wsrep-new-cluster`); the others join it and receive its state by rsync (SST)
//! or from its write-set cache (IST). Each node takes four ports: SQL P+i, group
//! communication P+N+i, IST P+2N+i, SST P+3N+i (N nodes, i from 0).
//!
//! The servers run as the OS user `mysql` when fairbench is root: the rsync daemon of a state
//! transfer drops root's rights and could not write a root-owned data directory.

use super::engine::{await_answer, log_file, make_node_dir, on, Engine};
use super::mariadb::MariaDb;
use super::process::{self, OsUser, ProcessStatus};
use super::{sql, Node, Sandbox, SandboxError, START_DEADLINE};
use crate::db::DbError;
use std::path::{Path, PathBuf};

pub struct Galera;

/// Debian's galera-4 provider.
const PROVIDER: &str = "/usr/lib/galera/libgalera_smm.so";

impl Galera {
    /// Ports other than SQL: group communication, IST, SST.
    fn ports(sb: &Sandbox, node: &Node) -> (u16, u16, u16) {
        let n = sb.nodes.len() as u16;
        let i = sb.nodes.iter().position(|x| x.name == node.name).unwrap_or(0) as u16;
        let base = sb.nodes[0].port;
        (base + n + i, base + 2 * n + i, base + 3 * n + i)
    }

    /// mariadbd's options: MariaDB's own (durable, binary log), then wsrep's.
    fn server_args(sb: &Sandbox, node: &Node, bootstrap: bool) -> Vec<String> {
        let members: Vec<String> = sb.nodes.iter().map(|n| format!("127.0.0.1:{}", Self::ports(sb, n).0)).collect();
        let (gcomm, ist, sst) = Self::ports(sb, node);
        let mut args = MariaDb::server_args(sb, node);
        let user = args.iter().position(|a| a == "--user=root");
        if let Some(i) = user {
            args[i] = "--user=mysql".into();
        }
        let settings = args.split_off(args.len() - sb.settings.len());
        args.extend([
            "--binlog-format=ROW".to_string(),
            "--innodb-autoinc-lock-mode=2".into(),
            "--wsrep-on=ON".into(),
            format!("--wsrep-provider={PROVIDER}"),
            format!("--wsrep-cluster-name=fairbench-{}", sb.name),
            format!("--wsrep-cluster-address=gcomm://{}", members.join(",")),
            format!("--wsrep-node-name={}", node.name),
            "--wsrep-node-address=127.0.0.1".into(),
            format!(
                "--wsrep-provider-options=gmcast.listen_addr=tcp://127.0.0.1:{gcomm};ist.recv_addr=127.0.0.1:{ist}"
            ),
            "--wsrep-sst-method=rsync".into(),
            format!("--wsrep-sst-receive-address=127.0.0.1:{sst}"),
        ]);
        if bootstrap {
            args.push("--wsrep-new-cluster".into());
        }
        args.extend(settings);
        args
    }

    fn user() -> Result<Option<OsUser>, SandboxError> {
        if !process::is_root() {
            return Ok(None);
        }
        process::os_user("mysql").map(Some).ok_or_else(|| {
            SandboxError::Invalid(
                "Galera nodes run as the OS user mysql, and there is none: `apt-get install mariadb-server` creates it"
                    .into(),
            )
        })
    }

    /// Another node of the sandbox runs: this one joins it rather than bootstrapping.
    fn cluster_runs(&self, sb: &Sandbox, node: &Node) -> bool {
        sb.nodes
            .iter()
            .filter(|n| n.name != node.name)
            .any(|n| super::engine::process_of(self, n).1 == ProcessStatus::Running)
    }

    /// A node that bootstraps after a crash of the whole cluster must be marked safe to.
    fn mark_safe_to_bootstrap(node: &Node) -> Result<(), SandboxError> {
        let file = node.data_dir().join("grastate.dat");
        let Ok(text) = std::fs::read_to_string(&file) else { return Ok(()) };
        let text = text.replace("safe_to_bootstrap: 0", "safe_to_bootstrap: 1");
        std::fs::write(&file, text).map_err(SandboxError::io("cannot write", &file))
    }

    /// Waits until the node is a synced member of the primary component.
    fn await_synced(node: &Node) -> Result<(), SandboxError> {
        let Some(last) = process::wait_until_fine(START_DEADLINE, || Self::wsrep(node)) else { return Ok(()) };
        let (log, secs) = (log_file(node), START_DEADLINE.as_secs());
        let tail = format!("{} (last: {last})", process::log_tail(&log, 3));
        Err(SandboxError::NotUp { node: node.name.clone(), what: "join the cluster".into(), secs, log, tail })
    }

    /// What keeps the node from being a synced member (None: it is one).
    fn wsrep(node: &Node) -> Result<Option<String>, DbError> {
        let q = "SELECT (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_LOCAL_STATE_COMMENT') AS state, \
                 (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_CLUSTER_STATUS') AS status, \
                 (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_CLUSTER_SIZE') AS size";
        let row = sql::row(&MariaDb::admin(node)?, q)?.unwrap_or_default();
        let get = |k: &str| row.get(k).cloned().unwrap_or_default();
        Ok(match (get("state").as_str(), get("status").as_str()) {
            ("Synced", "Primary") => None,
            (state, status) => {
                Some(format!("wsrep state {state:?}, cluster status {status:?}, cluster size {}", get("size")))
            }
        })
    }
}

impl Engine for Galera {
    fn name(&self) -> &'static str {
        "galera"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["mariadb-galera"]
    }
    fn default_port(&self) -> u16 {
        13306
    }
    fn process_name(&self) -> &'static str {
        "mariadbd"
    }
    fn multi_primary(&self) -> bool {
        true
    }
    fn os_user(&self) -> Result<Option<OsUser>, SandboxError> {
        Self::user()
    }
    fn ports_per_node(&self) -> usize {
        4
    }

    fn proxy_check(&self, reader: bool) -> String {
        MariaDb.proxy_check(reader)
    }

    fn check_installed(&self) -> Result<(), SandboxError> {
        MariaDb.check_installed()?;
        if !Path::new(PROVIDER).exists() {
            return Err(SandboxError::Missing { what: format!("Galera's provider {PROVIDER}"), package: "galera-4" });
        }
        if super::engine::find_binary("rsync").is_none() {
            return Err(SandboxError::Missing { what: "rsync (Galera's state transfer)".into(), package: "rsync" });
        }
        Ok(())
    }

    fn known_settings(&self, settings: &[String]) -> Result<super::settings::KnownSettings, SandboxError> {
        MariaDb.known_settings(settings)
    }

    fn url(&self, host: &str, port: u16) -> String {
        MariaDb.url(host, port)
    }

    fn pid_file(&self, node: &Node) -> PathBuf {
        MariaDb.pid_file(node)
    }

    fn init(&self, _sb: &Sandbox, node: &Node) -> Result<(), SandboxError> {
        let user = Self::user()?;
        make_node_dir(node, user)?;
        MariaDb::install(node, user.map(|_| "mysql"))
    }

    /// A joiner's own data directory: replaced by the state transfer when it first joins.
    fn init_replica(&self, sb: &Sandbox, _source: &Node, node: &Node) -> Result<(), SandboxError> {
        self.init(sb, node)
    }

    fn start(&self, sb: &Sandbox, node: &Node) -> Result<(), SandboxError> {
        let bootstrap = !self.cluster_runs(sb, node);
        if bootstrap {
            Self::mark_safe_to_bootstrap(node)?;
        }
        // mariadbd drops to the mysql user and appends to the log the launcher opened.
        let log = log_file(node);
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .map_err(SandboxError::io("cannot open", &log))?;
        if let Some(u) = Self::user()? {
            process::chown(&log, u)?;
        }
        let mut cmd = process::command(&MariaDb::binary("mariadbd")?, &node.dir, None);
        cmd.args(Self::server_args(sb, node, bootstrap));
        let mut child = process::spawn_detached(cmd, &log_file(node))?;
        await_answer(self, node, Some(&mut child))?;
        Self::await_synced(node)
    }

    /// The benchmark user, created on the first node (the others receive it with the state).
    fn bootstrap(&self, node: &Node) -> Result<(), SandboxError> {
        MariaDb::create_bench_user(node).map_err(on(node, "creating the benchmark user"))
    }

    /// Members join at start: nothing to set up.
    fn follow(&self, _source: &Node, _replica: &Node) -> Result<(), SandboxError> {
        Ok(())
    }

    fn replication_problem(&self, _sb: &Sandbox, _source: &Node, replica: &Node) -> Result<Option<String>, DbError> {
        Self::wsrep(replica)
    }

    fn write_marker(&self, node: &Node, token: &str) -> Result<(), DbError> {
        MariaDb.write_marker(node, token)
    }

    fn read_marker(&self, node: &Node) -> Result<Option<String>, DbError> {
        MariaDb.read_marker(node)
    }

    fn create_database(&self, node: &Node) -> Result<(), DbError> {
        MariaDb.create_database(node)
    }

    fn has_database(&self, node: &Node) -> Result<bool, DbError> {
        MariaDb.has_database(node)
    }

    fn promote(&self, node: &Node) -> Result<(), SandboxError> {
        Err(SandboxError::Invalid(format!(
            "{} is a Galera member: every member takes writes, none is promoted",
            node.name
        )))
    }

    fn role(&self, node: &Node) -> Result<&'static str, DbError> {
        MariaDb.role(node)
    }

    fn answers(&self, node: &Node) -> Result<(), DbError> {
        MariaDb.answers(node)
    }
}
