//! PostgreSQL run by Patroni (`up --engine postgres --manager patroni`): one etcd (see
//! [`super::etcd`]), one Patroni per node with its config `<node>/patroni.yml`, scope = the
//! sandbox's name. Patroni bootstraps the first node (initdb), clones the others
//! (pg_basebackup), elects the leader and fails over by itself; `use_pg_rewind` lets a
//! killed old leader rejoin as a replica.
//!
//! Nodes are placed as on separate hosts: each on its own loopback address (127.0.0.2, ...),
//! all on the same PostgreSQL port and the same REST API port. As root, Patroni and so
//! PostgreSQL run as the OS user `postgres`.

use super::engine::{await_answer, find_binary, log_file, make_node_dir, Engine};
pub use super::patroni_settings::Settings;
use super::postgres::Postgres;
use super::process::{self, OsUser, ProcessStatus, Signal};
use super::{http, sql, Node, Sandbox, SandboxError, START_DEADLINE};
use crate::db::DbError;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub struct Patroni;

/// The sandbox's Patroni settings (a sandbox.json without them is not a Patroni sandbox).
pub fn settings(sb: &Sandbox) -> Result<&Settings, SandboxError> {
    sb.patroni.as_ref().ok_or_else(|| SandboxError::Invalid(format!("sandbox {} is not run by Patroni", sb.name)))
}

/// A node's Patroni configuration file.
pub fn config_path(node: &Node) -> PathBuf {
    node.dir.join("patroni.yml")
}

/// The replication role Patroni's bootstrap creates (no password: trust on 127.0.0.0/8).
const REPLICATION_USER: &str = "replicator";

/// `patroni`, `patronictl` or `etcd`, else the packages to install.
pub(super) fn binary(name: &'static str) -> Result<PathBuf, SandboxError> {
    find_binary(name).ok_or(SandboxError::Missing { what: name.into(), package: "patroni etcd-server" })
}

/// The cluster-wide PostgreSQL settings (Patroni keeps them in etcd): durable, replication
/// on, then the sandbox's --set values.
fn cluster_parameters(sb: &Sandbox) -> serde_json::Map<String, serde_json::Value> {
    let own = [
        ("wal_level", "replica"),
        ("hot_standby", "on"),
        ("max_wal_senders", "10"),
        ("max_replication_slots", "10"),
        ("wal_log_hints", "on"),
        ("wal_retrieve_retry_interval", "1s"),
        ("fsync", "on"),
        ("synchronous_commit", "on"),
    ];
    let own = own.iter().map(|(k, v)| (k.to_string(), json!(v)));
    own.chain(sb.settings.iter().map(|(k, v)| (k.clone(), json!(v)))).collect()
}

/// patroni.yml, written as JSON (YAML's subset: no quoting to get wrong).
fn config(sb: &Sandbox, s: &Settings, node: &Node, bin_dir: &Path) -> serde_json::Value {
    let rest = format!("{}:{}", node.host, s.rest_port);
    let pg = format!("{}:{}", node.host, node.port);
    let dir = node.dir.display().to_string();
    json!({
        "scope": sb.name,
        "namespace": "/fairbench/",
        "name": node.name,
        "restapi": { "listen": rest, "connect_address": rest },
        "etcd3": { "hosts": format!("127.0.0.1:{}", s.etcd_client_port) },
        "bootstrap": {
            "dcs": {
                "ttl": s.ttl_s, "loop_wait": s.loop_wait_s, "retry_timeout": s.retry_timeout_s,
                "maximum_lag_on_failover": 1048576,
                "postgresql": { "use_pg_rewind": true, "use_slots": true, "parameters": cluster_parameters(sb) },
            },
            "initdb": [{ "encoding": "UTF8" }, { "auth": "trust" }],
        },
        "postgresql": {
            "listen": pg, "connect_address": pg,
            "data_dir": node.data_dir(), "bin_dir": bin_dir, "pgpass": node.dir.join("pgpass"),
            "authentication": {
                "superuser": { "username": "postgres" },
                "replication": { "username": REPLICATION_USER },
            },
            "parameters": {
                "unix_socket_directories": dir, "logging_collector": "on",
                "log_directory": dir, "log_filename": "postgresql.log",
            },
            "pg_hba": [
                "local all all trust",
                "host all all 127.0.0.0/8 trust",
                "host replication all 127.0.0.0/8 trust",
            ],
        },
        "watchdog": { "mode": "off" },
    })
}

