//! `--proxy`: HAProxy in front of a sandbox, the one endpoint an application would use: a
//! writer port (the primary, the others as backups used while it is down) and a reader port
//! (the replicas in turn, or every member). Health checks speak the database's protocol every
//! 500 ms; two failures mark a server down and close its sessions, as in production. The
//! proxy does not know roles: after a promotion it sends writes to the promoted node only
//! while the old primary is down, and back to the old one when it returns.

use super::engine::{find_binary, Engine};
use super::lines::NodeLine;
use super::process::{self, ProcessStatus};
use super::{Role, Sandbox, SandboxError};
use std::fmt::Write;
use std::path::PathBuf;
use std::time::Duration;

/// The proxy's two ports, recorded in sandbox.json.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Proxy {
    pub writer_port: u16,
    pub reader_port: u16,
}

fn dir(sb: &Sandbox) -> PathBuf {
    sb.dir.join("proxy")
}

fn pid_file(sb: &Sandbox) -> PathBuf {
    dir(sb).join("haproxy.pid")
}

pub fn check_installed() -> Result<PathBuf, SandboxError> {
    find_binary("haproxy").ok_or(SandboxError::Missing { what: "HAProxy".into(), package: "haproxy" })
}

/// haproxy.cfg: the writer (primary first, the others as backups) and the reader. With a
/// manager's role-aware check (`check port`), every node is a server of both: the check
/// picks.
pub fn config(sb: &Sandbox, engine: &dyn Engine, p: &Proxy) -> String {
    let mut c = String::from(
        "# Written by `fairbench sandbox up --proxy`.\nglobal\n    maxconn 4000\ndefaults\n    mode tcp\n    timeout connect 1s\n    timeout client 1h\n    timeout server 1h\n    default-server inter 500ms fall 2 rise 2 on-marked-down shutdown-sessions\n",
    );
    let check_port = engine.proxy_check_port(sb);
    let check = check_port.map_or("check".to_string(), |port| format!("check port {port}"));
    let _ = writeln!(c, "listen writer\n    bind 127.0.0.1:{}\n    {}", p.writer_port, engine.proxy_check(false));
    for (i, n) in sb.nodes.iter().enumerate() {
        let backup = if i == 0 || check_port.is_some() { "" } else { " backup" };
        let _ = writeln!(c, "    server {} {}:{} {check}{backup}", n.name, n.host, n.port);
    }
    let _ = writeln!(
        c,
        "listen reader\n    bind 127.0.0.1:{}\n    balance roundrobin\n    {}",
        p.reader_port,
        engine.proxy_check(true)
    );
    let readers: Vec<_> = sb.nodes.iter().filter(|n| n.role != Role::Primary || check_port.is_some()).collect();
    let readers = if readers.is_empty() { sb.nodes.iter().collect() } else { readers };
    for n in readers {
        let _ = writeln!(c, "    server {} {}:{} {check}", n.name, n.host, n.port);
    }
    c
}

/// Starts HAProxy in the foreground of a session of its own, and waits until both ports
/// accept connections.
pub fn start(sb: &Sandbox, engine: &dyn Engine) -> Result<(), SandboxError> {
    let Some(p) = &sb.proxy else { return Ok(()) };
    let binary = check_installed()?;
    let d = dir(sb);
    std::fs::create_dir_all(&d).map_err(SandboxError::io("cannot create", &d))?;
    let cfg = d.join("haproxy.cfg");
    std::fs::write(&cfg, config(sb, engine, p)).map_err(SandboxError::io("cannot write", &cfg))?;
    let mut cmd = process::command(&binary, &d, None);
    cmd.arg("-db").arg("-f").arg(&cfg);
    let child = process::spawn_detached(cmd, &d.join("haproxy.log"))?;
    let pid = pid_file(sb);
    std::fs::write(&pid, format!("{}\n", child.id())).map_err(SandboxError::io("cannot write", &pid))?;
    let accepts = |port: u16| std::net::TcpStream::connect(("127.0.0.1", port)).is_ok();
    if process::wait_until(Duration::from_secs(10), || accepts(p.writer_port) && accepts(p.reader_port)) {
        return match engine.proxy_check_port(sb) {
            Some(_) => await_writer_on_primary(sb, engine, p),
            None => Ok(()),
        };
    }
    let tail = process::log_tail(&d.join("haproxy.log"), 3);
    Err(SandboxError::Failed(format!(
        "HAProxy did not listen on ports {} and {}: {tail}",
        p.writer_port, p.reader_port
    )))
}

/// HAProxy counts every server up until its checks fail: with role-aware checks the writer
/// first balances over every node. Waits until it reaches only the primary: as many primaries
/// in a row as there are nodes (the writer balances round robin).
fn await_writer_on_primary(sb: &Sandbox, engine: &dyn Engine, p: &Proxy) -> Result<(), SandboxError> {
    let via = super::Node { host: "127.0.0.1".into(), port: p.writer_port, ..sb.nodes[0].clone() };
    let mut in_a_row = 0;
    let settled = process::wait_until(Duration::from_secs(30), || {
        in_a_row = if engine.role(&via).is_ok_and(|r| r == "primary") { in_a_row + 1 } else { 0 };
        in_a_row >= sb.nodes.len()
    });
    if settled {
        return Ok(());
    }
    let log = process::log_tail(&dir(sb).join("haproxy.log"), 3);
    Err(SandboxError::Failed(format!(
        "HAProxy's writer port {} does not reach the primary alone: {log}",
        p.writer_port
    )))
}

/// The proxy's pid and state.
pub fn state(sb: &Sandbox) -> (Option<i32>, ProcessStatus) {
    let pid = process::read_pid(&pid_file(sb));
    let status = process::status(pid, "haproxy", &dir(sb));
    (pid.filter(|_| status != ProcessStatus::Stopped), status)
}

/// Stops it (TERM); true when it ran.
pub fn stop(sb: &Sandbox) -> Result<bool, SandboxError> {
    let (Some(pid), _) = state(sb) else { return Ok(false) };
    process::send(pid, process::Signal::Term, "haproxy", &dir(sb))?;
    process::wait_until(Duration::from_secs(10), || state(sb).1 == ProcessStatus::Stopped);
    Ok(true)
}

/// `writer` and `reader` as `sandbox up` and `ls` print them.
pub fn lines(sb: &Sandbox, engine: &dyn Engine) -> Vec<NodeLine> {
    let Some(p) = &sb.proxy else { return Vec::new() };
    let (pid, status) = state(sb);
    [("writer", p.writer_port), ("reader", p.reader_port)]
        .into_iter()
        .map(|(name, port)| NodeLine {
            sandbox: sb.name.clone(),
            engine: sb.engine.clone(),
            node: name.into(),
            role: "proxy".into(),
            url: engine.url("127.0.0.1", port),
            pid,
            status,
        })
        .collect()
}
