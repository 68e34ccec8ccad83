//! `--fault` checked before anything starts: the schedule of a probe or a run that ends at
//! `end`, on its sandbox (named, or the one with a node at the first target's port). It is
//! performed on the measurement's own clock (`sandbox::fault::perform`).

use super::ProbeError;
use crate::db::TargetUrl;
use crate::model::request::FaultRequest;
use crate::sandbox::fault::{self, Schedule};
use std::time::Duration;

/// The schedule: every node known, every step before `end`.
pub fn schedule(args: &FaultRequest, first: &TargetUrl, end: Duration) -> Result<Option<Schedule>, ProbeError> {
    let Some(text) = &args.fault else { return Ok(None) };
    let name = match (&args.sandbox, fault::needs_sandbox(text)?) {
        (Some(n), _) => Some(n.clone()),
        (None, false) => None,
        (None, true) => Some(
            fault::owning(&first.host, first.port)
                .ok_or_else(|| ProbeError::NoSandboxAt { host: first.host.clone(), port: first.port })?,
        ),
    };
    Ok(Some(fault::check(text, name.as_deref(), end)?))
}
