//! `fairbench probe failover|lag`: the probe runs on a thread of its own; a workload given
//! with `--with` runs on this one (following the primary over the failover probe's targets), and its result carries the
//! probe's figures. Without one, the probe's own writes make the result.

use super::run::{default_out, measure_run, save_and_print};
use super::{connect_options, Error};
use crate::cli::{FailoverArgs, LagArgs, Probe, ProbeArgs, ProbeCommon, VerifyArgs};
use crate::db::follow::FollowPrimary;
use crate::db::{Database, TargetUrl};
use crate::model::ha::HaRecord;
use crate::model::{ResultDocument, RunRequest, TargetRequest};
use crate::plan::ConfigError;
use crate::probe::{self, failover, lag, session, Clock, ProbeError};
use crate::report::Report as _;
use crate::runner::signal;
use crate::{sandbox, with_database};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(super) fn probe_cmd(args: &ProbeArgs) -> Result<ExitCode, Error> {
    match &args.probe {
        Probe::Verify(a) => verify_cmd(a),
        _ => probe(args)?.save_and_print(),
    }
}

/// A failover or lag probe run, its result made (not yet saved).
pub(super) fn probe(args: &ProbeArgs) -> Result<Probed, Error> {
    match &args.probe {
        Probe::Failover(a) => {
            check_with(&a.common)?;
            let urls = super::nodes_of_one_kind(&a.targets, a.common.password_file.as_deref())?;
            let faults = fault_schedule(&a.common, &urls[0])?;
            let endpoints = super::probe_nodes::endpoints(urls, &a.nodes, a.common.password_file.as_deref())?;
            let options = options(&a.common);
            with_database!(&endpoints.urls[0], &options, |db| failover_cmd(db, endpoints.clone(), a, faults))
        }
        Probe::Lag(a) => {
            check_with(&a.common)?;
            let mut all = vec![a.primary.clone()];
            all.extend(a.replicas.iter().cloned());
            let urls = super::nodes_of_one_kind(&all, a.common.password_file.as_deref())?;
            let faults = fault_schedule(&a.common, &urls[0])?;
            let options = options(&a.common);
            with_database!(&urls[0], &options, |db| lag_cmd(db, &urls, a, faults))
        }
        Probe::Verify(_) => Err(ConfigError("probe verify makes no new result".into()).into()),
    }
}

/// A probe's result and where it goes.
pub(super) struct Probed {
    pub doc: ResultDocument,
    pub path: std::path::PathBuf,
    /// The workload beside it, whose options say how to print.
    workload: Option<RunRequest>,
    verbose: bool,
}

impl Probed {
    fn save_and_print(self) -> Result<ExitCode, Error> {
        if let Some(args) = &self.workload {
            return save_and_print(&self.doc, &self.path, args);
        }
        self.doc.write(&self.path)?;
        let opts = crate::report::ReportOptions { percentile: 95.0, verbose: self.verbose };
        print!("{}", crate::report::TextReport.render(&self.doc, &opts));
        print!("\n{}", crate::report::findings("Audit", &self.doc.audit));
        super::say(format_args!("Result saved to {}", self.path.display()));
        Ok(ExitCode::SUCCESS)
    }
}

/// `--fault` checked before anything starts, against the probe's end (with a workload: the
/// workload's warmup and time).
fn fault_schedule(common: &ProbeCommon, first: &TargetUrl) -> Result<Option<sandbox::fault::Schedule>, Error> {
    let end = match common.with_request("sqlite://check.db")? {
        Some(args) => Duration::from_secs(args.time.unwrap_or(common.time.as_secs()) + u64::from(args.warmup)),
        None => common.time,
    };
    super::faults::schedule(&(&common.faults).into(), first, end)
}

/// A bad --with is bad input: refused before any server is touched.
fn check_with(common: &ProbeCommon) -> Result<(), Error> {
    common.with_request("sqlite://check.db").map(|_| ()).map_err(Error::from)
}

