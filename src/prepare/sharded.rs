//! prepare split over client hosts (`prepare --shard I/N`), in three steps that the shards
//! take in turn: shard 0 creates every table (marked loading) while holding fairbench's lock
//! on the database; every shard loads its part of the rows, in parts of a fixed size that
//! each draw from a random stream of their own (so the data does not depend on how many
//! shards loaded it); shard 0, once all have loaded, builds the secondary indexes, refreshes
//! the statistics and marks the tables complete, as an unsplit prepare does.

use super::parts::{parts, Part};
use super::tables;
use super::{drop_ours, lock, table_status, Loaders, PrepareError, PrepareOutcome, Tables};
use crate::db::Database;
use crate::workload::schema::Ownership;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Shard 0's hold on the database from creating the tables to marking them complete: the
/// connection holding fairbench's lock (no other prepare or cleanup meanwhile).
pub struct Held<D: Database> {
    rt: crate::LocalRuntime,
    conn: D::Conn,
}

/// Shard 0: checks what is there (refusing tables that are not fairbench's, or any without
/// --overwrite), drops fairbench's, and creates every table marked as loading.
pub fn create<D: Database>(db: &D, what: &Tables) -> Result<Held<D>, PrepareError> {
    if db.single_writer() {
        return Err(PrepareError::Refused(
            "--shard: this database takes one writer at a time, so shards cannot load it in parallel: prepare without --shard".into(),
        ));
    }
    let rt = crate::local_runtime();
    let mut conn = rt.block_on(db.connect())?;
    rt.block_on(async {
        lock(&mut conn).await?;
        match what {
            Tables::Sbtest(plan) => {
                let present = table_status(&mut conn, &plan.oltp).await?.0;
                drop_ours(&mut conn, &super::owners(db, present), plan.overwrite, "").await?;
                for n in 1..=plan.oltp.tables {
                    super::create_sbtest(db, &mut conn, plan, n).await?;
                }
            }
            Tables::File(program, opts) => {
                let present = tables::status(db, &mut conn, program).await?.0;
                let owned: Vec<(String, Ownership)> = present.into_iter().map(|(t, o)| (t.name, o)).collect();
                drop_ours(&mut conn, &owned, opts.overwrite, " from this file's definition").await?;
                for t in &program.tables {
                    tables::create(db, &mut conn, t).await?;
                }
            }
        }
        Ok::<(), PrepareError>(())
    })?;
    Ok(Held { rt, conn })
}

/// This shard's parts, loaded by `threads` loaders.
pub fn load<D: Database>(
    db: Arc<D>,
    what: &Tables,
    shard: (u32, u32),
    threads: u32,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<PrepareOutcome, PrepareError> {
    let (index, count) = (shard.0 as usize, shard.1.max(1) as usize);
    let mine: Arc<Vec<Part>> = Arc::new(parts(what).into_iter().skip(index).step_by(count).collect());
    let total: u64 = mine.iter().map(|p| p.last + 1 - p.first).sum();
    let loaders = threads.clamp(1, (mine.len() as u32).max(1));
    let started = Instant::now();
    let work = Loaders::new(loaders, total);
    let loaded = work.loaded.clone();
    let next = Arc::new(AtomicUsize::new(0));
    let tables = match what {
        Tables::Sbtest(plan) => plan.oltp.tables,
        Tables::File(program, _) => program.tables.len() as u32,
    };
    let what = Arc::new(what.clone());
    // Rows inserted: a table that keeps some of the rows it draws inserts fewer than `total`.
    let inserted = work.inserted.clone();
    let rows = work.run(progress, move |_, rt, failure| {
        let (db, what, mine, next, loaded) = (db.clone(), what.clone(), mine.clone(), next.clone(), loaded.clone());
        let inserted = inserted.clone();
        rt.block_on(async move {
            let mut conn = db.connect().await?;
            let mut inserts = tables::Inserts::new();
            while let Some(&part) = mine.get(next.fetch_add(1, Ordering::Relaxed)) {
                if crate::lock(failure).is_some() {
                    return Ok(()); // another loader failed: its error is reported
                }
                match &*what {
                    Tables::Sbtest(plan) => {
                        let rows = (part.first, part.last, part.number);
                        super::load_sbtest_rows(&mut conn, plan, part.table, rows, &loaded, None).await?;
                        inserted.fetch_add(part.last + 1 - part.first, Ordering::Relaxed);
                    }
                    Tables::File(program, opts) => {
                        let chunk = tables::Chunk {
                            table: part.table as usize,
                            number: part.number,
                            first_row: part.first,
                            rows: part.last + 1 - part.first,
                        };
                        let t = &program.tables[chunk.table];
                        let rows =
                            tables::load_chunk(&mut conn, &mut inserts, program, t, chunk, opts, &loaded).await?;
                        inserted.fetch_add(rows, Ordering::Relaxed);
                    }
                }
            }
            Ok(())
        })
    })?;
    Ok(PrepareOutcome { tables, rows, seconds: started.elapsed().as_secs_f64(), loaders })
}

/// Shard 0, once every shard loaded its parts: indexes, statistics, and the marks that let
/// `run` measure the tables.
pub fn finish<D: Database>(db: &D, mut held: Held<D>, what: &Tables) -> Result<(), PrepareError> {
    let conn = &mut held.conn;
    held.rt.block_on(async {
        match what {
            Tables::Sbtest(plan) => {
                for n in 1..=plan.oltp.tables {
                    super::finish_sbtest(db, conn, plan, n).await?;
                }
                Ok(())
            }
            Tables::File(program, _) => {
                for t in &program.tables {
                    tables::finish(db, conn, t).await?;
                }
                Ok(())
            }
        }
    })
}
