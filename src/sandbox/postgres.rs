//! PostgreSQL nodes: `initdb`, a `fairbench.conf` included by postgresql.conf (the node's
//! port, socket directory, replication settings and the sandbox's --set values), `pg_ctl`.
//! Replicas are `pg_basebackup -R` copies streaming through a replication slot. As root,
//! every binary runs as the `postgres` OS user (PostgreSQL refuses to run as root).

use super::engine::{await_answer, is_exec, log_file, make_node_dir, on, Engine, BENCH_USER, DATABASE};
use super::process::{self, OsUser};
use super::{sql, Node, Sandbox, SandboxError, START_DEADLINE};
use crate::db::postgres::PostgresDatabase;
use crate::db::DbError;
use std::path::PathBuf;
use std::time::Instant;

pub struct Postgres;

const BINARIES: [&str; 4] = ["initdb", "pg_ctl", "postgres", "pg_basebackup"];

impl Postgres {
    /// The newest /usr/lib/postgresql/VERSION/bin holding every binary, else PATH's.
    pub(super) fn bin_dir() -> Result<PathBuf, SandboxError> {
        let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
            .collect();
        versions.sort_by_key(|v| std::cmp::Reverse(v.0));
        let path = std::env::var_os("PATH").unwrap_or_default();
        let dirs = versions.into_iter().map(|(_, d)| d).chain(std::env::split_paths(&path));
        let mut found = dirs.filter(|d| BINARIES.iter().all(|b| is_exec(&d.join(b))));
        found.next().ok_or_else(|| SandboxError::Missing {
            what: format!("PostgreSQL's server binaries ({})", BINARIES.join(", ")),
            package: "postgresql",
        })
    }

    /// A binary run in the node's directory, as `postgres` when fairbench is root.
    fn command(&self, name: &str, node: &Node) -> Result<std::process::Command, SandboxError> {
        Ok(process::command(&Self::bin_dir()?.join(name), &node.dir, self.os_user()?))
    }

    fn db(node: &Node, database: &str) -> Result<PostgresDatabase, DbError> {
        let url = format!("postgres://postgres@{}:{}/{database}", node.host, node.port);
        PostgresDatabase::new(&sql::target(&url), &sql::options())
    }

    /// The node's `postgres` database as the administrator.
    pub(super) fn admin(node: &Node) -> Result<PostgresDatabase, DbError> {
        Self::db(node, "postgres")
    }

    /// The name a node goes by in process titles and in its source's pg_stat_replication.
    fn cluster_name(sb: &Sandbox, node: &Node) -> String {
        format!("{}-{}", sb.name, node.name)
    }