/// `probe verify`: the rows of a saved failover probe looked up again on every node (or the
/// nodes named), the final primary judged anew; the result's checks, verdict and audit are
/// replaced.
fn verify_cmd(a: &VerifyArgs) -> Result<ExitCode, Error> {
    let mut doc = super::read_result(&a.result)?;
    look_again(&mut doc, a)?;
    let doc = crate::result::finish(doc, crate::result::Ending::default());
    doc.write(&a.result)?;
    print!("\n{}", crate::report::findings("Audit", &doc.audit));
    super::say(format_args!("Result updated: {}", a.result.display()));
    Ok(ExitCode::SUCCESS)
}

/// The rows of the failover probe in `doc` looked up on every node (or those `a` names), the
/// final primary judged anew: its checks and verification replaced and printed.
pub(super) fn look_again(doc: &mut ResultDocument, a: &VerifyArgs) -> Result<(), Error> {
    let not_failover = || ConfigError(format!("{} holds no failover probe (ha.failover)", a.result.display()));
    let ha = doc.ha.clone().ok_or_else(not_failover)?;
    let failover = ha.failover.as_ref().ok_or_else(not_failover)?;
    let raw: Vec<String> = match a.targets.is_empty() {
        false => a.targets.clone(),
        // A redacted password is none: --password-file or FAIRBENCH_PASSWORD gives it.
        true => ha.nodes.iter().map(|n| n.url.replacen(":***@", "@", 1)).collect(),
    };
    let urls = super::nodes_of_one_kind(&raw, a.password_file.as_deref())?;
    if urls.is_empty() {
        return Err(ConfigError("name the nodes to look on with --target".into()).into());
    }
    let options = connect_options(&TargetRequest { connect: (&a.connect).into(), ..TargetRequest::default() });
    let given = !a.targets.is_empty();
    let writers = if given { urls.len() } else { ha.nodes.iter().filter(|n| n.name.starts_with("target")).count() };
    let labels: Vec<Option<String>> = match given {
        true => vec![None; urls.len()],
        false => ha.nodes.iter().enumerate().map(|(i, n)| (i >= writers).then(|| n.name.clone())).collect(),
    };
    let endpoints = super::probe_nodes::Endpoints { urls, names: Vec::new(), labels, writers };
    let (attempts, run_id) = (failover.attempts.clone(), failover.run_id);
    let checked = with_database!(&endpoints.urls[0], &options, |db| look_up(
        db,
        &endpoints,
        &options,
        &attempts,
        run_id,
        a.settle_timeout
    ))?;
    if let Some(f) = doc.ha.as_mut().and_then(|h| h.failover.as_mut()) {
        probe::check::apply(f, checked.0);
        probe::servers::name(f, &checked.1);
        let mut text = String::new();
        crate::report::ha::verification(&mut text, f);
        print!("{text}");
    }
    Ok(())
}

/// Every endpoint looked up (the first opened as `first`).
fn look_up<D: Database>(
    first: Arc<D>,
    endpoints: &super::probe_nodes::Endpoints,
    options: &crate::db::ConnectOptions,
    attempts: &[crate::model::ha::Attempt],
    run_id: i64,
    settle: Duration,
) -> Result<(probe::check::Checked, probe::servers::EndpointNames), Error> {
    let mut dbs = vec![first];
    for u in &endpoints.urls[1..] {
        dbs.push(Arc::new(D::open(u, options)?));
    }
    let targets = targets_of(dbs, endpoints);
    let timeout = options.connect_timeout.max(Duration::from_secs(5));
    let checked = crate::local_runtime().block_on(probe::check::all(&targets, attempts, run_id, timeout, settle));
    Ok((checked, endpoint_names(endpoints, &targets)))
}

