//! Bad input and broken servers: one clear line, a non-zero exit, never a panic, never a
//! password; measured results survive Ctrl-C and a lost server.

mod common;
use common::*;
use std::time::{Duration, Instant};

/// Runs fairbench expecting failure; returns its single stderr line.
fn one_line_error(args: &[&str], code: i32) -> String {
    let dir = tempfile::tempdir().unwrap();
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let o = fairbench_in(dir.path(), &args);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(code), "{args:?}\n{}", text(&o));
    assert_eq!(err.trim().lines().count(), 1, "{args:?}: expected one line, got:\n{err}");
    assert!(err.starts_with("error: "), "{err}");
    assert!(!err.contains("panicked") && !err.contains("backtrace"), "{err}");
    err
}

fn with_user(base: &str, user_pass: &str) -> String {
    // base is scheme://user:pass@host:port
    let (scheme, rest) = base.split_once("://").unwrap();
    let host = rest.split_once('@').unwrap().1;
    format!("{scheme}://{user_pass}@{host}")
}

#[test]
fn bad_urls() {
    let e = one_line_error(&["run", "oltp_read_write", "--target=mongodb://h/db"], 2);
    assert!(e.contains("unknown scheme"), "{e}");
    let e = one_line_error(&["run", "oltp_read_write", "--target=mysql://u:hunter2@h:99999/db"], 2);
    assert!(e.contains("invalid --target") && !e.contains("hunter2"), "{e}");
    let e = one_line_error(&["run", "oltp_read_write", "--target=postgres://u@127.0.0.1:5432"], 2);
    assert!(e.contains("no database"), "{e}");
    let e = one_line_error(&["run", "oltp_read_write", "--target=mysql://u@h/db?tls=maybe"], 2);
    assert!(e.contains("tls=maybe"), "{e}");
}

#[test]
fn unreachable_hosts() {
    let e = one_line_error(&["run", "oltp_point_select", "--target=mysql://u:hunter2@127.0.0.1:1/db"], 2);
    assert!(e.contains("cannot connect to MySQL at 127.0.0.1:1") && !e.contains("hunter2"), "{e}");
    let e = one_line_error(&["run", "oltp_point_select", "--target=postgres://u:hunter2@127.0.0.1:1/db"], 2);
    assert!(e.contains("cannot connect to PostgreSQL at 127.0.0.1:1") && !e.contains("hunter2"), "{e}");
}

#[test]
fn wrong_credentials() {
    let url = format!("{}/mysql", with_user(&mysql_base(), "fairbench_test:NotThePassword42"));
    let e = one_line_error(&["run", "oltp_point_select", &format!("--target={url}")], 2);
    assert!(e.contains("access denied for user 'fairbench_test'") && !e.contains("NotThePassword42"), "{e}");
    let url = format!("{}/postgres", with_user(&postgres_base(), "fairbench_no_such_role:NotThePassword42"));
    let e = one_line_error(&["run", "oltp_point_select", &format!("--target={url}")], 2);
    assert!(
        e.contains("authentication failed for user 'fairbench_no_such_role'") && !e.contains("NotThePassword42"),
        "{e}"
    );
}

#[test]
fn missing_databases() {
    let e = one_line_error(&["prepare", "oltp_point_select", &format!("--target={}/fb_no_such_db", mysql_base())], 2);
    assert!(e.contains("database 'fb_no_such_db' does not exist"), "{e}");
    let e =
        one_line_error(&["prepare", "oltp_point_select", &format!("--target={}/fb_no_such_db", postgres_base())], 2);
    assert!(e.contains("database 'fb_no_such_db' does not exist"), "{e}");
    let e = one_line_error(&["run", "oltp_point_select", "--target=sqlite:///nonexistent/dir/x.db"], 2);
    assert!(e.contains("does not exist"), "{e}");
}

