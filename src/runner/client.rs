//! One client: its connection, prepared statements and random stream, and the loop that
//! runs events. The loop only executes statements and records their latencies.

use super::program::{Ended, Finished, ProgramSpec, ProgramState};
use super::timer::ClientTimers;
use super::Shared;
use crate::db::{Connection, Database, DbError};
use crate::random::Rng;
use crate::recorder::TickRecorder;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What every client of a run shares read-only.
pub struct ClientSpec {
    /// What an event is: the compiled workload.
    pub events: ProgramSpec,
    /// Whether any event pauses before or after it (a file's keying_ms and think_ms,
    /// closed loop only).
    pub thinks: bool,
    pub seed: u64,
    pub retry: crate::model::RetryPolicy,
    pub reconnect: crate::model::ReconnectPolicy,
    pub open_loop: bool,
}

/// A connected client: its connection, random stream and prepared program.
pub struct Client<C> {
    conn: C,
    rng: Rng,
    state: ProgramState,
    /// A deck's cards still to draw (`pick = "deck"`).
    deck: super::program::Deck,
}

/// What an execution runs and how it is recorded.
#[derive(Clone, Copy)]
pub(super) struct Execution<'a> {
    /// The transaction.
    pub tx: usize,
    /// The kind it is recorded as: `tx` itself, or its deferred kind.
    pub kind: usize,
    /// A deferred execution: the values of the client that queued it (each attempt starts
    /// from them); its latency runs from the queueing and is no event.
    pub act_as: Option<&'a super::program::ClientValues>,
}

/// Connects, prepares, waits for the start signal, then runs events until told to stop.
/// Returns the connection still open: the worker closes its clients' connections once all
/// of them have finished, since closing is no reply awaited and takes a server with
/// thousands of connections (10,000 PostgreSQL backends) longer than the grace time.
pub async fn run<D: Database>(
    db: Arc<D>,
    spec: Arc<ClientSpec>,
    shared: Arc<Shared>,
    id: u64,
    rec: Arc<Mutex<TickRecorder>>,
    timers: Option<ClientTimers>,
) -> Option<Client<D::Conn>> {
    let mut end = ClientEnd { totals: super::ClientTotals::default(), client: None };
    run_events(db, spec, shared.clone(), id, rec, timers, &mut end).await;
    crate::lock(&shared.per_client).push(end.totals);
    shared.finished.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    end.client
}

/// What a client's run leaves: its totals, and its connection if it has one.
struct ClientEnd<C> {
    totals: super::ClientTotals,
    client: Option<Client<C>>,
}

async fn run_events<D: Database>(
    db: Arc<D>,
    spec: Arc<ClientSpec>,
    shared: Arc<Shared>,
    id: u64,
    rec: Arc<Mutex<TickRecorder>>,
    timers: Option<ClientTimers>,
    end: &mut ClientEnd<D::Conn>,
) {
    // Boxed: connecting is the largest state of this future, and it is needed once; every
    // client's task would otherwise keep its room all run long.
    let client = match Box::pin(connect_gated(&*db, &spec, &shared, id)).await {
        Ok(c) => end.client.insert(c),
        Err(e) => return shared.fail(format!("client {id}: {e}")),
    };
    let totals = &mut end.totals;
    shared.ready();
    let Some(_) = shared.wait_start().await else { return };
    loop {
        if shared.stopping() {
            return;
        }
        let (intended, dropped, measured_arrival) = match next_due(&shared, timers.as_ref()).await {
            Ok(Some(due)) => due,
            Ok(None) => return,
            Err(e) => return shared.fail(format!("client {id}: timer failed: {e}")),
        };
        // The kind of event stays the same over retries, so the mix is the declared one.
        let tx = client.pick(&spec);
        let Some(mut intended) = keyed(&spec, &shared, &mut client.rng, tx, intended).await else { return };
        let (measured, warmup_event) = match admit(&shared, &spec, measured_arrival, &mut intended).await {
            Admitted::Run { measured, warmup_event } => (measured, warmup_event),
            Admitted::Next => continue,
        };
        if measured && !shared.claim_event() {
            return;
        }
        if spec.open_loop {
            crate::lock(&rec).started(intended.elapsed(), dropped);
        }
        let latency = if spec.events.deferred_kind(tx).is_some() {
            queue(&shared, &rec, client, tx, intended)
        } else {
            // Not boxed: a box per event would allocate in the hot loop (reconnecting is boxed).
            let job = Execution { tx, kind: tx, act_as: None };
            let Some(latency) = run_to_success(&db, &spec, &shared, id, &rec, client, job, intended).await else {
                return;
            };
            latency
        };
        if measured {
            totals.events += 1;
            totals.busy_s += latency.as_secs_f64();
        }
        // A thinking client holds up no warmup's end.
        drop(warmup_event);
        if spec.thinks {
            let pause = spec.events.think(tx, &mut client.rng);
            pause_unless_stopped(&shared, pause).await;
        }
    }
}

