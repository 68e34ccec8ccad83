//! The events of a compiled workload (a file or the built-in definition): a transaction
//! drawn by weight, its values drawn into the client's slots, each statement executed with
//! the slots its `:names` bind, values saved from result rows for later statements.

use crate::db::{ClientFault, Connection, Database, DbError, Param, Value};
use crate::random::{DistributionSpec, Rng, UniqueSequence};
use crate::recorder::TickRecorder;
use crate::workload::generate::{Context, ScopeDraws, Slot};
use crate::workload::program::{Program, SaveFrom, Times, TransactionIds, MAX_REPEAT};
use crate::workload::StatementClass;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Parameters bound without allocating, up to this many per statement.
const INLINE_PARAMS: usize = 16;

/// A client's deck (`pick = "deck"`): each transaction `weight` times, shuffled, dealt to
/// the end before a new deck (TPC-C's clause 5.2.4.2), so every whole deck keeps the mix
/// exactly.
#[derive(Debug, Default)]
pub struct Deck(Vec<usize>);

impl Deck {
    /// The next card; a new shuffled deck of `weights` when this one is dealt out.
    pub fn deal(&mut self, weights: impl Iterator<Item = u32>, rng: &mut Rng) -> usize {
        if self.0.is_empty() {
            for (tx, weight) in weights.enumerate() {
                self.0.extend(std::iter::repeat_n(tx, weight as usize));
            }
            for i in (1..self.0.len()).rev() {
                self.0.swap(i, rng.uniform(0, i as u32) as usize);
            }
        }
        self.0.pop().unwrap_or(0)
    }
}

/// What every client of a run shares read-only.
pub struct ProgramSpec {
    pub program: Arc<Program>,
    ids: Vec<TransactionIds>,
    /// Running sums of the weights, to pick a transaction.
    cumulative: Vec<u64>,
    /// The run's `--rand-*` settings (`ids` generators follow them).
    dist: DistributionSpec,
    /// `unique` ids, shared by every client.
    unique: Arc<UniqueSequence>,
    /// The run's seed (`nurand`'s C constants come from it).
    seed: u64,
    /// Per transaction, the kind its deferred executions are recorded as.
    deferred: Vec<Option<usize>>,
}

impl ProgramSpec {
    /// `part`: (index, count) of a shard, whose `unique` values are its own part of the
    /// sequence.
    pub fn new(program: Arc<Program>, dist: DistributionSpec, seed: u64, part: Option<(u32, u32)>) -> Self {
        let ids = program.measured().1;
        let cumulative = program
            .transactions
            .iter()
            .scan(0u64, |sum, t| {
                *sum += t.weight as u64;
                Some(*sum)
            })
            .collect();
        let unique = match part {
            Some((index, count)) => UniqueSequence::part(seed, index, count),
            None => UniqueSequence::new(seed),
        };
        let deferred = program.deferred_kinds();
        ProgramSpec { program, ids, cumulative, dist, unique: Arc::new(unique), seed, deferred }
    }

    /// The kind transaction `tx`'s deferred executions are recorded as; `None`: it is not
    /// deferred.
    #[inline]
    pub fn deferred_kind(&self, tx: usize) -> Option<usize> {
        self.deferred[tx]
    }

    /// Whether a transaction is deferred (the run then has a deferred worker).
    pub fn defers(&self) -> bool {
        self.deferred.iter().any(Option::is_some)
    }

    /// A transaction by weight.
    #[inline]
    pub fn pick(&self, rng: &mut Rng, deck: &mut Deck) -> usize {
        if self.cumulative.len() == 1 {
            return 0;
        }
        if self.program.deck {
            return deck.deal(self.program.transactions.iter().map(|t| t.weight), rng);
        }
        let total = *self.cumulative.last().unwrap_or(&1);
        let x = rng.next_u64() % total;
        self.cumulative.partition_point(|&c| c <= x)
    }

    pub fn in_transaction(&self, tx: usize) -> bool {
        self.ids[tx].begin.is_some()
    }

    /// The pause after transaction `tx` (its think time), drawn.
    pub fn think(&self, tx: usize, rng: &mut Rng) -> Duration {
        self.program.transactions[tx].think.draw(rng)
    }

    /// The pause before transaction `tx` (its keying time), drawn.
    pub fn keying(&self, tx: usize, rng: &mut Rng) -> Duration {
        self.program.transactions[tx].keying.draw(rng)
    }
}

enum SaveAt {
    Column(usize),
    InsertId,
}

