//! `probe failover` from its request: the nodes opened (with those the cluster names), the
//! probe's table made, the writer and the role watchers run beside the workload if any, the
//! attempts judged and every node's rows looked up.

use super::alongside::{Own, Started};
use super::failover::{self, FailoverOptions, Targets};
use super::host::{Host, Notice, Probed};
use super::nodes::{self, Endpoints};
use super::{check, discover, servers, session, verdict, ProbeError};
use crate::db::follow::FollowPrimary;
use crate::db::Database;
use crate::model::ha::{FailoverRecord, HaRecord};
use crate::model::probe_request::FailoverRequest;
use crate::model::ProbeRequest;
use crate::sandbox::fault::Schedule;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(super) fn run<D: Database, H: Host>(
    db: Arc<D>,
    mut endpoints: Endpoints,
    a: &FailoverRequest,
    faults: Option<Schedule>,
    host: &H,
) -> Result<Probed, H::Error> {
    let common = &a.common;
    let rt = crate::local_runtime();
    let dbs = nodes::open_all(db, &endpoints.urls, &nodes::probe_options(common))?;
    let dbs = rt.block_on(with_listed(dbs, &mut endpoints, a, host))?;
    let targets = nodes::targets_of(dbs, &endpoints);
    let described = session::describe_all(&targets.dbs, &endpoints.names, &targets.urls, common.attempt_timeout());
    let described = rt.block_on(described);
    rt.block_on(failover::setup(&targets, common.attempt_timeout()))?;
    let opts = FailoverOptions {
        rate: common.rate,
        duration: super::alongside::duration(common),
        attempt_timeout: common.attempt_timeout(),
        role_poll: Duration::from_secs_f64(a.role_poll_ms / 1000.0),
        settle_timeout: Duration::from_secs_f64(a.settle_timeout_s),
        run_id: super::run_id(),
        events: None,
    };
    announce(host, &opts, &targets, a.role_poll_ms);
    let sql = failover::insert_sql(&*targets.dbs[0]);
    let own = Own { probe: "failover", statement: "probe.write", sql, request: ProbeRequest::Failover(a.clone()) };
    let first = (&*targets.dbs[0], &endpoints.urls[0]);
    let (mut started, events) =
        Started::begin(host, common, own, first, (described, session::failover_plan(&opts)), faults)?;
    let targets = Arc::new(targets);
    let (writer_targets, writer_opts, clock) =
        (targets.clone(), FailoverOptions { events, ..opts.clone() }, started.clock);
    // The workload follows the primary over the targets, as the probe's writer does.
    let writers = targets.writers;
    let load_db = Arc::new(FollowPrimary::new(targets.dbs[..writers].to_vec(), targets.urls[..writers].to_vec()));
    let (written, workload) = started.alongside(host, common, (&load_db, &endpoints.urls[..writers]), move |stop| {
        crate::local_runtime().block_on(failover::write(&writer_targets, &writer_opts, clock, &*stop))
    })?;
    let end = Instant::now();
    let judge = |ha: HaRecord, record: Option<&crate::model::record::Record>| {
        let judged = match record {
            // The verdict on the ledger read back from the record.
            Some(record) => session::Ledger::of(record)
                .ok_or(ProbeError::NoLedger)?
                .verdict(Some(clock.us(end)), written.timing.clone()),
            None => verdict::record(written.attempts, written.roles, &opts, clock.us(end), written.timing),
        };
        Ok(HaRecord { failover: Some(looked_up(judged, &targets, &endpoints, &opts, &rt)), ..ha })
    };
    Ok(started.finish(host, end, workload, judge)?)
}

/// The attempts' rows looked up on every endpoint, and the servers named.
fn looked_up<D: Database>(
    mut record: FailoverRecord,
    targets: &Targets<D>,
    endpoints: &Endpoints,
    opts: &FailoverOptions,
    rt: &crate::LocalRuntime,
) -> FailoverRecord {
    let timeout = opts.attempt_timeout.max(Duration::from_secs(5));
    let checked = rt.block_on(check::all(targets, &record.attempts, opts.run_id, timeout, opts.settle_timeout));
    check::apply(&mut record, checked);
    servers::name(&mut record, &nodes::endpoint_names(endpoints, targets));
    record
}

/// `dbs` with the nodes the cluster names (each endpoint's own list, Patroni's members)
/// opened and added to `endpoints`.
async fn with_listed<D: Database, H: Host>(
    mut dbs: Vec<Arc<D>>,
    endpoints: &mut Endpoints,
    a: &FailoverRequest,
    host: &H,
) -> Result<Vec<Arc<D>>, ProbeError> {
    let timeout = a.common.attempt_timeout().max(Duration::from_secs(2));
    let mut listed: Vec<_> = discover::listed(&dbs, timeout).await.into_iter().map(|n| (None, n)).collect();
    if let Some(api) = &a.patroni_api {
        let members = discover::patroni_members(api, timeout).await?;
        listed.splice(0..0, members.into_iter().map(|(name, n)| (Some(name), n)));
    }
    let known = dbs.len();
    let added = endpoints.add_listed(listed);
    let options = nodes::probe_options(&a.common);
    let mut candidates = Vec::new();
    for u in &endpoints.urls[known..] {
        candidates.push(Arc::new(D::open(u, &options)?));
    }
    let dialled = endpoints.dialled();
    let verdicts = discover::worth_reading(&dbs, &dialled[..known], endpoints.writers, &candidates, timeout).await;
    for ((i, verdict), (db, what)) in verdicts.into_iter().enumerate().zip(candidates.into_iter().zip(added)).rev() {
        if let Err(why) = verdict {
            host.notice(Notice::NotReading { what: &what, why: &why });
            endpoints.remove(known + i);
            continue;
        }
        host.notice(Notice::AlsoReading { what: &what });
        dbs.insert(known, db);
    }
    Ok(dbs)
}

fn announce<D, H: Host>(host: &H, opts: &FailoverOptions, targets: &Targets<D>, role_poll_ms: f64) {
    host.notice(Notice::FailoverStarts {
        rate: opts.rate,
        writers: &targets.urls[..targets.writers],
        others: targets.urls.len() - targets.writers,
        role_poll_ms,
        run_id: opts.run_id,
    });
}
