//! The worker threads that drive the clients, and the measuring loop that swaps out their
//! recorders every tick, ends the warmup between events and decides when to stop.

use super::*;

/// CPU readings at the start of the measured phase: process, each worker, host ticks.
type CpuMark = (Duration, Vec<Duration>, Option<(u64, u64)>);

/// What the measuring loop saw.
pub(super) struct MeasuringOutcome {
    pub status: RunStatus,
    /// When measured time began (the warmup's end, between events) and ended.
    pub from: Instant,
    pub end: Instant,
    cpu_mark: Option<CpuMark>,
    pub warmup_end: Option<crate::model::WarmupEnd>,
}

/// The measuring loop's clock: the next tick, and the end of measured time once known.
struct LoopClock {
    next_tick: Instant,
    deadline: Option<Instant>,
    /// When measured time ended, and when this thread noticed (the grace counts from then).
    stopped_at: Option<Instant>,
    noticed_at: Instant,
}

/// The worker threads, each with the recorder its clients write to.
pub(super) struct Workers {
    handles: Vec<JoinHandle<Duration>>,
    recorders: Vec<Arc<Mutex<TickRecorder>>>,
    shared: Arc<Shared>,
    /// Reads the server's figures over time, once the run started.
    pub sampler: Option<super::sampler::Sampler>,
    /// Clients that must be ready before the run starts: the terminals and the deferred
    /// worker, if any.
    expected: u32,
}

impl Workers {
    /// Async drivers: one event loop per core, clients spread over them; blocking drivers:
    /// one thread per client.
    pub(super) fn spawn<D: Database>(
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
        let defers = spec.events.defers();
        let mut workers = Workers {
            handles: Vec::new(),
            recorders: Vec::new(),
            shared: shared.clone(),
            sampler: None,
            expected: plan.threads + defers as u32,
        };
        // A shard's clients have ids of their own in the whole run's (their random streams
        // and `client_id` values differ from every other shard's).
        let first = plan.shard.as_ref().map_or(0, |s| s.first_client as u64);
        let new_recorder = || Arc::new(Mutex::new(TickRecorder::with_counters(statements, transactions, open)));
        for w in 0..count {
            let rec = new_recorder();
            workers.recorders.push(rec.clone());
            let ids: Vec<u64> =
                (0..plan.threads as u64).filter(|i| i % count as u64 == w as u64).map(|i| first + i).collect();
            let spawned = clients_thread(w, db.clone(), spec.clone(), shared.clone(), ids, rec, open);
            workers.started(spawned)?;
        }
        if defers {
            let rec = new_recorder();
            workers.recorders.push(rec.clone());
            // An id no terminal has, in any shard.
            let spawned = deferred_thread(db, spec, shared, u64::MAX - first, rec);
            workers.started(spawned)?;
        }
        Ok(workers)
    }

    /// Keeps a thread just spawned; a thread that could not start calls the run off.
    fn started(&mut self, spawned: std::io::Result<JoinHandle<Duration>>) -> Result<(), RunError> {
        match spawned {
            Ok(h) => {
                self.handles.push(h);
                Ok(())
            }
            Err(e) => {
                self.call_off();
                Err(RunError::Thread(e))
            }
        }
    }

    /// Stops clients that have not started and waits a little for them.
    pub(super) fn call_off(&mut self) {
        self.shared.halt();
        self.shared.start.send_replace(None);
        join_all(std::mem::take(&mut self.handles), Instant::now() + GRACE);
    }

