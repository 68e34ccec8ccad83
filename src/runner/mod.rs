//! The run loop: worker threads drive clients; this thread swaps out their recorders every
//! second and hands the merged tick to a [`Sink`], and decides when to stop. It builds no
//! result: the sink and the result builder do.
//!
//! Async drivers (MySQL, PostgreSQL) run many clients per worker thread (one current-thread
//! runtime per core, shared-nothing); blocking drivers (SQLite) get a thread per client.

mod bracket;
pub mod checks;
mod client;
pub mod cpu;
mod deferred;
mod deferred_queue;
mod gate;
pub mod limits;
mod program;
mod rendezvous;
mod sampler;
mod schedule;
pub mod signal;
pub mod timer;
mod workers;

use crate::db::{Database, DbError};
use crate::model::{LoopModel, RunStatus};
use crate::plan::RunPlan;
use crate::recorder::{Sink, Tick, TickRecorder};
use crate::workload::StatementInfo;
use client::ClientSpec;
pub use rendezvous::{Alone, Rendezvous, RendezvousError};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};
use workers::Workers;

/// How long a stopped run waits for in-flight statements before reporting anyway; clients
/// still busy then are stalled, and fail the run.
const GRACE: Duration = Duration::from_secs(10);
/// The same after Ctrl-C: the user wants the results now (saved within about 2 s).
const GRACE_INTERRUPTED: Duration = Duration::from_millis(1200);
/// After a failed run the server may be the reason: the end-of-run reads wait this long.
pub const AFTER_FAILURE_TIMEOUT: Duration = Duration::from_secs(2);

/// After Ctrl-C, how long any wait for the server may last: the grace and a few such waits
/// keep the promise of a result saved within about 2 s.
const AFTER_CTRL_C: Duration = Duration::from_millis(300);

/// Runs an administrative query with a deadline; `None` if it failed or did not answer in
/// time. After Ctrl-C it gets at most [`AFTER_CTRL_C`], also when it began before the press
/// (a server sampler's reading on a frozen server once held the save 2 s longer).
pub fn bounded<T, E>(
    rt: &crate::LocalRuntime,
    limit: Duration,
    fut: impl std::future::Future<Output = Result<T, E>>,
) -> Option<T> {
    rt.block_on(async {
        tokio::select! {
            done = tokio::time::timeout(limit, fut) => done.ok()?.ok(),
            () = cut_short_by_ctrl_c() => None,
        }
    })
}

/// Ends [`AFTER_CTRL_C`] after Ctrl-C is seen (polled every 20 ms: no query is that short
/// of a deadline), or that long after a call made once it was pressed.
async fn cut_short_by_ctrl_c() {
    while !signal::interrupted() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(AFTER_CTRL_C).await;
}

/// An administrative query with a deadline, keeping the error: a server that stops
/// answering is a timeout error saying `{who} did not answer ... while {doing}`, never a hang.
pub fn bounded_result<T>(
    rt: &crate::LocalRuntime,
    limit: Duration,
    who: &str,
    doing: &str,
    fut: impl std::future::Future<Output = Result<T, DbError>>,
) -> Result<T, DbError> {
    rt.block_on(async { tokio::time::timeout(limit, fut).await }).unwrap_or_else(|_| {
        Err(DbError::timeout(format!(
            "{who} did not answer within {} s while {doing} (--admin-timeout raises the limit)",
            limit.as_secs_f64()
        )))
    })
}

/// Why a run could not start (once started, a run always ends with a [`RunOutcome`]).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Limits(#[from] limits::LimitsError),
    #[error("admin connection: {0}")]
    Admin(DbError),
    #[error("{0}")]
    Clients(String),
    #[error("interrupted while connecting")]
    Interrupted,
    #[error("{0}")]
    Rendezvous(rendezvous::RendezvousError),
    #[error("cannot start worker thread: {0}")]
    Thread(std::io::Error),
}

pub use crate::model::record::{ClientCpu, ClientTotals, RunOutcome};

