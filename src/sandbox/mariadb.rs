//! MariaDB nodes: `mariadb-install-db` then `mariadbd --no-defaults` with every option on its
//! command line (rebuilt from sandbox.json at each start, so a replica restarts read-only and
//! replicating, a promoted one writable). Replication: binary log, GTID, `CHANGE MASTER`.

use super::engine::{await_answer, find_binary, log_file, make_node_dir, on, Engine, BENCH_USER, DATABASE};
use super::process::{self, OsUser};
use super::{sql, Node, Role, Sandbox, SandboxError};
use crate::db::mysql::MysqlDatabase;
use crate::db::DbError;
use std::path::PathBuf;

pub struct MariaDb;

/// The account replicas connect as (no password: the nodes listen on 127.0.0.1 only).
const REPL_USER: &str = "fairbench_repl";

impl MariaDb {
    pub(super) fn binary(name: &str) -> Result<PathBuf, SandboxError> {
        find_binary(name)
            .ok_or_else(|| SandboxError::Missing { what: format!("MariaDB's {name}"), package: "mariadb-server" })
    }

    fn db(node: &Node, database: &str) -> Result<MysqlDatabase, DbError> {
        let url = format!("mysql://root@127.0.0.1:{}/{database}", node.port);
        MysqlDatabase::new(&sql::target(&url), &sql::options())
    }

    pub(super) fn admin(node: &Node) -> Result<MysqlDatabase, DbError> {
        Self::db(node, "mysql")
    }

    /// mariadbd's options for this node: its own files and port, a server id, the binary log
    /// (unless `--set log_bin=OFF`), read-only when it is a replica, then the sandbox's --set
    /// values.
    pub(super) fn server_args(sb: &Sandbox, node: &Node) -> Vec<String> {
        let d = |f: &str| node.dir.join(f).display().to_string();
        let mut args = vec![
            "--no-defaults".to_string(),
            format!("--datadir={}", d("data")),
            format!("--port={}", node.port),
            format!("--socket={}", d("mysqld.sock")),
            format!("--pid-file={}", d("mysqld.pid")),
            format!("--log-error={}", d("server.log")),
            "--bind-address=127.0.0.1".into(),
            "--skip-name-resolve".into(),
            format!("--server-id={}", node.server_id),
            "--relay-log=relay-bin".into(),
            // Durable as production runs (MariaDB's own default is sync_binlog=0); --set,
            // later on the command line, changes it on purpose.
            "--sync-binlog=1".into(),
            "--innodb-flush-log-at-trx-commit=1".into(),
        ];
        if binary_log(&sb.settings) {
            // A promoted replica's binary log then holds everything: it can serve replicas.
            args.extend(["--log-bin=binlog".into(), "--log-slave-updates=ON".into()]);
        }
        if process::is_root() {
            args.push("--user=root".into());
        }
        if node.role == Role::Replica {
            args.push("--read-only=ON".into());
        }
        args.extend(sb.settings.iter().filter(|(k, _)| !is_log_bin(k)).map(|(k, v)| format!("--{k}={v}")));
        args
    }
}

/// `log_bin` (or `log-bin`): not a server variable one sets to a value, the sandbox's switch
/// for the binary log (mariadbd's --log-bin takes the log's file name).
fn is_log_bin(name: &str) -> bool {
    name.replace('-', "_") == "log_bin"
}

/// `log_bin`'s value as the sandbox reads it: ON (1) or OFF (0); anything else is no switch.
fn log_bin_on(value: &str) -> Option<bool> {
    match value.to_ascii_uppercase().as_str() {
        "ON" | "1" => Some(true),
        "OFF" | "0" => Some(false),
        _ => None,
    }
}

/// Whether the sandbox runs the binary log: yes unless `log_bin=OFF` (or 0).
fn binary_log(settings: &std::collections::BTreeMap<String, String>) -> bool {
    !settings.iter().any(|(k, v)| is_log_bin(k) && log_bin_on(v) == Some(false))
}

