//! Passwords never show: not in the process list during a run, not in errors or result
//! files; safe sources (--password-file, FAIRBENCH_PASSWORD) work against a real server.

mod common;
use common::*;
use std::net::TcpListener;
use std::process::{Command, Stdio};

/// `ps` and /proc/PID/cmdline show `x`s where the password was, for the whole run.
#[test]
fn argv_hides_the_password() {
    // A server that accepts and never speaks keeps fairbench waiting in its handshake.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut child = Command::new(bin())
        .args(["run", "oltp_point_select", "--connect-timeout", "20", "--target"])
        .arg(format!("mysql://fbuser:Sup3rS3cretPw@127.0.0.1:{port}/db"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Connected: main started long ago (the wipe is its first statement).
    let (_conn, _) = listener.accept().unwrap();
    let cmdline = std::fs::read(format!("/proc/{}/cmdline", child.id())).unwrap();
    let _ = child.kill();
    let _ = child.wait();
    let shown = String::from_utf8_lossy(&cmdline).replace('\0', " ");
    assert!(!shown.contains("Sup3rS3cretPw"), "{shown}");
    assert!(shown.contains("mysql://fbuser:xxxxxxxxxxxxx@127.0.0.1"), "{shown}");
}

#[test]
fn password_file_errors_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.txt");
    let empty = dir.path().join("empty.txt");
    std::fs::write(&empty, "\n").unwrap();
    for (file, words) in [(&missing, "No such file"), (&empty, "is empty")] {
        let out = fairbench_in(
            dir.path(),
            &[
                "run".into(),
                "oltp_point_select".into(),
                "--target=mysql://u@127.0.0.1:9/db".into(),
                "--password-file".into(),
                file.display().to_string(),
            ],
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(&file.display().to_string()) && err.contains(words), "{err}");
    }
}

#[test]
fn sqlite_ignores_passwords() {
    let db = TestDb::new(Kind::Sqlite);
    let out = Command::new(bin())
        .args(["prepare", "oltp_point_select", "--table-size", "10", &format!("--target={}", db.url)])
        .current_dir(db.dir.path())
        .env("FAIRBENCH_PASSWORD", "unused")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
}

/// The base URL of a test server without its password, and the password.
fn split_password(base: &str) -> (String, String) {
    let url = url::Url::parse(base).unwrap();
    let password = url.password().unwrap_or("").to_string();
    let mut bare = url.clone();
    bare.set_password(None).unwrap();
    (bare.to_string().trim_end_matches('/').to_string(), password)
}

/// Each safe source gets a real server's password to it; the result file records the
/// command line and the target without it.
#[test]
fn safe_password_sources_work_against_real_servers() {
    for kind in [Kind::Mysql, Kind::Postgres] {
        let db = TestDb::new(kind);
        let base = if kind == Kind::Mysql { mysql_base() } else { postgres_base() };
        let (bare, password) = split_password(&base);
        assert!(!password.is_empty());
        let target = format!("--target={bare}/{}", db.name);
        let file = db.dir.path().join("pw");
        std::fs::write(&file, format!("{password}\n")).unwrap();
        let file_arg = file.display().to_string();
        let run = |args: &[&str], env: Option<&str>| {
            let mut c = Command::new(bin());
            c.args(args).arg(&target).current_dir(db.dir.path());
            c.env_remove("MYSQL_PWD").env_remove("PGPASSWORD").env_remove("FAIRBENCH_PASSWORD");
            if let Some(pw) = env {
                c.env("FAIRBENCH_PASSWORD", pw);
            }
            c.output().unwrap()
        };
        let p = run(&["prepare", "oltp_point_select", "--table-size=100", "--password-file", &file_arg], None);
        assert!(p.status.success(), "{kind:?}: {}", text(&p));
        let out = db.dir.path().join("r.json");
        let r = run(
            &["run", "oltp_point_select", "--table-size=100", "--events=50", "--out", out.to_str().unwrap()],
            Some(&password),
        );
        assert!(r.status.success(), "{kind:?}: {}", text(&r));
        let saved = std::fs::read_to_string(&out).unwrap();
        // (The test user's password equals its name, so look for it where a password goes.)
        assert!(!saved.contains(&format!(":{password}@")), "{kind:?}: the result file holds the password");
        assert!(saved.contains(&format!("{}@", password)), "{kind:?}: the user is recorded");
        // A wrong password from the file is refused by the server, and not shown (the test
        // PostgreSQL trusts local connections: it never asks).
        if kind == Kind::Mysql {
            std::fs::write(&file, "wrong-Pw-123\n").unwrap();
            let bad = run(
                &["run", "oltp_point_select", "--table-size=100", "--events=5", "--password-file", &file_arg],
                None,
            );
            let err = String::from_utf8_lossy(&bad.stderr);
            assert_eq!(bad.status.code(), Some(2), "{err}");
            assert!(!err.contains("wrong-Pw-123") && err.contains("access denied"), "{err}");
            assert!(!run(&["cleanup", "--password-file", &file_arg], None).status.success());
        }
        std::fs::write(&file, format!("{password}\n")).unwrap();
        assert!(run(&["cleanup", "--password-file", &file_arg], None).status.success());
    }
}

#[test]
fn malformed_targets_fail_in_one_line_without_the_password() {
    for url in [
        "mysql://root:Sup3r/S3cretPw@127.0.0.1/db",
        "mysql://root:Sup3r?S3cretPw@127.0.0.1/db",
        "mysql://root:Sup3r#S3cretPw@127.0.0.1/db",
        "mysql:/root:Sup3rS3cretPw@127.0.0.1/db",
        "mysql//root:Sup3rS3cretPw@127.0.0.1/db",
        "mysq://root:Sup3rS3cretPw@127.0.0.1/db",
        "root:Sup3rS3cretPw@127.0.0.1/db",
        "mysql://root:1?Sup3rS3cretPw@127.0.0.1:3306/db",
        "mysql://root:Sup3rS3cretPw/db",
    ] {
        let joined = format!("--target={url}");
        for form in [&["--target", url][..], &[joined.as_str()][..]] {
            let mut args: Vec<String> = vec!["run".into(), "oltp_point_select".into()];
            args.extend(form.iter().map(|s| s.to_string()));
            let out = fairbench_in(std::path::Path::new("/tmp"), &args);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{url}: {err}");
            assert_eq!(err.lines().count(), 1, "{url}: {err}");
            assert!(err.contains("invalid --target") && !err.contains("S3cretPw"), "{url}: {err}");
        }
    }
}