fn targets_of<D>(dbs: Vec<Arc<D>>, e: &super::probe_nodes::Endpoints) -> failover::Targets<D> {
    failover::Targets {
        dbs,
        urls: e.urls.iter().map(TargetUrl::redacted).collect(),
        writers: e.writers,
        dialled: e.dialled(),
    }
}

/// How the servers behind the endpoints are named ([`probe::servers::name`]).
fn endpoint_names<D>(e: &super::probe_nodes::Endpoints, t: &failover::Targets<D>) -> probe::servers::EndpointNames {
    probe::servers::EndpointNames {
        labels: e.labels.clone(),
        writers: e.writers,
        dialled: t.dialled.clone(),
        urls: t.urls.clone(),
    }
}

impl From<ProbeError> for Error {
    fn from(e: ProbeError) -> Self {
        Error::Config(ConfigError(e.to_string()))
    }
}

/// Every URL parsed (passwords from --password-file or the environment), all of one kind.
fn options(common: &ProbeCommon) -> crate::db::ConnectOptions {
    let mut options = connect_options(&TargetRequest { connect: (&common.connect).into(), ..TargetRequest::default() });
    // A probe must see an outage as it happens, not after the default 10 s.
    options.connect_timeout = options.connect_timeout.min(common.attempt_timeout);
    options
}

/// The other targets, of the same kind as the first.
fn open_all<D: Database>(first: Arc<D>, urls: &[TargetUrl], common: &ProbeCommon) -> Result<Vec<Arc<D>>, Error> {
    let options = options(common);
    let mut dbs = vec![first];
    for u in &urls[1..] {
        dbs.push(Arc::new(D::open(u, &options)?));
    }
    Ok(dbs)
}

fn failover_cmd<D: Database>(
    db: Arc<D>,
    mut endpoints: super::probe_nodes::Endpoints,
    a: &FailoverArgs,
    faults: Option<sandbox::fault::Schedule>,
) -> Result<Probed, Error> {
    let common = &a.common;
    let rt = crate::local_runtime();
    let dbs = open_all(db, &endpoints.urls, common)?;
    let dbs = rt.block_on(with_listed(dbs, &mut endpoints, a))?;
    let endpoints = &endpoints;
    let urls = &endpoints.urls;
    let targets = targets_of(dbs, endpoints);
    let nodes =
        rt.block_on(session::describe_all(&targets.dbs, &endpoints.names, &targets.urls, common.attempt_timeout));
    rt.block_on(failover::setup(&targets, common.attempt_timeout))?;
    let mut opts = failover::FailoverOptions {
        rate: common.rate,
        duration: probe_duration(common),
        attempt_timeout: common.attempt_timeout,
        role_poll: Duration::from_secs_f64(a.role_poll_ms / 1000.0),
        settle_timeout: a.settle_timeout,
        run_id: probe::run_id(),
        events: None,
    };
    say_start(&opts, &targets, a.role_poll_ms);
    let own = ("probe.write", failover::insert_sql(&*targets.dbs[0]));
    let before = before_start(common, &*targets.dbs[0], &urls[0]);
    let clock = Clock::now();
    let ha = session::ha_record("failover", clock.started_at, nodes, common.with.clone());
    let mut recording = recording(common, before, own, ha.clone(), clock)?;
    if let Some(r) = &mut recording {
        r.streamer.line(session::failover_plan(&opts));
        opts.events = r.sender.take();
    }
    let performer = faults.map(|s| sandbox::fault::perform(s, clock.start)).transpose()?;
    let targets = Arc::new(targets);
    let (writer_targets, writer_opts) = (targets.clone(), opts.clone());
    opts.events = None;
    // The workload follows the primary over the targets, as the probe's writer does.
    let writers = targets.writers;
    let load_db = Arc::new(FollowPrimary::new(targets.dbs[..writers].to_vec(), targets.urls[..writers].to_vec()));
    let ran = alongside(common, &load_db, (&urls[..writers], &a.targets[0]), recording.as_mut(), move |stop| {
        crate::local_runtime().block_on(failover::write(&writer_targets, &writer_opts, clock, &*stop))
    });
    let (written, workload) = ran?;
    let end = Instant::now();
    let faults = performer.map(sandbox::fault::Performer::finish);
    let judge = |attempts_and_roles: Option<session::Ledger>| {
        let verdict = match attempts_and_roles {
            Some(ledger) => ledger.verdict(Some(clock.us(end)), written.timing.clone()),
            None => probe::verdict::record(written.attempts, written.roles, &opts, clock.us(end), written.timing),
        };
        let mut record = verdict;
        let lookup_timeout = common.attempt_timeout.max(Duration::from_secs(5));
        let run_id = opts.run_id;
        let checked =
            rt.block_on(probe::check::all(&targets, &record.attempts, run_id, lookup_timeout, opts.settle_timeout));
        probe::check::apply(&mut record, checked);
        probe::servers::name(&mut record, &endpoint_names(endpoints, &targets));
        HaRecord { duration_s: clock.us(end) as f64 / 1e6, failover: Some(record), ..ha }
    };
    match recording {
        // The verdict on the ledger read back from the record.
        Some(r) => finish_recorded(r, (clock, end), faults, common, |record| {
            Ok(judge(Some(session::Ledger::of(record).ok_or(ProbeError::NoLedger)?)))
        }),
        None => with_workload(judge(None), faults, workload, common),
    }
}