/// One member as Patroni reports it.
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
pub struct Member {
    pub name: String,
    /// `leader`, `replica` or `sync_standby`.
    pub role: String,
    /// `running`, `streaming`, `stopped`, `starting`, ...
    #[serde(default)]
    pub state: String,
    #[serde(default)]
    pub timeline: Option<u64>,
    /// Bytes behind the leader, or `unknown` (a replica not streaming yet).
    #[serde(default)]
    pub lag: Option<serde_json::Value>,
}

impl Member {
    /// A replica that streams on the leader's timeline (what Patroni wants of a candidate).
    fn caught_up(&self, leader: &Member) -> bool {
        let lag_known = self.lag.as_ref().is_some_and(serde_json::Value::is_u64);
        let streams = self.state == "running" || self.state == "streaming"; // 3.0.2 says running
        streams && lag_known && self.timeline == leader.timeline
    }
}

#[derive(serde::Deserialize)]
struct Cluster {
    members: Vec<Member>,
}

/// The members as the first node whose REST API answers reports them.
pub fn members(sb: &Sandbox) -> Result<Vec<Member>, SandboxError> {
    let s = settings(sb)?;
    let mut last = String::from("no node");
    for node in &sb.nodes {
        match http::get(&node.host, s.rest_port, "/cluster", Duration::from_secs(2)) {
            Ok((200, body)) => match serde_json::from_str::<Cluster>(&body) {
                Ok(c) => return Ok(c.members),
                Err(e) => last = format!("{}'s /cluster is not Patroni's: {e}", node.name),
            },
            Ok((status, _)) => last = format!("{}'s /cluster answered {status}", node.name),
            Err(e) => last = format!("{}:{}: {e}", node.host, s.rest_port),
        }
    }
    Err(SandboxError::Failed(format!("no Patroni REST API of sandbox {} answers ({last})", sb.name)))
}

/// The sandbox's current leader as Patroni says (None while it has none).
pub fn leader(sb: &Sandbox) -> Result<Option<String>, SandboxError> {
    Ok(members(sb)?.into_iter().find(|m| m.role == "leader").map(|m| m.name))
}

/// Whether `node` leads or has caught up with the leader, as Patroni reports it.
fn joined(sb: &Sandbox, node: &Node) -> bool {
    let Ok(members) = members(sb) else { return false };
    let Some(leader) = members.iter().find(|m| m.role == "leader") else { return false };
    leader.name == node.name || members.iter().any(|m| m.name == node.name && m.caught_up(leader))
}

impl Patroni {
    fn write_config(&self, sb: &Sandbox, node: &Node) -> Result<(), SandboxError> {
        make_node_dir(node, self.os_user()?)?;
        let config = config(sb, settings(sb)?, node, &Postgres::bin_dir()?);
        let text = serde_json::to_string_pretty(&config).expect("config serializes") + "\n";
        let file = config_path(node);
        std::fs::write(&file, text).map_err(SandboxError::io("cannot write", &file))?;
        match self.os_user()? {
            Some(u) => process::chown(&file, u),
            None => Ok(()),
        }
    }

    /// The node's postmaster (Patroni starts it detached: it outlives a killed Patroni).
    fn postmaster(node: &Node) -> Option<i32> {
        let pid = process::read_pid(&node.data_dir().join("postmaster.pid"));
        (process::status(pid, "postgres", &node.data_dir()) != ProcessStatus::Stopped).then_some(pid).flatten()
    }

    /// Waits until Patroni's REST API says PostgreSQL runs (`GET /health`: 200).
    fn await_healthy(node: &Node, s: &Settings) -> Result<(), SandboxError> {
        let health = || http::get(&node.host, s.rest_port, "/health", Duration::from_secs(1));
        if process::wait_until(START_DEADLINE, || health().is_ok_and(|(status, _)| status == 200)) {
            return Ok(());
        }
        let (log, secs) = (log_file(node), START_DEADLINE.as_secs());
        let tail = process::log_tail(&log, 3);
        Err(SandboxError::NotUp { node: node.name.clone(), what: "be healthy in Patroni".into(), secs, log, tail })
    }
}

