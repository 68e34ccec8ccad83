//! `probe verify` (and `recover`'s loss check): the rows of a saved failover probe looked up
//! again on every node it wrote to (or the nodes named), the final primary judged anew.

use super::ending::Unfinished;
use super::nodes::{self, Endpoints};
use super::{check, servers, ProbeError};
use crate::db::Database;
use crate::model::ha::Attempt;
use crate::model::probe_request::VerifyRequest;
use crate::model::ResultDocument;
use crate::with_database;
use std::sync::Arc;
use std::time::Duration;

/// `doc` with its rows looked up again (its checks and verification replaced), finished
/// anew: its audit replaced.
pub fn verify(mut doc: ResultDocument, request: &VerifyRequest) -> Result<ResultDocument, ProbeError> {
    look_again(&mut doc, request)?;
    Ok(Unfinished::Verified(doc).finish()?)
}

/// The rows of the failover probe in `doc` looked up on every node (or those `request`
/// names), the final primary judged anew: its checks and verification replaced.
pub fn look_again(doc: &mut ResultDocument, request: &VerifyRequest) -> Result<(), ProbeError> {
    let not_failover = || ProbeError::NotFailover(request.result.clone());
    let ha = doc.ha.clone().ok_or_else(not_failover)?;
    let failover = ha.failover.as_ref().ok_or_else(not_failover)?;
    let given = !request.targets.is_empty();
    let raw: Vec<String> = match given {
        true => request.targets.clone(),
        // A redacted password is none: --password-file or FAIRBENCH_PASSWORD gives it.
        false => ha.nodes.iter().map(|n| n.url.replacen(":***@", "@", 1)).collect(),
    };
    let urls = crate::db::TargetUrl::parse_nodes(&raw, request.password_file.as_deref())?;
    if urls.is_empty() {
        return Err(ProbeError::NoNodes);
    }
    let options = nodes::connect_options(&request.connect);
    let writers = if given { urls.len() } else { ha.nodes.iter().filter(|n| n.name.starts_with("target")).count() };
    let labels: Vec<Option<String>> = match given {
        true => vec![None; urls.len()],
        false => ha.nodes.iter().enumerate().map(|(i, n)| (i >= writers).then(|| n.name.clone())).collect(),
    };
    let endpoints = Endpoints { urls, names: Vec::new(), labels, writers };
    let (attempts, run_id) = (&failover.attempts, failover.run_id);
    let settle = Duration::from_secs_f64(request.settle_timeout_s);
    let found =
        with_database!(&endpoints.urls[0], &options, |db| look_up(db, &endpoints, &options, attempts, run_id, settle))?;
    if let Some(f) = doc.ha.as_mut().and_then(|h| h.failover.as_mut()) {
        check::apply(f, found.0);
        servers::name(f, &found.1);
    }
    Ok(())
}

/// Every endpoint looked up (the first opened as `first`).
fn look_up<D: Database>(
    first: Arc<D>,
    endpoints: &Endpoints,
    options: &crate::db::ConnectOptions,
    attempts: &[Attempt],
    run_id: i64,
    settle: Duration,
) -> Result<(check::Checked, servers::EndpointNames), ProbeError> {
    let dbs = nodes::open_all(first, &endpoints.urls, options)?;
    let targets = nodes::targets_of(dbs, endpoints);
    let timeout = options.connect_timeout.max(Duration::from_secs(5));
    let checked = crate::local_runtime().block_on(check::all(&targets, attempts, run_id, timeout, settle));
    Ok((checked, nodes::endpoint_names(endpoints, &targets)))
}