/// State shared by the collector and all clients.
pub(crate) struct Shared {
    stop: AtomicBool,
    ready: AtomicU32,
    start: tokio::sync::watch::Sender<Option<Instant>>,
    /// The warmup's end, between events.
    gate: gate::WarmupGate,
    /// The end of the measured phase under --time: no event intended from then on starts,
    /// however late the measuring thread notices (a starved thread must not lengthen it).
    measure_until: OnceLock<Instant>,
    claimed: AtomicU64,
    limit: u64,
    failure: Mutex<Option<String>>,
    /// Clients whose task has ended (the rest are still running, or stalled).
    finished: AtomicU32,
    /// Limits concurrent connection attempts (see client::CONNECTING_AT_ONCE).
    connect_gate: tokio::sync::Semaphore,
    /// Open loop only: the measured phase's arrivals, from its start.
    schedule: OnceLock<schedule::ArrivalSchedule>,
    /// Open loop with a warmup: the warmup's arrivals, from the run's start.
    warm_schedule: OnceLock<schedule::ArrivalSchedule>,
    /// The warmup's planned end (with a warmup).
    warmup_until: OnceLock<Instant>,
    /// Each client's measured events and their summed latency, added as clients end.
    per_client: Mutex<Vec<ClientTotals>>,
    /// Deferred transactions queued for the deferred worker.
    deferred: deferred_queue::DeferredQueue,
    /// Each connection's transport as the server reported it, counted by kind.
    transports: Mutex<Vec<crate::model::TransportSeen>>,
}

impl Shared {
    fn fail(&self, msg: String) {
        crate::lock(&self.failure).get_or_insert(msg);
        self.halt();
    }

    /// Tells every client to stop (those waiting at the warmup's end too).
    fn halt(&self) {
        self.stop.store(true, Ordering::SeqCst);
        self.gate.wake();
        self.deferred.wake();
    }

    fn ready(&self) {
        self.ready.fetch_add(1, Ordering::SeqCst);
    }

    /// Waits for the start signal; `None` if the run was called off first.
    async fn wait_start(&self) -> Option<Instant> {
        let mut rx = self.start.subscribe();
        let start = rx.wait_for(|s| s.is_some() || self.stopping()).await.ok()?.as_ref().copied();
        start.filter(|_| !self.stopping())
    }

    #[inline]
    fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Whether an event intended at `t` falls after the measured phase (--time).
    #[inline]
    fn past_end(&self, t: Instant) -> bool {
        self.measure_until.get().is_some_and(|end| t >= *end)
    }

    /// Claims one measured event under --events; false when the limit is reached.
    #[inline]
    fn claim_event(&self) -> bool {
        // Without --events nothing is counted: a counter every worker writes per event
        // would bounce its cache line between cores for nothing.
        self.limit == u64::MAX || self.claimed.fetch_add(1, Ordering::Relaxed) < self.limit
    }
}

/// Runs the plan's workload against `db`, handing measurements to `sink`.
pub fn run<D: Database>(db: Arc<D>, plan: &RunPlan, sink: &mut dyn Sink) -> Result<RunOutcome, RunError> {
    run_with(db, plan, sink, &mut Alone)
}

/// [`run`], started and ended together with the others `rendezvous` meets.
pub fn run_with<D: Database>(
    db: Arc<D>,
    plan: &RunPlan,
    sink: &mut dyn Sink,
    rendezvous: &mut dyn Rendezvous,
) -> Result<RunOutcome, RunError> {
    limits::check_clients(db.blocking(), plan.threads).map_err(RunError::Limits)?;
    signal::install();
    let statements = plan.workload.statements();
    let transactions = plan.workload.transactions();
    let shared = Arc::new(Shared::new(plan));
    // A connection of our own for the server's counters around the measured phase.
    let reads_counters = rendezvous.reads_counters();
    let tallies = &plan.workload.program().tallies;
    let mut bracket = bracket::Bracket::open(&*db, tallies, reads_counters).map_err(RunError::Admin)?;
    let mut workers = Workers::spawn(db.clone(), plan, &statements, &transactions, shared.clone())?;
    workers.wait_until_ready()?;
    if let Err(why) = rendezvous.agree(&|| signal::presses() > 0) {
        workers.call_off();
        signal::uninstall();
        return Err(RunError::Rendezvous(why));
    }

    let warmup = Duration::from_secs(plan.warmup_s as u64);
    // The counters bracket the measured phase: read now, or when the warmup ends.
    let mut read_before = || bracket.read_before(plan.admin_timeout);
    if warmup.is_zero() {
        read_before();
    }
    rendezvous.wait_for_start();
    let started_at = SystemTime::now();
    let start = Instant::now();
    shared.begin(plan, start, warmup);
    if reads_counters {
        workers.sampler = sampler::Sampler::start(db.clone(), plan.server_figures.clone(), start, plan.admin_timeout);
    }
    sink.started(start, warmup, cpu::process());
    shared.start.send_replace(Some(start));

    let empty = TickRecorder::with_counters(&statements, &transactions, plan.loop_model.is_open());
    let measured = workers.measure(plan, &empty, start, warmup, sink, &mut read_before);
    sink.stopped();
    let ended_at = SystemTime::now();
    workers.sampler = None;
    let client = workers.finish(&measured, db.blocking());
    rendezvous.ended(measured.end.saturating_duration_since(start));

    let (status, failure) = match crate::lock(&shared.failure).clone() {
        Some(msg) => (RunStatus::Failed, Some(msg)),
        None => (measured.status, None),
    };
    signal::uninstall();
    // A server that went away or hangs leaves the counters empty (the audit says so).
    let limit = if status == RunStatus::Failed { AFTER_FAILURE_TIMEOUT } else { plan.admin_timeout };
    let bracketed = bracket.read_after(limit);
    let per_client = std::mem::take(&mut *crate::lock(&shared.per_client));
    let transports = std::mem::take(&mut *crate::lock(&shared.transports));
    Ok(RunOutcome {
        measured_s: measured.end.saturating_duration_since(measured.from).as_secs_f64(),
        warmup_end: measured.warmup_end,
        status,
        failure,
        started_at,
        ended_at,
        counters_before: bracketed.counters_before,
        counters_after: bracketed.counters_after,
        tallies: bracketed.tallies,
        client,
        peak_rss_bytes: cpu::max_rss_bytes(),
        per_client,
        deferred_left: shared.deferred.len(),
        transports,
    })
}

