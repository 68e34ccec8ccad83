//! prepare and cleanup of a workload file's tables: created by each driver's DDL with
//! fairbench's ownership marker, loaded with the columns' generators through prepared
//! multi-row INSERTs, indexed, then marked complete. Only tables the file declares and
//! fairbench created are ever dropped.

use super::{at, lock, Loaders, PrepareError, PrepareOutcome};
use crate::db::{Connection, Database, DbError, Param, RowSource, TableInfo, Value};
use crate::model::TableDef;
use crate::random::{DistributionSpec, Rng};
use crate::workload::generate::{Context, Draw, Drawn};
use crate::workload::program::{Program, TableProgram};
use crate::workload::schema::Ownership;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// The whole comment of a file's table fairbench prepared completely (versioned).
pub const MARKER: &str = "fairbench:table:v1";
/// The whole comment while prepare loads it.
pub const MARKER_LOADING: &str = "fairbench:table:v1:loading";

/// Most parameters one loading INSERT binds (SQLite allows 32,766; MySQL and PostgreSQL 65,535).
const PARAMS_PER_INSERT: usize = 30_000;
const ROWS_PER_INSERT: usize = 1_000;

/// What prepare needs besides the program.
#[derive(Clone, Debug)]
pub struct LoadOptions {
    pub threads: u32,
    pub seed: u64,
    pub distribution: DistributionSpec,
    pub overwrite: bool,
    /// Load through [`Connection::bulk_load`] (same chunks and values as the INSERTs).
    pub bulk: bool,
}

/// Whose table `info` is, for the file's table `def`: the whole comment is the marker
/// (MySQL, PostgreSQL), or the whole CREATE text is the one this driver generates (SQLite).
pub fn ownership<D: Database>(db: &D, def: &TableDef, info: &TableInfo) -> Ownership {
    match info.definition.as_str() {
        MARKER => Ownership::Complete,
        MARKER_LOADING => Ownership::Incomplete,
        d if db.create_table_sql(def, MARKER).first().is_some_and(|c| c == d) => Ownership::Complete,
        _ => Ownership::Foreign,
    }
}

/// The file's tables that exist, with whose they are, and the names of those missing.
pub async fn status<D: Database>(
    db: &D,
    conn: &mut D::Conn,
    program: &Program,
) -> Result<(Vec<(TableInfo, Ownership)>, Vec<String>), DbError> {
    let mut present = Vec::new();
    let mut missing = Vec::new();
    for t in &program.tables {
        let found = conn.tables(t.name()).await?.into_iter().find(|i| i.name == t.name());
        match found {
            Some(info) => {
                let owner = ownership(db, &t.def, &info);
                present.push((info, owner));
            }
            None => missing.push(t.name().to_string()),
        }
    }
    Ok((present, missing))
}