/// One client's prepared statements, value slots and generators, laid out so an event
/// looks each statement up once.
pub struct ProgramState {
    transactions: Vec<TxState>,
    slots: Vec<Value>,
    row: Vec<Value>,
    at: Context,
}

struct TxState {
    /// (recorder id, prepared handle) of BEGIN and COMMIT: prepared like every other
    /// statement, as sysbench prepares them (plain text with --ps=off).
    begin: Option<(usize, usize)>,
    commit: Option<(usize, usize)>,
    /// ROLLBACK, when a statement may roll the transaction back as intended.
    rollback: Option<(usize, usize)>,
    draws: ScopeDraws,
    steps: Vec<StepState>,
    statements: Vec<StatementState>,
}

struct StepState {
    first: usize,
    count: usize,
    repeat: Times,
    once: ScopeDraws,
}

struct StatementState {
    /// The recorder's statement id.
    id: usize,
    /// The prepared handle, or one per table of its set.
    handles: Vec<usize>,
    /// The slot holding the table number, for a statement on a table set.
    table: Option<usize>,
    /// The slot bound to each `?`.
    args: Vec<usize>,
    draws: ScopeDraws,
    saves: Vec<(usize, SaveAt)>,
    /// A save reads a column of the first row.
    needs_row: bool,
    /// INSERT, UPDATE or DELETE: the rows it returns (`RETURNING`) are rows it changed.
    writes: bool,
    name: String,
    /// No row back ends the transaction with ROLLBACK, as intended.
    rollback_if_no_row: bool,
    /// No row back skips the rest of this repetition of its group.
    skip_if_no_row: bool,
    save_row: crate::model::RowPick,
}

impl ProgramState {
    /// Prepares every statement, finds the columns saves read, draws the client's values.
    pub async fn prepare<D: Database>(
        db: &D,
        conn: &mut D::Conn,
        spec: &ProgramSpec,
        client: u64,
        rng: &mut Rng,
    ) -> Result<Self, DbError> {
        let p = &*spec.program;
        let draws = |list: &[(usize, crate::workload::spec::Generator)]| {
            ScopeDraws::new(list, p, &spec.dist, Some(&spec.unique), spec.seed).map_err(|e| invalid(e.to_string()))
        };
        // Exact capacities: this state exists once per client (a first push reserves four).
        let mut transactions = Vec::with_capacity(p.transactions.len());
        for (t, ids) in p.transactions.iter().zip(&spec.ids) {
            let mut statements = Vec::with_capacity(t.statements.len());
            for (s, &id) in t.statements.iter().zip(&ids.statements) {
                statements.push(statement_state(conn, s, id, draws(&s.params)?).await?);
            }
            let mut steps = Vec::with_capacity(t.steps.len());
            for st in &t.steps {
                steps.push(StepState { first: st.first, count: st.count, repeat: st.repeat, once: draws(&st.once)? });
            }
            // BEGIN, COMMIT and ROLLBACK: (recorder id, prepared handle) each.
            let mut framing = [None; 3];
            let sqls = [(ids.begin, db.begin_sql(t.writes())), (ids.commit, "COMMIT"), (ids.rollback, "ROLLBACK")];
            for (k, (id, sql)) in sqls.into_iter().enumerate() {
                if let Some(id) = id {
                    framing[k] = Some((id, conn.prepare(sql).await?));
                }
            }
            let [begin, commit, rollback] = framing;
            transactions.push(TxState { begin, commit, rollback, draws: draws(&t.params)?, steps, statements });
        }
        let mut state = ProgramState {
            transactions,
            slots: vec![Value::Null; p.slots.len()],
            row: Vec::new(),
            at: Context { client, row: 0, repetition: 1 },
        };
        draws(&p.client)?.draw(rng, state.at, &mut state.slots);
        Ok(state)
    }

