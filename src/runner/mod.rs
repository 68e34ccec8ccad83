//! The run loop: worker threads drive clients; this thread collects their recorders every
//! second into a timeline and the run's totals, and decides when to stop.
//!
//! Async drivers (MySQL, PostgreSQL) run many clients per worker thread (one current-thread
//! runtime per core, shared-nothing); blocking drivers (SQLite) get a thread per client.

mod client;
pub mod signal;

use crate::db::{Connection as _, Database};
use crate::plan::RunPlan;
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

/// A no-op observer.
pub struct Silent;
impl RunObserver for Silent {}

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
        let start = rx
            .wait_for(|s| s.is_some() || self.stopping())
            .await
            .ok()?
            .as_ref()
            .copied();
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
pub fn run<D: Database>(
    db: Arc<D>,
    plan: &RunPlan,
    observer: &mut dyn RunObserver,
) -> Result<RunOutcome, String> {
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
        retry_codes: plan.retry_codes.clone(),
        reconnect_timeout: Duration::from_secs(plan.reconnect_timeout_s as u64),
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
    });

    // A connection of our own for the server's counters around the measured phase.
    let admin_rt = crate::local_runtime();
    let mut admin = admin_rt.block_on(db.connect()).map_err(|e| e.to_string())?;

    let workers = if db.blocking() {
        plan.threads
    } else {
        plan.threads.min(crate::cpu_count())
    };
    let mut recorders = Vec::new();
    let mut handles: Vec<JoinHandle<()>> = Vec::new();
    for w in 0..workers {
        let rec = Arc::new(Mutex::new(Recorder::new(&kinds)));
        recorders.push(rec.clone());
        let ids: Vec<u64> = (0..plan.threads as u64)
            .filter(|i| i % workers as u64 == w as u64)
            .collect();
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
            })
            .map_err(|e| format!("cannot start worker thread: {e}"))?;
        handles.push(handle);
    }

    // Wait until every client is connected and prepared (or one failed).
    while shared.ready.load(Ordering::SeqCst) < plan.threads {
        if shared.stopping() || signal::presses() > 0 {
            shared.stop.store(true, Ordering::SeqCst);
            shared.start.send_replace(None);
            let msg = shared
                .failure
                .lock()
                .unwrap()
                .clone()
                .unwrap_or_else(|| "interrupted while connecting".into());
            join_all(handles, Instant::now() + GRACE);
            return Err(msg);
        }
        std::thread::sleep(Duration::from_millis(2));
    }

    let counters_before = admin_rt
        .block_on(admin.status_counters())
        .unwrap_or_default();
    let started_at = SystemTime::now();
    let start = Instant::now();
    let warmup = Duration::from_secs(plan.warmup_s as u64);
    let _ = shared.measure_from.set(start + warmup);
    let deadline = plan.stop.time.map(|t| start + warmup + t);
    shared.start.send_replace(Some(start));
    observer.started();

    let mut collector = Collector::new(&kinds, plan, start, warmup);
    let mut spare = Recorder::new(&kinds);
    let mut next_tick = start + TICK;
    let mut stopped_at: Option<Instant> = None;
    let mut status = RunStatus::Completed;
    loop {
        let now = Instant::now();
        if stopped_at.is_none() {
            if signal::presses() > 0 {
                status = RunStatus::Interrupted;
            }
            if status == RunStatus::Interrupted
                || deadline.is_some_and(|d| now >= d)
                || shared.stopping()
            {
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
        }
        let wait = next_tick
            .saturating_duration_since(Instant::now())
            .min(Duration::from_millis(5));
        std::thread::sleep(wait);
    }
    let end = Instant::now();
    collector.collect(&recorders, &mut spare, end, observer);
    collector.flush_window(observer);
    let ended_at = SystemTime::now();
    join_all(handles, end + Duration::from_millis(100));

    if let Some(msg) = shared.failure.lock().unwrap().clone() {
        status = RunStatus::Failed(msg);
    }
    let counters_after = admin_rt
        .block_on(admin.status_counters())
        .unwrap_or_default();
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
    })
}

fn join_all(handles: Vec<JoinHandle<()>>, until: Instant) {
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
}

impl Collector {
    fn new(
        kinds: &[crate::workload::StatementKind],
        plan: &RunPlan,
        start: Instant,
        warmup: Duration,
    ) -> Self {
        Collector {
            start,
            warmup,
            threads: plan.threads,
            report_every: plan.report_interval_s,
            last: start,
            tick: Recorder::new(kinds),
            window: Recorder::new(kinds),
            window_from: start,
            window_ticks: 0,
            totals: Recorder::new(kinds),
            timeline: Vec::new(),
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
        self.timeline.push(IntervalStats::of(
            &self.tick,
            from_s,
            secs,
            self.threads,
            warmup,
        ));
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
        observer.interval(&IntervalStats::of(
            &self.window,
            from_s,
            secs,
            self.threads,
            warmup,
        ));
        self.window.reset();
        self.window_ticks = 0;
        self.window_from = until;
    }
}