/// The open loop's schedule. A shard's arrivals: a stream of its own (Poisson), or its place
/// between the others' (fixed: shard i's first arrival i/R after the start, R the whole rate).
fn schedule(
    plan: &RunPlan,
    start: Instant,
    rate: f64,
    arrival: crate::plan::Arrival,
    max_backlog: u64,
) -> schedule::ArrivalSchedule {
    let (seed, phase) = match &plan.shard {
        Some(s) => (
            plan.rand_seed ^ (s.index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            Duration::from_secs_f64(s.index as f64 / s.total_rate.unwrap_or(rate).max(f64::MIN_POSITIVE)),
        ),
        None => (plan.rand_seed, Duration::ZERO),
    };
    let phase = if arrival == crate::plan::Arrival::Fixed { phase } else { Duration::ZERO };
    schedule::ArrivalSchedule::new(start + phase, rate, arrival, max_backlog, seed)
}

impl Shared {
    /// The run begins at `start`: with its measured phase, or with a warmup (whose open
    /// loop has arrivals of its own).
    fn begin(&self, plan: &RunPlan, start: Instant, warmup: Duration) {
        if warmup.is_zero() {
            return self.measured_from(plan, start);
        }
        let _ = self.warmup_until.set(start + warmup);
        if let LoopModel::Open { rate, arrival, max_backlog } = plan.loop_model {
            let _ = self.warm_schedule.set(schedule(plan, start, rate, arrival, max_backlog));
        }
    }

    /// The measured phase begins at `at`: its deadline (--time) and an open loop's arrivals
    /// count from there.
    fn measured_from(&self, plan: &RunPlan, at: Instant) {
        if let Some(time) = plan.stop.time {
            let _ = self.measure_until.set(at + time);
        }
        if let LoopModel::Open { rate, arrival, max_backlog } = plan.loop_model {
            let _ = self.schedule.set(schedule(plan, at, rate, arrival, max_backlog));
        }
    }

    /// The arrivals clients take now: the measured phase's once it began, else the warmup's.
    /// The flag says which.
    fn arrivals(&self) -> Option<(&schedule::ArrivalSchedule, bool)> {
        match self.schedule.get() {
            Some(s) => Some((s, true)),
            None => self.warm_schedule.get().map(|s| (s, false)),
        }
    }

    fn new(plan: &RunPlan) -> Self {
        let (start_tx, _) = tokio::sync::watch::channel(None);
        Shared {
            stop: AtomicBool::new(false),
            ready: AtomicU32::new(0),
            start: start_tx,
            gate: gate::WarmupGate::new(plan.warmup_s > 0),
            measure_until: OnceLock::new(),
            claimed: AtomicU64::new(0),
            limit: plan.stop.events.unwrap_or(u64::MAX),
            failure: Mutex::new(None),
            finished: AtomicU32::new(0),
            schedule: OnceLock::new(),
            warm_schedule: OnceLock::new(),
            warmup_until: OnceLock::new(),
            per_client: Mutex::new(Vec::new()),
            transports: Mutex::new(Vec::new()),
            deferred: Default::default(),
            connect_gate: tokio::sync::Semaphore::new(client::CONNECTING_AT_ONCE),
        }
    }
}

#[cfg(test)]
mod tests;