/// A deferred transaction `tx` queued for the deferred worker, as this client; the
/// queueing is the event, and its latency is returned.
fn queue<C: Connection>(
    shared: &Shared,
    rec: &Mutex<TickRecorder>,
    client: &Client<C>,
    tx: usize,
    intended: Instant,
) -> Duration {
    let start = Instant::now();
    let values = client.state.values();
    let end = Instant::now();
    shared.deferred.push(super::deferred_queue::Request { tx, values, queued: end });
    crate::lock(rec).event(tx, end - intended, end - start, end);
    end - intended
}

/// Runs `job` until it succeeds, retrying what the policy retries and reconnecting after
/// a lost connection, so --events counts completed events; returns its latency, or `None`
/// when the client must stop. Its latency runs from the intended start (closed loop: the
/// first attempt; deferred: the queueing), its service time from the attempt that succeeded.
#[allow(clippy::too_many_arguments)]
pub(super) async fn run_to_success<D: Database>(
    db: &Arc<D>,
    spec: &ClientSpec,
    shared: &Shared,
    id: u64,
    rec: &Mutex<TickRecorder>,
    client: &mut Client<D::Conn>,
    job: Execution<'_>,
    intended: Instant,
) -> Option<Duration> {
    // Closed loop: `intended` was read from the clock just now (next_due, keyed or
    // admit), so it is also the first attempt's start; an open loop's schedule needs a
    // reading, and so does a deferred execution's.
    let mut attempt = if spec.open_loop || job.act_as.is_some() { Instant::now() } else { intended };
    let tx = job.tx;
    loop {
        let waited = if spec.open_loop && job.act_as.is_none() { attempt - intended } else { Duration::ZERO };
        if let Some(values) = job.act_as {
            client.state.act_as(values);
        }
        match client.event(tx, rec, waited).await {
            Ok(finished) => return Some(record_ended(rec, job, finished, intended, attempt)),
            Err(e) if e.connection_lost => {
                crate::lock(rec).failed(job.kind, &e.code.to_string());
                *client = Box::pin(reconnect(&**db, spec, shared, id, rec, &e)).await?;
                crate::lock(rec).reconnects += 1;
            }
            Err(e) if spec.retry.retries(&e.code) => {
                crate::lock(rec).failed(job.kind, &e.code.to_string());
                if spec.in_transaction(tx) {
                    // Ends the failed transaction; a failure here surfaces on the retry.
                    let _ = client.conn.simple("ROLLBACK").await;
                }
            }
            Err(e) => {
                shared.fail(format!("client {id}: {e}"));
                return None;
            }
        }
        if shared.stopping() {
            return None;
        }
        attempt = Instant::now();
    }
}

/// What the warmup's gate lets a client do with the event it is about to start.
pub(super) enum Admitted<'a> {
    /// Run it: measured, or a warmup event the gate waits for while its guard lives.
    Run { measured: bool, warmup_event: Option<super::gate::Busy<'a>> },
    /// Take the next one: the run stops, or an open loop's warmup arrival came too late
    /// for the warmup (no warmup arrival is ever measured).
    Next,
}

