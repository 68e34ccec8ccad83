//! The run loop: worker threads drive clients; this thread swaps out their recorders every
//! second and hands the merged tick to a [`Sink`], and decides when to stop. It builds no
//! result: the sink and the result builder do.
//!
//! Async drivers (MySQL, PostgreSQL) run many clients per worker thread (one current-thread
//! runtime per core, shared-nothing); blocking drivers (SQLite) get a thread per client.

pub mod checks;
mod client;
pub mod cpu;
pub mod limits;
mod program;
mod rendezvous;
mod schedule;
pub mod signal;
pub mod timer;

use crate::db::{Connection as _, Database, DbError};
use crate::model::{LoopModel, RunStatus};
use crate::plan::RunPlan;
use crate::recorder::{Sink, Tick, TickRecorder};
use crate::workload::StatementInfo;
use client::ClientSpec;
pub use rendezvous::{Alone, Rendezvous};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

/// How long a stopped run waits for in-flight statements before reporting anyway; clients
/// still busy then are stalled, and fail the run.
const GRACE: Duration = Duration::from_secs(10);
/// The same after Ctrl-C: the user wants the results now (saved within about 2 s).
const GRACE_INTERRUPTED: Duration = Duration::from_millis(1200);
/// After a failed run the server may be the reason: the end-of-run reads wait this long.
pub const AFTER_FAILURE_TIMEOUT: Duration = Duration::from_secs(2);

/// Runs an administrative query with a deadline (much shorter after Ctrl-C); `None` if it
/// failed or did not answer in time.
pub fn bounded<T, E>(
    rt: &crate::LocalRuntime,
    limit: Duration,
    fut: impl std::future::Future<Output = Result<T, E>>,
) -> Option<T> {
    let limit = if signal::interrupted() { limit.min(Duration::from_millis(300)) } else { limit };
    rt.block_on(async { tokio::time::timeout(limit, fut).await.ok()?.ok() })
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
    #[error("{0}")]
    Limits(String),
    #[error("admin connection: {0}")]
    Admin(DbError),
    #[error("{0}")]
    Clients(String),
    #[error("interrupted while connecting")]
    Interrupted,
    #[error("{0}")]
    Rendezvous(String),
    #[error("cannot start worker thread: {0}")]
    Thread(std::io::Error),
}

/// How the run went (the measurements themselves went to the sink).
#[derive(Clone)]
pub struct RunOutcome {
    /// Measured seconds (after warmup).
    pub measured_s: f64,
    pub status: RunStatus,
    /// Why the run failed, when it did.
    pub failure: Option<String>,
    pub started_at: SystemTime,
    pub ended_at: SystemTime,
    /// Server counters just before the first event and just after the last.
    pub counters_before: BTreeMap<String, i64>,
    pub counters_after: BTreeMap<String, i64>,
    pub client: ClientCpu,
    /// Peak resident memory of the process, bytes.
    pub peak_rss_bytes: u64,
    /// Every client's measured events and busy time, in no particular order.
    pub per_client: Vec<ClientTotals>,
}

impl RunOutcome {
    /// A run that is starting: status `running`, nothing measured yet.
    pub fn starting() -> Self {
        let now = SystemTime::now();
        RunOutcome {
            measured_s: 0.0,
            status: RunStatus::Running,
            failure: None,
            started_at: now,
            ended_at: now,
            counters_before: BTreeMap::new(),
            counters_after: BTreeMap::new(),
            client: ClientCpu::default(),
            peak_rss_bytes: 0,
            per_client: Vec::new(),
        }
    }
}

/// The client's own CPU use over the measured phase (from the OS).
#[derive(Clone, Debug, Default)]
pub struct ClientCpu {
    /// User + system CPU seconds of the whole fairbench process.
    pub cpu_s: f64,
    pub wall_s: f64,
    pub cores: u32,
    /// Threads that ran clients.
    pub worker_threads: u32,
    /// CPU seconds of the busiest worker thread / wall seconds (1.0 = always busy).
    pub busiest_worker: f64,
    /// Whether workers are event loops shared by many clients (async drivers); for
    /// embedded databases the worker thread also runs the database itself.
    pub shared_event_loops: bool,
    /// Fraction of all the host's CPU time that was busy (any process), when readable.
    pub host_busy: Option<f64>,
}