/// `dbs` with the nodes the cluster names (each endpoint's own list, Patroni's members)
/// opened and added to `endpoints`.
async fn with_listed<D: Database>(
    mut dbs: Vec<Arc<D>>,
    endpoints: &mut super::probe_nodes::Endpoints,
    a: &FailoverArgs,
) -> Result<Vec<Arc<D>>, Error> {
    let timeout = a.common.attempt_timeout.max(Duration::from_secs(2));
    let mut listed: Vec<_> = probe::discover::listed(&dbs, timeout).await.into_iter().map(|n| (None, n)).collect();
    if let Some(api) = &a.patroni_api {
        let members = probe::discover::patroni_members(api, timeout).await?;
        listed.splice(0..0, members.into_iter().map(|(name, n)| (Some(name), n)));
    }
    let known = dbs.len();
    let added = endpoints.add_listed(listed);
    let options = options(&a.common);
    let mut candidates = Vec::new();
    for u in &endpoints.urls[known..] {
        candidates.push(Arc::new(D::open(u, &options)?));
    }
    let dialled = endpoints.dialled();
    let verdicts =
        probe::discover::worth_reading(&dbs, &dialled[..known], endpoints.writers, &candidates, timeout).await;
    for ((i, verdict), (db, what)) in verdicts.into_iter().enumerate().zip(candidates.into_iter().zip(added)).rev() {
        match verdict {
            Ok(()) => super::say(format_args!("probe failover: also reading {what}, a node the cluster names")),
            Err(why) => {
                super::say(format_args!("probe failover: not reading {what}: {why} (give a node with --node)"));
                endpoints.remove(known + i);
                continue;
            }
        }
        dbs.insert(known, db);
    }
    Ok(dbs)
}

fn say_start<D>(opts: &failover::FailoverOptions, targets: &failover::Targets<D>, role_poll_ms: f64) {
    let others = match targets.urls.len() - targets.writers {
        0 => String::new(),
        n => format!(" and {n} other node(s) of the cluster"),
    };
    super::say(format_args!(
        "probe failover: one write every {:.1} ms to {} (in this order on each reconnect), the role of every target{others} read every {} ms, run id {}",
        1000.0 / opts.rate,
        targets.urls[..targets.writers].join(", "),
        role_poll_ms,
        opts.run_id
    ));
}

