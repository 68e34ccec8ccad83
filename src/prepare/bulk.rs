//! prepare through the driver's bulk path ([`Connection::bulk_load`]): every table's rows
//! in parts of [`PART_ROWS`] (parts.rs), each drawn from its own random stream (the streams
//! `--shard` uses, so the data does not depend on how many loaders or shards loaded it),
//! loaded by `--threads` loaders at once, within a table as well as across tables. Each
//! table is finished (index, statistics, mark) by whoever loads its last part.

use super::parts::{self, Part, PART_ROWS};
use super::{create_sbtest, finish_sbtest, Loaders, PrepareError, PrepareOutcome, PreparePlan, Tables};
use crate::db::{Connection, Database, Param, RowSource};
use crate::random::{Distribution, Rng};
use crate::workload::schema::{C_TEMPLATE, PAD_TEMPLATE};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Rows between two progress updates.
const PROGRESS_ROWS: u64 = 4096;

/// sysbench's rows of `sbtest<n>`: id, k, c, pad drawn exactly as its INSERTs draw them
/// (k, then c, then pad per row), ids written out (1..N, as an unsplit sysbench load
/// numbers them).
pub(super) struct SbtestRows<'a> {
    dist: &'a Distribution,
    rng: Rng,
    next: u64,
    last: u64,
    table_size: u32,
    scratch: Vec<u8>,
    loaded: &'a AtomicU64,
    unreported: u64,
}

impl<'a> SbtestRows<'a> {
    pub fn new(plan: &PreparePlan, dist: &'a Distribution, n: u32, part: Part, loaded: &'a AtomicU64) -> Self {
        SbtestRows {
            dist,
            rng: Rng::for_client(plan.seed, 1_000_000 + n as u64 + (part.number << 32)),
            next: part.first,
            last: part.last,
            table_size: plan.oltp.table_size as u32,
            scratch: Vec::with_capacity(128),
            loaded,
            unreported: 0,
        }
    }

    fn report(&mut self) {
        self.loaded.fetch_add(self.unreported, Ordering::Relaxed);
        self.unreported = 0;
    }
}

impl RowSource for SbtestRows<'_> {
    fn next_row(&mut self, put: &mut dyn FnMut(Param<'_>)) -> bool {
        if self.next > self.last {
            self.report();
            return false;
        }
        put(Param::Int(self.next as i64));
        put(Param::Int(self.dist.sample(&mut self.rng, 1, self.table_size) as i64));
        for template in [C_TEMPLATE, PAD_TEMPLATE] {
            self.rng.fill_digits(template, &mut self.scratch);
            put(Param::Text(std::str::from_utf8(&self.scratch).unwrap_or_default()));
        }
        self.next += 1;
        self.unreported += 1;
        if self.unreported >= PROGRESS_ROWS {
            self.report();
        }
        true
    }
}

/// Loads one part of `sbtest<n>` with [`Connection::bulk_load`].
pub(super) async fn load_part<C: Connection>(
    conn: &mut C,
    plan: &PreparePlan,
    n: u32,
    part: Part,
    loaded: &AtomicU64,
) -> Result<(), PrepareError> {
    let dist = plan.distribution.sampler();
    let mut rows = SbtestRows::new(plan, &dist, n, part, loaded);
    let table = format!("sbtest{n}");
    conn.bulk_load(&table, &["id", "k", "c", "pad"], &mut rows)
        .await
        .map_err(super::at(format!("prepare failed: {table}: ")))?;
    Ok(())
}

/// An unsplit prepare on a server: creates every table on `admin` (which holds the lock),
/// then `plan.threads` loaders take the parts in turn.
pub(super) fn prepare<D: Database>(
    db: Arc<D>,
    admin: &mut D::Conn,
    rt: &crate::LocalRuntime,
    plan: &PreparePlan,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<PrepareOutcome, PrepareError> {
    for n in 1..=plan.oltp.tables {
        rt.block_on(create_sbtest(&*db, admin, plan, n))?;
    }
    let parts = Arc::new(parts::parts(&Tables::Sbtest(plan.clone())));
    let rows = plan.workload.rows_to_load(&plan.oltp);
    // Parts still to load per table: whoever loads a table's last part finishes it.
    let left: Arc<Vec<AtomicU64>> =
        Arc::new((0..plan.oltp.tables).map(|_| AtomicU64::new(rows.div_ceil(PART_ROWS))).collect());
    let loaders = plan.threads.clamp(1, (parts.len() as u32).max(1));
    let started = Instant::now();
    let work = Loaders::new(loaders, rows * plan.oltp.tables as u64);
    let (loaded, next) = (work.loaded.clone(), Arc::new(AtomicUsize::new(0)));
    let (shared, loader_db) = (Arc::new(plan.clone()), db.clone());
    work.run(progress, move |_, rt, failure| {
        let (db, plan, parts, left) = (loader_db.clone(), shared.clone(), parts.clone(), left.clone());
        let (loaded, next) = (loaded.clone(), next.clone());
        rt.block_on(async move {
            let mut conn = db.connect().await?;
            while let Some(&part) = parts.get(next.fetch_add(1, Ordering::Relaxed)) {
                if crate::lock(failure).is_some() {
                    return Ok(()); // another loader failed: its error is reported
                }
                load_part(&mut conn, &plan, part.table, part, &loaded).await?;
                if left[part.table as usize - 1].fetch_sub(1, Ordering::AcqRel) == 1 {
                    finish_sbtest(&*db, &mut conn, &plan, part.table).await?;
                }
            }
            Ok(())
        })
    })?;
    // Tables without rows have no parts: finished here.
    if rows == 0 {
        for n in 1..=plan.oltp.tables {
            rt.block_on(finish_sbtest(&*db, admin, plan, n))?;
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    Ok(PrepareOutcome { tables: plan.oltp.tables, rows: rows * plan.oltp.tables as u64, seconds, loaders })
}