    /// Waits until every client is connected and prepared, or one failed, or Ctrl-C.
    pub(super) fn wait_until_ready(&mut self) -> Result<(), RunError> {
        while self.shared.ready.load(Ordering::SeqCst) < self.expected {
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
    /// run's recorder with nothing in it; `warmed_up` reads the counters as the warmup ends.
    pub(super) fn measure(
        &self,
        plan: &RunPlan,
        empty: &TickRecorder,
        start: Instant,
        warmup: Duration,
        sink: &mut dyn Sink,
        warmed_up: &mut dyn FnMut(),
    ) -> MeasuringOutcome {
        let shared = &self.shared;
        let (mut merged, mut spare) = (empty.clone(), empty.clone());
        let cpu_mark = warmup.is_zero().then(|| self.cpu_reading());
        let mut m = MeasuringOutcome {
            status: RunStatus::Completed,
            from: start + warmup,
            end: start,
            cpu_mark,
            warmup_end: None,
        };
        let deadline = shared.measure_until.get().copied();
        let mut clock = LoopClock { next_tick: start + plan.tick(), deadline, stopped_at: None, noticed_at: start };
        loop {
            let now = Instant::now();
            self.notice_stop(&mut clock, &mut m.status, now);
            if self.handles.iter().all(|h| h.is_finished()) {
                break;
            }
            let grace = if m.status == RunStatus::Interrupted { GRACE_INTERRUPTED } else { GRACE };
            if clock.stopped_at.is_some() && now >= clock.noticed_at + grace {
                self.stalled(m.status);
                // Measured time ends when the run was told to stop, not after the grace.
                m.end = clock.stopped_at.unwrap_or(now);
                self.tick(&mut merged, &mut spare, m.end, sink);
                return m;
            }
            // No window starts after measured time ended (a late thread has ticks past due).
            if now >= clock.next_tick && clock.stopped_at.is_none_or(|s| clock.next_tick <= s) {
                if m.cpu_mark.is_none() && now >= m.from && clock.stopped_at.is_none() {
                    self.end_warmup(plan, clock.next_tick, (&mut merged, &mut spare), sink, warmed_up, &mut m);
                    clock.next_tick = m.from + plan.tick();
                    clock.deadline = shared.measure_until.get().copied();
                    continue;
                }
                // Stamped when the recorders were swapped, not when the tick was due: under
                // load the swap runs late, and what was recorded until then belongs here.
                self.tick(&mut merged, &mut spare, clock.next_tick, sink);
                clock.next_tick += plan.tick();
            }
            // Woken at the deadline itself, not up to 5 ms after it: shards end together.
            let d = clock.deadline.filter(|_| clock.stopped_at.is_none());
            let until = d.map_or(clock.next_tick, |d| d.min(clock.next_tick));
            std::thread::sleep(until.saturating_duration_since(Instant::now()).min(Duration::from_millis(5)));
        }
        m.end = clock.stopped_at.unwrap_or_else(Instant::now);
        // Events in flight at the end count, as in sysbench (tick: the last interval).
        self.tick(&mut merged, &mut spare, m.end, sink);
        m
    }

    /// Ctrl-C, the deadline or a failure: every client is told to stop.
    fn notice_stop(&self, clock: &mut LoopClock, status: &mut RunStatus, now: Instant) {
        if clock.stopped_at.is_some() {
            return;
        }
        if signal::presses() > 0 {
            *status = RunStatus::Interrupted;
        }
        let due = clock.deadline.filter(|d| now >= *d);
        if *status == RunStatus::Interrupted || due.is_some() || self.shared.stopping() {
            self.shared.halt();
            // At the deadline the clients stopped starting events by themselves.
            clock.stopped_at = Some(if *status == RunStatus::Interrupted { now } else { due.unwrap_or(now) });
            clock.noticed_at = now;
        }
    }

    /// Clients still in an event after the grace fail the run (unless it was interrupted).
    fn stalled(&self, status: RunStatus) {
        let stalled = self.expected.saturating_sub(self.shared.finished.load(Ordering::SeqCst));
        if status != RunStatus::Interrupted && stalled > 0 {
            self.shared.fail(format!(
                "{} stalled: no reply from the server within {} s after the measured phase ended; their last events are not counted and the grace time is not measured",
                crate::model::plural(stalled as u64, "client"),
                GRACE.as_secs()
            ));
        }
    }

    /// Ends the warmup between events: no client starts a new event, the ones in flight
    /// finish (up to GRACE), the warmup's last tick (due at `due`) takes them, the server's
    /// counters and the CPU are read, and the measured phase begins, its ticks, deadline
    /// and arrivals counted from then. The pause is in no event's latency.
    fn end_warmup(
        &self,
        plan: &RunPlan,
        due: Instant,
        (merged, spare): (&mut TickRecorder, &mut TickRecorder),
        sink: &mut dyn Sink,
        warmed_up: &mut dyn FnMut(),
        m: &mut MeasuringOutcome,
    ) {
        let gate = &self.shared.gate;
        gate.close();
        let give_up = Instant::now() + GRACE;
        while gate.in_flight() > 0 && !self.shared.stopping() && signal::presses() == 0 && Instant::now() < give_up {
            std::thread::sleep(Duration::from_micros(100));
        }
        let events_in_flight = gate.in_flight();
        self.tick(merged, spare, due, sink);
        warmed_up();
        m.cpu_mark = Some(self.cpu_reading());
        let from = Instant::now();
        self.shared.measured_from(plan, from);
        sink.measuring(from);
        gate.open();
        m.from = from;
        let pause_ms = from.saturating_duration_since(due).as_secs_f64() * 1e3;
        m.warmup_end = Some(crate::model::WarmupEnd { pause_ms, events_in_flight });
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
        let backlog = self.shared.arrivals().map(|(s, _)| s.backlog(until));
        let server = self.sampler.as_ref().and_then(|s| s.take());
        sink.tick(&Tick { recorder: merged, until, due, process_cpu: cpu::process(), backlog, server });
        merged.reset();
    }

    /// The client's CPU over the measured phase; joins workers that ended and gives the
    /// others a moment.
    pub(super) fn finish(self, m: &MeasuringOutcome, blocking: bool) -> ClientCpu {
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
        let wall = m.end.saturating_duration_since(m.from).as_secs_f64();
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

/// A worker thread driving clients `ids` on its own event loop, recording into `rec`;
/// returns its CPU time.
fn clients_thread<D: Database>(
    w: u32,
    db: Arc<D>,
    spec: Arc<ClientSpec>,
    shared: Arc<Shared>,
    ids: Vec<u64>,
    rec: Arc<Mutex<TickRecorder>>,
    open: bool,
) -> std::io::Result<JoinHandle<Duration>> {
    std::thread::Builder::new().name(format!("fairbench-worker-{w}")).spawn(move || {
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
                    let client = client::run(db.clone(), spec.clone(), shared.clone(), id, rec.clone(), timers.clone());
                    tokio::task::spawn_local(client)
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
    })
}

/// The deferred worker's thread: its own event loop and recorder (see runner::deferred).
fn deferred_thread<D: Database>(
    db: Arc<D>,
    spec: Arc<ClientSpec>,
    shared: Arc<Shared>,
    id: u64,
    rec: Arc<Mutex<TickRecorder>>,
) -> std::io::Result<JoinHandle<Duration>> {
    std::thread::Builder::new().name("fairbench-deferred".into()).spawn(move || {
        let rt = crate::local_runtime();
        rt.block_on(async {
            let ended = tokio::task::spawn_local(deferred::work(db, spec, shared.clone(), id, rec)).await;
            shared.finished.fetch_add(1, Ordering::SeqCst);
            match ended {
                // Closed after it counted as finished, as a client's (see client::run).
                Ok(connection) => drop(connection),
                Err(e) => shared.fail(format!("the deferred worker crashed (internal error: {})", panic_message(e))),
            }
        });
        cpu::current_thread()
    })
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
