//! Helpers for tests on `fairbench sandbox` servers: free ports, and SQL through each
//! engine's own client (never through fairbench, whose behaviour the tests check).

use std::net::TcpListener;
use std::process::Command;
use std::time::{Duration, Instant};

/// The first of `count` consecutive free ports from `base` (each test its own base, so tests
/// of this binary never compete for ports).
pub fn free_ports(base: u16, count: u16) -> u16 {
    let free = |p: u16| TcpListener::bind(("0.0.0.0", p)).is_ok() && TcpListener::bind(("127.0.0.1", p)).is_ok();
    (base..base + 1000).find(|&b| (b..b + count).all(free)).expect("a free block of ports")
}

/// SQL through the engine's own client as its administrator: Ok(output) or Err(stderr).
pub fn client(engine: &str, port: u16, sql: &str) -> Result<String, String> {
    let admin = if engine == "mariadb" { "root" } else { "postgres" };
    client_as(engine, port, admin, sql)
}

/// SQL through the engine's own client as `user` (the sandbox's benchmark user is `fairbench`).
pub fn client_as(engine: &str, port: u16, user: &str, sql: &str) -> Result<String, String> {
    client_at(engine, "127.0.0.1", port, user, sql)
}

/// SQL through the engine's own client as `user` on the node at `host`:`port` (Patroni
/// sandboxes place each node on its own loopback address).
pub fn client_at(engine: &str, host: &str, port: u16, user: &str, sql: &str) -> Result<String, String> {
    let port = port.to_string();
    let h = format!("-h{host}");
    let mut cmd = match engine {
        "mariadb" => {
            let mut c = Command::new("mariadb");
            let user = format!("-u{user}");
            c.args(["--protocol=tcp", &h, "-P", &port, &user, "-N", "-B", "fairbench", "-e", sql]);
            c
        }
        _ => {
            let mut c = Command::new("psql");
            c.args(["-X", "-h", host, "-p", &port, "-U", user, "-d", "fairbench", "-At", "-c", sql]);
            c
        }
    };
    let o = cmd.output().map_err(|e| e.to_string())?;
    if o.status.success() {
        Ok(String::from_utf8_lossy(&o.stdout).trim().to_string())
    } else {
        Err(String::from_utf8_lossy(&o.stderr).into_owned())
    }
}

/// Polls `f` until it returns Some, for at most `secs` seconds.
pub fn wait_for<T>(secs: u64, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(start.elapsed() < Duration::from_secs(secs), "{what}: not within {secs} s");
        std::thread::sleep(Duration::from_millis(100));
    }
}
