//! `probe lag` from its request: the primary and its replicas opened, the heartbeat table
//! made and seen on every replica, heartbeats written and read beside the workload if any,
//! each replica's lag judged.

use super::alongside::{Own, Started};
use super::host::{Host, Notice, Probed};
use super::lag::{self, LagOptions};
use super::{nodes, session};
use crate::db::follow::FollowPrimary;
use crate::db::{Database, TargetUrl};
use crate::model::ha::HaRecord;
use crate::model::probe_request::LagRequest;
use crate::model::ProbeRequest;
use crate::sandbox::fault::Schedule;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(super) fn run<D: Database, H: Host>(
    db: Arc<D>,
    urls: &[TargetUrl],
    a: &LagRequest,
    faults: Option<Schedule>,
    host: &H,
) -> Result<Probed, H::Error> {
    let common = &a.common;
    let dbs = nodes::open_all(db, urls, &nodes::probe_options(common))?;
    let redacted: Vec<String> = urls.iter().map(TargetUrl::redacted).collect();
    let names: Vec<String> =
        std::iter::once("primary".to_string()).chain((1..urls.len()).map(|i| format!("replica{i}"))).collect();
    let rt = crate::local_runtime();
    let described = rt.block_on(session::describe_all(&dbs, &names, &redacted, common.attempt_timeout()));
    let replicas: Vec<(Arc<D>, String)> = dbs[1..].iter().cloned().zip(redacted[1..].iter().cloned()).collect();
    rt.block_on(lag::setup(&*dbs[0], &replicas, common.attempt_timeout()))?;
    let opts = LagOptions {
        rate: common.rate,
        duration: super::alongside::duration(common),
        poll: Duration::from_secs_f64(a.poll_ms / 1000.0),
        drain: Duration::from_secs_f64(a.drain_s),
        timeout: common.attempt_timeout(),
        run_id: super::run_id(),
        events: None,
    };
    let (rate, primary, poll_ms, run_id) = (opts.rate, redacted[0].as_str(), a.poll_ms, opts.run_id);
    host.notice(Notice::LagStarts { rate, primary, poll_ms, run_id });
    let own = Own {
        probe: "lag",
        statement: "probe.heartbeat",
        sql: lag::INSERT.into(),
        request: ProbeRequest::Lag(a.clone()),
    };
    let (mut started, events) =
        Started::begin(host, common, own, (&*dbs[0], &urls[0]), (described, session::lag_plan(&opts)), faults)?;
    let (primary, readers, clock) = (dbs[0].clone(), dbs[1..].to_vec(), started.clock);
    let lag_opts = LagOptions { events, ..opts.clone() };
    let load_db = Arc::new(FollowPrimary::new(dbs[..1].to_vec(), redacted[..1].to_vec()));
    let ((written, seen), workload) = started.alongside(host, common, (&load_db, &urls[..1]), move |stop| {
        let stop: std::rc::Rc<dyn Fn() -> bool> = std::rc::Rc::new(move || stop());
        crate::local_runtime().block_on(lag::run(primary, readers, &lag_opts, clock, stop))
    })?;
    let end = Instant::now();
    let replicas = seen
        .iter()
        .zip(&redacted[1..])
        .map(|(s, url)| lag::replica_record(url.clone(), &lag::lags(&written, s), s, &opts))
        .collect();
    let record = lag::record(&written, replicas, &opts);
    Ok(started.finish(host, end, workload, |ha, _| Ok(HaRecord { lag: Some(record), ..ha }))?)
}
