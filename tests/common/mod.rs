//! Test helpers: databases of the tests' own (created and dropped here), the fairbench
//! binary, and the server's own counters read without going through fairbench.
#![allow(dead_code)]

pub mod ha;
pub mod sandbox;
pub mod study;

use mysql_async::prelude::Queryable;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};

static SEQ: AtomicU32 = AtomicU32::new(0);

pub fn mysql_base() -> String {
    std::env::var("FAIRBENCH_TEST_MYSQL")
        .unwrap_or_else(|_| "mysql://fairbench_test:fairbench_test@127.0.0.1:3306".into())
}

pub fn postgres_base() -> String {
    std::env::var("FAIRBENCH_TEST_POSTGRES")
        .unwrap_or_else(|_| "postgres://fairbench_test:fairbench_test@127.0.0.1:5432".into())
}

pub fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    Sqlite,
    Mysql,
    Postgres,
}

/// A database (or SQLite file) that exists only for one test.
pub struct TestDb {
    pub kind: Kind,
    pub name: String,
    pub url: String,
    pub dir: tempfile::TempDir,
}

fn unique_name(prefix: &str) -> String {
    format!("{prefix}_{}_{}", std::process::id(), SEQ.fetch_add(1, Ordering::SeqCst))
}

impl TestDb {
    pub fn new(kind: Kind) -> TestDb {
        TestDb::named(kind, "fbtest")
    }

    /// The same, its name starting with `prefix`.
    pub fn named(kind: Kind, prefix: &str) -> TestDb {
        let dir = tempfile::tempdir().unwrap();
        let name = unique_name(prefix);
        let url = match kind {
            Kind::Sqlite => format!("sqlite://{}", dir.path().join("test.db").display()),
            Kind::Mysql => {
                mysql_exec(&format!("CREATE DATABASE {name}"));
                format!("{}/{name}", mysql_base())
            }
            Kind::Postgres => {
                pg_exec(&format!("{}/postgres", postgres_base()), &format!("CREATE DATABASE {name}"));
                format!("{}/{name}", postgres_base())
            }
        };
        TestDb { kind, name, url, dir }
    }

    /// Runs fairbench with `--target` set to this database, in the test's own directory.
    pub fn fairbench(&self, args: &[&str]) -> Output {
        let mut all: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        all.push(format!("--target={}", self.url));
        fairbench_in(self.dir.path(), &all)
    }

    /// Runs fairbench and parses the result file it wrote to `--out`.
    pub fn run_json(&self, args: &[&str]) -> Value {
        let out = self.dir.path().join(format!("result-{}.json", SEQ.fetch_add(1, Ordering::SeqCst)));
        let mut all: Vec<&str> = args.to_vec();
        let out_arg = format!("--out={}", out.display());
        all.push(&out_arg);
        let o = self.fairbench(&all);
        assert!(o.status.success(), "fairbench {args:?} failed:\n{}", text(&o));
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap()
    }

    /// Executes SQL in this database directly (not through fairbench).
    pub fn exec(&self, sql: &str) {
        match self.kind {
            Kind::Mysql => mysql_exec_in(&self.url, sql),
            Kind::Postgres => pg_exec(&self.url, sql),
            Kind::Sqlite => {
                let path = self.url.trim_start_matches("sqlite://");
                rusqlite::Connection::open(path).unwrap().execute_batch(sql).unwrap();
            }
        }
    }

    /// COUNT(*) of a table, directly.
    pub fn count(&self, table: &str) -> i64 {
        self.count_sql(&format!("SELECT COUNT(*) FROM {table}"))
    }

    /// The one integer a query returns, directly.
    pub fn count_sql(&self, sql: &str) -> i64 {
        match self.kind {
            Kind::Mysql => rt().block_on(async {
                let mut c = mysql_async::Conn::from_url(&self.url).await.unwrap();
                let n: Option<i64> = c.query_first(sql).await.unwrap();
                c.disconnect().await.unwrap();
                n.unwrap()
            }),
            Kind::Postgres => rt().block_on(async {
                let (c, conn) = tokio_postgres::connect(&self.url, tokio_postgres::NoTls).await.unwrap();
                tokio::spawn(conn);
                c.query_one(sql, &[]).await.unwrap().get::<_, i64>(0)
            }),
            Kind::Sqlite => {
                let path = self.url.trim_start_matches("sqlite://");
                rusqlite::Connection::open(path).unwrap().query_row(sql, [], |r| r.get(0)).unwrap()
            }
        }
    }

