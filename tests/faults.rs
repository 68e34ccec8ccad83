//! A server that stalls mid-run, a result path that cannot be written, and absurd limits:
//! the run fails or is refused with one clear line, and measured results are never lost.

mod common;
use common::*;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A TCP proxy in front of the test PostgreSQL that stops forwarding when told to (a
/// server frozen mid-run, deterministically, without touching the shared server).
struct StallingProxy {
    port: u16,
    stalled: Arc<AtomicBool>,
    forwarded: Arc<AtomicU64>,
}

impl StallingProxy {
    fn start(upstream: u16) -> StallingProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let stalled = Arc::new(AtomicBool::new(false));
        let forwarded = Arc::new(AtomicU64::new(0));
        let (s, f) = (stalled.clone(), forwarded.clone());
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else { continue };
                for (mut from, mut to) in [(client.try_clone().unwrap(), server.try_clone().unwrap()), (server, client)]
                {
                    let (s, f) = (s.clone(), f.clone());
                    std::thread::spawn(move || {
                        let mut buf = [0u8; 16384];
                        loop {
                            let n = match from.read(&mut buf) {
                                Ok(0) | Err(_) => break,
                                Ok(n) => n,
                            };
                            while s.load(Ordering::SeqCst) {
                                std::thread::sleep(Duration::from_millis(10));
                            }
                            if to.write_all(&buf[..n]).is_err() {
                                break;
                            }
                            f.fetch_add(n as u64, Ordering::SeqCst);
                        }
                        let _ = to.shutdown(std::net::Shutdown::Both);
                    });
                }
            }
        });
        StallingProxy { port, stalled, forwarded }
    }

    fn url(&self, db: &TestDb) -> String {
        db.url.replace(":5432/", &format!(":{}/", self.port))
    }

    /// Waits until every client runs (fairbench said "Threads started!") and events flow,
    /// then freezes the server. Returns what fairbench printed so far.
    fn stall_once_running(&self, child: &mut std::process::Child) -> String {
        let (seen, mut stderr) = wait_until_measuring(child);
        let flowing = self.forwarded.load(Ordering::SeqCst) + 20_000;
        let t = Instant::now();
        while self.forwarded.load(Ordering::SeqCst) < flowing && t.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(10));
        }
        self.stalled.store(true, Ordering::SeqCst);
        let mut rest = String::new();
        std::thread::spawn(move || {
            let _ = std::io::Read::read_to_string(&mut stderr, &mut rest);
            rest
        });
        seen
    }
}

fn pg_with_proxy() -> (TestDb, StallingProxy) {
    let db = TestDb::new(Kind::Postgres);
    let o = db.fairbench(&["prepare", "oltp_point_select", "--table-size=1000"]);
    assert!(o.status.success(), "{}", text(&o));
    let port: u16 = postgres_base().rsplit(':').next().unwrap().parse().unwrap();
    (db, StallingProxy::start(port))
}

fn spawn(db: &TestDb, url: &str, args: &[&str], out: &std::path::Path) -> std::process::Child {
    std::process::Command::new(bin())
        .args(args)
        .arg(format!("--target={url}"))
        .arg(format!("--out={}", out.display()))
        .current_dir(db.dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn clients_stalled_at_the_end_fail_the_run_and_the_grace_is_not_measured() {
    let (db, proxy) = pg_with_proxy();
    let out = db.dir.path().join("stalled.json");
    let mut child = spawn(
        &db,
        &proxy.url(&db),
        &["run", "oltp_point_select", "--table-size=1000", "--threads=2", "--time=3"],
        &out,
    );
    proxy.stall_once_running(&mut child);
    let started = Instant::now();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(started.elapsed() < Duration::from_secs(25), "bounded: {:?}", started.elapsed());
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let run = &doc["conditions"]["run"];
    assert_eq!(run["status"], "failed");
    assert!(run["failure"].as_str().unwrap().contains("2 clients stalled"), "{run}");
    assert!(run["measured_s"].as_f64().unwrap() <= 3.5, "the 10 s grace is not measured time: {run}");
    assert!(run["failure"].as_str().unwrap().starts_with("2 clients stalled"));
    // The frozen server could not be read after the run: said, not saved as zeros.
    let ids: Vec<&str> = doc["audit"].as_array().unwrap().iter().filter_map(|f| f["id"].as_str()).collect();
    assert!(ids.contains(&"collection-incomplete"), "{ids:?}");
    assert!(doc["conditions"]["server"]["status_after"].as_object().unwrap().is_empty());
    proxy.stalled.store(false, Ordering::SeqCst);
}

#[test]
fn ctrl_c_during_a_stall_saves_within_two_seconds() {
    let (db, proxy) = pg_with_proxy();
    let out = db.dir.path().join("interrupted.json");
    let mut child = spawn(
        &db,
        &proxy.url(&db),
        &["run", "oltp_point_select", "--table-size=1000", "--threads=2", "--time=60"],
        &out,
    );
    proxy.stall_once_running(&mut child);
    // Longer than the sampler's second: one of its readings hangs in the stall too, and
    // Ctrl-C must not wait for it (it once did, for 2 s more).
    std::thread::sleep(Duration::from_millis(1100));
    let pressed = Instant::now();
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    let took = pressed.elapsed();
    assert_eq!(o.status.code(), Some(130), "{}", text(&o));
    assert!(took < Duration::from_millis(2500), "exited {took:?} after Ctrl-C");
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(doc["conditions"]["run"]["status"], "interrupted");
    assert!(doc["stats"]["event"]["count"].as_u64().unwrap() > 0, "what was measured is kept");
    proxy.stalled.store(false, Ordering::SeqCst);
}

#[test]
fn sqlite_an_unwritable_out_is_refused_before_any_load() {
    let db = TestDb::new(Kind::Sqlite);
    let blocker = db.dir.path().join("a-file");
    std::fs::write(&blocker, b"x").unwrap();
    let out = blocker.join("result.json"); // a path under a regular file: never writable
    let started = Instant::now();
    let o = db.fairbench(&[
        "bench",
        "oltp_point_select",
        "--table-size=100000",
        "--time=30",
        &format!("--out={}", out.display()),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(err.contains("cannot write the result") && err.contains("a-file"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(started.elapsed() < Duration::from_secs(5), "refused before loading and running");
    assert!(!std::path::Path::new(db.url.trim_start_matches("sqlite://")).exists(), "nothing was prepared");
}

#[test]
fn sqlite_absurd_limits_get_one_clear_line() {
    let db = TestDb::new(Kind::Sqlite);
    assert!(db.fairbench(&["prepare", "oltp_point_select", "--table-size=100"]).status.success());
    for (args, needle) in [
        (vec!["run", "oltp_point_select", "--time=9223372036854775807"], "at most"),
        (vec!["run", "oltp_point_select", "--rand-type=zipfian", "--rand-zipfian-exp=inf"], "--rand-zipfian-exp"),
        (vec!["run", "oltp_point_select", "--rand-type=pareto", "--rand-pareto-h=NaN"], "--rand-pareto-h"),
        (vec!["run", "oltp_point_select", "--threads=100000000"], "allows"),
    ] {
        let o = db.fairbench(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}\n{}", text(&o));
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle) && !err.contains("panicked"), "{args:?}: {err}");
    }
}
