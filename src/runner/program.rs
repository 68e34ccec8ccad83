//! A workload file's events: a transaction drawn by weight, its parameters drawn into the
//! client's value slots, each statement executed with the slots its `:names` bind, and
//! values saved from result rows into slots for later statements.

use crate::db::{ClientFault, Connection, Database, DbError, Param, Value};
use crate::random::UniqueSequence;
use crate::random::{DistributionSpec, Rng};
use crate::recorder::Recorder;
use crate::workload::generate::{Context, Drawn, ScopeDraws};
use crate::workload::program::{Program, SaveFrom, TransactionIds};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Parameters bound without allocating, up to this many per statement.
const INLINE_PARAMS: usize = 16;

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
}

impl ProgramSpec {
    pub fn new(program: Arc<Program>, dist: DistributionSpec, seed: u64) -> Self {
        let ids = program.measured().1;
        let cumulative = program
            .transactions
            .iter()
            .scan(0u64, |sum, t| {
                *sum += t.weight as u64;
                Some(*sum)
            })
            .collect();
        ProgramSpec { program, ids, cumulative, dist, unique: Arc::new(UniqueSequence::new(seed)) }
    }

    /// A transaction by weight.
    #[inline]
    pub fn pick(&self, rng: &mut Rng) -> usize {
        let total = *self.cumulative.last().unwrap_or(&1);
        let x = rng.next_u64() % total;
        self.cumulative.partition_point(|&c| c <= x)
    }

    pub fn in_transaction(&self, tx: usize) -> bool {
        self.ids[tx].begin.is_some()
    }

    pub fn think(&self, tx: usize) -> Duration {
        Duration::from_millis(self.program.transactions[tx].think_ms)
    }
}

enum SaveAt {
    Column(usize),
    InsertId,
}

