//! The built-in sysbench workloads' events: their steps, each statement prepared once per
//! table, parameters drawn as sysbench draws them.

use super::Shared;
use crate::db::{Connection, Database, DbError, NewRowId, Param};
use crate::random::{Distribution, Rng};
use crate::recorder::Recorder;
use crate::workload::schema::{C_TEMPLATE, PAD_TEMPLATE};
use crate::workload::{StatementKind, Step, Workload};
use std::sync::Mutex;
use std::time::Duration;

const NOT_PREPARED: usize = usize::MAX;

/// What every client of a run shares read-only.
pub struct SysbenchSpec {
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
}

impl SysbenchSpec {
    pub fn new(workload: Workload, o: &crate::workload::OltpOptions, dist: Distribution) -> Self {
        let kinds = workload.statement_kinds(o);
        let mut ids = [usize::MAX; StatementKind::COUNT];
        for (i, k) in kinds.iter().enumerate() {
            ids[*k as usize] = i;
        }
        SysbenchSpec {
            workload,
            steps: workload.steps(o),
            ids,
            kinds,
            tables: o.tables,
            table_size: o.table_size.max(1) as u32,
            range_size: o.range_size,
            auto_inc: o.auto_inc,
            dist,
        }
    }

    /// Whether a failed event left a transaction open.
    pub fn in_transaction(&self) -> bool {
        self.steps.first() == Some(&Step::Begin)
    }
}

/// One client's prepared statements and buffers.
pub struct SysbenchState {
    /// Statement handle per table (index table-1) and kind.
    handles: Vec<[usize; StatementKind::COUNT]>,
    c_buf: Vec<u8>,
    pad_buf: Vec<u8>,
    begin_sql: &'static str,
    new_row_id: NewRowId,
}

impl SysbenchState {
    pub async fn prepare<D: Database>(db: &D, conn: &mut D::Conn, spec: &SysbenchSpec) -> Result<Self, DbError> {
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
        Ok(SysbenchState {
            handles,
            c_buf: Vec::with_capacity(C_TEMPLATE.len()),
            pad_buf: Vec::with_capacity(PAD_TEMPLATE.len()),
            begin_sql: db.begin_sql(spec.workload.writes()),
            new_row_id,
        })
    }

    /// One event: the workload's steps, each statement timed and recorded.
    /// `waited`: how long after its intended start this attempt began (zero in a closed loop).
    #[inline]
    pub async fn event<C: Connection>(
        &mut self,
        conn: &mut C,
        rng: &mut Rng,
        spec: &SysbenchSpec,
        shared: &Shared,
        rec: &Mutex<Recorder>,
        waited: Duration,
    ) -> Result<(), DbError> {
        let mut e = Event { conn, rng, state: self, spec, rec, waited };
        for step in &spec.steps {
            match *step {
                Step::Begin => {
                    let sql = e.state.begin_sql;
                    super::client::timed_simple(e.conn, sql, spec.ids[StatementKind::Begin as usize], rec, waited)
                        .await?
                }
                Step::Commit => {
                    super::client::timed_simple(e.conn, "COMMIT", spec.ids[StatementKind::Commit as usize], rec, waited)
                        .await?
                }
                Step::Repeat(kind, n) => {
                    let table = e.rng.uniform(1, spec.tables);
                    for _ in 0..n {
                        e.repeatable(table, kind).await?;
                    }
                }
                Step::DeleteInserts(n) => {
                    let table = e.rng.uniform(1, spec.tables);
                    for _ in 0..n {
                        let id = e.id();
                        let k = e.id();
                        e.rng.fill_digits(C_TEMPLATE, &mut e.state.c_buf);
                        e.rng.fill_digits(PAD_TEMPLATE, &mut e.state.pad_buf);
                        e.exec(table, StatementKind::Delete, &[Param::Int(id)]).await?;
                        let (c, pad) = (text(&e.state.c_buf), text(&e.state.pad_buf));
                        let params = [Param::Int(id), Param::Int(k), Param::Text(c), Param::Text(pad)];
                        let (h, sid) = e.state.handle(spec, table, StatementKind::Insert);
                        super::client::timed(e.conn, h, &params, sid, rec, waited).await?;
                    }
                }
                Step::NewRowInsert => {
                    let table = e.rng.uniform(1, spec.tables);
                    let k = e.id();
                    e.rng.fill_digits(C_TEMPLATE, &mut e.state.c_buf);
                    e.rng.fill_digits(PAD_TEMPLATE, &mut e.state.pad_buf);
                    let (c, pad) = (text(&e.state.c_buf), text(&e.state.pad_buf));
                    let id = match (spec.auto_inc, e.state.new_row_id) {
                        // sysbench: a unique uint32 shifted into INTEGER range.
                        (false, _) => Some(shared.unique.next() as i64 - 2_147_483_648),
                        // id=0 asks MySQL for the next AUTO_INCREMENT value.
                        (true, NewRowId::Zero) => Some(0),
                        // PostgreSQL and SQLite: the id column is left out of the INSERT.
                        (true, NewRowId::Omitted) => None,
                    };
                    let params = [Param::Int(id.unwrap_or(0)), Param::Int(k), Param::Text(c), Param::Text(pad)];
                    let params = if id.is_some() { &params[..] } else { &params[1..] };
                    let (h, sid) = e.state.handle(spec, table, StatementKind::Insert);
                    super::client::timed(e.conn, h, params, sid, rec, waited).await?;
                }
            }
        }
        Ok(())
    }