#[test]
fn invalid_flags_and_values() {
    let e = one_line_error(&["run", "oltp_read_write", "--no-such-flag"], 2);
    assert!(e.contains("--no-such-flag"), "{e}");
    // sysbench's connection options in fairbench's word order name the server (an
    // unknown host here): one line naming it.
    let e = one_line_error(&["run", "oltp_read_write", "--mysql-host=db1.invalid"], 2);
    assert!(e.contains("MySQL at db1.invalid:3306"), "{e}");
    let e = one_line_error(&["run", "oltp_read_write", "--pgsql-host=db1.invalid"], 2);
    assert!(e.contains("add --db-driver=pgsql"), "{e}");
    let e = one_line_error(&["run", "tpcc_fancy"], 2);
    assert!(e.contains("unknown workload"), "{e}");
    let e = one_line_error(&["run", "oltp_read_write", "--rand-type=normal"], 2);
    assert!(e.contains("--rand-type"), "{e}");
    let e = one_line_error(&["run", "oltp_read_write", "--threads=0"], 2);
    assert!(e.contains("--threads"), "{e}");
    let e = one_line_error(&["run", "oltp_read_write", "--skip-trx=maybe"], 2);
    assert!(e.contains("maybe"), "{e}");
    let e = one_line_error(&["run", "oltp_read_write", "--rand-seed=18446744073709551615"], 2);
    assert!(e.contains("2^53"), "{e}");
}

/// A typo gets the nearest spelling: workloads, recipes, flags, commands, sysbench's options.
#[test]
fn typos_get_the_nearest_spelling() {
    for (args, nearest) in [
        (&["run", "oltp_read_wirte"][..], "did you mean oltp_read_write?"),
        (&["bench", "ycsb_b2"][..], "did you mean ycsb-b?"),
        (&["run", "oltp_read_write", "--thread=4"][..], "did you mean --threads?"),
        (&["runn", "oltp_read_write"][..], "did you mean `fairbench run ...`?"),
        (&["oltp_piont_select", "run"][..], "did you mean oltp_point_select?"),
    ] {
        let e = one_line_error(args, 2);
        assert!(e.contains(nearest), "{args:?}: {e}");
    }
}

/// A missing argument is named on the one line (clap lists them on lines of their own).
#[test]
fn missing_arguments_are_named() {
    let e = one_line_error(&["export", "r.json"], 2);
    assert!(e.contains("were not provided: --csv"), "{e}");
    let e = one_line_error(&["compare"], 2);
    assert!(e.contains("were not provided: <RESULTS>"), "{e}");
}

#[test]
fn sqlite_ctrl_c_still_reports_and_saves() {
    let db = TestDb::new(Kind::Sqlite);
    assert!(db.fairbench(&["prepare", "oltp_point_select", "--table-size=1000"]).status.success());
    let out = db.dir.path().join("r.json");
    let mut child = spawn_run(
        &db,
        &["run", "oltp_point_select", "--table-size=1000", "--time=60", "--threads=2", "--report-interval=1"],
        &out,
    );
    // Once a measured second has closed, so that there are events to keep.
    let (_, rest) = wait_for_stderr(&mut child, "[ 1s ]");
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let t = Instant::now();
    let drain = std::thread::spawn(move || std::io::copy(&mut { rest }, &mut std::io::sink()));
    let o = child.wait_with_output().unwrap();
    drain.join().unwrap().unwrap();
    assert!(t.elapsed() < Duration::from_secs(15));
    assert_eq!(o.status.code(), Some(130), "{}", text(&o));
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(doc["conditions"]["run"]["status"], "interrupted");
    assert!(doc["conditions"]["run"]["events"].as_u64().unwrap() > 100);
    assert!(String::from_utf8_lossy(&o.stdout).contains("queries/s"), "the report is printed: {}", text(&o));
}

#[test]
fn killed_connections_reconnect_and_are_counted() {
    let db = TestDb::new(Kind::Postgres);
    assert!(db.fairbench(&["prepare", "oltp_point_select", "--table-size=1000"]).status.success());
    let out = db.dir.path().join("r.json");
    let mut child = spawn_run(&db, &["run", "oltp_point_select", "--table-size=1000", "--time=4", "--threads=2"], &out);
    // Once every client is connected: each of them is then terminated and reconnects.
    let (_, rest) = wait_until_measuring(&mut child);
    let drain = std::thread::spawn(move || std::io::copy(&mut { rest }, &mut std::io::sink()));
    db.exec(&format!(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{}' AND pid <> pg_backend_pid() AND application_name = 'fairbench'",
        db.name
    ));
    let o = child.wait_with_output().unwrap();
    drain.join().unwrap().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(doc["conditions"]["run"]["status"], "completed");
    assert!(doc["errors"]["reconnects"].as_u64().unwrap() >= 2, "{}", doc["errors"]);
}