/// Creates and loads the file's tables; `progress(rows_loaded, rows_total)` about five
/// times a second.
pub fn prepare<D: Database>(
    db: Arc<D>,
    program: &Program,
    opts: &LoadOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<PrepareOutcome, PrepareError> {
    let rt = crate::local_runtime();
    let mut admin = rt.block_on(db.connect())?;
    rt.block_on(lock(&mut admin))?;
    let (present, _) = rt.block_on(status(&*db, &mut admin, program))?;
    let owned: Vec<(String, Ownership)> = present.into_iter().map(|(t, o)| (t.name, o)).collect();
    rt.block_on(super::drop_ours(&mut admin, &owned, opts.overwrite, " from this file's definition"))?;
    let total: u64 = program.tables.iter().map(|t| t.drawn_rows()).sum();
    let count = program.tables.len() as u32;
    let single = db.single_writer();
    if !single {
        for t in &program.tables {
            rt.block_on(create(&*db, &mut admin, t))?;
        }
    }
    let chunks = Arc::new(chunks_of(program));
    let loaders = if single { 1 } else { opts.threads.clamp(1, (chunks.len() as u32).max(1)) };
    let started = Instant::now();
    let program = Arc::new(program.clone());
    let opts_shared = Arc::new(opts.clone());
    let work = Loaders::new(loaders, total);
    let loaded = work.loaded.clone();
    let next = Arc::new(AtomicUsize::new(0));
    // Rows still to load per table: whoever loads a table's last chunk finishes it.
    let left: Arc<Vec<AtomicU64>> = Arc::new(program.tables.iter().map(|t| AtomicU64::new(t.drawn_rows())).collect());
    let inserted = work.inserted.clone();
    let rows = work.run(progress, move |_, rt, failure| {
        let (db, program, opts, loaded) = (db.clone(), program.clone(), opts_shared.clone(), loaded.clone());
        let (chunks, next, left, inserted) = (chunks.clone(), next.clone(), left.clone(), inserted.clone());
        rt.block_on(async move {
            let mut conn = db.connect().await?;
            let mut inserts = Inserts::new();
            if single {
                // One transaction for every table (see the sysbench loader), DDL included.
                conn.simple(db.begin_sql(true)).await?;
                for t in program.tables.iter() {
                    create(&*db, &mut conn, t).await?;
                }
            }
            while let Some(&chunk) = chunks.get(next.fetch_add(1, Ordering::Relaxed)) {
                if crate::lock(failure).is_some() {
                    return Ok(()); // another loader failed: its error is reported
                }
                let t = &program.tables[chunk.table];
                let rows = load_chunk(&mut conn, &mut inserts, &program, t, chunk, &opts, &loaded).await?;
                inserted.fetch_add(rows, Ordering::Relaxed);
                if left[chunk.table].fetch_sub(chunk.rows, Ordering::AcqRel) == chunk.rows {
                    finish(&*db, &mut conn, t).await?;
                }
            }
            if single {
                conn.simple("COMMIT").await?;
            }
            Ok(())
        })
    })?;
    Ok(PrepareOutcome { tables: count, rows, seconds: started.elapsed().as_secs_f64(), loaders })
}

/// Rows per unit of loading work: a large table loads on every loader at once.
const CHUNK_ROWS: u64 = 10_000;

/// A part of a table's rows, loaded by one loader with its own random stream.
#[derive(Clone, Copy, Debug)]
pub(super) struct Chunk {
    pub table: usize,
    pub number: u64,
    pub first_row: u64,
    pub rows: u64,
}

/// Every table's rows in chunks, table by table; an empty table is one empty chunk (so it
/// is still finished).
pub(super) fn chunks_of(program: &Program) -> Vec<Chunk> {
    let mut chunks = Vec::new();
    for (table, t) in program.tables.iter().enumerate() {
        let mut first_row = 1;
        let mut number = 0;
        loop {
            let rows = CHUNK_ROWS.min(t.drawn_rows() + 1 - first_row);
            chunks.push(Chunk { table, number, first_row, rows });
            first_row += rows;
            number += 1;
            if first_row > t.drawn_rows() {
                break;
            }
        }
    }
    chunks
}

fn failed(t: &TableProgram) -> impl Fn(DbError) -> PrepareError + '_ {
    move |e| PrepareError::Db { context: format!("prepare failed: {}: ", t.name()), source: e }
}

/// Creates `t`, marked loading where the mark can change later.
pub(super) async fn create<D: Database>(db: &D, conn: &mut D::Conn, t: &TableProgram) -> Result<(), PrepareError> {
    let first = if db.comment_sql(t.name(), MARKER).is_some() { MARKER_LOADING } else { MARKER };
    for sql in db.create_table_sql(&t.def, first) {
        conn.simple(&sql).await.map_err(failed(t))?;
    }
    Ok(())
}

/// Indexes and statistics once every row is in, and last the mark of a complete table.
pub(super) async fn finish<D: Database>(db: &D, conn: &mut D::Conn, t: &TableProgram) -> Result<(), PrepareError> {
    for sql in db.after_load_sql(&t.def).iter().chain(&t.def.index_sql()) {
        conn.simple(sql).await.map_err(failed(t))?;
    }
    if let Some(sql) = db.analyze_sql(t.name()) {
        conn.simple(&sql).await.map_err(failed(t))?;
    }
    // Last: only now may `run` measure this table.
    if let Some(sql) = db.comment_sql(t.name(), MARKER) {
        conn.simple(&sql).await.map_err(failed(t))?;
    }
    Ok(())
}

/// A loader's prepared INSERTs by (table, rows), each prepared once per connection.
pub(super) type Inserts = std::collections::HashMap<(usize, u64), usize>;

