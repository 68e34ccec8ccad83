//! prepare and cleanup of a workload file's tables: created by each driver's DDL with
//! fairbench's ownership marker, loaded with the columns' generators through prepared
//! multi-row INSERTs, indexed, then marked complete. Only tables the file declares and
//! fairbench created are ever dropped.

use super::{at, lock, Loaders, PrepareError, PrepareOutcome};
use crate::db::{Connection, Database, DbError, Param, TableInfo, Value};
use crate::model::TableDef;
use crate::random::{DistributionSpec, Rng};
use crate::workload::generate::{Context, Draw, Drawn};
use crate::workload::program::{Program, TableProgram};
use crate::workload::schema::Ownership;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
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
    if let Some((t, _)) = present.iter().find(|(_, o)| *o == Ownership::Foreign) {
        return Err(PrepareError::Refused(format!(
            "table {} already exists and was not created by fairbench from this file's definition: fairbench never drops or loads tables it did not create; use another database",
            t.name
        )));
    }
    if let Some((t, _)) = present.first() {
        if !opts.overwrite {
            return Err(PrepareError::Exists { table: t.name.clone() });
        }
        for (t, _) in &present {
            rt.block_on(admin.simple(&format!("DROP TABLE {}", t.name)))
                .map_err(at(format!("cannot drop {}: ", t.name)))?;
        }
    }
    let total: u64 = program.tables.iter().map(|t| t.rows).sum();
    let count = program.tables.len() as u32;
    let loaders = if db.single_writer() { 1 } else { opts.threads.clamp(1, count.max(1)) };
    let started = Instant::now();
    let program = Arc::new(program.clone());
    let opts_shared = Arc::new(opts.clone());
    let work = Loaders::new(loaders, total);
    let loaded = work.loaded.clone();
    work.run(progress, move |l, rt, failure| {
        let (db, program, opts, loaded) = (db.clone(), program.clone(), opts_shared.clone(), loaded.clone());
        rt.block_on(async move {
            let mut conn = db.connect().await?;
            let single = db.single_writer();
            if single {
                // One transaction for every table (see the sysbench loader).
                conn.simple(db.begin_sql(true)).await?;
            }
            for (i, t) in program.tables.iter().enumerate().skip(l as usize).step_by(loaders as usize) {
                load_table(&*db, &mut conn, &program, t, i, &opts, &loaded, failure).await?;
            }
            if single {
                conn.simple("COMMIT").await?;
            }
            Ok(())
        })
    })?;
    Ok(PrepareOutcome { tables: count, rows: total, seconds: started.elapsed().as_secs_f64(), loaders })
}

#[allow(clippy::too_many_arguments)]
async fn load_table<D: Database>(
    db: &D,
    conn: &mut D::Conn,
    program: &Program,
    t: &TableProgram,
    index: usize,
    opts: &LoadOptions,
    loaded: &AtomicU64,
    failure: &Mutex<Option<PrepareError>>,
) -> Result<(), PrepareError> {
    let ctx = |e: DbError| PrepareError::Db { context: format!("prepare failed: {}: ", t.name()), source: e };
    // Where the comment can change later, the table is marked loading until it is complete.
    let later = db.comment_sql(t.name(), MARKER);
    let first = if later.is_some() { MARKER_LOADING } else { MARKER };
    for sql in db.create_table_sql(&t.def, first) {
        conn.simple(&sql).await.map_err(ctx)?;
    }
    let mut draws: Vec<Draw> = t
        .generators
        .iter()
        .map(|g| Draw::new(g, program, &opts.distribution, None, opts.seed))
        .collect::<Result<_, _>>()
        .map_err(|e| PrepareError::Refused(format!("table {}: {e}", t.name())))?;
    let cols = t.def.columns.len();
    let per_insert = (PARAMS_PER_INSERT / cols).clamp(1, ROWS_PER_INSERT) as u64;
    let insert = |rows: u64| {
        let one = format!("({})", vec!["?"; cols].join(", "));
        let names: Vec<&str> = t.def.columns.iter().map(|c| c.name.as_str()).collect();
        format!("INSERT INTO {} ({}) VALUES {}", t.name(), names.join(", "), vec![one; rows as usize].join(", "))
    };
    let mut rng = Rng::for_client(opts.seed, 1_000_000 + index as u64);
    let mut values: Vec<Value> = Vec::with_capacity(per_insert as usize * cols);
    let (mut full, mut full_rows) = (None, 0);
    let mut row = 1;
    while row <= t.rows {
        if crate::lock(failure).is_some() {
            return Ok(()); // another loader failed: its error is reported
        }
        let n = per_insert.min(t.rows - row + 1);
        values.clear();
        for r in row..row + n {
            for d in draws.iter_mut() {
                values.push(match d.draw(&mut rng, Context { client: 0, row: r, repetition: 0 }) {
                    Drawn::Int(i) => Value::Int(i),
                    Drawn::Float(f) => Value::Float(f),
                    Drawn::Text(s) => Value::Text(s.to_string()),
                });
            }
        }
        let handle = match full {
            Some(h) if full_rows == n => h,
            _ => {
                let h = conn.prepare(&insert(n)).await.map_err(ctx)?;
                (full, full_rows) = (Some(h), n);
                h
            }
        };
        let params: Vec<Param<'_>> = values.iter().map(Value::as_param).collect();
        conn.execute(handle, &params).await.map_err(ctx)?;
        loaded.fetch_add(n, Ordering::Relaxed);
        row += n;
    }
    for sql in db.after_load_sql(&t.def).iter().chain(&t.def.index_sql()) {
        conn.simple(sql).await.map_err(ctx)?;
    }
    if let Some(sql) = db.analyze_sql(t.name()) {
        conn.simple(&sql).await.map_err(ctx)?;
    }
    // Last: only now may `run` measure this table.
    if let Some(sql) = later {
        conn.simple(&sql).await.map_err(ctx)?;
    }
    Ok(())
}

/// Drops the file's tables fairbench created; never any other table.
pub fn cleanup<D: Database>(db: Arc<D>, program: &Program) -> Result<super::CleanupOutcome, PrepareError> {
    let rt = crate::local_runtime();
    rt.block_on(async {
        let mut conn = db.connect().await?;
        lock(&mut conn).await?;
        let (present, _) = status(&*db, &mut conn, program).await?;
        let mut out = super::CleanupOutcome { dropped: Vec::new(), foreign: Vec::new() };
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
