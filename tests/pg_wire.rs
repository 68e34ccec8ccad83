//! The lean PostgreSQL client (pg_wire) against real servers: types round trip in both
//! modes (prepared statements and plain text queries), SQLSTATEs map as the runner expects,
//! COPY FROM STDIN, a Unix socket, and MD5, SCRAM-SHA-256 and cleartext authentication
//! against a private cluster (initdb in a temporary directory; the shared server's
//! pg_hba.conf and passwords are never touched).

mod common;
use common::*;
use fairbench::db::postgres::PostgresDatabase;
use fairbench::db::{ConnectOptions, Connection, Database, DbError, ErrorCode, Param, TargetUrl, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

fn open(url: &str, options: ConnectOptions) -> PostgresDatabase {
    PostgresDatabase::new(&TargetUrl::parse(url, |_| None).unwrap(), &options).unwrap()
}

fn local<F: std::future::Future>(f: F) -> F::Output {
    rt().block_on(tokio::task::LocalSet::new().run_until(f))
}

fn sqlstate(e: &DbError) -> &str {
    match &e.code {
        ErrorCode::Sqlstate(s) => s,
        _ => "",
    }
}

const TYPED: &str = "SELECT ?::int2, ?::int4, ?::int8, ?::float4, ?::float8, ?::text, ?::varchar, ?::bpchar, \
                     ?::bool, ?::bytea, ?::numeric, ?::int4, ?::mood";

/// Every type the seam supports, both modes, the same values back.
#[test]
fn types_round_trip_in_both_modes() {
    let db = TestDb::new(Kind::Postgres);
    db.exec("CREATE TYPE mood AS ENUM ('ok', 'sad')");
    let params = [
        Param::Int(-7),
        Param::Int(1 << 30),
        Param::Int(-(1 << 40)),
        Param::Float(2.5),
        Param::Float(-1e300),
        Param::Text("héllo 'quoted' \\ back"),
        Param::Text("v"),
        Param::Text("ab"),
        Param::Int(1),
        Param::Bytes(&[0, 1, 255, b'\\']),
        Param::Text("-12.50"),
        Param::Null,
        Param::Text("sad"),
    ];
    let expected = vec![
        Value::Int(-7),
        Value::Int(1 << 30),
        Value::Int(-(1 << 40)),
        Value::Float(2.5),
        Value::Float(-1e300),
        Value::Text("héllo 'quoted' \\ back".into()),
        Value::Text("v".into()),
        Value::Text("ab".into()),
        Value::Int(1),
        Value::Bytes(vec![0, 1, 255, b'\\']),
        Value::Text("-12.50".into()),
        Value::Null,
        Value::Text("sad".into()),
    ];
    for prepared_statements in [true, false] {
        let pg = open(&db.url, ConnectOptions { prepared_statements, ..ConnectOptions::default() });
        local(async {
            let mut c = pg.connect().await.unwrap();
            let st = c.prepare(TYPED).await.unwrap();
            assert_eq!(c.columns(st).await.unwrap().len(), expected.len());
            let mut row = Vec::new();
            let done = c.execute_row(st, &params, &mut row).await.unwrap();
            assert_eq!((done.rows, &row), (1, &expected), "prepared_statements {prepared_statements}");
            assert_eq!(c.execute(st, &params).await.unwrap().rows, 1);
            // A value that does not fit its parameter is refused, and the session goes on.
            let small = c.prepare("SELECT ?::int2").await.unwrap();
            assert!(c.execute(small, &[Param::Int(1 << 20)]).await.is_err());
            assert_eq!(c.text_rows("SELECT 1, NULL").await.unwrap(), vec![vec![Some("1".to_string()), None]]);
        });
    }
}

/// The runner retries and reconnects by these codes: they must arrive as the server sent them.
#[test]
fn sqlstates_map_and_the_session_survives_errors() {
    let db = TestDb::new(Kind::Postgres);
    db.exec("CREATE TABLE u (id int PRIMARY KEY)");
    let pg = open(&db.url, ConnectOptions::default());
    local(async {
        let mut c = pg.connect().await.unwrap();
        let insert = c.prepare("INSERT INTO u VALUES (?)").await.unwrap();
        assert_eq!(c.execute(insert, &[Param::Int(1)]).await.unwrap().affected_rows, 1);
        let e = c.execute(insert, &[Param::Int(1)]).await.unwrap_err();
        assert_eq!((sqlstate(&e), e.connection_lost), ("23505", false), "{e}");
        for code in ["40P01", "40001"] {
            let sql = format!("DO $$ BEGIN RAISE EXCEPTION 'raised' USING ERRCODE = '{code}'; END $$");
            let e = c.simple(&sql).await.unwrap_err();
            assert_eq!((sqlstate(&e), e.connection_lost), (code, false), "{e}");
        }
        let e = c.prepare("SELEKT 1").await.unwrap_err();
        assert_eq!(sqlstate(&e), "42601", "{e}");
        assert_eq!(c.execute(insert, &[Param::Int(2)]).await.unwrap().affected_rows, 1);

        // Killed by the server: 57P01 and the connection counted lost, no panic.
        let pid = c.text_rows("SELECT pg_backend_pid()").await.unwrap()[0][0].clone().unwrap();
        let mut killer = pg.connect().await.unwrap();
        killer.simple(&format!("SELECT pg_terminate_backend({pid})")).await.unwrap();
        let e = c.execute(insert, &[Param::Int(3)]).await.unwrap_err();
        assert!(e.connection_lost, "{e}");
    });
}

/// COPY FROM STDIN (FORMAT binary) in 64 KiB messages, then the session goes on.
#[test]
fn copy_in_loads_binary_rows() {
    let db = TestDb::new(Kind::Postgres);
    db.exec("CREATE TABLE cp (id int4, s text)");
    let mut data = b"PGCOPY\n\xff\r\n\0".to_vec();
    data.extend([0; 8]); // flags, header extension
    let pad = "x".repeat(100);
    for id in 0..2000i32 {
        data.extend(2i16.to_be_bytes());
        data.extend(4i32.to_be_bytes());
        data.extend(id.to_be_bytes());
        data.extend((pad.len() as i32).to_be_bytes());
        data.extend(pad.as_bytes());
    }
    data.extend((-1i16).to_be_bytes());
    let pg = open(&db.url, ConnectOptions::default());
    local(async {
        let mut c = pg.connect().await.unwrap();
        assert_eq!(c.copy_in("COPY cp FROM STDIN (FORMAT binary)", &data).await.unwrap(), 2000);
        let e = c.copy_in("COPY nosuch FROM STDIN (FORMAT binary)", &data).await.unwrap_err();
        assert_eq!(sqlstate(&e), "42P01", "{e}");
        assert!(c.copy_in("COPY cp FROM STDIN (FORMAT binary)", b"garbage").await.is_err());
        assert_eq!(c.text_rows("SELECT count(*) FROM cp").await.unwrap()[0][0].as_deref(), Some("2000"));
    });
}

/// A PostgreSQL cluster of this test's own, stopped and removed on drop.
struct Cluster {
    dir: tempfile::TempDir,
    port: u16,
    bin: PathBuf,
}

fn as_postgres(bin: &Path, program: &str) -> Command {
    let mut c = Command::new("runuser");
    c.args(["-u", "postgres", "--"]).arg(bin.join(program));
    c
}

fn run(mut c: Command) {
    let out = c.output().unwrap();
    assert!(out.status.success(), "{c:?}: {}", String::from_utf8_lossy(&out.stderr));
}

impl Cluster {
    /// None when this host has no PostgreSQL binaries or cannot run them as postgres.
    fn start(hba: &str) -> Option<Cluster> {
        let bin = std::fs::read_dir("/usr/lib/postgresql").ok()?.flatten().map(|e| e.path().join("bin")).max()?;
        let dir = tempfile::tempdir().unwrap();
        let owner = Command::new("id").args(["-u", "postgres"]).output().ok()?;
        let uid: u32 = String::from_utf8_lossy(&owner.stdout).trim().parse().ok()?;
        std::os::unix::fs::chown(dir.path(), Some(uid), None).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let data = dir.path().join("data");
        let mut init = as_postgres(&bin, "initdb");
        init.arg("-D").arg(&data).args(["-U", "postgres", "--auth=trust", "-E", "UTF8"]);
        run(init);
        std::fs::write(data.join("pg_hba.conf"), hba).unwrap();
        let mut start = as_postgres(&bin, "pg_ctl");
        let opts = format!("-p {port} -k {} -c listen_addresses=127.0.0.1", dir.path().display());
        start.arg("-D").arg(&data).arg("-l").arg(dir.path().join("log")).args(["-w", "-o", &opts, "start"]);
        run(start);
        Some(Cluster { dir, port, bin })
    }

    fn psql(&self, sql: &str) {
        let mut c = as_postgres(&self.bin, "psql");
        c.arg("-h").arg(self.dir.path()).args([
            "-p",
            &self.port.to_string(),
            "-d",
            "postgres",
            "-v",
            "ON_ERROR_STOP=1",
        ]);
        run({
            c.args(["-c", sql]);
            c
        });
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let mut stop = as_postgres(&self.bin, "pg_ctl");
        stop.arg("-D").arg(self.dir.path().join("data")).args(["-m", "immediate", "stop"]);
        let _ = stop.output();
    }
}

/// Connects and reads the product; the error otherwise.
fn login(url: &str, allow_cleartext_password: bool) -> Result<String, DbError> {
    let pg = open(url, ConnectOptions { allow_cleartext_password, ..ConnectOptions::default() });
    local(async { pg.connect().await?.server_info().await.map(|i| i.product) })
}

#[test]
fn md5_scram_and_cleartext_authenticate_on_a_private_cluster() {
    let hba = "local all all trust\n\
               host all md5user 127.0.0.1/32 md5\n\
               host all pwuser 127.0.0.1/32 password\n\
               host all all 127.0.0.1/32 scram-sha-256\n";
    let Some(cluster) = Cluster::start(hba) else {
        eprintln!("skipped: no PostgreSQL binaries to run a private cluster");
        return;
    };
    cluster.psql(
        "SET password_encryption = 'md5'; CREATE ROLE md5user LOGIN PASSWORD 'md5-secret'; \
         SET password_encryption = 'scram-sha-256'; CREATE ROLE scramuser LOGIN PASSWORD 'scram-secret'; \
         CREATE ROLE pwuser LOGIN PASSWORD 'pw-secret'",
    );
    let url = |user: &str, pw: &str| format!("postgres://{user}:{pw}@127.0.0.1:{}/postgres", cluster.port);
    assert_eq!(login(&url("md5user", "md5-secret"), false).unwrap(), "PostgreSQL");
    assert_eq!(login(&url("scramuser", "scram-secret"), false).unwrap(), "PostgreSQL");
    for (user, wrong) in [("md5user", "nope"), ("scramuser", "nope")] {
        let e = login(&url(user, wrong), false).unwrap_err();
        assert!(e.to_string().contains("authentication failed") && !e.to_string().contains("nope"), "{e}");
    }
    let e = login(&url("pwuser", "pw-secret"), false).unwrap_err();
    assert!(e.to_string().contains("--allow-cleartext-password") && !e.to_string().contains("pw-secret"), "{e}");
    assert_eq!(login(&url("pwuser", "pw-secret"), true).unwrap(), "PostgreSQL");
    // A Unix socket (trust here): the lean client too.
    let socket =
        format!("postgres://postgres@localhost:{}/postgres?socket={}", cluster.port, cluster.dir.path().display());
    assert_eq!(login(&socket, false).unwrap(), "PostgreSQL");
}