/// Passes the warmup's gate. A client that finds it closed waits for the measured phase;
/// in a closed loop its event then starts when the gate opens (the wait is in no latency).
pub(super) async fn admit<'a>(
    shared: &'a Shared,
    spec: &ClientSpec,
    measured_arrival: bool,
    intended: &mut Instant,
) -> Admitted<'a> {
    use super::gate::GatePass;
    loop {
        match shared.gate.enter() {
            GatePass::Measured if spec.open_loop && !measured_arrival => return Admitted::Next,
            GatePass::Measured => return Admitted::Run { measured: true, warmup_event: None },
            GatePass::Warmup(busy) => return Admitted::Run { measured: false, warmup_event: Some(busy) },
            GatePass::Closed => {
                shared.gate.wait(|| shared.stopping()).await;
                if shared.stopping() {
                    return Admitted::Next;
                }
                if !spec.open_loop {
                    *intended = Instant::now();
                }
            }
        }
    }
}

/// How many clients of a process may be connecting at once: a burst of thousands overflows
/// the server's listen backlog (MySQL back_log is 80 by default), and a connection whose
/// final ACK was dropped waits forever for a greeting that never comes.
pub const CONNECTING_AT_ONCE: usize = 32;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const CONNECT_ATTEMPTS: u32 = 3;

pub(super) async fn connect_gated<D: Database>(
    db: &D,
    spec: &ClientSpec,
    shared: &Shared,
    id: u64,
) -> Result<Client<D::Conn>, DbError> {
    let _permit = shared.connect_gate.acquire().await.expect("never closed");
    for _ in 1..CONNECT_ATTEMPTS {
        if let Ok(result) = tokio::time::timeout(CONNECT_TIMEOUT, connect(db, spec, shared, id)).await {
            return result;
        }
    }
    tokio::time::timeout(CONNECT_TIMEOUT, connect(db, spec, shared, id)).await.unwrap_or_else(|_| {
        Err(DbError::timeout(format!(
            "no answer within {} s, {CONNECT_ATTEMPTS} times: is the server overloaded by connections?",
            CONNECT_TIMEOUT.as_secs()
        )))
    })
}

async fn connect<D: Database>(db: &D, spec: &ClientSpec, shared: &Shared, id: u64) -> Result<Client<D::Conn>, DbError> {
    let mut conn = db.connect().await?;
    // As the server saw this connection (a lost connection is a failed connect).
    let seen = match conn.transport_seen().await {
        Ok(seen) => seen,
        Err(e) if e.connection_lost => return Err(e),
        Err(_) => crate::model::TransportSeen::unread(),
    };
    crate::model::TransportSeen::add(&mut crate::lock(&shared.transports), &seen);
    let mut rng = Rng::for_client(spec.seed, id);
    let state = ProgramState::prepare(db, &mut conn, &spec.events, id, &mut rng).await?;
    Ok(Client { conn, rng, state, deck: Default::default() })
}

/// Tries to reconnect, with backoff, until the timeout (each failed attempt recorded);
/// `None` when the run must end.
async fn reconnect<D: Database>(
    db: &D,
    spec: &ClientSpec,
    shared: &Shared,
    id: u64,
    rec: &Mutex<TickRecorder>,
    cause: &DbError,
) -> Option<Client<D::Conn>> {
    let deadline = Instant::now() + Duration::from_secs(spec.reconnect.timeout_s.into());
    let mut last = cause.clone();
    let mut n = 0;
    while !shared.stopping() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        match tokio::time::timeout(left, connect_gated(db, spec, shared, id)).await {
            Ok(Ok(c)) => return Some(c),
            Ok(Err(e)) => last = e,
            // The deadline cut an attempt short: the last attempt that ended says more (what
            // each node was) than the cut, which only says so when no attempt ended before.
            Err(_) if n == 0 => last = DbError::timeout("no connection before --reconnect-timeout"),
            Err(_) => {}
        }
        crate::lock(rec).reconnect_failures += 1;
        let pause = spec.reconnect.backoff(id, n).min(deadline.saturating_duration_since(Instant::now()));
        pause_unless_stopped(shared, pause).await;
        n += 1;
    }
    // Also at the end of the run: a server that died then lost the events in flight.
    shared.fail(if shared.stopping() {
        format!("client {id} lost its connection as the run ended: {last}")
    } else {
        format!(
            "client {id} lost its connection and could not reconnect within {} s ({n} attempts): {last}",
            spec.reconnect.timeout_s
        )
    });
    None
}