    /// The node's fairbench.conf: its own port and socket, replication on, the --set values.
    fn conf(sb: &Sandbox, node: &Node) -> String {
        let mut c =
            String::from("# Written by `fairbench sandbox`: this node's settings, then the sandbox's --set values.\n");
        let own = [
            ("port", node.port.to_string()),
            ("listen_addresses", node.host.clone()),
            ("unix_socket_directories", node.dir.display().to_string()),
            ("cluster_name", Self::cluster_name(sb, node)),
            ("wal_level", "replica".into()),
            ("max_wal_senders", "10".into()),
            ("max_replication_slots", "10".into()),
            ("hot_standby", "on".into()),
            // A replica whose source restarts reconnects within a second, not five.
            ("wal_retrieve_retry_interval", "1s".into()),
            // Durable whatever the installed defaults say; --set, written after, changes it.
            ("fsync", "on".into()),
            ("synchronous_commit", "on".into()),
        ];
        for (k, v) in
            own.iter().map(|(k, v)| (*k, v.as_str())).chain(sb.settings.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        {
            c.push_str(&format!("{k} = {}\n", sql::quote(v)));
        }
        c
    }

    fn write_conf(&self, sb: &Sandbox, node: &Node) -> Result<(), SandboxError> {
        let file = node.dir.join("data").join("fairbench.conf");
        std::fs::write(&file, Self::conf(sb, node)).map_err(SandboxError::io("cannot write", &file))?;
        match self.os_user()? {
            Some(u) => process::chown(&file, u),
            None => Ok(()),
        }
    }

    /// Once: postgresql.conf includes fairbench.conf (copied to replicas by pg_basebackup).
    fn include_conf(node: &Node) -> Result<(), SandboxError> {
        let file = node.dir.join("data").join("postgresql.conf");
        let mut text = std::fs::read_to_string(&file).map_err(SandboxError::io("cannot read", &file))?;
        text.push_str("\n# fairbench sandbox\ninclude_if_exists = 'fairbench.conf'\n");
        std::fs::write(&file, text).map_err(SandboxError::io("cannot write", &file))
    }

    /// A crashed server's lock files (postmaster.pid, the socket's) go once none of its
    /// processes is left. PostgreSQL would refuse to start while the pid they name exists,
    /// and a crashed postmaster nobody reaps yet (a container's init may be slow) is a zombie.
    pub(super) fn clear_stale_lock_files(&self, node: &Node) -> Result<(), SandboxError> {
        let file = self.pid_file(node);
        let data = node.data_dir();
        if process::status(process::read_pid(&file), self.process_name(), &data) != process::ProcessStatus::Stopped {
            return Ok(());
        }
        if !process::wait_until(START_DEADLINE, || process::server_pids(self.process_name(), &data).is_empty()) {
            let left = process::server_pids(self.process_name(), &data);
            return Err(SandboxError::Failed(format!("{} has processes left from before (pids {left:?})", node.name)));
        }
        for f in [file, node.dir.join(format!(".s.PGSQL.{}.lock", node.port))] {
            match std::fs::remove_file(&f) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(SandboxError::io("cannot remove", &f)(e))
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// pg_ctl start; after a crash of the whole server, a start may find the old shared
    /// memory still attached for a moment: tried again until the deadline.
    fn pg_ctl_start(&self, node: &Node) -> Result<(), SandboxError> {
        let begun = Instant::now();
        let log = log_file(node);
        loop {
            let left = START_DEADLINE.saturating_sub(begun.elapsed()).as_secs().max(1);
            let mut cmd = self.command("pg_ctl", node)?;
            cmd.args(["-D", "data", "-l", "server.log", "-w", "-t", &left.to_string(), "start"]);
            let Err(e) = process::run(cmd, &format!("pg_ctl start of {}", node.name)) else { return Ok(()) };
            let tail = process::log_tail(&log, 3);
            let in_time = begun.elapsed() < START_DEADLINE;
            if in_time && tail.contains("pre-existing shared memory block") {
                std::thread::sleep(std::time::Duration::from_millis(500));
                continue;
            }
            if in_time {
                let log = log.display();
                return Err(SandboxError::Failed(format!(
                    "{} did not start ({e}); the end of {log}: {tail}",
                    node.name
                )));
            }
            let secs = START_DEADLINE.as_secs();
            return Err(SandboxError::NotUp { node: node.name.clone(), what: "start".into(), secs, log, tail });
        }
    }
}

impl Engine for Postgres {
    fn name(&self) -> &'static str {
        "postgres"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["postgresql", "pg"]
    }
    fn default_port(&self) -> u16 {
        15432
    }
    fn process_name(&self) -> &'static str {
        "postgres"
    }

    fn os_user(&self) -> Result<Option<OsUser>, SandboxError> {
        if !process::is_root() {
            return Ok(None);
        }
        process::os_user("postgres").map(Some).ok_or_else(|| {
            SandboxError::Invalid(
                "PostgreSQL refuses to run as root and there is no OS user postgres: create it (`apt-get install postgresql` does)".into(),
            )
        })
    }

    fn proxy_check(&self, _reader: bool) -> String {
        "option pgsql-check user postgres".into()
    }

    fn check_installed(&self) -> Result<(), SandboxError> {
        Self::bin_dir().map(|_| ())
    }

    fn known_settings(&self, _settings: &[String]) -> Result<super::settings::KnownSettings, SandboxError> {
        super::settings::postgres(&Self::bin_dir()?.join("postgres"))
    }

    fn url(&self, host: &str, port: u16) -> String {
        format!("postgres://{BENCH_USER}@{host}:{port}/{DATABASE}")
    }

    fn pid_file(&self, node: &Node) -> PathBuf {
        node.dir.join("data").join("postmaster.pid")
    }

    fn init(&self, sb: &Sandbox, node: &Node) -> Result<(), SandboxError> {
        make_node_dir(node, self.os_user()?)?;
        let mut cmd = self.command("initdb", node)?;
        cmd.args(["-D", "data", "-U", "postgres", "--auth=trust", "-E", "UTF8"]);
        process::run(cmd, &format!("initdb for {}", node.name))?;
        Self::include_conf(node)?;
        self.write_conf(sb, node)
    }

    /// A copy of the running source, with a slot of its own there so that the source keeps
    /// the WAL the replica has not received yet (a stopped replica catches up).
    fn init_replica(&self, sb: &Sandbox, source: &Node, replica: &Node) -> Result<(), SandboxError> {
        make_node_dir(replica, self.os_user()?)?;
        let mut cmd = self.command("pg_basebackup", replica)?;
        let port = source.port.to_string();
        cmd.args(["-h", source.host.as_str(), "-p", &port, "-U", "postgres", "-D", "data", "-R", "-X", "stream"]);
        cmd.args(["-c", "fast", "-C", "-S", &replica.name]);
        process::run(cmd, &format!("pg_basebackup for {}", replica.name))?;
        self.write_conf(sb, replica)
    }

    fn start(&self, _sb: &Sandbox, node: &Node) -> Result<(), SandboxError> {
        self.clear_stale_lock_files(node)?;
        self.pg_ctl_start(node)?;
        await_answer(self, node, None)
    }

    /// pg_basebackup -R has made it a standby of its source already.
    fn follow(&self, _source: &Node, _replica: &Node) -> Result<(), SandboxError> {
        Ok(())
    }

    fn replication_problem(&self, sb: &Sandbox, source: &Node, replica: &Node) -> Result<Option<String>, DbError> {
        let name = Self::cluster_name(sb, replica);
        let q = format!("SELECT state FROM pg_stat_replication WHERE application_name = {}", sql::quote(&name));
        let state = sql::row(&Self::admin(source)?, &q)?.and_then(|r| r.get("state").cloned());
        Ok(match state.as_deref() {
            Some("streaming") => None,
            Some(s) => Some(format!("pg_stat_replication on {} says {s}, not streaming", source.name)),
            None => Some(format!("{name} is not in pg_stat_replication on {}", source.name)),
        })
    }

    fn write_marker(&self, node: &Node, token: &str) -> Result<(), DbError> {
        let upsert = format!(
            "INSERT INTO fairbench_sandbox_marker VALUES (1, {}) ON CONFLICT (id) DO UPDATE SET token = EXCLUDED.token",
            sql::quote(token)
        );
        let create = "CREATE TABLE IF NOT EXISTS fairbench_sandbox_marker (id int PRIMARY KEY, token text NOT NULL)";
        sql::exec(&Self::admin(node)?, &[create, &upsert])
    }

    fn read_marker(&self, node: &Node) -> Result<Option<String>, DbError> {
        let row = sql::row(&Self::admin(node)?, "SELECT token FROM fairbench_sandbox_marker WHERE id = 1")?;
        Ok(row.and_then(|r| r.get("token").cloned()))
    }

    fn create_database(&self, node: &Node) -> Result<(), DbError> {
        if self.has_database(node)? {
            return Ok(());
        }
        // The benchmark user owns the database (its tables are its own) and reads the
        // server's statistics (pg_monitor); not a superuser. Replicas get both by streaming.
        let role = format!(
            "DO $$BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{BENCH_USER}') THEN \
             CREATE ROLE {BENCH_USER} LOGIN NOSUPERUSER; END IF; END$$"
        );
        sql::exec(
            &Self::admin(node)?,
            &[
                &role,
                &format!("GRANT pg_monitor TO {BENCH_USER}"),
                &format!("CREATE DATABASE {DATABASE} OWNER {BENCH_USER}"),
            ],
        )
    }

    fn has_database(&self, node: &Node) -> Result<bool, DbError> {
        let q = format!("SELECT datname FROM pg_database WHERE datname = '{DATABASE}'");
        Ok(sql::row(&Self::admin(node)?, &q)?.is_some())
    }

    fn promote(&self, node: &Node) -> Result<(), SandboxError> {
        let db = Self::admin(node).map_err(on(node, "connecting"))?;
        let done = sql::row(&db, "SELECT pg_promote(true, 60) AS promoted").map_err(on(node, "promoting"))?;
        match done.as_ref().and_then(|r| r.get("promoted")).map(String::as_str) {
            Some("true") | Some("t") | Some("1") => Ok(()),
            other => Err(SandboxError::Failed(format!("pg_promote() on {} returned {other:?}", node.name))),
        }
    }

    fn role(&self, node: &Node) -> Result<&'static str, DbError> {
        sql::role(&Self::admin(node)?)
    }

    fn answers(&self, node: &Node) -> Result<(), DbError> {
        sql::answers(&Self::admin(node)?)
    }
}
