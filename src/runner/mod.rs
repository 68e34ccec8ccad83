//! The run loop: worker threads drive clients; this thread collects their recorders every
//! second into a timeline and the run's totals, and decides when to stop.
//!
//! Async drivers (MySQL, PostgreSQL) run many clients per worker thread (one current-thread
//! runtime per core, shared-nothing); blocking drivers (SQLite) get a thread per client.

mod client;
pub mod cpu;
mod schedule;
pub mod signal;
mod timer;

use crate::db::{Connection as _, Database};
use crate::plan::{LoopModel, RunPlan};
use crate::random::UniqueSequence;
use crate::recorder::Recorder;
use crate::result::IntervalStats;
use client::ClientSpec;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

/// Resolution of the timeline kept in every result.
pub const TICK: Duration = Duration::from_secs(1);
/// How long a stopped run waits for in-flight statements before reporting anyway.
const GRACE: Duration = Duration::from_secs(10);

/// Receives progress; the report module prints it, tests may ignore it.
pub trait RunObserver {
    /// All clients connected and prepared; measurement starts now.
    fn started(&mut self) {}
    /// One `--report-interval` window (aggregated over its seconds).
    fn interval(&mut self, _stats: &IntervalStats) {}
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "status", content = "reason")]
pub enum RunStatus {
    Completed,
    /// Ctrl-C or SIGTERM.
    Interrupted,
    /// A client hit an error it cannot retry, or lost the server.
    Failed(String),
}

/// Everything measured, before it becomes a result document.
pub struct RunOutcome {
    /// Post-warmup totals.
    pub totals: Recorder,
    pub timeline: Vec<IntervalStats>,
    /// Measured seconds (after warmup).
    pub measured_s: f64,
    pub status: RunStatus,
    pub started_at: SystemTime,
    pub ended_at: SystemTime,
    /// Server counters just before the first event and just after the last.
    pub counters_before: BTreeMap<String, i64>,
    pub counters_after: BTreeMap<String, i64>,
    pub client: ClientCpu,
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
    claimed: AtomicU64,
    limit: u64,
    failure: Mutex<Option<String>>,
    pub unique: UniqueSequence,
    /// Limits concurrent connection attempts (see client::CONNECTING_AT_ONCE).
    connect_gate: tokio::sync::Semaphore,
    /// Open loop only, set when the run starts.
    schedule: OnceLock<schedule::Schedule>,
}