#[test]
fn a_server_that_goes_away_fails_the_run_but_keeps_the_results() {
    let db = TestDb::new(Kind::Postgres);
    assert!(db.fairbench(&["prepare", "oltp_point_select", "--table-size=1000"]).status.success());
    let out = db.dir.path().join("r.json");
    let child = spawn_run(
        &db,
        &["run", "oltp_point_select", "--table-size=1000", "--time=30", "--threads=2", "--reconnect-timeout=1"],
        &out,
    );
    // Deterministic: only once every client is connected (a client still connecting could
    // slip past both the ALTER and the terminate below).
    let mut child = child;
    let (seen, mut stderr) = wait_until_measuring(&mut child);
    std::thread::sleep(Duration::from_millis(500));
    // The database stops accepting connections, then every session is terminated. Two
    // calls: in one batch both ran in one implicit transaction, so the ALTER was not yet
    // committed when the sessions died and a quick reconnection still got in.
    let admin = format!("{}/postgres", postgres_base());
    pg_exec(&admin, &format!("ALTER DATABASE {} ALLOW_CONNECTIONS false", db.name));
    pg_exec(&admin, &format!("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{}'", db.name));
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    let o = child.wait_with_output().unwrap();
    let err = seen + &rest;
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.trim().lines().last().unwrap().contains("could not reconnect"), "{err}");
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(doc["conditions"]["run"]["status"], "failed");
    assert!(doc["conditions"]["run"]["events"].as_u64().unwrap() > 100, "measured events are kept");
    let incomplete = doc["audit"].as_array().unwrap().iter().find(|f| f["id"] == "incomplete-run").unwrap();
    assert_eq!(incomplete["severity"], "critical");
}

#[test]
fn tls_is_stated_and_enforced() {
    // Debian's PostgreSQL serves TLS with its snakeoil certificate: require works, verify
    // (no CA for a self-signed certificate) must refuse; MariaDB here has no TLS at all.
    let db = TestDb::new(Kind::Postgres);
    let tls_url = format!("{}?tls=require", db.url);
    let dir = db.dir.path();
    let p = fairbench_in(
        dir,
        &["prepare".into(), "oltp_point_select".into(), "--table-size=100".into(), format!("--target={tls_url}")],
    );
    assert!(p.status.success(), "{}", text(&p));
    let r = fairbench_in(
        dir,
        &[
            "run".into(),
            "oltp_point_select".into(),
            "--table-size=100".into(),
            "--events=10".into(),
            format!("--target={tls_url}"),
        ],
    );
    assert!(r.status.success(), "{}", text(&r));
    assert!(String::from_utf8_lossy(&r.stdout).contains("TLS require"), "{}", text(&r));
    let e = one_line_error(&["run", "oltp_point_select", &format!("--target={}?tls=verify", db.url)], 2);
    assert!(e.contains("cannot connect to PostgreSQL") && e.to_lowercase().contains("certificate"), "{e}");
    let e = one_line_error(&["run", "oltp_point_select", &format!("--target={}/mysql?tls=require", mysql_base())], 2);
    assert!(e.contains("offers no TLS") && e.contains("?tls=prefer") && !e.contains("is the server running"), "{e}");
}

#[test]
fn sqlite_out_path_that_is_not_a_regular_file_is_written_in_place() {
    // `--out /dev/null` must never replace the device: a FIFO stands in for it here.
    let db = TestDb::new(Kind::Sqlite);
    assert!(db.fairbench(&["prepare", "oltp_point_select", "--table-size=100"]).status.success());
    let fifo = db.dir.path().join("pipe");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let o = db.fairbench(&[
        "run",
        "oltp_point_select",
        "--table-size=100",
        "--events=10",
        &format!("--out={}", fifo.display()),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let json = reader.join().unwrap();
    assert!(json.contains("fairbench.result"));
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo(), "the pipe is still a pipe");
}

/// `--rate` outside what a run can honour is refused up front, naming the bound; before,
/// tiny and huge rates overflowed the schedule's Duration arithmetic (a poisoned lock, an
/// "internal error") or left a client asleep until a far arrival (a stalled run).
#[test]
fn open_loop_rates_a_run_cannot_honour() {
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "oltp_point_select", "--target=sqlite://unused.db", "--time=2"];
        args.extend_from_slice(extra);
        one_line_error(&args, 2)
    };
    let e = run(&["--rate=1e-300"]);
    assert!(
        e.contains("--rate 1e-300 is too low for --time 2 s") && e.contains("at least 0.5 events per second"),
        "{e}"
    );
    let e = run(&["--rate=1e-9"]);
    assert!(e.contains("--rate 1e-9 is too low"), "{e}");
    let e = run(&["--rate=0.4", "--arrival=poisson"]);
    assert!(e.contains("arrivals 2.5 s apart"), "{e}");
    for huge in ["--rate=1e300", "--rate=1e20", "--rate=1000000001"] {
        let e = run(&[huge]);
        assert!(e.contains("is above 1e9 events per second, the most the schedule can represent"), "{e}");
    }
    // 0 is sysbench's "no rate limit": a closed loop (tests/show.rs).
    for bad in ["--rate=nan", "--rate=inf", "--rate=-5"] {
        let e = run(&[bad]);
        assert!(e.contains("is not a positive number of events per second"), "{bad}: {e}");
    }
    let e = one_line_error(&["run", "oltp_point_select", "--time=0", "--events=5", "--rate=1e-9"], 2);
    assert!(e.contains("too low for the longest run (315360000 s)"), "{e}");
    let e = run(&["--rate=10", "--max-backlog=0"]);
    assert!(e.contains("--max-backlog must be at least 1 event"), "{e}");
    let e = run(&["--rate=10", "--max-backlog=99999999999999999999"]);
    assert!(e.contains("--max-backlog") && e.contains("too large"), "{e}");
}

