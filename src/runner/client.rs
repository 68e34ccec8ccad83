//! One client: its connection, prepared statements and random stream, and the loop that
//! runs events. The loop only executes statements and records their latencies.

use super::timer::PreciseTimer;
use super::Shared;
use crate::db::{Connection, Database, DbError, NewRowId, Param};
use crate::random::{Distribution, Rng};
use crate::recorder::Recorder;
use crate::workload::schema::{C_TEMPLATE, PAD_TEMPLATE};
use crate::workload::{StatementKind, Step, Workload};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const NOT_PREPARED: usize = usize::MAX;

/// Statement ids by kind: positions in `kinds` (the order the recorder was given).
pub fn statement_ids(kinds: &[StatementKind]) -> [usize; StatementKind::COUNT] {
    let mut ids = [usize::MAX; StatementKind::COUNT];
    for (i, k) in kinds.iter().enumerate() {
        ids[*k as usize] = i;
    }
    ids
}

/// What every client of a run shares read-only.
pub struct ClientSpec {
    pub workload: Workload,
    pub steps: Vec<Step>,
    pub kinds: Vec<StatementKind>,
    /// The recorder's statement id of each kind (its position in `kinds`).
    pub ids: [usize; StatementKind::COUNT],
    pub tables: u32,
    pub table_size: u32,
    pub range_size: u32,
    pub auto_inc: bool,
    pub dist: Distribution,
    pub seed: u64,
    pub retry: crate::model::RetryPolicy,
    pub reconnect_timeout: Duration,
    pub open_loop: bool,
}

struct Client<C> {
    conn: C,
    /// Statement handle per table (index table-1) and kind.
    handles: Vec<[usize; StatementKind::COUNT]>,
    rng: Rng,
    c_buf: Vec<u8>,
    pad_buf: Vec<u8>,
    begin_sql: &'static str,
    new_row_id: NewRowId,
}

/// Connects, prepares, waits for the start signal, then runs events until told to stop.
pub async fn run<D: Database>(
    db: Arc<D>,
    spec: Arc<ClientSpec>,
    shared: Arc<Shared>,
    id: u64,
    rec: Arc<Mutex<Recorder>>,
) {
    run_events(db, spec, shared.clone(), id, rec).await;
    shared.finished.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
}

async fn run_events<D: Database>(
    db: Arc<D>,
    spec: Arc<ClientSpec>,
    shared: Arc<Shared>,
    id: u64,
    rec: Arc<Mutex<Recorder>>,
) {
    let mut client = match connect_gated(&*db, &spec, &shared, id).await {
        Ok(c) => c,
        Err(e) => return shared.fail(format!("client {id}: {e}")),
    };
    let mut timer = match spec.open_loop {
        true => match PreciseTimer::new() {
            Ok(t) => Some(t),
            Err(e) => return shared.fail(format!("client {id}: cannot create a timer: {e}")),
        },
        false => None,
    };
    shared.ready();
    let Some(_) = shared.wait_start().await else { return };
    loop {
        if shared.stopping() {
            return;
        }
        // Closed loop: the event is due now. Open loop: when the schedule says.
        let (intended, dropped) = match (shared.schedule.get(), &mut timer) {
            (Some(schedule), Some(timer)) => {
                let slot = schedule.claim(Instant::now());
                if let Err(e) = timer.sleep_until(slot.intended).await {
                    return shared.fail(format!("client {id}: timer failed: {e}"));
                }
                if shared.stopping() {
                    return;
                }
                (slot.intended, slot.dropped)
            }
            _ => (Instant::now(), 0),
        };
        if shared.measuring(intended) && !shared.claim_event() {
            return;
        }
        if spec.open_loop {
            rec.lock().unwrap().started(intended.elapsed(), dropped);
        }
        // Retry the same event until it succeeds, so --events counts completed events. Its
        // latency runs from the intended start (closed loop: the first attempt), its service
        // time from the attempt that succeeded.
        let mut attempt = Instant::now();
        loop {
            let waited = if spec.open_loop { attempt - intended } else { Duration::ZERO };
            match client.event(&spec, &shared, &rec, waited).await {
                Ok(()) => {
                    let end = Instant::now();
                    rec.lock().unwrap().event(end - intended, end - attempt, end);
                    break;
                }
                Err(e) if e.connection_lost => {
                    rec.lock().unwrap().error(&e.code.to_string());
                    match reconnect(&*db, &spec, &shared, id, &e).await {
                        Some(c) => {
                            client = c;
                            rec.lock().unwrap().reconnects += 1;
                        }
                        None => return,
                    }
                }
                Err(e) if spec.retry.retries(&e.code) => {
                    rec.lock().unwrap().error(&e.code.to_string());
                    if spec.steps.first() == Some(&Step::Begin) {
                        // Ends the failed transaction; a failure here surfaces on the retry.
                        let _ = client.conn.simple("ROLLBACK").await;
                    }
                }
                Err(e) => return shared.fail(format!("client {id}: {e}")),
            }
            if shared.stopping() {
                return;
            }
            attempt = Instant::now();
        }
    }
}