    /// Table names in this database, directly.
    pub fn tables(&self) -> Vec<String> {
        let mut v: Vec<String> = match self.kind {
            Kind::Mysql => rt().block_on(async {
                let mut c = mysql_async::Conn::from_url(&self.url).await.unwrap();
                let v: Vec<String> = c.query("SHOW TABLES").await.unwrap();
                c.disconnect().await.unwrap();
                v
            }),
            Kind::Postgres => rt().block_on(async {
                let (c, conn) = tokio_postgres::connect(&self.url, tokio_postgres::NoTls).await.unwrap();
                tokio::spawn(conn);
                c.query("SELECT tablename::text FROM pg_tables WHERE schemaname = 'public'", &[])
                    .await
                    .unwrap()
                    .iter()
                    .map(|r| r.get(0))
                    .collect()
            }),
            Kind::Sqlite => {
                let path = self.url.trim_start_matches("sqlite://");
                let c = rusqlite::Connection::open(path).unwrap();
                let mut st = c.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").unwrap();
                st.query_map([], |r| r.get(0)).unwrap().map(|r| r.unwrap()).collect()
            }
        };
        v.sort();
        v
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        match self.kind {
            Kind::Mysql => mysql_exec(&format!("DROP DATABASE IF EXISTS {}", self.name)),
            Kind::Postgres => pg_exec(
                &format!("{}/postgres", postgres_base()),
                &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name),
            ),
            Kind::Sqlite => {}
        }
    }
}

pub fn fairbench_in(dir: &Path, args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fairbench"))
        .args(args)
        .current_dir(dir)
        .env_remove("FAIRBENCH_TARGET")
        .env_remove("MYSQL_PWD")
        .env_remove("PGPASSWORD")
        .env_remove("FAIRBENCH_PASSWORD")
        .output()
        .unwrap()
}

pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_fairbench"))
}

pub fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A MariaDB global variable's value, as the admin reads it.
pub fn mysql_global(name: &str) -> String {
    rt().block_on(async {
        let mut c = mysql_async::Conn::from_url(format!("{}/mysql", mysql_base())).await.unwrap();
        let v: Option<String> = c.query_first(format!("SELECT @@GLOBAL.{name}")).await.unwrap();
        c.disconnect().await.unwrap();
        v.unwrap()
    })
}

/// Sets a MariaDB global for as long as it lives; puts the old value back when dropped,
/// also when the test panics.
pub struct GlobalSetting {
    name: &'static str,
    original: String,
}

impl GlobalSetting {
    pub fn set(name: &'static str, value: &str) -> GlobalSetting {
        let original = mysql_global(name);
        mysql_exec(&format!("SET GLOBAL {name} = {value}"));
        GlobalSetting { name, original }
    }
}

impl Drop for GlobalSetting {
    fn drop(&mut self) {
        mysql_exec(&format!("SET GLOBAL {} = {}", self.name, self.original));
    }
}

pub fn mysql_exec(sql: &str) {
    mysql_exec_in(&format!("{}/mysql", mysql_base()), sql)
}