    /// Transaction `tx`, each statement timed and recorded; how it ended.
    pub async fn event<C: Connection>(
        &mut self,
        conn: &mut C,
        rng: &mut Rng,
        tx: usize,
        rec: &Mutex<TickRecorder>,
        waited: Duration,
    ) -> Result<Finished, DbError> {
        let ProgramState { transactions, slots, row, at } = self;
        let t = &mut transactions[tx];
        t.draws.draw(rng, *at, slots);
        let mut last = None;
        let mut skipped = 0;
        if let Some((id, handle)) = t.begin {
            last = Some(timed_execute(conn, handle, id, rec, waited).await?);
        }
        for step in t.steps.iter_mut() {
            step.once.draw(rng, *at, slots);
            let times = match step.repeat {
                Times::Fixed(n) => n,
                Times::Drawn(slot) => slots[slot].int().clamp(0, MAX_REPEAT) as u32,
            };
            for k in 1..=times as u64 {
                let at = Context { repetition: k, ..*at };
                for s in &mut t.statements[step.first..step.first + step.count] {
                    s.draws.draw(rng, at, slots);
                    let (done, end) = statement(conn, s, slots, row, rec, waited).await?;
                    last = Some(end);
                    if let (true, 0, Some((id, handle))) = (s.rollback_if_no_row, done.rows, t.rollback) {
                        let end = timed_execute(conn, handle, id, rec, waited).await?;
                        return Ok(Finished { ended: Ended::RolledBack, last_statement_end: Some(end), skipped });
                    }
                    if s.skip_if_no_row && done.rows == 0 {
                        skipped += 1;
                        break;
                    }
                }
            }
        }
        if let Some((id, handle)) = t.commit {
            last = Some(timed_execute(conn, handle, id, rec, waited).await?);
        }
        Ok(Finished { ended: Ended::Committed, last_statement_end: last, skipped })
    }

    /// The values of the client, as [`ProgramState::values`] took them: the deferred
    /// worker executes a queued transaction as the client that queued it.
    pub fn act_as(&mut self, values: &ClientValues) {
        self.slots.clone_from(&values.slots);
        self.at.client = values.client;
    }

    /// This client's values now (its own, and what it saved), for a deferred transaction.
    pub fn values(&self) -> ClientValues {
        ClientValues { client: self.at.client, slots: self.slots.clone() }
    }
}

/// A client's id and value slots, taken when it queues a deferred transaction.
#[derive(Clone, Debug)]
pub struct ClientValues {
    client: u64,
    slots: Vec<Value>,
}

/// A statement prepared on `conn` (one handle per table of its set), with its saves
/// checked against the columns it returns.
async fn statement_state<C: Connection>(
    conn: &mut C,
    s: &crate::workload::program::StatementProgram,
    id: usize,
    draws: ScopeDraws,
) -> Result<StatementState, DbError> {
    let texts = match &s.per_table {
        Some((_, texts)) => texts.as_slice(),
        None => std::slice::from_ref(&s.sql),
    };
    let mut handles = Vec::with_capacity(texts.len());
    for sql in texts {
        let h = conn
            .prepare(sql)
            .await
            .map_err(|e| DbError { message: format!("statement {}: {}", s.name, e.message), ..e })?;
        handles.push(h);
    }
    let columns = match s.saves.iter().any(|v| matches!(v.from, SaveFrom::Column(_))) {
        true => conn.columns(handles[0]).await?,
        false => Vec::new(),
    };
    let mut saves = Vec::with_capacity(s.saves.len());
    for save in &s.saves {
        let from = match &save.from {
            SaveFrom::Column(c) => match columns.iter().position(|x| x.eq_ignore_ascii_case(c)) {
                Some(i) => SaveAt::Column(i),
                None => {
                    return Err(invalid(format!(
                        "statement {} saves column {c}, which it does not return (it returns: {})",
                        s.name,
                        if columns.is_empty() { "no columns".into() } else { columns.join(", ") }
                    )))
                }
            },
            SaveFrom::FirstColumn => SaveAt::Column(0),
            SaveFrom::InsertId => SaveAt::InsertId,
        };
        saves.push((save.slot, from));
    }
    Ok(StatementState {
        id,
        handles,
        table: s.per_table.as_ref().map(|(slot, _)| *slot),
        args: s.args.clone(),
        draws,
        needs_row: saves.iter().any(|(_, at)| matches!(at, SaveAt::Column(_))),
        rollback_if_no_row: s.rollback_if_no_row,
        skip_if_no_row: s.skip_if_no_row,
        save_row: s.save_row,
        writes: s.class == StatementClass::Write,
        saves,
        name: s.name.clone(),
    })
}

/// An event that ran to its end.
#[derive(Clone, Copy, Debug)]
pub struct Finished {
    pub ended: Ended,
    /// When its last statement's reply arrived, as that statement's timing read the clock
    /// (`None`: it ran no statement); the event's latency ends there.
    pub last_statement_end: Option<Instant>,
    /// Group repetitions a `skip_if` statement skipped.
    pub skipped: u64,
}

/// How an event ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// Committed, or done in autocommit.
    Committed,
    /// Rolled back as the workload intends (`rollback_if`).
    RolledBack,
}

