//! The transport each connection used, as the server reported it: `?tls=prefer` encrypts
//! when the server offers TLS (this machine's PostgreSQL has ssl=on) and goes on in
//! plaintext when it does not (its MariaDB has no TLS); the result says which, read from
//! pg_stat_ssl and the session's Ssl_cipher; a comparison of two runs on different
//! transports has a finding; an account that requires TLS is refused in one line naming
//! `?tls=require`.

mod common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

const THREADS: u64 = 3;

const TABLE: [&str; 2] = ["--table-size=50", "--tables=1"];

/// A database of the test's own with a small table.
fn prepared(kind: Kind) -> TestDb {
    let db = TestDb::new(kind);
    let mut prepare = vec!["prepare".to_string(), "oltp_point_select".into(), format!("--target={}", db.url)];
    prepare.extend(TABLE.iter().map(|s| s.to_string()));
    prepare.push("-q".into());
    let p = fairbench_in(db.dir.path(), &prepare);
    assert!(p.status.success(), "{}", text(&p));
    db
}

/// Runs point selects with `query` on the URL; the result and its file.
fn run_with(db: &TestDb, query: &str, name: &str) -> (Value, PathBuf) {
    let out = db.dir.path().join(format!("{name}.json"));
    let mut run: Vec<String> =
        ["run", "oltp_point_select", "--events=300", "-q"].iter().map(|s| s.to_string()).collect();
    run.extend(TABLE.iter().map(|s| s.to_string()));
    run.push(format!("--threads={THREADS}"));
    run.push(format!("--target={}?{query}", db.url));
    run.push(format!("--out={}", out.display()));
    let o = fairbench_in(db.dir.path(), &run);
    assert!(o.status.success(), "{run:?}\n{}", text(&o));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    (doc, out)
}

/// The run's transports: (kind, tls, connections) per entry.
fn transports(doc: &Value) -> Vec<(String, Option<String>, u64)> {
    let all = doc["conditions"]["run"]["transports"]
        .as_array()
        .unwrap_or_else(|| panic!("none: {}", doc["conditions"]["run"]));
    all.iter()
        .map(|t| {
            let kind = t["kind"].as_str().unwrap_or("unread").to_string();
            (kind, t["tls"].as_str().map(str::to_string), t["connections"].as_u64().unwrap())
        })
        .collect()
}

/// The text report of `file`, and its HTML report.
fn reports(dir: &Path, file: &Path) -> (String, String) {
    let o = fairbench_in(dir, &["report".into(), "--text".into(), file.display().to_string()]);
    assert!(o.status.success(), "{}", text(&o));
    let html = dir.join("report.html");
    let h = fairbench_in(dir, &["report".into(), file.display().to_string(), format!("--out={}", html.display())]);
    assert!(h.status.success(), "{}", text(&h));
    (String::from_utf8_lossy(&o.stdout).into_owned(), std::fs::read_to_string(html).unwrap())
}

#[test]
fn postgres_prefer_encrypts_disable_does_not_and_compare_says_they_differ() {
    let db = prepared(Kind::Postgres);
    let (tls, tls_file) = run_with(&db, "tls=prefer", "prefer");
    let seen = transports(&tls);
    assert_eq!(seen.len(), 1, "{seen:?}");
    let (kind, cipher, n) = &seen[0];
    assert_eq!(kind, "tcp");
    let cipher = cipher.as_deref().unwrap_or_else(|| panic!("the server says plaintext under prefer: {seen:?}"));
    assert!(cipher.starts_with("TLSv1."), "{cipher}");
    assert_eq!(*n, THREADS, "every client's connection, read once each");
    let (plain, plain_file) = run_with(&db, "sslmode=disable", "disable");
    assert_eq!(transports(&plain), vec![("tcp".to_string(), None, THREADS)]);

    let (said, html) = reports(db.dir.path(), &tls_file);
    let line = said.lines().find(|l| l.contains("as the server saw it")).unwrap_or_else(|| panic!("{said}"));
    let seen = format!("as the server saw it: all {THREADS} connections: TCP, TLS {cipher}");
    assert!(line.contains(&seen), "{line}");
    assert!(html.contains(&seen), "the HTML report says it too");

    let found = transport_finding(db.dir.path(), &plain_file, &tls_file);
    let found = found.unwrap_or_else(|| panic!("no transport finding")).to_string();
    assert!(found.contains("as the server saw it") && found.contains("TCP, plaintext"), "{found}");
    assert!(found.contains(cipher), "{found}");

    // `require` asked where `prefer` was: the same transport as the server saw it, no finding.
    let (required, required_file) = run_with(&db, "tls=require", "require");
    assert_eq!(transports(&required), transports(&tls));
    assert_eq!(transport_finding(db.dir.path(), &tls_file, &required_file), None);
}

/// `compare A B`'s transport-differs finding, if any.
fn transport_finding(dir: &Path, a: &Path, b: &Path) -> Option<Value> {
    let args = ["compare".to_string(), a.display().to_string(), b.display().to_string(), "--json".into()];
    let o = fairbench_in(dir, &args);
    let cmp: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}\n{}", text(&o)));
    cmp["findings"].as_array().unwrap().iter().find(|f| f["id"] == "transport-differs").cloned()
}

#[test]
fn mariadb_prefer_without_tls_on_the_server_is_plaintext_as_the_server_says() {
    let have_ssl = mysql_global("have_ssl");
    let db = prepared(Kind::Mysql);
    let (doc, _) = run_with(&db, "tls=prefer", "prefer");
    let seen = transports(&doc);
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].0, "tcp");
    assert_eq!(seen[0].2, THREADS);
    // Encrypted exactly when the server has TLS configured.
    assert_eq!(seen[0].1.is_some(), have_ssl == "YES", "have_ssl {have_ssl}: {seen:?}");
}

/// Drops the account when the test ends, however it ends.
struct Account(String);

impl Drop for Account {
    fn drop(&mut self) {
        mysql_exec(&format!("DROP USER IF EXISTS '{}'@'127.0.0.1'", self.0));
    }
}

#[test]
fn an_account_that_requires_tls_is_refused_in_one_line_naming_the_option() {
    let db = TestDb::new(Kind::Mysql);
    let account = Account(format!("fbtls_{}", std::process::id()));
    let user = &account.0;
    mysql_exec(&format!("CREATE USER '{user}'@'127.0.0.1' IDENTIFIED BY 'fbtls' REQUIRE SSL"));
    mysql_exec(&format!("GRANT ALL PRIVILEGES ON {}.* TO '{user}'@'127.0.0.1'", db.name));
    let url = format!("mysql://{user}:fbtls@127.0.0.1:3306/{}", db.name);
    let args = ["prepare".to_string(), "oltp_point_select".into(), "--table-size=10".into(), format!("--target={url}")];
    let o = fairbench_in(db.dir.path(), &args);
    assert!(!o.status.success(), "plaintext admitted for an account REQUIRE SSL");
    let err = String::from_utf8_lossy(&o.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line: {err}");
    assert!(lines[0].contains("?tls=require") && lines[0].contains("REQUIRE SSL"), "{err}");
    assert!(!err.contains("fbtls@"), "no password: {err}");
}