/// A low Poisson rate whose next arrival falls long after the end of the run: the client
/// waiting for it stops with the run instead of being reported as stalled. Seed 302 draws
/// arrivals at 0.9 s and 21.8 s (past the 3 s run and its 10 s grace).
#[test]
fn a_distant_next_arrival_ends_with_the_run() {
    let db = TestDb::new(Kind::Sqlite);
    assert!(db.fairbench(&["prepare", "oltp_point_select", "--table-size=100"]).status.success());
    let t = Instant::now();
    let args = ["--table-size=100", "--time=3", "--rate=0.34", "--arrival=poisson", "--rand-seed=302"];
    let doc = db.run_json(&[&["run", "oltp_point_select"][..], &args].concat());
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert_eq!(doc["conditions"]["run"]["status"], "completed", "{doc}");
    assert_eq!(doc["conditions"]["run"]["events"], 1);
}

/// Extreme but valid rates and backlogs run to completion (saturating, never overflowing).
#[test]
fn extreme_valid_rates_complete() {
    let db = TestDb::new(Kind::Sqlite);
    assert!(db.fairbench(&["prepare", "oltp_point_select", "--table-size=100"]).status.success());
    for extra in [
        &["--rate=1e9", "--max-backlog=1"][..],
        &["--rate=1e9", "--arrival=poisson", "--max-backlog=18446744073709551615"],
        &["--rate=1e9", "--arrival=poisson", "--max-backlog=1"],
    ] {
        let doc = db.run_json(&[&["run", "oltp_point_select", "--table-size=100", "--time=1"][..], extra].concat());
        assert_eq!(doc["conditions"]["run"]["status"], "completed", "{extra:?}");
        assert!(doc["conditions"]["run"]["events"].as_u64().unwrap() > 100, "{extra:?}");
    }
}

/// Result files with counts or latencies no run produces: one line naming the field, or
/// the command still works; never a panic (these crashed `report`: a timeline sum
/// overflowed, a histogram clamp had its min above its max).
#[test]
fn absurd_result_values_never_panic() {
    let db = TestDb::new(Kind::Sqlite);
    assert!(db.fairbench(&["prepare", "oltp_point_select", "--table-size=100"]).status.success());
    let doc = db.run_json(&["run", "oltp_point_select", "--table-size=100", "--time=2"]);
    let dir = db.dir.path();
    let write = |name: &str, doc: &serde_json::Value| {
        let path = dir.join(name);
        std::fs::write(&path, doc.to_string()).unwrap();
        path.display().to_string()
    };
    let mut seen = doc.clone();
    seen["intervals"][1]["scatter"]["seen"] = serde_json::Value::from(u64::MAX);
    let seen = write("seen.json", &seen);
    for cmd in ["audit", "report"] {
        let e = one_line_error(&[cmd, &seen], 2);
        assert!(e.contains("`intervals[1].scatter.seen` is 18446744073709551615"), "{cmd}: {e}");
    }
    let mut min_above_max = doc.clone();
    min_above_max["stats"]["read"]["min_us"] = serde_json::Value::from(9.0e15);
    let path = write("min.json", &min_above_max);
    let html = dir.join("min.html").display().to_string();
    let o = fairbench_in(dir, &["report".into(), path, "-o".into(), html]);
    assert!(o.status.success(), "{}", text(&o));
}