fn lag_cmd<D: Database>(
    db: Arc<D>,
    urls: &[TargetUrl],
    a: &LagArgs,
    faults: Option<sandbox::fault::Schedule>,
) -> Result<Probed, Error> {
    let common = &a.common;
    let dbs = open_all(db, urls, common)?;
    let redacted: Vec<String> = urls.iter().map(TargetUrl::redacted).collect();
    let names: Vec<String> =
        std::iter::once("primary".to_string()).chain((1..urls.len()).map(|i| format!("replica{i}"))).collect();
    let rt = crate::local_runtime();
    let nodes = rt.block_on(session::describe_all(&dbs, &names, &redacted, common.attempt_timeout));
    let replicas: Vec<(Arc<D>, String)> = dbs[1..].iter().cloned().zip(redacted[1..].iter().cloned()).collect();
    rt.block_on(lag::setup(&*dbs[0], &replicas, common.attempt_timeout))?;
    let mut opts = lag::LagOptions {
        rate: common.rate,
        duration: probe_duration(common),
        poll: Duration::from_secs_f64(a.poll_ms / 1000.0),
        drain: a.drain,
        timeout: common.attempt_timeout,
        run_id: probe::run_id(),
        events: None,
    };
    super::say(format_args!(
        "probe lag: a heartbeat every {:.1} ms on {}, each replica read every {} ms, run id {}",
        1000.0 / opts.rate,
        redacted[0],
        a.poll_ms,
        opts.run_id
    ));
    let before = before_start(common, &*dbs[0], &urls[0]);
    let clock = Clock::now();
    let ha = session::ha_record("lag", clock.started_at, nodes, common.with.clone());
    let mut recording = recording(common, before, ("probe.heartbeat", lag::INSERT.into()), ha.clone(), clock)?;
    if let Some(r) = &mut recording {
        r.streamer.line(session::lag_plan(&opts));
        opts.events = r.sender.take();
    }
    let performer = faults.map(|s| sandbox::fault::perform(s, clock.start)).transpose()?;
    let (primary, readers, lag_opts) = (dbs[0].clone(), dbs[1..].to_vec(), opts.clone());
    opts.events = None;
    let load_db = Arc::new(FollowPrimary::new(dbs[..1].to_vec(), redacted[..1].to_vec()));
    let ran = alongside(common, &load_db, (&urls[..1], &a.primary), recording.as_mut(), move |stop| {
        let stop: std::rc::Rc<dyn Fn() -> bool> = std::rc::Rc::new(move || stop());
        crate::local_runtime().block_on(lag::run(primary, readers, &lag_opts, clock, stop))
    });
    let ((written, seen), workload) = ran?;
    let end = Instant::now();
    let faults = performer.map(sandbox::fault::Performer::finish);
    let replicas = seen
        .iter()
        .zip(&redacted[1..])
        .map(|(s, url)| lag::replica_record(url.clone(), &lag::lags(&written, s), s, &opts))
        .collect();
    let record = lag::record(&written, replicas, &opts);
    let ha = HaRecord { duration_s: clock.us(end) as f64 / 1e6, lag: Some(record), ..ha };
    match recording {
        Some(r) => finish_recorded(r, (clock, end), faults, common, |_| Ok(ha)),
        None => with_workload(ha, faults, workload, common),
    }
}

/// Without a workload: --time. With one: until the workload ends (a day at most).
fn probe_duration(common: &ProbeCommon) -> Duration {
    match common.with {
        Some(_) => Duration::from_secs(86_400),
        None => common.time,
    }
}

/// What the workload beside a probe left: its document and where it goes.
type Workload = Option<(ResultDocument, std::path::PathBuf, RunRequest)>;