/// How many clients of a process may be connecting at once: a burst of thousands overflows
/// the server's listen backlog (MySQL back_log is 80 by default), and a connection whose
/// final ACK was dropped waits forever for a greeting that never comes.
pub const CONNECTING_AT_ONCE: usize = 32;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const CONNECT_ATTEMPTS: u32 = 3;

async fn connect_gated<D: Database>(
    db: &D,
    spec: &ClientSpec,
    shared: &Shared,
    id: u64,
) -> Result<Client<D::Conn>, DbError> {
    let _permit = shared.connect_gate.acquire().await.expect("never closed");
    for _ in 1..CONNECT_ATTEMPTS {
        if let Ok(result) = tokio::time::timeout(CONNECT_TIMEOUT, connect(db, spec, id)).await {
            return result;
        }
    }
    tokio::time::timeout(CONNECT_TIMEOUT, connect(db, spec, id)).await.unwrap_or_else(|_| {
        Err(DbError::timeout(format!(
            "no answer within {} s, {CONNECT_ATTEMPTS} times: is the server overloaded by connections?",
            CONNECT_TIMEOUT.as_secs()
        )))
    })
}

async fn connect<D: Database>(db: &D, spec: &ClientSpec, id: u64) -> Result<Client<D::Conn>, DbError> {
    let mut conn = db.connect().await?;
    let new_row_id = db.new_row_id();
    let mut handles = vec![[NOT_PREPARED; StatementKind::COUNT]; spec.tables as usize];
    let new_row = (spec.workload == Workload::OltpInsert && spec.auto_inc).then_some(new_row_id);
    for (t, slots) in handles.iter_mut().enumerate() {
        for &kind in &spec.kinds {
            if !kind.is_transaction_control() {
                slots[kind as usize] = conn.prepare(&kind.sql(t as u32 + 1, new_row)).await?;
            }
        }
    }
    Ok(Client {
        conn,
        handles,
        rng: Rng::for_client(spec.seed, id),
        c_buf: Vec::with_capacity(C_TEMPLATE.len()),
        pad_buf: Vec::with_capacity(PAD_TEMPLATE.len()),
        begin_sql: db.begin_sql(spec.workload.writes()),
        new_row_id,
    })
}