impl Shared {
    fn fail(&self, msg: String) {
        self.failure.lock().unwrap().get_or_insert(msg);
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

    /// Claims one measured event under --events; false when the limit is reached.
    #[inline]
    fn claim_event(&self) -> bool {
        self.claimed.fetch_add(1, Ordering::Relaxed) < self.limit
    }
}

/// Runs the plan's workload against `db` and returns what was measured.
pub fn run<D: Database>(db: Arc<D>, plan: &RunPlan, observer: &mut dyn RunObserver) -> Result<RunOutcome, String> {
    signal::install();
    let kinds = plan.workload.statement_kinds(&plan.oltp);
    let spec = Arc::new(ClientSpec {
        workload: plan.workload,
        steps: plan.workload.steps(&plan.oltp),
        kinds: kinds.clone(),
        tables: plan.oltp.tables,
        table_size: plan.oltp.table_size.max(1) as u32,
        range_size: plan.oltp.range_size,
        auto_inc: plan.oltp.auto_inc,
        dist: plan.distribution.sampler(),
        seed: plan.rand_seed,
        retry: plan.retry.clone(),
        reconnect_timeout: Duration::from_secs(plan.reconnect_timeout_s as u64),
        open_loop: plan.loop_model.is_open(),
    });
    let (start_tx, _) = tokio::sync::watch::channel(None);
    let shared = Arc::new(Shared {
        stop: AtomicBool::new(false),
        ready: AtomicU32::new(0),
        start: start_tx,
        measure_from: OnceLock::new(),
        claimed: AtomicU64::new(0),
        limit: plan.stop.events.unwrap_or(u64::MAX),
        failure: Mutex::new(None),
        unique: UniqueSequence::new(plan.rand_seed),
        schedule: OnceLock::new(),
        connect_gate: tokio::sync::Semaphore::new(client::CONNECTING_AT_ONCE),
    });

    // A connection of our own for the server's counters around the measured phase.
    let admin_rt = crate::local_runtime();
    let mut admin = admin_rt.block_on(db.connect()).map_err(|e| e.to_string())?;

    let open = plan.loop_model.is_open();
    let workers = if db.blocking() { plan.threads } else { plan.threads.min(crate::cpu_count()) };
    let mut recorders = Vec::new();
    let mut handles: Vec<JoinHandle<Duration>> = Vec::new();
    for w in 0..workers {
        let rec = Arc::new(Mutex::new(Recorder::new(&kinds, open)));
        recorders.push(rec.clone());
        let ids: Vec<u64> = (0..plan.threads as u64).filter(|i| i % workers as u64 == w as u64).collect();
        let (db, spec, shared) = (db.clone(), spec.clone(), shared.clone());
        let handle = std::thread::Builder::new()
            .name(format!("fairbench-worker-{w}"))
            .spawn(move || {
                let rt = crate::local_runtime();
                rt.block_on(async move {
                    let tasks: Vec<_> = ids
                        .into_iter()
                        .map(|id| {
                            tokio::task::spawn_local(client::run(
                                db.clone(),
                                spec.clone(),
                                shared.clone(),
                                id,
                                rec.clone(),
                            ))
                        })
                        .collect();
                    for t in tasks {
                        let _ = t.await;
                    }
                });
                cpu::current_thread()
            })
            .map_err(|e| format!("cannot start worker thread: {e}"))?;
        handles.push(handle);
    }

    // Wait until every client is connected and prepared (or one failed).
    while shared.ready.load(Ordering::SeqCst) < plan.threads {
        if shared.stopping() || signal::presses() > 0 {
            shared.stop.store(true, Ordering::SeqCst);
            shared.start.send_replace(None);
            let msg = shared.failure.lock().unwrap().clone().unwrap_or_else(|| "interrupted while connecting".into());
            join_all(handles, Instant::now() + GRACE);
            return Err(msg);
        }
        std::thread::sleep(Duration::from_millis(2));
    }

    let counters_before = admin_rt.block_on(admin.status_counters()).unwrap_or_default();
    let started_at = SystemTime::now();
    let start = Instant::now();
    let warmup = Duration::from_secs(plan.warmup_s as u64);
    let _ = shared.measure_from.set(start + warmup);
    if let LoopModel::Open { rate, arrival, max_backlog } = plan.loop_model {
        let _ = shared.schedule.set(schedule::Schedule::new(start, rate, arrival, max_backlog, plan.rand_seed));
    }
    // CPU readings at the start of the measured phase (now, or when warmup ends).
    let cpu_reading = |handles: &[JoinHandle<Duration>]| -> (Duration, Vec<Duration>, Option<(u64, u64)>) {
        (cpu::process(), handles.iter().map(|h| cpu::thread(h).unwrap_or_default()).collect(), cpu::host_ticks())
    };
    let mut cpu_mark = warmup.is_zero().then(|| cpu_reading(&handles));
    let deadline = plan.stop.time.map(|t| start + warmup + t);
    shared.start.send_replace(Some(start));
    observer.started();

    let mut collector = Collector::new(&kinds, plan, start, warmup);
    let mut spare = Recorder::new(&kinds, open);
    let mut next_tick = start + TICK;
    let mut stopped_at: Option<Instant> = None;
    let mut status = RunStatus::Completed;
    loop {
        let now = Instant::now();
        if stopped_at.is_none() {
            if signal::presses() > 0 {
                status = RunStatus::Interrupted;
            }
            if status == RunStatus::Interrupted || deadline.is_some_and(|d| now >= d) || shared.stopping() {
                shared.stop.store(true, Ordering::SeqCst);
                stopped_at = Some(now);
            }
        }
        let finished = handles.iter().all(|h| h.is_finished());
        let gave_up = stopped_at.is_some_and(|s| now >= s + GRACE) || signal::presses() > 1;
        if finished || gave_up {
            break;
        }
        if now >= next_tick {
            collector.collect(&recorders, &mut spare, next_tick, observer);
            next_tick += TICK;
            if cpu_mark.is_none() && now >= start + warmup {
                cpu_mark = Some(cpu_reading(&handles));
            }
        }
        let wait = next_tick.saturating_duration_since(Instant::now()).min(Duration::from_millis(5));
        std::thread::sleep(wait);
    }
    let end = Instant::now();
    // Finished workers report their own CPU time; running ones are read from outside.
    let mut worker_cpu = Vec::with_capacity(handles.len());
    let mut running = Vec::new();
    for h in handles {
        if h.is_finished() {
            worker_cpu.push(h.join().unwrap_or_default());
        } else {
            worker_cpu.push(cpu::thread(&h).unwrap_or_default());
            running.push(h);
        }
    }
    let measured_wall = end.saturating_duration_since(start + warmup).as_secs_f64();
    let client = match cpu_mark {
        Some((process0, threads0, host0)) => ClientCpu {
            cpu_s: cpu::process().saturating_sub(process0).as_secs_f64(),
            wall_s: measured_wall,
            cores: crate::cpu_count(),
            worker_threads: workers,
            busiest_worker: worker_cpu
                .iter()
                .zip(&threads0)
                .map(|(t, t0)| t.saturating_sub(*t0).as_secs_f64())
                .fold(0.0, f64::max)
                / measured_wall.max(1e-9),
            shared_event_loops: !db.blocking(),
            host_busy: match (host0, cpu::host_ticks()) {
                (Some((b0, t0)), Some((b1, t1))) if t1 > t0 => Some((b1 - b0) as f64 / (t1 - t0) as f64),
                _ => None,
            },
        },
        None => ClientCpu::default(),
    };
    collector.collect(&recorders, &mut spare, end, observer);
    collector.flush_window(observer);
    let ended_at = SystemTime::now();
    join_all(running, end + Duration::from_millis(100));

    if let Some(msg) = shared.failure.lock().unwrap().clone() {
        status = RunStatus::Failed(msg);
    }
    let counters_after = admin_rt.block_on(admin.status_counters()).unwrap_or_default();
    let measured_s = end.saturating_duration_since(start + warmup).as_secs_f64();
    Ok(RunOutcome {
        totals: collector.totals,
        timeline: collector.timeline,
        measured_s,
        status,
        started_at,
        ended_at,
        counters_before,
        counters_after,
        client,
    })
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

/// Turns swapped-out recorders into the timeline, the report windows and the totals.
struct Collector {
    start: Instant,
    warmup: Duration,
    threads: u32,
    report_every: Option<u32>,
    last: Instant,
    tick: Recorder,
    window: Recorder,
    window_from: Instant,
    window_ticks: u32,
    totals: Recorder,
    timeline: Vec<IntervalStats>,
    cpu_at_last: Duration,
}

impl Collector {
    fn new(kinds: &[crate::workload::StatementKind], plan: &RunPlan, start: Instant, warmup: Duration) -> Self {
        let open = plan.loop_model.is_open();
        Collector {
            start,
            warmup,
            threads: plan.threads,
            report_every: plan.report_interval_s,
            last: start,
            tick: Recorder::new(kinds, open),
            window: Recorder::new(kinds, open),
            window_from: start,
            window_ticks: 0,
            totals: Recorder::new(kinds, open),
            timeline: Vec::new(),
            cpu_at_last: cpu::process(),
        }
    }

    fn collect(
        &mut self,
        recorders: &[Arc<Mutex<Recorder>>],
        spare: &mut Recorder,
        until: Instant,
        observer: &mut dyn RunObserver,
    ) {
        if until <= self.last {
            return;
        }
        for r in recorders {
            std::mem::swap(&mut *r.lock().unwrap(), spare);
            self.tick.add(spare);
            spare.reset();
        }
        let warmup = until <= self.start + self.warmup;
        let from_s = self.last.duration_since(self.start).as_secs_f64();
        let secs = until.duration_since(self.last).as_secs_f64();
        let cpu_now = cpu::process();
        let mut stats = IntervalStats::of(&self.tick, self.start, from_s, secs, self.threads, warmup);
        stats.client_cpu_pct = Some(cpu_now.saturating_sub(self.cpu_at_last).as_secs_f64() / secs.max(1e-9) * 100.0);
        self.cpu_at_last = cpu_now;
        self.timeline.push(stats);
        if !warmup {
            self.totals.add(&self.tick);
        }
        if self.report_every.is_some() {
            self.window.add(&self.tick);
            self.window_ticks += 1;
            if Some(self.window_ticks) == self.report_every {
                self.flush_window_until(until, observer);
            }
        }
        self.tick.reset();
        self.last = until;
    }

    fn flush_window(&mut self, observer: &mut dyn RunObserver) {
        if self.window_ticks > 0 {
            self.flush_window_until(self.last, observer);
        }
    }

    fn flush_window_until(&mut self, until: Instant, observer: &mut dyn RunObserver) {
        let from_s = self.window_from.duration_since(self.start).as_secs_f64();
        let secs = until.duration_since(self.window_from).as_secs_f64();
        let warmup = until <= self.start + self.warmup;
        observer.interval(&IntervalStats::of(&self.window, self.start, from_s, secs, self.threads, warmup));
        self.window.reset();
        self.window_ticks = 0;
        self.window_from = until;
    }
}