impl ClientSpec {
    /// Whether an event of kind `tx` runs inside BEGIN ... COMMIT (a failed one needs a ROLLBACK).
    fn in_transaction(&self, tx: usize) -> bool {
        self.events.in_transaction(tx)
    }
}

/// When the next event is due, how many the schedule dropped before it, and whether it is
/// the measured phase's arrival (always, in a closed loop): now in a closed loop, at its
/// slot in an open loop's schedule; `None` when the run ended first or the event would be
/// due after the measured phase (--time).
async fn next_due(shared: &Shared, timers: Option<&ClientTimers>) -> std::io::Result<Option<(Instant, u64, bool)>> {
    match (shared.arrivals(), timers) {
        (Some(_), Some(timers)) => loop {
            let Some((schedule, measured)) = shared.arrivals() else { return Ok(None) };
            let slot = schedule.claim(Instant::now());
            if shared.past_end(slot.intended) {
                return Ok(None);
            }
            // A warmup arrival past the warmup's end is never run: the client waits for the
            // measured phase's arrivals instead of sleeping into it.
            if !measured && shared.warmup_until.get().is_some_and(|w| slot.intended >= *w) {
                shared.gate.wait(|| shared.stopping()).await;
                if shared.stopping() {
                    return Ok(None);
                }
                continue;
            }
            // A low rate's next arrival can lie long after the end of the run: the sleep
            // ends early then, and the client with it.
            let on_time = timers.sleep_until(slot.intended).await?;
            return Ok(on_time.then_some((slot.intended, slot.dropped, measured)));
        },
        _ => {
            let now = Instant::now();
            Ok((!shared.past_end(now)).then_some((now, 0, true)))
        }
    }
}

/// An execution that succeeded, recorded: its latency from `intended`, its service time
/// from `attempt`, both to its last statement's end; an intended rollback and skipped
/// repetitions counted. Returns its latency.
fn record_ended(
    rec: &Mutex<TickRecorder>,
    job: Execution,
    finished: Finished,
    intended: Instant,
    attempt: Instant,
) -> Duration {
    let end = finished.last_statement_end.unwrap_or_else(Instant::now);
    let latency = end - intended;
    // A closed loop's first attempt is its intended start: one subtraction for both.
    let service = if attempt == intended { latency } else { end - attempt };
    let mut r = crate::lock(rec);
    match job.act_as {
        Some(_) => r.deferred(job.kind, latency),
        None => r.event(job.tx, latency, service, end),
    }
    if finished.ended == Ended::RolledBack {
        r.rolled_back(job.kind);
    }
    if finished.skipped > 0 {
        r.skipped(job.kind, finished.skipped);
    }
    latency
}

/// The event's start after its keying time, if any (closed loop only: it is outside the
/// event's latency); `None` when the run ended during it.
async fn keyed(spec: &ClientSpec, shared: &Shared, rng: &mut Rng, tx: usize, intended: Instant) -> Option<Instant> {
    if !spec.thinks {
        return Some(intended);
    }
    let pause = spec.events.keying(tx, rng);
    if !pause.is_zero() {
        pause_unless_stopped(shared, pause).await;
        if shared.stopping() {
            return None;
        }
    }
    Some(Instant::now())
}

/// A file's think or keying time (closed loop only: an open loop's schedule decides when
/// events start).
async fn pause_unless_stopped(shared: &Shared, pause: Duration) {
    let until = Instant::now() + pause;
    while !shared.stopping() && Instant::now() < until {
        tokio::time::sleep(until.saturating_duration_since(Instant::now()).min(Duration::from_millis(100))).await;
    }
}

impl<C: Connection> Client<C> {
    /// The kind of the next event: a file's transaction by weight; a built-in has one.
    fn pick(&mut self, spec: &ClientSpec) -> usize {
        spec.events.pick(&mut self.rng, &mut self.deck)
    }

    /// One event, each statement timed and recorded. `waited`: how long after its
    /// intended start this attempt began (zero in a closed loop).
    #[inline]
    async fn event(&mut self, tx: usize, rec: &Mutex<TickRecorder>, waited: Duration) -> Result<Finished, DbError> {
        self.state.event(&mut self.conn, &mut self.rng, tx, rec, waited).await
    }
}