/// `log_bin=OFF|ON` only where it can hold: a single MariaDB server (replicas read the
/// primary's binary log; Galera needs it too), `engine` as named by `--engine`.
pub fn check_log_bin(engine: &str, replicas: u32, settings: &[String]) -> Result<(), SandboxError> {
    let Some(value) = settings.iter().filter_map(|s| s.split_once('=')).find(|(k, _)| is_log_bin(k)).map(|(_, v)| v)
    else {
        return Ok(());
    };
    let Some(on) = log_bin_on(value) else {
        return Err(SandboxError::Invalid(format!(
            "--set log_bin={value}: log_bin takes OFF (no binary log) or ON (the default)"
        )));
    };
    if engine != "mariadb" {
        return Err(SandboxError::Invalid(format!(
            "--set log_bin={value}: only a mariadb sandbox takes log_bin (a {engine} sandbox keeps the log its nodes replicate with): drop it"
        )));
    }
    if !on && replicas > 0 {
        return Err(SandboxError::Invalid(format!(
            "--set log_bin={value}: replicas read the primary's binary log: drop log_bin=OFF or the replicas"
        )));
    }
    Ok(())
}

impl MariaDb {
    /// System tables with a root that logs in from 127.0.0.1 without a password, owned by
    /// `user` (default: root when fairbench is root). Tried twice on a fresh data directory:
    /// under load (several bootstraps at once) the bootstrap server has been seen to fail its
    /// own script once and pass the next time.
    pub(super) fn install(node: &Node, user: Option<&str>) -> Result<(), SandboxError> {
        let data = node.dir.join("data");
        let install = || {
            let mut cmd = process::command(&Self::binary("mariadb-install-db")?, &node.dir, None::<OsUser>);
            cmd.arg("--no-defaults").arg(format!("--datadir={}", data.display())).args([
                "--auth-root-authentication-method=normal",
                "--skip-name-resolve",
                "--skip-test-db",
            ]);
            match user {
                Some(u) => cmd.arg(format!("--user={u}")),
                None if process::is_root() => cmd.arg("--user=root"),
                None => &mut cmd,
            };
            process::run(cmd, &format!("mariadb-install-db for {}", node.name)).map(|_| ())
        };
        install().or_else(|_| {
            let _ = std::fs::remove_dir_all(&data);
            install()
        })
    }

    /// The benchmark user's account: anything in the `fairbench` database, the server's
    /// state (PROCESS, SLAVE MONITOR), nothing that passes `read_only`.
    fn bench_user_sql() -> [String; 4] {
        let bench = format!("'{BENCH_USER}'@'127.0.0.1'");
        [
            // HAProxy's health check logs in as it, with no privilege at all (`--proxy`).
            "CREATE USER IF NOT EXISTS 'fairbench_check'@'127.0.0.1'".into(),
            format!("CREATE USER IF NOT EXISTS {bench}"),
            format!("GRANT ALL PRIVILEGES ON `{DATABASE}`.* TO {bench}"),
            format!("GRANT PROCESS, SLAVE MONITOR ON *.* TO {bench}"),
        ]
    }

    /// The benchmark user on `node` (a Galera cluster replicates it to its members).
    pub(super) fn create_bench_user(node: &Node) -> Result<(), DbError> {
        let sql = Self::bench_user_sql();
        sql::exec(&Self::admin(node)?, &sql.iter().map(String::as_str).collect::<Vec<_>>())
    }
}