/// State shared by the collector and all clients.
pub(crate) struct Shared {
    stop: AtomicBool,
    ready: AtomicU32,
    start: tokio::sync::watch::Sender<Option<Instant>>,
    measure_from: OnceLock<Instant>,
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
    /// Open loop only, set when the run starts.
    schedule: OnceLock<schedule::Schedule>,
    /// Each client's measured events and their summed latency, added as clients end.
    per_client: Mutex<Vec<ClientTotals>>,
}

/// One client's share of the measured phase (sysbench's "threads fairness").
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ClientTotals {
    pub events: u64,
    /// Sum of the client's event latencies, seconds.
    pub busy_s: f64,
}

impl Shared {
    fn fail(&self, msg: String) {
        crate::lock(&self.failure).get_or_insert(msg);
        self.stop.store(true, Ordering::SeqCst);
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

    /// Whether an event starting at `t` counts (is after the warmup).
    #[inline]
    fn measuring(&self, t: Instant) -> bool {
        self.measure_from.get().is_some_and(|m| t >= *m)
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
    let admin_rt = crate::local_runtime();
    let mut admin = admin_rt.block_on(db.connect()).map_err(RunError::Admin)?;
    let mut workers = Workers::spawn(db.clone(), plan, &statements, &transactions, shared.clone())?;
    workers.wait_until_ready(plan.threads)?;
    if let Err(why) = rendezvous.agree(&|| signal::presses() > 0) {
        workers.call_off();
        signal::uninstall();
        return Err(RunError::Rendezvous(why));
    }

    let warmup = Duration::from_secs(plan.warmup_s as u64);
    // The counters bracket the measured phase: read now, or when the warmup ends.
    let reads_counters = rendezvous.reads_counters();
    let mut counters_before = BTreeMap::new();
    let mut read_before = || {
        if reads_counters {
            counters_before = bounded(&admin_rt, plan.admin_timeout, admin.status_counters()).unwrap_or_default();
        }
    };
    if warmup.is_zero() {
        read_before();
    }
    rendezvous.wait_for_start();
    let started_at = SystemTime::now();
    let start = Instant::now();
    let _ = shared.measure_from.set(start + warmup);
    if let Some(time) = plan.stop.time {
        let _ = shared.measure_until.set(start + warmup + time);
    }
    if let LoopModel::Open { rate, arrival, max_backlog } = plan.loop_model {
        let _ = shared.schedule.set(schedule(plan, start, rate, arrival, max_backlog));
    }
    sink.started(start, warmup, cpu::process());
    shared.start.send_replace(Some(start));

    let empty = TickRecorder::with_counters(&statements, &transactions, plan.loop_model.is_open());
    let measured = workers.measure(plan, &empty, start, warmup, sink, &mut read_before);
    sink.stopped();
    let ended_at = SystemTime::now();
    let client = workers.finish(&measured, db.blocking());
    rendezvous.ended(measured.end.saturating_duration_since(start));

    let (status, failure) = match crate::lock(&shared.failure).clone() {
        Some(msg) => (RunStatus::Failed, Some(msg)),
        None => (measured.status, None),
    };
    signal::uninstall();
    // A server that went away or hangs leaves the counters empty (the audit says so).
    let limit = if status == RunStatus::Failed { AFTER_FAILURE_TIMEOUT } else { plan.admin_timeout };
    let counters_after = match reads_counters {
        true => bounded(&admin_rt, limit, admin.status_counters()).unwrap_or_default(),
        false => BTreeMap::new(),
    };
    let per_client = std::mem::take(&mut *crate::lock(&shared.per_client));
    Ok(RunOutcome {
        measured_s: measured.end.saturating_duration_since(start + warmup).as_secs_f64(),
        status,
        failure,
        started_at,
        ended_at,
        counters_before,
        counters_after,
        client,
        peak_rss_bytes: cpu::max_rss_bytes(),
        per_client,
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
) -> schedule::Schedule {
    let (seed, phase) = match &plan.shard {
        Some(s) => (
            plan.rand_seed ^ (s.index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            Duration::from_secs_f64(s.index as f64 / s.total_rate.unwrap_or(rate).max(f64::MIN_POSITIVE)),
        ),
        None => (plan.rand_seed, Duration::ZERO),
    };
    let phase = if arrival == crate::plan::Arrival::Fixed { phase } else { Duration::ZERO };
    schedule::Schedule::new(start + phase, rate, arrival, max_backlog, seed)
}

impl Shared {
    fn new(plan: &RunPlan) -> Self {
        let (start_tx, _) = tokio::sync::watch::channel(None);
        Shared {
            stop: AtomicBool::new(false),
            ready: AtomicU32::new(0),
            start: start_tx,
            measure_from: OnceLock::new(),
            measure_until: OnceLock::new(),
            claimed: AtomicU64::new(0),
            limit: plan.stop.events.unwrap_or(u64::MAX),
            failure: Mutex::new(None),
            finished: AtomicU32::new(0),
            schedule: OnceLock::new(),
            per_client: Mutex::new(Vec::new()),
            connect_gate: tokio::sync::Semaphore::new(client::CONNECTING_AT_ONCE),
        }
    }
}

/// CPU readings at the start of the measured phase: process, each worker, host ticks.
type CpuMark = (Duration, Vec<Duration>, Option<(u64, u64)>);

/// What the measuring loop saw.
struct Measured {
    status: RunStatus,
    end: Instant,
    warmup_end: Instant,
    cpu_mark: Option<CpuMark>,
}

/// The worker threads, each with the recorder its clients write to.
struct Workers {
    handles: Vec<JoinHandle<Duration>>,
    recorders: Vec<Arc<Mutex<TickRecorder>>>,
    shared: Arc<Shared>,
}

impl Workers {
    /// Async drivers: one event loop per core, clients spread over them; blocking drivers:
    /// one thread per client.
    fn spawn<D: Database>(
        db: Arc<D>,
        plan: &RunPlan,
        statements: &[StatementInfo],
        transactions: &[String],
        shared: Arc<Shared>,
    ) -> Result<Self, RunError> {
        let program = plan.workload.program();
        let part = plan.shard.as_ref().map(|s| (s.index, s.count));
        let events =
            program::ProgramSpec::new(Arc::new(program.clone()), plan.distribution.clone(), plan.rand_seed, part);
        let thinks = program.transactions.iter().any(|t| t.pauses()) && !plan.loop_model.is_open();
        let spec = Arc::new(ClientSpec {
            events,
            thinks,
            seed: plan.rand_seed,
            retry: plan.retry.clone(),
            reconnect: plan.reconnect.clone(),
            open_loop: plan.loop_model.is_open(),
        });
        let open = plan.loop_model.is_open();
        let count = if db.blocking() { plan.threads } else { plan.threads.min(crate::cpu_count()) };
        let mut workers = Workers { handles: Vec::new(), recorders: Vec::new(), shared: shared.clone() };
        for w in 0..count {
            let rec = Arc::new(Mutex::new(TickRecorder::with_counters(statements, transactions, open)));
            workers.recorders.push(rec.clone());
            // A shard's clients have ids of their own in the whole run's (their random
            // streams and `client_id` values differ from every other shard's).
            let first = plan.shard.as_ref().map_or(0, |s| s.first_client as u64);
            let ids: Vec<u64> =
                (0..plan.threads as u64).filter(|i| i % count as u64 == w as u64).map(|i| first + i).collect();
            let (db, spec, shared) = (db.clone(), spec.clone(), shared.clone());
            let handle = std::thread::Builder::new().name(format!("fairbench-worker-{w}")).spawn(move || {
                let rt = crate::local_runtime();
                rt.block_on(async move {
                    let timers = match open.then(timer::ClientTimers::new).transpose() {
                        Ok(t) => t,
                        Err(e) => return shared.fail(format!("cannot create the open loop's timer: {e}")),
                    };
                    if let Some(t) = &timers {
                        let shared = shared.clone();
                        tokio::task::spawn_local(t.clone().drive(move || shared.stopping()));
                    }
                    let tasks: Vec<_> = ids
                        .into_iter()
                        .map(|id| {
                            tokio::task::spawn_local(client::run(
                                db.clone(),
                                spec.clone(),
                                shared.clone(),
                                id,
                                rec.clone(),
                                timers.clone(),
                            ))
                        })
                        .collect();
                    let mut open = Vec::with_capacity(tasks.len());
                    for t in tasks {
                        match t.await {
                            Ok(connection) => open.extend(connection),
                            Err(e) => {
                                // A client that panicked ends the run as failed, never "completed".
                                shared.fail(format!("a client crashed (internal error: {})", panic_message(e)));
                                shared.finished.fetch_add(1, Ordering::SeqCst);
                            }
                        }
                    }
                    // Closed once every client of this worker has finished (see client::run).
                    drop(open);
                });
                cpu::current_thread()
            });
            match handle {
                Ok(h) => workers.handles.push(h),
                Err(e) => {
                    workers.call_off();
                    return Err(RunError::Thread(e));
                }
            }
        }
        Ok(workers)
    }

    /// Stops clients that have not started and waits a little for them.
    fn call_off(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        self.shared.start.send_replace(None);
        join_all(std::mem::take(&mut self.handles), Instant::now() + GRACE);
    }

    /// Waits until every client is connected and prepared, or one failed, or Ctrl-C.
    fn wait_until_ready(&mut self, threads: u32) -> Result<(), RunError> {
        while self.shared.ready.load(Ordering::SeqCst) < threads {
            if self.shared.stopping() || signal::presses() > 0 {
                let failure = crate::lock(&self.shared.failure).clone();
                self.call_off();
                return Err(match failure {
                    Some(msg) => RunError::Clients(msg),
                    None => RunError::Interrupted,
                });
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        Ok(())
    }

    fn cpu_reading(&self) -> CpuMark {
        (cpu::process(), self.handles.iter().map(|h| cpu::thread(h).unwrap_or_default()).collect(), cpu::host_ticks())
    }

    /// The measured phase: ticks to the sink every second until the time or event limit,
    /// a failure or Ctrl-C; then up to GRACE for in-flight events to finish. `empty`: the
    /// run's recorder with nothing in it; `warmed_up` is called as the warmup ends.
    fn measure(
        &self,
        plan: &RunPlan,
        empty: &TickRecorder,
        start: Instant,
        warmup: Duration,
        sink: &mut dyn Sink,
        warmed_up: &mut dyn FnMut(),
    ) -> Measured {
        let shared = &self.shared;
        let mut merged = empty.clone();
        let mut spare = merged.clone();
        let mut cpu_mark = warmup.is_zero().then(|| self.cpu_reading());
        let deadline = shared.measure_until.get().copied();
        let tick = plan.tick();
        let mut next_tick = start + tick;
        // When measured time ended, and when this thread noticed (the grace counts from then).
        let mut stopped_at: Option<Instant> = None;
        let mut noticed_at = start;
        let mut status = RunStatus::Completed;
        loop {
            let now = Instant::now();
            if stopped_at.is_none() {
                if signal::presses() > 0 {
                    status = RunStatus::Interrupted;
                }
                let due = deadline.filter(|d| now >= *d);
                if status == RunStatus::Interrupted || due.is_some() || shared.stopping() {
                    shared.stop.store(true, Ordering::SeqCst);
                    // At the deadline the clients stopped starting events by themselves.
                    stopped_at = Some(if status == RunStatus::Interrupted { now } else { due.unwrap_or(now) });
                    noticed_at = now;
                }
            }
            let finished = self.handles.iter().all(|h| h.is_finished());
            let grace = if status == RunStatus::Interrupted { GRACE_INTERRUPTED } else { GRACE };
            if finished {
                break;
            }
            if stopped_at.is_some() && now >= noticed_at + grace {
                let stalled = plan.threads.saturating_sub(shared.finished.load(Ordering::SeqCst));
                if status != RunStatus::Interrupted && stalled > 0 {
                    shared.fail(format!(
                        "{} stalled: no reply from the server within {} s after the measured phase ended; their last events are not counted and the grace time is not measured",
                        crate::model::plural(stalled as u64, "client"),
                        GRACE.as_secs()
                    ));
                }
                // Measured time ends when the run was told to stop, not after the grace.
                let end = stopped_at.unwrap_or(now);
                self.tick(&mut merged, &mut spare, end, sink);
                return Measured { status, end, warmup_end: start + warmup, cpu_mark };
            }
            // No window starts after measured time ended (a late thread has ticks past due).
            if now >= next_tick && stopped_at.is_none_or(|s| next_tick <= s) {
                // The warmup ends at this tick: the server's counters are read just before
                // the swap that starts the measured totals (statements in flight then, at most
                // one per client, may fall on either side).
                let warm = cpu_mark.is_none() && now >= start + warmup;
                if warm {
                    warmed_up();
                }
                // Stamped when the recorders were swapped, not when the tick was due: under
                // load the swap runs late, and what was recorded until then belongs here.
                self.tick(&mut merged, &mut spare, next_tick, sink);
                next_tick += tick;
                if warm {
                    cpu_mark = Some(self.cpu_reading());
                }
            }
            // Woken at the deadline itself, not up to 5 ms after it: shards end together.
            let until = deadline.filter(|_| stopped_at.is_none()).map_or(next_tick, |d| d.min(next_tick));
            let wait = until.saturating_duration_since(Instant::now()).min(Duration::from_millis(5));
            std::thread::sleep(wait);
        }
        let end = stopped_at.unwrap_or_else(Instant::now);
        // Events in flight at the end count, as in sysbench (tick: the last interval).
        self.tick(&mut merged, &mut spare, end, sink);
        Measured { status, end, warmup_end: start + warmup, cpu_mark }
    }

    /// Swaps out every worker's recorder (holding each lock only for the swap), merges
    /// them and hands the merge to the sink. The interval ends when the swaps ended (the
    /// last instant anything in the merge can have been recorded), or at `due` if later.
    /// The last tick (after every client stopped) thus holds the events in flight at the
    /// end too, their statements in the server's counters after the run, and runs to its
    /// swap, later than any earlier tick; measured time still ends at the stop.
    fn tick(&self, merged: &mut TickRecorder, spare: &mut TickRecorder, due: Instant, sink: &mut dyn Sink) {
        for r in &self.recorders {
            std::mem::swap(&mut *crate::lock(r), spare);
            merged.add(spare);
            spare.reset();
        }
        let until = Instant::now().max(due);
        let backlog = self.shared.schedule.get().map(|s| s.backlog(until));
        sink.tick(&Tick { recorder: merged, until, due, process_cpu: cpu::process(), backlog });
        merged.reset();
    }

    /// The client's CPU over the measured phase; joins workers that ended and gives the
    /// others a moment.
    fn finish(self, m: &Measured, blocking: bool) -> ClientCpu {
        let mut worker_cpu = Vec::with_capacity(self.handles.len());
        let mut running = Vec::new();
        let workers = self.handles.len() as u32;
        for h in self.handles {
            if h.is_finished() {
                worker_cpu.push(h.join().unwrap_or_default());
            } else {
                worker_cpu.push(cpu::thread(&h).unwrap_or_default());
                running.push(h);
            }
        }
        let wall = m.end.saturating_duration_since(m.warmup_end).as_secs_f64();
        let client = match &m.cpu_mark {
            Some((process0, threads0, host0)) => ClientCpu {
                cpu_s: cpu::process().saturating_sub(*process0).as_secs_f64(),
                wall_s: wall,
                cores: crate::cpu_count(),
                worker_threads: workers,
                busiest_worker: worker_cpu
                    .iter()
                    .zip(threads0)
                    .map(|(t, t0)| t.saturating_sub(*t0).as_secs_f64())
                    .fold(0.0, f64::max)
                    / wall.max(1e-9),
                shared_event_loops: !blocking,
                host_busy: match (host0, cpu::host_ticks()) {
                    (Some((b0, t0)), Some((b1, t1))) if t1 > *t0 => Some((b1 - b0) as f64 / (t1 - t0) as f64),
                    _ => None,
                },
            },
            None => ClientCpu::default(),
        };
        join_all(running, m.end + Duration::from_millis(100));
        client
    }
}

/// The text of a panic caught from a task.
fn panic_message(e: tokio::task::JoinError) -> String {
    match e.try_into_panic() {
        Ok(payload) => payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic".into()),
        Err(e) => e.to_string(),
    }
}

fn join_all<T>(handles: Vec<JoinHandle<T>>, until: Instant) {
    for h in handles {
        while !h.is_finished() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
        if h.is_finished() {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests;
