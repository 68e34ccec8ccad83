//! Patroni's view of a sandbox and its two ways of moving the leader: the members and the
//! leader as the REST API reports them (`GET /cluster`), a planned switchover and a manual
//! failover through `patronictl`, each waited for until the new leader takes writes.

use super::engine::{self, on};
use super::patroni::{config_path, settings};
use super::{home, http, process, Sandbox, SandboxError, START_DEADLINE};
use std::time::{Duration, Instant};

/// One member as Patroni reports it.
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
pub struct Member {
    pub name: String,
    /// `leader`, `replica` or `sync_standby`.
    pub role: String,
    /// `running`, `streaming`, `stopped`, `starting`, ...
    #[serde(default)]
    pub state: String,
}

#[derive(serde::Deserialize)]
struct Cluster {
    members: Vec<Member>,
}

/// The members as the first node whose REST API answers reports them.
pub fn members(sb: &Sandbox) -> Result<Vec<Member>, SandboxError> {
    let s = settings(sb)?;
    let mut last = String::from("no node");
    for node in &sb.nodes {
        match http::get(&node.host, s.rest_port, "/cluster", Duration::from_secs(2)) {
            Ok((200, body)) => match serde_json::from_str::<Cluster>(&body) {
                Ok(c) => return Ok(c.members),
                Err(e) => last = format!("{}'s /cluster is not Patroni's: {e}", node.name),
            },
            Ok((status, _)) => last = format!("{}'s /cluster answered {status}", node.name),
            Err(e) => last = format!("{}:{}: {e}", node.host, s.rest_port),
        }
    }
    Err(SandboxError::Failed(format!("no Patroni REST API of sandbox {} answers ({last})", sb.name)))
}

/// The sandbox's current leader as Patroni says (None while it has none).
pub fn leader(sb: &Sandbox) -> Result<Option<String>, SandboxError> {
    Ok(members(sb)?.into_iter().find(|m| m.role == "leader").map(|m| m.name))
}

/// A planned switchover to `candidate`; waits until it leads and takes writes.
pub fn switchover(sandbox: &str, candidate: &str) -> Result<String, SandboxError> {
    change(sandbox, candidate, "switchover")
}

/// A manual failover to `candidate`; waits until it leads and takes writes.
pub fn failover(sandbox: &str, candidate: &str) -> Result<String, SandboxError> {
    change(sandbox, candidate, "failover")
}

fn change(sandbox: &str, candidate: &str, action: &str) -> Result<String, SandboxError> {
    let sb = Sandbox::load(&home()?, sandbox)?;
    let node = sb.node(candidate)?;
    let before = leader(&sb)?;
    if before.as_deref() == Some(candidate) {
        return Err(SandboxError::Failed(format!("{candidate} leads already: a {action} to it changes nothing")));
    }
    let binary = engine::find_binary("patronictl")
        .ok_or(SandboxError::Missing { what: "Patroni (patronictl)".into(), package: "patroni etcd-server" })?;
    let mut cmd = process::command(&binary, &sb.dir, None);
    cmd.arg("-c").arg(config_path(node)).args([action, &sb.name]);
    // Patroni 3.0.2's switchover wants the current leader named.
    if let (Some(current), "switchover") = (&before, action) {
        cmd.args(["--leader", current]);
    }
    cmd.args(["--candidate", candidate, "--force"]);
    let began = Instant::now();
    let said = process::run(cmd, &format!("patronictl {action}"))?;
    await_leader(&sb, candidate)
        .map_err(|e| SandboxError::Failed(format!("{e} (patronictl said: {})", process::last_lines(&said, 2))))?;
    let from = before.unwrap_or_else(|| "no leader".into());
    let ms = began.elapsed().as_millis();
    Ok(format!("{action} from {from} to {candidate} (patronictl): {candidate} leads and takes writes after {ms} ms"))
}

/// Waits until Patroni names `candidate` the leader and a write on it succeeds.
fn await_leader(sb: &Sandbox, candidate: &str) -> Result<(), SandboxError> {
    let node = sb.node(candidate)?;
    let engine = engine::of(sb)?;
    let token = format!("{candidate}-leads-{}", std::process::id());
    let mut last = String::new();
    let leads = process::wait_until(START_DEADLINE, || match leader(sb) {
        Ok(Some(l)) if l == candidate => engine.write_marker(node, &token).map_err(|e| last = e.to_string()).is_ok(),
        Ok(other) => {
            last = format!("the leader is {}", other.as_deref().unwrap_or("none"));
            false
        }
        Err(e) => {
            last = e.to_string();
            false
        }
    });
    if leads {
        return Ok(());
    }
    let secs = START_DEADLINE.as_secs();
    Err(on(node, "leading")(crate::db::DbError::timeout(format!("not the writable leader within {secs} s: {last}"))))
}