/// Runs `probe` on a thread of its own, and the `--with` workload (if any) on this one
/// against `db` (the nodes `urls` as one); the probe is told to stop when the workload
/// ends, on Ctrl-C, or at its own end.
fn alongside<D: Database, T: Send + 'static>(
    common: &ProbeCommon,
    db: &Arc<D>,
    (urls, raw_url): (&[TargetUrl], &str),
    recording: Option<&mut session::Recording>,
    probe: impl FnOnce(Arc<dyn Fn() -> bool + Send + Sync>) -> T + Send + 'static,
) -> Result<(T, Workload), Error> {
    let workload_args = common.with_request(raw_url)?;
    signal::install();
    let done = Arc::new(AtomicBool::new(false));
    let flag = done.clone();
    let stop: Arc<dyn Fn() -> bool + Send + Sync> =
        Arc::new(move || flag.load(Ordering::SeqCst) || signal::interrupted());
    let thread = std::thread::Builder::new()
        .name("fairbench-probe".into())
        .spawn(move || probe(stop))
        .map_err(|e| ConfigError(format!("cannot start the probe's thread: {e}")))?;
    let workload = workload_args.map(|args| {
        let job = super::live::Job::new(0);
        let measured = measure_run(db.clone(), &args, urls, true, args.out.as_deref(), &job);
        // The probe ends with the workload.
        done.store(true, Ordering::SeqCst);
        measured.map(|(doc, path)| (doc, path, args))
    });
    // Without a workload: the probe's events streamed into its record until it ends.
    if let Some(r) = recording {
        r.streamer.follow(&r.events, &|| thread.is_finished());
    }
    let probed = thread.join().map_err(|_| ConfigError("the probe's thread failed (a bug in fairbench)".into()))?;
    signal::uninstall();
    Ok((probed, workload.transpose()?))
}

/// Without a workload, the probe's record begins: read before the clock starts, then the
/// start document at the result's path.
fn before_start<D: Database>(common: &ProbeCommon, db: &D, url: &TargetUrl) -> Option<session::Before> {
    common.with.is_none().then(|| session::before(db, url))
}

fn recording(
    common: &ProbeCommon,
    before: Option<session::Before>,
    (statement, sql): (&'static str, String),
    ha: HaRecord,
    clock: Clock,
) -> Result<Option<session::Recording>, Error> {
    let Some(before) = before else { return Ok(None) };
    let path = common.out.clone().unwrap_or_else(|| default_out(&format!("probe-{}", ha.probe)));
    let start = session::ProbeStart {
        probe: if ha.probe == "lag" { "lag" } else { "failover" },
        target: before.target,
        server: before.server,
        host: crate::conditions::host::read(),
        command_line: crate::db::redact::redact_args(std::env::args()),
        statement,
        sql,
        rate: common.rate,
        time: common.time,
        started_at: clock.started_at,
        ha,
    };
    Ok(Some(session::Recording::begin(path, start, clock)?))
}

/// The probe's own result: `build` of its record, judged by `verdict` on the record read back.
fn finish_recorded(
    r: session::Recording,
    at: (Clock, Instant),
    faults: Option<crate::model::fault::FaultRecord>,
    common: &ProbeCommon,
    verdict: impl FnOnce(&crate::model::record::Record) -> Result<HaRecord, ProbeError>,
) -> Result<Probed, Error> {
    let path = r.path.clone();
    let (doc, error) = r.finish(at, faults, verdict)?;
    if let Some(e) = error {
        eprintln!("warning: the streamed files stopped at a write error ({e}); the result has every entry");
    }
    Ok(Probed { doc, path, workload: None, verbose: common.verbose })
}

/// With a workload: its document with the probe's figures.
fn with_workload(
    ha: HaRecord,
    faults: Option<crate::model::fault::FaultRecord>,
    workload: Workload,
    common: &ProbeCommon,
) -> Result<Probed, Error> {
    let (doc, path, args) =
        workload.ok_or(ConfigError("the probe's workload left no result (a bug in fairbench)".into()))?;
    let doc = crate::result::finish(doc, crate::result::Ending { ha: Some(ha), faults: Some(faults), streamed: None });
    Ok(Probed { doc, path, workload: Some(args), verbose: common.verbose })
}