/// One execution of `s` with its arguments from `slots`, timed and recorded; then its
/// saves into `slots`.
#[inline]
async fn statement<C: Connection>(
    conn: &mut C,
    s: &StatementState,
    slots: &mut [Value],
    row: &mut Vec<Value>,
    rec: &Mutex<TickRecorder>,
    waited: Duration,
) -> Result<(crate::db::Executed, Instant), DbError> {
    let handle = match s.table {
        None => s.handles[0],
        Some(slot) => {
            let n = slots[slot].int();
            *s.handles.get((n as usize).wrapping_sub(1)).ok_or_else(|| {
                invalid(format!(
                    "statement {}: table number {n} is not 1..{} of its table set",
                    s.name,
                    s.handles.len()
                ))
            })?
        }
    };
    let (done, end) = {
        let mut inline = [Param::Null; INLINE_PARAMS];
        let spilled: Vec<Param<'_>>;
        let params: &[Param<'_>] = if s.args.len() <= INLINE_PARAMS {
            for (p, &slot) in inline.iter_mut().zip(&s.args) {
                *p = slots[slot].as_param();
            }
            &inline[..s.args.len()]
        } else {
            spilled = s.args.iter().map(|&slot| slots[slot].as_param()).collect();
            &spilled
        };
        let started = Instant::now();
        let done = if s.needs_row {
            conn.execute_kept(handle, params, s.save_row, row).await?
        } else {
            conn.execute(handle, params).await?
        };
        let end = Instant::now();
        {
            let mut r = crate::lock(rec);
            r.statement(s.id, end - started, waited, end);
            r.rows_affected_by(s.id, if s.writes { done.affected_rows.max(done.rows) } else { done.affected_rows });
        }
        (done, end)
    };
    for (slot, at) in &s.saves {
        slots[*slot] = match at {
            SaveAt::Column(c) => row.get(*c).cloned().unwrap_or(Value::Null),
            SaveAt::InsertId => done.last_insert_id.map(|v| Value::Int(v as i64)).unwrap_or(Value::Null),
        };
    }
    Ok((done, end))
}

/// A problem of the workload found on the server (a column a save names, a generator).
fn invalid(message: String) -> DbError {
    DbError::client(ClientFault::Other, message)
}

/// A client's value slots take draws in place: text reuses the slot's buffer.
impl Slot for Value {
    #[inline]
    fn set_null(&mut self) {
        *self = Value::Null;
    }
    #[inline]
    fn set_int(&mut self, v: i64) {
        *self = Value::Int(v);
    }
    #[inline]
    fn set_float(&mut self, v: f64) {
        *self = Value::Float(v);
    }
    #[inline]
    fn text_buffer(&mut self) -> &mut String {
        if !matches!(self, Value::Text(_)) {
            *self = Value::Text(String::new());
        }
        match self {
            Value::Text(s) => {
                s.clear();
                s
            }
            _ => unreachable!("just made text"),
        }
    }
    #[inline]
    fn int(&self) -> i64 {
        match self {
            Value::Int(i) => *i,
            _ => 0,
        }
    }
}

/// Executes BEGIN or COMMIT (prepared `handle`, no parameters), timed and recorded as
/// statement `id`; returns when it ended.
async fn timed_execute<C: Connection>(
    conn: &mut C,
    handle: usize,
    id: usize,
    rec: &Mutex<TickRecorder>,
    waited: Duration,
) -> Result<Instant, DbError> {
    let t = Instant::now();
    conn.execute(handle, &[]).await?;
    let end = Instant::now();
    crate::lock(rec).statement(id, end - t, waited, end);
    Ok(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deck deals each transaction `weight` times per whole deck, in a shuffled order.
    #[test]
    fn a_deck_keeps_the_mix_of_every_whole_deck() {
        let (mut rng, mut deck) = (Rng::seeded(3), Deck::default());
        let dealt: Vec<usize> = (0..110).map(|_| deck.deal([10, 1].into_iter(), &mut rng)).collect();
        for whole in dealt.chunks(11) {
            assert_eq!(whole.iter().filter(|&&t| t == 1).count(), 1, "{whole:?}");
        }
        let firsts: std::collections::BTreeSet<usize> =
            dealt.chunks(11).map(|d| d.iter().position(|&t| t == 1).unwrap()).collect();
        assert!(firsts.len() > 3, "the rare card moves within the deck: {firsts:?}");
    }
}