pub fn mysql_exec_in(url: &str, sql: &str) {
    rt().block_on(async {
        let mut c = mysql_async::Conn::from_url(url).await.unwrap_or_else(|e| panic!("MariaDB at {url}: {e}"));
        c.query_drop(sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
        c.disconnect().await.unwrap();
    })
}

pub fn pg_exec(url: &str, sql: &str) {
    rt().block_on(async {
        let (c, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .unwrap_or_else(|e| panic!("PostgreSQL at {url}: {e}"));
        tokio::spawn(conn);
        c.batch_execute(sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    })
}

/// MariaDB's own statement and aborted-connection counters (SHOW GLOBAL STATUS), read directly.
pub fn mysql_counters() -> BTreeMap<String, i64> {
    rt().block_on(async {
        // Settings given up front: otherwise the client would SELECT them on connect.
        let opts = mysql_async::OptsBuilder::from_opts(
            mysql_async::Opts::from_url(&format!("{}/mysql", mysql_base())).unwrap(),
        )
        .prefer_socket(false)
        .max_allowed_packet(Some(16 << 20))
        .wait_timeout(Some(28_800));
        let mut c = mysql_async::Conn::new(opts).await.unwrap();
        let mut rows: Vec<(String, String)> = c.query("SHOW GLOBAL STATUS LIKE 'Com\\_%'").await.unwrap();
        rows.extend(c.query::<(String, String), _>("SHOW GLOBAL STATUS LIKE 'Aborted\\_%'").await.unwrap());
        c.disconnect().await.unwrap();
        rows.into_iter().filter_map(|(k, v)| v.parse().ok().map(|v| (k, v))).collect()
    })
}

/// The statements one event of each workload sends, from sysbench-compat.md (the contract),
/// keyed by fairbench's statement names.
pub fn contract_mix(workload: &str) -> BTreeMap<&'static str, u64> {
    let reads =
        [("point_selects", 10), ("simple_ranges", 1), ("sum_ranges", 1), ("order_ranges", 1), ("distinct_ranges", 1)];
    let writes = [("index_updates", 1), ("non_index_updates", 1), ("deletes", 1), ("inserts", 1)];
    let trx = [("begin", 1), ("commit", 1)];
    let v: Vec<(&'static str, u64)> = match workload {
        "oltp_read_write" => trx.iter().chain(&reads).chain(&writes).copied().collect(),
        "oltp_read_only" => trx.iter().chain(&reads).copied().collect(),
        "oltp_write_only" => trx.iter().chain(&writes).copied().collect(),
        "oltp_point_select" => vec![("point_selects", 1)],
        "oltp_update_index" => vec![("index_updates", 1)],
        "oltp_update_non_index" => vec![("non_index_updates", 1)],
        "oltp_insert" => vec![("inserts", 1)],
        "oltp_delete" => vec![("deletes", 1)],
        w => panic!("no contract for {w}"),
    };
    v.into_iter().collect()
}

pub const WORKLOADS: [&str; 8] = [
    "oltp_read_write",
    "oltp_read_only",
    "oltp_write_only",
    "oltp_point_select",
    "oltp_update_index",
    "oltp_update_non_index",
    "oltp_insert",
    "oltp_delete",
];

/// fairbench's per-statement counts in a result equal `events` x the contract's mix.
pub fn assert_statement_counts(doc: &Value, workload: &str, events: u64) {
    let mix = contract_mix(workload);
    let statements = doc["statements"].as_object().unwrap();
    // A retried event (deadlock, serialization failure) sends some of its statements again:
    // the contract is exact per completed event, plus at most one event's mix per retry.
    let retries = doc["errors"]["total"].as_u64().unwrap();
    for (name, per_event) in &mix {
        let got = statements.get(*name).map(|s| s["count"].as_u64().unwrap()).unwrap_or(0);
        let exact = per_event * events;
        assert!(
            got >= exact && got - exact <= per_event * retries,
            "{workload}: {name}: {got} statements for {events} events of {per_event} and {retries} retries"
        );
    }
    assert_eq!(statements.len(), mix.len(), "{workload}: statements sent {:?}", statements.keys().collect::<Vec<_>>());
    assert_eq!(doc["conditions"]["run"]["events"].as_u64().unwrap(), events, "{workload}: events");
    assert_eq!(doc["stats"]["event"]["count"].as_u64().unwrap(), events);
}

/// Starts `fairbench ARGS --target=DB --out=OUT` in the background.
pub fn spawn_run(db: &TestDb, args: &[&str], out: &Path) -> std::process::Child {
    Command::new(bin())
        .args(args)
        .arg(format!("--target={}", db.url))
        .arg(format!("--out={}", out.display()))
        .current_dir(db.dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for a successful run and parses its result file.
pub fn finish(child: std::process::Child, out: &Path) -> Value {
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap()
}

/// Reads a spawned run's stderr until "Threads started!" (every client connected and
/// measuring); returns what was printed and the rest of the stream.
pub fn wait_until_measuring(
    child: &mut std::process::Child,
) -> (String, std::io::BufReader<std::process::ChildStderr>) {
    wait_for_stderr(child, "Threads started!")
}

/// Reads a spawned run's stderr until a line holding `needle` (e.g. "[ 1s ]": a measured
/// second has closed); returns what was printed and the rest of the stream.
pub fn wait_for_stderr(
    child: &mut std::process::Child,
    needle: &str,
) -> (String, std::io::BufReader<std::process::ChildStderr>) {
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    while !seen.contains(needle) {
        let mut line = String::new();
        if std::io::BufRead::read_line(&mut stderr, &mut line).unwrap() == 0 {
            break;
        }
        seen.push_str(&line);
    }
    (seen, stderr)
}

/// A run started in the background, returned once it measures: the server's counters
/// are read and "Threads started!" printed. Its stderr is drained until it ends.
pub struct Measuring {
    pub child: std::process::Child,
    drain: std::thread::JoinHandle<std::io::Result<u64>>,
}

impl Measuring {
    pub fn start(db: &TestDb, args: &[&str], out: &Path) -> Measuring {
        use std::io::BufRead;
        let mut child = Command::new(bin())
            .current_dir(db.dir.path())
            .args(args)
            .arg(format!("--target={}", db.url))
            .arg(format!("--out={}", out.display()))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        while !line.contains("Threads started!") {
            line.clear();
            assert!(stderr.read_line(&mut line).unwrap() > 0, "fairbench ended before measuring");
        }
        let drain = std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        Measuring { child, drain }
    }

    /// Stops it with Ctrl-C (unless `None`), waits, and returns its exit code.
    pub fn finish(mut self, signal: Option<i32>) -> Option<i32> {
        if let Some(sig) = signal {
            // SAFETY: signals our own child.
            unsafe { libc::kill(self.child.id() as i32, sig) };
        }
        let code = self.child.wait().unwrap().code();
        self.drain.join().unwrap().unwrap();
        code
    }
}
