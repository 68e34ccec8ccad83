//! A probe from its request: its nodes parsed (all of one kind), its faults checked against
//! its end, all before any server is touched; then the first node opened and the failover
//! or lag probe run ([`super::failover_probe`], [`super::lag_probe`]).

use super::host::{Host, Probed};
use super::{failover_probe, faults, lag_probe, nodes, ProbeError};
use crate::model::probe_request::{FailoverRequest, LagRequest, ProbeOptions};
use crate::model::ProbeRequest;
use crate::with_database;
use std::time::Duration;

/// Runs the probe `request` asks for; the workload beside it, if any, in `host`'s run
/// session. Its result is finished, not yet saved.
pub fn run<H: Host>(request: &ProbeRequest, host: &H) -> Result<Probed, H::Error> {
    match request {
        ProbeRequest::Failover(a) => failover(a, host)?,
        ProbeRequest::Lag(a) => lag(a, host)?,
        ProbeRequest::Verify(_) => Err(ProbeError::VerifyMakesNoResult.into()),
    }
}

/// The nodes checked and the first one opened (its failure is the probe's error); the
/// probe's own outcome is the host's.
fn failover<H: Host>(a: &FailoverRequest, host: &H) -> Result<Result<Probed, H::Error>, ProbeError> {
    let password_file = a.common.password_file.as_deref();
    let urls = crate::db::TargetUrl::parse_nodes(&a.targets, password_file)?;
    let faults = faults::schedule(&a.common.faults, &urls[0], faults_end(&a.common))?;
    let endpoints = nodes::endpoints(urls, &a.nodes, password_file)?;
    let options = nodes::probe_options(&a.common);
    Ok(with_database!(&endpoints.urls[0], &options, |db| failover_probe::run(db, endpoints.clone(), a, faults, host)))
}

fn lag<H: Host>(a: &LagRequest, host: &H) -> Result<Result<Probed, H::Error>, ProbeError> {
    let all: Vec<String> = std::iter::once(a.primary.clone()).chain(a.replicas.iter().cloned()).collect();
    let urls = crate::db::TargetUrl::parse_nodes(&all, a.common.password_file.as_deref())?;
    let faults = faults::schedule(&a.common.faults, &urls[0], faults_end(&a.common))?;
    let options = nodes::probe_options(&a.common);
    Ok(with_database!(&urls[0], &options, |db| lag_probe::run(db, &urls, a, faults, host)))
}

/// Where `--fault` must end: the probe's end, or with a workload the workload's warmup and
/// time.
fn faults_end(common: &ProbeOptions) -> Duration {
    match &common.with {
        Some(run) => Duration::from_secs(run.time.unwrap_or(common.time().as_secs()) + u64::from(run.warmup)),
        None => common.time(),
    }
}