impl Engine for Patroni {
    fn name(&self) -> &'static str {
        "postgres"
    }
    fn aliases(&self) -> &'static [&'static str] {
        Postgres.aliases()
    }
    fn manager(&self) -> Option<&'static str> {
        Some("patroni")
    }
    fn manager_settings(&self, first_port: u16) -> Option<Settings> {
        Some(Settings::new(first_port))
    }
    fn spread(&self) -> bool {
        true
    }
    /// PostgreSQL, Patroni's REST API, etcd's client and peer ports.
    fn ports_per_node(&self) -> usize {
        4
    }
    fn start_shared(&self, sb: &Sandbox) -> Result<(), SandboxError> {
        let s = settings(sb)?;
        let ports = super::etcd::Ports { client: s.etcd_client_port, peer: s.etcd_peer_port };
        super::etcd::start(sb, &binary("etcd")?, ports).map(|_| ())
    }

    /// A postmaster whose Patroni is gone (killed, or it died), then etcd.
    fn stop_shared(&self, sb: &Sandbox) -> Result<Vec<String>, SandboxError> {
        let mut out = Vec::new();
        for node in &sb.nodes {
            if let Some(pid) = Self::postmaster(node) {
                process::send(pid, Signal::Kill, "postgres", &node.data_dir())?;
                process::wait_until(Duration::from_secs(10), || Self::postmaster(node).is_none());
                out.push(format!("Stopped {}'s PostgreSQL left without Patroni (SIGKILL)", node.name));
            }
        }
        if super::etcd::stop(sb)? {
            out.push("Stopped etcd".into());
        }
        Ok(out)
    }
    fn default_port(&self) -> u16 {
        Postgres.default_port()
    }
    fn process_name(&self) -> &'static str {
        "patroni"
    }
    fn process_dir(&self, node: &Node) -> PathBuf {
        node.dir.clone()
    }

    /// A kill, pause or resume reaches Patroni and its PostgreSQL: a host that dies or
    /// hangs. TERM goes to Patroni, which stops PostgreSQL itself.
    fn signal(&self, node: &Node, pid: i32, signal: Signal) -> Result<(), SandboxError> {
        process::send(pid, signal, "patroni", &node.dir)?;
        match Self::postmaster(node) {
            Some(pm) if signal != Signal::Term => process::send(pm, signal, "postgres", &node.data_dir()),
            _ => Ok(()),
        }
    }
    fn os_user(&self) -> Result<Option<OsUser>, SandboxError> {
        Postgres.os_user()
    }

    /// Patroni's REST API knows each node's role: the writer asks for the leader, the reader
    /// for replicas.
    fn proxy_check(&self, reader: bool) -> String {
        let path = if reader { "/replica" } else { "/primary" };
        format!("option httpchk GET {path}\n    http-check expect status 200")
    }
    fn proxy_check_port(&self, sb: &Sandbox) -> Option<u16> {
        sb.patroni.as_ref().map(|s| s.rest_port)
    }

    fn check_installed(&self) -> Result<(), SandboxError> {
        Postgres.check_installed()?;
        binary("patroni")?;
        binary("patronictl")?;
        binary("etcd").map(|_| ())
    }
    fn known_settings(&self, settings: &[String]) -> Result<super::settings::KnownSettings, SandboxError> {
        Postgres.known_settings(settings)
    }
    fn url(&self, host: &str, port: u16) -> String {
        Postgres.url(host, port)
    }
    fn pid_file(&self, node: &Node) -> PathBuf {
        node.dir.join("patroni.pid")
    }

    /// Patroni's config; Patroni runs initdb at the first start.
    fn init(&self, sb: &Sandbox, node: &Node) -> Result<(), SandboxError> {
        self.write_config(sb, node)
    }
    /// Patroni's config; Patroni clones the leader at the first start.
    fn init_replica(&self, sb: &Sandbox, _source: &Node, replica: &Node) -> Result<(), SandboxError> {
        self.write_config(sb, replica)
    }

    /// Starts Patroni, which starts (or bootstraps, or clones, or rewinds) PostgreSQL; waits
    /// until PostgreSQL answers and Patroni says it is healthy.
    fn start(&self, sb: &Sandbox, node: &Node) -> Result<(), SandboxError> {
        let s = settings(sb)?;
        Postgres.clear_stale_lock_files(node)?;
        let mut cmd = process::command(&binary("patroni")?, &node.dir, self.os_user()?);
        cmd.arg(config_path(node));
        let mut child = process::spawn_detached(cmd, &log_file(node))?;
        let pid = self.pid_file(node);
        std::fs::write(&pid, format!("{}\n", child.id())).map_err(SandboxError::io("cannot write", &pid))?;
        await_answer(self, node, Some(&mut child))?;
        Self::await_healthy(node, s)?;
        if process::wait_until(START_DEADLINE, || joined(sb, node)) {
            return Ok(());
        }
        let (log, secs) = (log_file(node), START_DEADLINE.as_secs());
        let tail = process::log_tail(&log, 3);
        Err(SandboxError::NotUp { node: node.name.clone(), what: "catch up with the leader".into(), secs, log, tail })
    }
    /// Patroni made it a replica of the leader.
    fn follow(&self, _source: &Node, _replica: &Node) -> Result<(), SandboxError> {
        Ok(())
    }

    /// Patroni names each replica's stream after its member name.
    fn replication_problem(&self, _sb: &Sandbox, source: &Node, replica: &Node) -> Result<Option<String>, DbError> {
        let q = format!("SELECT state FROM pg_stat_replication WHERE application_name = {}", sql::quote(&replica.name));
        let state = sql::row(&Postgres::admin(source)?, &q)?.and_then(|r| r.get("state").cloned());
        Ok(match state.as_deref() {
            Some("streaming") => None,
            Some(s) => Some(format!("pg_stat_replication on {} says {s}, not streaming", source.name)),
            None => Some(format!("{} is not in pg_stat_replication on {}", replica.name, source.name)),
        })
    }
    fn write_marker(&self, node: &Node, token: &str) -> Result<(), DbError> {
        Postgres.write_marker(node, token)
    }
    fn read_marker(&self, node: &Node) -> Result<Option<String>, DbError> {
        Postgres.read_marker(node)
    }
    fn create_database(&self, node: &Node) -> Result<(), DbError> {
        Postgres.create_database(node)
    }
    fn has_database(&self, node: &Node) -> Result<bool, DbError> {
        Postgres.has_database(node)
    }
    /// Refused: Patroni promotes by itself (`lifecycle::promote` refuses before this).
    fn promote(&self, node: &Node) -> Result<(), SandboxError> {
        Err(SandboxError::Invalid(format!(
            "Patroni promotes {} by itself: use a `switchover {0} @T` or `failover {0} @T` fault",
            node.name
        )))
    }
    fn role(&self, node: &Node) -> Result<&'static str, DbError> {
        Postgres.role(node)
    }
    fn answers(&self, node: &Node) -> Result<(), DbError> {
        Postgres.answers(node)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::{proxy, Role};

    fn sandbox() -> Sandbox {
        let node = |i: usize, name: &str| Node {
            name: name.into(),
            role: if i == 0 { Role::Primary } else { Role::Replica },
            host: format!("127.0.0.{}", i + 2),
            port: 15432,
            dir: PathBuf::from("/sb/pat").join(name),
            source: None,
            server_id: i as u32 + 1,
        };
        Sandbox {
            name: "pat".into(),
            dir: "/sb/pat".into(),
            engine: "postgres".into(),
            settings: Default::default(),
            nodes: vec![node(0, "primary"), node(1, "replica1")],
            proxy: Some(proxy::Proxy { writer_port: 15436, reader_port: 15437 }),
            patroni: Patroni.manager_settings(15432),
        }
    }

    #[test]
    fn a_missing_tool_names_the_packages_in_one_line() {
        let e = binary("patroni-that-no-host-has").unwrap_err().to_string();
        assert!(e.contains("patroni-that-no-host-has") && e.contains("apt-get install patroni etcd-server"), "{e}");
        assert_eq!(e.lines().count(), 1);
    }

    #[test]
    fn timings_keep_patronis_rule() {
        let s = Settings::new(15432);
        assert!(s.loop_wait_s + 2 * s.retry_timeout_s <= s.ttl_s, "{s:?}");
        assert_eq!((s.rest_port, s.etcd_client_port, s.etcd_peer_port), (15433, 15434, 15435));
    }

    #[test]
    fn the_proxy_asks_patronis_rest_api_on_every_node() {
        let sb = sandbox();
        let cfg = proxy::config(&sb, &Patroni, sb.proxy.as_ref().unwrap());
        let (writer, reader) = cfg.split_once("listen reader").unwrap();
        assert!(writer.contains("option httpchk GET /primary\n    http-check expect status 200"), "{cfg}");
        assert!(reader.contains("option httpchk GET /replica"), "{cfg}");
        for section in [writer, reader] {
            assert!(section.contains("server primary 127.0.0.2:15432 check port 15433\n"), "{cfg}");
            assert!(section.contains("server replica1 127.0.0.3:15432 check port 15433\n"), "{cfg}");
        }
        assert!(!cfg.contains("backup"), "{cfg}");
    }

    #[test]
    fn a_node_listens_on_its_own_address() {
        let sb = sandbox();
        let c = config(&sb, sb.patroni.as_ref().unwrap(), &sb.nodes[1], Path::new("/usr/lib/postgresql/15/bin"));
        assert_eq!(c["postgresql"]["listen"], "127.0.0.3:15432");
        assert_eq!(c["restapi"]["listen"], "127.0.0.3:15433");
        assert_eq!(c["etcd3"]["hosts"], "127.0.0.1:15434");
        assert_eq!(c["bootstrap"]["dcs"]["postgresql"]["use_pg_rewind"], true);
        assert_eq!(Patroni.url("127.0.0.3", 15432), "postgres://fairbench@127.0.0.3:15432/fairbench");
    }
}
