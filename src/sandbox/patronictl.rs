//! Patroni's two ways of moving the leader: a planned switchover and a manual failover
//! through `patronictl`, each waited for until the new leader takes writes.

use super::engine::on;
use super::engines;
use super::patroni::{binary, config_path, leader};
use super::{home, process, Sandbox, SandboxError, START_DEADLINE};
use std::time::Instant;

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
    let mut cmd = process::command(&binary("patronictl")?, &sb.dir, None);
    cmd.arg("-c").arg(config_path(node)).args([action, &sb.name]);
    // Patroni 3.0.2's switchover wants the current leader named.
    if let (Some(current), "switchover") = (&before, action) {
        cmd.args(["--leader", current]);
    }
    cmd.args(["--candidate", candidate, "--force"]);
    let began = Instant::now();
    let said = process::run(cmd, &format!("patronictl {action}"))?;
    // patronictl exits 0 when Patroni refuses (a candidate not healthy yet, ...).
    if let Some(refused) = said.lines().find(|l| l.contains(" failed, details: ")) {
        return Err(SandboxError::Failed(format!("patronictl {action} to {candidate}: {}", refused.trim())));
    }
    await_leader(&sb, candidate)
        .map_err(|e| SandboxError::Failed(format!("{e} (patronictl said: {})", process::last_lines(&said, 2))))?;
    let from = before.unwrap_or_else(|| "no leader".into());
    let ms = began.elapsed().as_millis();
    Ok(format!("{action} from {from} to {candidate} (patronictl): {candidate} leads and takes writes after {ms} ms"))
}

/// Waits until Patroni names `candidate` the leader and a write on it succeeds.
fn await_leader(sb: &Sandbox, candidate: &str) -> Result<(), SandboxError> {
    let node = sb.node(candidate)?;
    let engine = engines::of(sb)?;
    let token = format!("{candidate}-leads-{}", std::process::id());
    let leads = process::wait_until_fine(START_DEADLINE, || -> Result<_, SandboxError> {
        Ok(match leader(sb)? {
            Some(l) if l == candidate => engine.write_marker(node, &token).err().map(|e| e.to_string()),
            other => Some(format!("the leader is {}", other.as_deref().unwrap_or("none"))),
        })
    });
    let Some(last) = leads else { return Ok(()) };
    let secs = START_DEADLINE.as_secs();
    Err(on(node, "leading")(crate::db::DbError::timeout(format!("not the writable leader within {secs} s: {last}"))))
}
