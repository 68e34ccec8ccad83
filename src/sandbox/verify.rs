//! Replication is verified, never assumed: a fresh marker written on the source must be read
//! on the replica within a deadline, with the replica's threads or stream healthy.

use super::engine::{log_file, on, Engine};
use super::process::wait_until_fine;
use super::{Node, Sandbox, SandboxError, REPLICATION_DEADLINE};
use crate::db::DbError;

/// A token no earlier verification wrote.
fn fresh_token() -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    format!("{}-{nanos}", std::process::id())
}

/// Writes a marker on `source` and waits until `replica` reads it and replicates healthily.
pub fn replication(engine: &dyn Engine, sb: &Sandbox, source: &Node, replica: &Node) -> Result<(), SandboxError> {
    let token = fresh_token();
    engine.write_marker(source, &token).map_err(on(source, "writing the replication marker"))?;
    let healthy = wait_until_fine(REPLICATION_DEADLINE, || check(engine, sb, source, replica, &token));
    let Some(problem) = healthy else { return Ok(()) };
    Err(SandboxError::Failed(format!(
        "{} does not replicate from {} within {} s: {problem} (see {})",
        replica.name,
        source.name,
        REPLICATION_DEADLINE.as_secs(),
        log_file(replica).display()
    )))
}

fn check(
    engine: &dyn Engine,
    sb: &Sandbox,
    source: &Node,
    replica: &Node,
    token: &str,
) -> Result<Option<String>, DbError> {
    if let Some(problem) = engine.replication_problem(sb, source, replica)? {
        return Ok(Some(problem));
    }
    Ok(match engine.read_marker(replica)? {
        Some(t) if t == token => None,
        _ => Some(format!("the marker written on {} has not arrived", source.name)),
    })
}