impl Engine for MariaDb {
    fn name(&self) -> &'static str {
        "mariadb"
    }
    fn default_port(&self) -> u16 {
        13306
    }
    fn process_name(&self) -> &'static str {
        "mariadbd"
    }

    fn proxy_check(&self, _reader: bool) -> String {
        "option mysql-check user fairbench_check post-41".into()
    }

    fn check_installed(&self) -> Result<(), SandboxError> {
        Self::binary("mariadbd")?;
        Self::binary("mariadb-install-db").map(|_| ())
    }

    /// A loaded plugin's variables are listed only with the plugin loaded.
    fn known_settings(&self, settings: &[String]) -> Result<super::settings::KnownSettings, SandboxError> {
        let plugins = settings.iter().filter(|s| s.replace('-', "_").starts_with("plugin_load"));
        super::settings::mariadb(&Self::binary("mariadbd")?, &plugins.map(|s| format!("--{s}")).collect::<Vec<_>>())
    }

    fn url(&self, host: &str, port: u16) -> String {
        format!("mysql://{BENCH_USER}@{host}:{port}/{DATABASE}")
    }

    fn pid_file(&self, node: &Node) -> PathBuf {
        node.dir.join("mysqld.pid")
    }

    fn init(&self, _sb: &Sandbox, node: &Node) -> Result<(), SandboxError> {
        make_node_dir(node, None)?;
        Self::install(node, None)
    }

    /// Each replica has system tables of its own: replication starts from an empty GTID state.
    fn init_replica(&self, sb: &Sandbox, _source: &Node, replica: &Node) -> Result<(), SandboxError> {
        self.init(sb, replica)
    }

    fn start(&self, sb: &Sandbox, node: &Node) -> Result<(), SandboxError> {
        let mut cmd = process::command(&Self::binary("mariadbd")?, &node.dir, None);
        cmd.args(Self::server_args(sb, node));
        let mut child = process::spawn_detached(cmd, &log_file(node))?;
        await_answer(self, node, Some(&mut child))
    }

    /// The replication account and the benchmark user, on every node (any may be promoted);
    /// kept out of the binary log so that no node has transactions of its own in its GTID
    /// state. The benchmark user may do anything in the `fairbench` database and read the
    /// server's state (PROCESS, SLAVE MONITOR), nothing that passes `read_only`.
    fn bootstrap(&self, node: &Node) -> Result<(), SandboxError> {
        let db = Self::admin(node).map_err(on(node, "connecting"))?;
        let repl = format!("'{REPL_USER}'@'127.0.0.1'");
        let (create, grant) =
            (format!("CREATE USER IF NOT EXISTS {repl}"), format!("GRANT REPLICATION SLAVE ON *.* TO {repl}"));
        let bench = Self::bench_user_sql();
        let mut all = vec!["SET SESSION sql_log_bin = 0", create.as_str(), grant.as_str()];
        all.extend(bench.iter().map(String::as_str));
        sql::exec(&db, &all).map_err(on(node, "creating the replication and benchmark users"))
    }

    fn follow(&self, source: &Node, replica: &Node) -> Result<(), SandboxError> {
        let db = Self::admin(replica).map_err(on(replica, "connecting"))?;
        let change = format!(
            "CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = {}, MASTER_USER = '{REPL_USER}', \
             MASTER_PASSWORD = '', MASTER_USE_GTID = slave_pos, MASTER_CONNECT_RETRY = 1",
            source.port
        );
        sql::exec(&db, &["STOP SLAVE", &change, "SET GLOBAL read_only = ON", "START SLAVE"])
            .map_err(on(replica, "setting up replication"))
    }

    fn replication_problem(&self, _sb: &Sandbox, source: &Node, replica: &Node) -> Result<Option<String>, DbError> {
        let Some(s) = sql::row(&Self::admin(replica)?, "SHOW SLAVE STATUS")? else {
            return Ok(Some("SHOW SLAVE STATUS is empty: not a replica".into()));
        };
        let get = |k: &str| s.get(k).map(String::as_str).unwrap_or("");
        if get("Master_Port") != source.port.to_string() {
            return Ok(Some(format!("it replicates from port {}, not {}", get("Master_Port"), source.port)));
        }
        if get("Slave_IO_Running") == "Yes" && get("Slave_SQL_Running") == "Yes" {
            return Ok(None);
        }
        Ok(Some(format!(
            "Slave_IO_Running={}, Slave_SQL_Running={}, Last_IO_Error={:?}, Last_SQL_Error={:?}",
            get("Slave_IO_Running"),
            get("Slave_SQL_Running"),
            get("Last_IO_Error"),
            get("Last_SQL_Error")
        )))
    }

    fn write_marker(&self, node: &Node, token: &str) -> Result<(), DbError> {
        let insert = format!("REPLACE INTO fairbench_sandbox.marker VALUES (1, {})", sql::quote(token));
        sql::exec(
            &Self::admin(node)?,
            &[
                "CREATE DATABASE IF NOT EXISTS fairbench_sandbox",
                "CREATE TABLE IF NOT EXISTS fairbench_sandbox.marker (id INT PRIMARY KEY, token VARCHAR(64) NOT NULL) ENGINE=InnoDB",
                &insert,
            ],
        )
    }

    fn read_marker(&self, node: &Node) -> Result<Option<String>, DbError> {
        let row = sql::row(&Self::admin(node)?, "SELECT token FROM fairbench_sandbox.marker WHERE id = 1")?;
        Ok(row.and_then(|r| r.get("token").cloned()))
    }

    fn create_database(&self, node: &Node) -> Result<(), DbError> {
        sql::exec(&Self::admin(node)?, &[&format!("CREATE DATABASE IF NOT EXISTS {DATABASE}")])
    }

    fn has_database(&self, node: &Node) -> Result<bool, DbError> {
        let q = format!("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = '{DATABASE}'");
        Ok(sql::row(&Self::admin(node)?, &q)?.is_some())
    }

    fn promote(&self, node: &Node) -> Result<(), SandboxError> {
        let db = Self::admin(node).map_err(on(node, "connecting"))?;
        sql::exec(&db, &["STOP SLAVE", "RESET SLAVE ALL", "SET GLOBAL read_only = OFF"]).map_err(on(node, "promoting"))
    }

    fn role(&self, node: &Node) -> Result<&'static str, DbError> {
        sql::role(&Self::db(node, "mysql")?)
    }

    fn answers(&self, node: &Node) -> Result<(), DbError> {
        sql::answers(&Self::admin(node)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_server_binary_says_what_to_install() {
        let e = MariaDb::binary("mariadbd-that-no-host-has").unwrap_err().to_string();
        assert!(e.contains("mariadbd-that-no-host-has") && e.contains("apt-get install mariadb-server"), "{e}");
        assert_eq!(e.lines().count(), 1);
    }

    #[test]
    fn replicas_start_read_only_with_the_sandbox_settings() {
        let node = |name: &str, role| Node {
            name: name.into(),
            role,
            host: "127.0.0.1".into(),
            port: 13307,
            dir: PathBuf::from("/sb/x").join(name),
            source: None,
            server_id: 2,
        };
        let sb = Sandbox {
            name: "x".into(),
            dir: "/sb/x".into(),
            engine: "mariadb".into(),
            settings: [("innodb_flush_log_at_trx_commit".to_string(), "2".to_string())].into(),
            nodes: vec![],
            proxy: None,
            patroni: None,
        };
        let args = MariaDb::server_args(&sb, &node("replica1", Role::Replica));
        assert_eq!(args[0], "--no-defaults");
        assert!(args.contains(&"--read-only=ON".to_string()));
        assert!(args.contains(&"--server-id=2".to_string()));
        assert_eq!(args.last().unwrap(), "--innodb_flush_log_at_trx_commit=2");
        let args = MariaDb::server_args(&sb, &node("replica1", Role::Primary));
        assert!(!args.contains(&"--read-only=ON".to_string()));
        assert!(args.contains(&"--log-bin=binlog".to_string()) && args.contains(&"--sync-binlog=1".to_string()));
    }

    #[test]
    fn log_bin_off_runs_a_single_server_without_the_binary_log() {
        let sb = |v: &str| Sandbox {
            name: "x".into(),
            dir: "/sb/x".into(),
            engine: "mariadb".into(),
            settings: [("log_bin".to_string(), v.to_string())].into(),
            nodes: vec![],
            proxy: None,
            patroni: None,
        };
        let node = Node {
            name: "primary".into(),
            role: Role::Primary,
            host: "127.0.0.1".into(),
            port: 13306,
            dir: PathBuf::from("/sb/x/primary"),
            source: None,
            server_id: 1,
        };
        let off = MariaDb::server_args(&sb("OFF"), &node);
        assert!(
            !off.iter()
                .any(|a| a.starts_with("--log-bin") || a.starts_with("--log_bin") || a.contains("slave-updates")),
            "{off:?}"
        );
        let on = MariaDb::server_args(&sb("ON"), &node);
        assert!(on.contains(&"--log-bin=binlog".to_string()) && !on.iter().any(|a| a == "--log_bin=ON"), "{on:?}");
        assert!(check_log_bin("mariadb", 0, &["log_bin=OFF".into()]).is_ok());
        for (engine, replicas, set, says) in [
            ("mariadb", 1, "log_bin=OFF", "replicas read the primary's binary log"),
            ("galera", 0, "log_bin=OFF", "only a mariadb sandbox takes log_bin"),
            ("postgres", 0, "log-bin=ON", "only a mariadb sandbox takes log_bin"),
            ("mariadb", 0, "log_bin=binlog2", "log_bin takes OFF (no binary log) or ON"),
        ] {
            let e = check_log_bin(engine, replicas, &[set.into()]).unwrap_err().to_string();
            assert!(e.contains(says) && e.lines().count() == 1, "{e}");
        }
    }
}