    /// The prepared handle of `kind` on `table`, and the kind's statement id.
    #[inline]
    fn handle(&self, spec: &SysbenchSpec, table: u32, kind: StatementKind) -> (usize, usize) {
        (self.handles[table as usize - 1][kind as usize], spec.ids[kind as usize])
    }
}

/// One event's borrows, so helpers can lend the connection while parameters borrow buffers.
struct Event<'a, C> {
    conn: &'a mut C,
    rng: &'a mut Rng,
    state: &'a mut SysbenchState,
    spec: &'a SysbenchSpec,
    rec: &'a Mutex<Recorder>,
    waited: Duration,
}

impl<C: Connection> Event<'_, C> {
    /// The statements that repeat within a group: point selects, ranges, updates, deletes.
    #[inline]
    async fn repeatable(&mut self, table: u32, kind: StatementKind) -> Result<(), DbError> {
        match kind {
            StatementKind::SimpleRange
            | StatementKind::SumRange
            | StatementKind::OrderRange
            | StatementKind::DistinctRange => {
                let id = self.id();
                let end = (id + self.spec.range_size as i64 - 1).min(i32::MAX as i64);
                self.exec(table, kind, &[Param::Int(id), Param::Int(end)]).await
            }
            StatementKind::NonIndexUpdate => {
                self.rng.fill_digits(C_TEMPLATE, &mut self.state.c_buf);
                let id = self.id();
                let (h, sid) = self.state.handle(self.spec, table, kind);
                let params = [Param::Text(text(&self.state.c_buf)), Param::Int(id)];
                super::client::timed(self.conn, h, &params, sid, self.rec, self.waited).await
            }
            _ => {
                let id = self.id();
                self.exec(table, kind, &[Param::Int(id)]).await
            }
        }
    }

    #[inline]
    fn id(&mut self) -> i64 {
        self.spec.dist.sample(self.rng, 1, self.spec.table_size) as i64
    }

    /// Executes one statement of `table`, timed and recorded.
    #[inline]
    async fn exec(&mut self, table: u32, kind: StatementKind, params: &[Param<'_>]) -> Result<(), DbError> {
        let (h, id) = self.state.handle(self.spec, table, kind);
        super::client::timed(self.conn, h, params, id, self.rec, self.waited).await
    }
}

fn text(buf: &[u8]) -> &str {
    // The templates produce ASCII digits and dashes only.
    std::str::from_utf8(buf).unwrap_or_default()
}