/// Loads one chunk of `t` through prepared multi-row INSERTs (or the driver's bulk path);
/// returns the rows it inserted (those `keep` kept). `loaded` counts the rows drawn.
pub(super) async fn load_chunk<C: Connection>(
    conn: &mut C,
    inserts: &mut Inserts,
    program: &Program,
    t: &TableProgram,
    chunk: Chunk,
    opts: &LoadOptions,
    loaded: &AtomicU64,
) -> Result<u64, PrepareError> {
    let draw = |g| Draw::for_column(g, program, &opts.distribution, opts.seed);
    let refused = |e| PrepareError::Refused(format!("table {}: {e}", t.name()));
    let mut draws: Vec<Draw> = t.generators.iter().map(draw).collect::<Result<_, _>>().map_err(refused)?;
    let keep = match &t.keep {
        Some(k) => Some(KeepRows {
            column: draw(&t.generators[k.column]).map_err(refused)?,
            at_most: draw(&k.at_most).map_err(refused)?,
        }),
        None => None,
    };
    let stream = 1_000_000 + ((chunk.table as u64) << 32) + chunk.number;
    let rng = Rng::for_client(opts.seed, stream);
    let mut rows =
        ChunkRows { draws: &mut draws, keep, rng, row: chunk.first_row, end: chunk.first_row + chunk.rows, kept: 0 };
    if opts.bulk {
        let names: Vec<&str> = t.def.columns.iter().map(|c| c.name.as_str()).collect();
        conn.bulk_load(t.name(), &names, &mut rows).await.map_err(failed(t))?;
        loaded.fetch_add(chunk.rows, Ordering::Relaxed);
        return Ok(rows.kept);
    }
    let cols = t.def.columns.len();
    let per_insert = (PARAMS_PER_INSERT / cols).clamp(1, ROWS_PER_INSERT) as u64;
    let insert = |rows: u64| {
        let one = format!("({})", vec!["?"; cols].join(", "));
        let names: Vec<&str> = t.def.columns.iter().map(|c| c.name.as_str()).collect();
        format!("INSERT INTO {} ({}) VALUES {}", t.name(), names.join(", "), vec![one; rows as usize].join(", "))
    };
    let mut values: Vec<Value> = Vec::with_capacity(per_insert as usize * cols);
    loop {
        let (drawn_before, mut n) = (rows.row, 0);
        values.clear();
        while n < per_insert && rows.next_row(&mut |p| values.push(Value::from_param(p))) {
            n += 1;
        }
        if n > 0 {
            let handle = match inserts.get(&(chunk.table, n)) {
                Some(&h) => h,
                None => {
                    let h = conn.prepare(&insert(n)).await.map_err(failed(t))?;
                    inserts.insert((chunk.table, n), h);
                    h
                }
            };
            let params: Vec<Param<'_>> = values.iter().map(Value::as_param).collect();
            conn.execute(handle, &params).await.map_err(failed(t))?;
        }
        loaded.fetch_add(rows.row - drawn_before, Ordering::Relaxed);
        if n < per_insert {
            return Ok(rows.kept);
        }
    }
}

/// A table's `keep`: the kept column's generator (numbered by the row, so drawing it again
/// gives the row's value) and the bound it is held to.
struct KeepRows {
    column: Draw,
    at_most: Draw,
}

impl KeepRows {
    fn keeps(&mut self, rng: &mut Rng, row: u64) -> bool {
        let at = Context { client: 0, row, repetition: 0 };
        let value = match self.column.draw(rng, at) {
            Drawn::Int(v) => v,
            _ => return true,
        };
        !matches!(self.at_most.draw(rng, at), Drawn::Int(max) if value > max)
    }
}

/// A chunk's rows drawn by the columns' generators, those `keep` drops skipped: what the
/// INSERTs bind and the bulk path streams alike.
struct ChunkRows<'a> {
    draws: &'a mut [Draw],
    keep: Option<KeepRows>,
    rng: Rng,
    /// The next row number to draw, and the end of the chunk.
    row: u64,
    end: u64,
    kept: u64,
}

impl RowSource for ChunkRows<'_> {
    fn next_row(&mut self, put: &mut dyn FnMut(Param<'_>)) -> bool {
        while self.row < self.end {
            let row = self.row;
            self.row += 1;
            if let Some(keep) = self.keep.as_mut() {
                if !keep.keeps(&mut self.rng, row) {
                    continue;
                }
            }
            for d in self.draws.iter_mut() {
                put(match d.draw(&mut self.rng, Context { client: 0, row, repetition: 0 }) {
                    Drawn::Null => Param::Null,
                    Drawn::Int(i) => Param::Int(i),
                    Drawn::Float(f) => Param::Float(f),
                    Drawn::Text(s) => Param::Text(s),
                });
            }
            self.kept += 1;
            return true;
        }
        false
    }
}

/// Drops the file's tables fairbench created; never any other table.
pub fn cleanup<D: Database>(db: Arc<D>, program: &Program) -> Result<super::CleanupOutcome, PrepareError> {
    let rt = crate::local_runtime();
    rt.block_on(async {
        let mut conn = db.connect().await?;
        lock(&mut conn).await?;
        let (present, _) = status(&*db, &mut conn, program).await?;
        let mut out = super::CleanupOutcome::default();
        for (t, owner) in present {
            if owner == Ownership::Foreign {
                out.foreign.push(t.name);
            } else {
                conn.simple(&format!("DROP TABLE {}", t.name))
                    .await
                    .map_err(at(format!("cannot drop {}: ", t.name)))?;
                out.dropped.push(t.name);
            }
        }
        Ok(out)
    })
}