/// One client's prepared statements, value slots and generators.
pub struct ProgramState {
    /// Per transaction, per statement: the prepared handle, or one per table of its set.
    handles: Vec<Vec<Vec<usize>>>,
    saves: Vec<Vec<Vec<(usize, SaveAt)>>>,
    tx_draws: Vec<ScopeDraws>,
    stmt_draws: Vec<Vec<ScopeDraws>>,
    begin_sql: Vec<&'static str>,
    slots: Vec<Value>,
    row: Vec<Value>,
    at: Context,
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
            ScopeDraws::new(list, p, &spec.dist, Some(&spec.unique)).map_err(invalid)
        };
        let mut state = ProgramState {
            handles: Vec::new(),
            saves: Vec::new(),
            tx_draws: Vec::new(),
            stmt_draws: Vec::new(),
            begin_sql: p.transactions.iter().map(|t| db.begin_sql(t.writes())).collect(),
            slots: vec![Value::Null; p.slots.len()],
            row: Vec::new(),
            at: Context { client, row: 0 },
        };
        for t in &p.transactions {
            let (mut handles, mut saves, mut stmt_draws) = (Vec::new(), Vec::new(), Vec::new());
            for s in &t.statements {
                let texts = match &s.per_table {
                    Some((_, texts)) => texts.as_slice(),
                    None => std::slice::from_ref(&s.sql),
                };
                let mut per_table = Vec::with_capacity(texts.len());
                for sql in texts {
                    let h = conn
                        .prepare(sql)
                        .await
                        .map_err(|e| DbError { message: format!("statement {}: {}", s.name, e.message), ..e })?;
                    per_table.push(h);
                }
                let h = per_table[0];
                let columns = match s.saves.iter().any(|v| matches!(v.from, SaveFrom::Column(_))) {
                    true => conn.columns(h).await?,
                    false => Vec::new(),
                };
                let mut at = Vec::new();
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
                    at.push((save.slot, from));
                }
                handles.push(per_table);
                saves.push(at);
                stmt_draws.push(draws(&s.params)?);
            }
            state.handles.push(handles);
            state.saves.push(saves);
            state.stmt_draws.push(stmt_draws);
            state.tx_draws.push(draws(&t.params)?);
        }
        let mut client_draws = draws(&p.client)?;
        draw_into(&mut client_draws, &mut state.slots, rng, state.at);
        Ok(state)
    }

    /// Transaction `tx`, each statement timed and recorded.
    pub async fn event<C: Connection>(
        &mut self,
        conn: &mut C,
        rng: &mut Rng,
        spec: &ProgramSpec,
        tx: usize,
        rec: &Mutex<Recorder>,
        waited: Duration,
    ) -> Result<(), DbError> {
        let ids = &spec.ids[tx];
        let t = &spec.program.transactions[tx];
        draw_into(&mut self.tx_draws[tx], &mut self.slots, rng, self.at);
        if let Some(id) = ids.begin {
            super::client::timed_simple(conn, self.begin_sql[tx], id, rec, waited).await?;
        }
        for step in &t.steps {
            for _ in 0..step.repeat {
                for i in step.first..step.first + step.count {
                    self.statement(conn, rng, spec, tx, i, rec, waited).await?;
                }
            }
        }
        if let Some(id) = ids.commit {
            super::client::timed_simple(conn, "COMMIT", id, rec, waited).await?;
        }
        Ok(())
    }

    /// Statement `i` of transaction `tx`: its draws, then the execution, timed and recorded,
    /// then its saves.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    async fn statement<C: Connection>(
        &mut self,
        conn: &mut C,
        rng: &mut Rng,
        spec: &ProgramSpec,
        tx: usize,
        i: usize,
        rec: &Mutex<Recorder>,
        waited: Duration,
    ) -> Result<(), DbError> {
        let s = &spec.program.transactions[tx].statements[i];
        draw_into(&mut self.stmt_draws[tx][i], &mut self.slots, rng, self.at);
        let saves = &self.saves[tx][i];
        let mut inline = [Param::Null; INLINE_PARAMS];
        let spilled: Vec<Param<'_>>;
        let params: &[Param<'_>] = if s.args.len() <= INLINE_PARAMS {
            for (p, &slot) in inline.iter_mut().zip(&s.args) {
                *p = self.slots[slot].as_param();
            }
            &inline[..s.args.len()]
        } else {
            spilled = s.args.iter().map(|&slot| self.slots[slot].as_param()).collect();
            &spilled
        };
        let handles = &self.handles[tx][i];
        let handle = match &s.per_table {
            None => handles[0],
            Some((slot, _)) => {
                let n = match self.slots[*slot] {
                    Value::Int(n) => n,
                    _ => 0,
                };
                *handles.get((n as usize).wrapping_sub(1)).ok_or_else(|| {
                    invalid(format!(
                        "statement {}: table number {n} is not 1..{} of its table set",
                        s.name,
                        handles.len()
                    ))
                })?
            }
        };
        let started = std::time::Instant::now();
        let done = if saves.iter().any(|(_, at)| matches!(at, SaveAt::Column(_))) {
            conn.execute_row(handle, params, &mut self.row).await?
        } else {
            conn.execute(handle, params).await?
        };
        let end = std::time::Instant::now();
        rec.lock().unwrap().statement(spec.ids[tx].statements[i], end - started, waited, end);
        for (slot, at) in saves {
            self.slots[*slot] = match at {
                SaveAt::Column(c) => self.row.get(*c).cloned().unwrap_or(Value::Null),
                SaveAt::InsertId => done.last_insert_id.map(|v| Value::Int(v as i64)).unwrap_or(Value::Null),
            };
        }
        Ok(())
    }
}

/// A problem of the workload found on the server (a column a save names, a generator).
fn invalid(message: String) -> DbError {
    DbError::client(ClientFault::Other, message)
}

/// Draws a scope's values into their slots, reusing each slot's text buffer.
#[inline]
fn draw_into(draws: &mut ScopeDraws, slots: &mut [Value], rng: &mut Rng, at: Context) {
    draws.draw(rng, at, |slot, value| {
        let target = &mut slots[slot];
        match value {
            Drawn::Int(i) => *target = Value::Int(i),
            Drawn::Float(f) => *target = Value::Float(f),
            Drawn::Text(s) => match target {
                Value::Text(buf) => {
                    buf.clear();
                    buf.push_str(s);
                }
                _ => *target = Value::Text(s.to_string()),
            },
        }
    });
}
