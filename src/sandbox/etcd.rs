//! Patroni's DCS: one etcd member (Debian's `etcd-server`) on 127.0.0.1, its client and peer
//! ports from the sandbox's port block, its data in `<sandbox>/etcd/`. Started before the
//! Patroni nodes, stopped after them.

use super::process::{self, ProcessStatus, Signal};
use super::{http, Sandbox, SandboxError, START_DEADLINE, STOP_DEADLINE};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// etcd's two ports on 127.0.0.1.
#[derive(Clone, Copy, Debug)]
pub struct Ports {
    pub client: u16,
    pub peer: u16,
}

fn dir(sb: &Sandbox) -> PathBuf {
    sb.dir.join("etcd")
}

fn pid_file(sb: &Sandbox) -> PathBuf {
    dir(sb).join("etcd.pid")
}

pub fn log_file(sb: &Sandbox) -> PathBuf {
    dir(sb).join("etcd.log")
}

/// etcd's pid and state.
pub fn state(sb: &Sandbox) -> (Option<i32>, ProcessStatus) {
    let pid = process::read_pid(&pid_file(sb));
    let status = process::status(pid, "etcd", &dir(sb));
    (pid.filter(|_| status != ProcessStatus::Stopped), status)
}

fn healthy(ports: Ports) -> bool {
    let answer = http::get("127.0.0.1", ports.client, "/health", Duration::from_secs(1));
    answer.is_ok_and(|(status, body)| status == 200 && body.contains("true"))
}

/// Starts etcd (`binary`) unless it runs, and waits until it says it is healthy; true when
/// started.
pub fn start(sb: &Sandbox, binary: &Path, ports: Ports) -> Result<bool, SandboxError> {
    if state(sb).1 == ProcessStatus::Running {
        return Ok(false);
    }
    let d = dir(sb);
    std::fs::create_dir_all(&d).map_err(SandboxError::io("cannot create", &d))?;
    let client = format!("http://127.0.0.1:{}", ports.client);
    let peer = format!("http://127.0.0.1:{}", ports.peer);
    let mut cmd = process::command(binary, &d, None);
    cmd.args(["--name", "fairbench", "--data-dir", "data"]);
    cmd.args(["--listen-client-urls", &client, "--advertise-client-urls", &client]);
    cmd.args(["--listen-peer-urls", &peer, "--initial-advertise-peer-urls", &peer]);
    cmd.args(["--initial-cluster", &format!("fairbench={peer}"), "--initial-cluster-state", "new"]);
    let mut child = process::spawn_detached(cmd, &log_file(sb))?;
    let pid = pid_file(sb);
    std::fs::write(&pid, format!("{}\n", child.id())).map_err(SandboxError::io("cannot write", &pid))?;
    let exited = |c: &mut std::process::Child| matches!(c.try_wait(), Ok(Some(_)));
    if process::wait_until(START_DEADLINE, || healthy(ports) || exited(&mut child)) && healthy(ports) {
        return Ok(true);
    }
    let tail = process::log_tail(&log_file(sb), 3);
    Err(SandboxError::Failed(format!("etcd did not become healthy on {client}: {tail}")))
}

/// Stops etcd (TERM, KILL after the deadline); true when it ran.
pub fn stop(sb: &Sandbox) -> Result<bool, SandboxError> {
    let (Some(pid), _) = state(sb) else { return Ok(false) };
    process::send(pid, Signal::Term, "etcd", &dir(sb))?;
    let gone = || state(sb).1 == ProcessStatus::Stopped;
    if !process::wait_until(STOP_DEADLINE, gone) {
        process::send(pid, Signal::Kill, "etcd", &dir(sb))?;
        process::wait_until(Duration::from_secs(10), gone);
    }
    Ok(true)
}