/// Tries to reconnect until the timeout; `None` when the run must end.
async fn reconnect<D: Database>(
    db: &D,
    spec: &ClientSpec,
    shared: &Shared,
    id: u64,
    cause: &DbError,
) -> Option<Client<D::Conn>> {
    let deadline = Instant::now() + spec.reconnect_timeout;
    let mut last = cause.clone();
    while Instant::now() < deadline && !shared.stopping() {
        match connect_gated(db, spec, shared, id).await {
            Ok(c) => return Some(c),
            Err(e) => last = e,
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Also at the end of the run: a server that died then lost the events in flight.
    shared.fail(if shared.stopping() {
        format!("client {id} lost its connection as the run ended: {last}")
    } else {
        format!(
            "client {id} lost its connection and could not reconnect within {} s: {last}",
            spec.reconnect_timeout.as_secs()
        )
    });
    None
}

impl<C: Connection> Client<C> {
    /// One event: the workload's steps, each statement timed and recorded.
    /// `waited`: how long after its intended start this attempt began (zero in a closed loop).
    async fn event(
        &mut self,
        spec: &ClientSpec,
        shared: &Shared,
        rec: &Mutex<Recorder>,
        waited: Duration,
    ) -> Result<(), DbError> {
        for step in &spec.steps {
            match *step {
                Step::Begin => {
                    let t = Instant::now();
                    self.conn.simple(self.begin_sql).await?;
                    let end = Instant::now();
                    rec.lock().unwrap().statement(spec.ids[StatementKind::Begin as usize], end - t, waited, end);
                }
                Step::Commit => {
                    let t = Instant::now();
                    self.conn.simple("COMMIT").await?;
                    let end = Instant::now();
                    rec.lock().unwrap().statement(spec.ids[StatementKind::Commit as usize], end - t, waited, end);
                }
                Step::Repeat(kind, n) => {
                    let table = self.rng.uniform(1, spec.tables);
                    for _ in 0..n {
                        self.repeatable(spec, table, kind, rec, waited).await?;
                    }
                }
                Step::DeleteInserts(n) => {
                    let table = self.rng.uniform(1, spec.tables);
                    for _ in 0..n {
                        let id = self.id(spec);
                        let k = self.id(spec);
                        self.rng.fill_digits(C_TEMPLATE, &mut self.c_buf);
                        self.rng.fill_digits(PAD_TEMPLATE, &mut self.pad_buf);
                        self.exec(spec, table, StatementKind::Delete, &[Param::Int(id)], rec, waited).await?;
                        let (c, pad) = (text(&self.c_buf), text(&self.pad_buf));
                        let params = [Param::Int(id), Param::Int(k), Param::Text(c), Param::Text(pad)];
                        let (h, sid) = self.handle(spec, table, StatementKind::Insert);
                        timed(&mut self.conn, h, &params, sid, rec, waited).await?;
                    }
                }
                Step::NewRowInsert => {
                    let table = self.rng.uniform(1, spec.tables);
                    let k = self.id(spec);
                    self.rng.fill_digits(C_TEMPLATE, &mut self.c_buf);
                    self.rng.fill_digits(PAD_TEMPLATE, &mut self.pad_buf);
                    let (c, pad) = (text(&self.c_buf), text(&self.pad_buf));
                    let id = match (spec.auto_inc, self.new_row_id) {
                        // sysbench: a unique uint32 shifted into INTEGER range.
                        (false, _) => Some(shared.unique.next() as i64 - 2_147_483_648),
                        // id=0 asks MySQL for the next AUTO_INCREMENT value.
                        (true, NewRowId::Zero) => Some(0),
                        // PostgreSQL and SQLite: the id column is left out of the INSERT.
                        (true, NewRowId::Omitted) => None,
                    };
                    let params = [Param::Int(id.unwrap_or(0)), Param::Int(k), Param::Text(c), Param::Text(pad)];
                    let params = if id.is_some() { &params[..] } else { &params[1..] };
                    let (h, sid) = self.handle(spec, table, StatementKind::Insert);
                    timed(&mut self.conn, h, params, sid, rec, waited).await?;
                }
            }
        }
        Ok(())
    }

    /// The statements that repeat within a group: point selects, ranges, updates, deletes.
    async fn repeatable(
        &mut self,
        spec: &ClientSpec,
        table: u32,
        kind: StatementKind,
        rec: &Mutex<Recorder>,
        waited: Duration,
    ) -> Result<(), DbError> {
        match kind {
            StatementKind::SimpleRange
            | StatementKind::SumRange
            | StatementKind::OrderRange
            | StatementKind::DistinctRange => {
                let id = self.id(spec);
                let end = (id + spec.range_size as i64 - 1).min(i32::MAX as i64);
                self.exec(spec, table, kind, &[Param::Int(id), Param::Int(end)], rec, waited).await
            }
            StatementKind::NonIndexUpdate => {
                self.rng.fill_digits(C_TEMPLATE, &mut self.c_buf);
                let id = self.id(spec);
                let (h, sid) = self.handle(spec, table, kind);
                let params = [Param::Text(text(&self.c_buf)), Param::Int(id)];
                timed(&mut self.conn, h, &params, sid, rec, waited).await
            }
            _ => {
                let id = self.id(spec);
                self.exec(spec, table, kind, &[Param::Int(id)], rec, waited).await
            }
        }
    }

    #[inline]
    fn id(&mut self, spec: &ClientSpec) -> i64 {
        spec.dist.sample(&mut self.rng, 1, spec.table_size) as i64
    }

    /// The prepared handle of `kind` on `table`, and the kind's statement id.
    #[inline]
    fn handle(&self, spec: &ClientSpec, table: u32, kind: StatementKind) -> (usize, usize) {
        (self.handles[table as usize - 1][kind as usize], spec.ids[kind as usize])
    }

    /// Executes one statement of `table`, timed and recorded.
    #[inline]
    async fn exec(
        &mut self,
        spec: &ClientSpec,
        table: u32,
        kind: StatementKind,
        params: &[Param<'_>],
        rec: &Mutex<Recorder>,
        waited: Duration,
    ) -> Result<(), DbError> {
        let (h, id) = self.handle(spec, table, kind);
        timed(&mut self.conn, h, params, id, rec, waited).await
    }
}

/// A free function so callers can lend `conn` while parameters borrow the client's buffers.
#[inline]
async fn timed<C: Connection>(
    conn: &mut C,
    handle: usize,
    params: &[Param<'_>],
    id: usize,
    rec: &Mutex<Recorder>,
    waited: Duration,
) -> Result<(), DbError> {
    let t = Instant::now();
    conn.execute(handle, params).await?;
    let end = Instant::now();
    rec.lock().unwrap().statement(id, end - t, waited, end);
    Ok(())
}

fn text(buf: &[u8]) -> &str {
    // The templates produce ASCII digits and dashes only.
    std::str::from_utf8(buf).unwrap_or_default()
}
