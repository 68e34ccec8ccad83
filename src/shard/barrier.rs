//! The barrier shards meet at, kept in the target database itself (no other infrastructure):
//! each shard writes a row per phase into `fairbench_shards`, shard 0 waits for all of them
//! and writes the instant they all start at, on the database's clock.

use super::clock::{self, ClockOffset};
use crate::db::{Connection, Database, DbError};
use crate::model::{ColumnDef, ColumnType, TableDef};
use crate::plan::ShardPlan;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The whole comment of the barrier's table: fairbench created it and may write it.
pub const MARKER: &str = "fairbench:shards:v1";
const TABLE: &str = "fairbench_shards";
/// How often a waiting shard looks at the table.
const POLL: Duration = Duration::from_millis(20);
/// How far ahead of the last arrival shard 0 sets the start: every shard sees it in time.
const LEAD: Duration = Duration::from_millis(500);
/// What a host may take to wake up at an instant, on top of its clock's uncertainty: an
/// idle host wakes within a fraction of a millisecond, one whose cores are taken (the
/// other shards' clients starting, the server) within a few (1.5 to 5 ms seen with three
/// shards and the server on 2 cores).
pub const WAKE_ALLOWANCE_US: i64 = 10_000;

#[derive(Debug, thiserror::Error)]
pub enum BarrierError {
    #[error("shard barrier in {TABLE}: {context}: {source}")]
    Db { context: String, source: DbError },
    #[error("{0}")]
    Failed(String),
    #[error("shards {shards:?} never finished loading")]
    NeverLoaded { shards: Vec<u32> },
}

fn at(context: impl Into<String>) -> impl FnOnce(DbError) -> BarrierError {
    let context = context.into();
    move |source| BarrierError::Db { context, source }
}

/// One shard's place at the barrier: its own connection, its clock's offset to the database.
pub struct Barrier<D: Database> {
    conn: D::Conn,
    rt: crate::LocalRuntime,
    pub plan: ShardPlan,
    host: String,
    pub clock: ClockOffset,
    /// Rows older than this (database clock) belong to earlier runs with the same key.
    since_us: i64,
}

impl<D: Database> Barrier<D> {
    /// Connects, creates the table when missing (guarded like every table fairbench owns)
    /// and measures this host's clock against the database's.
    pub fn join(db: Arc<D>, plan: &ShardPlan, host: &str) -> Result<Self, BarrierError> {
        let rt = crate::local_runtime();
        let (conn, clock) = rt.block_on(async {
            let mut conn = db.connect().await.map_err(at("cannot connect"))?;
            let created = crate::probe::ensure_table(&*db, &mut conn, &table(), MARKER).await;
            created.map_err(|e| BarrierError::Failed(e.to_string()))?;
            let sql = format!("SELECT {}", db.clock_sql().epoch_us);
            let clock = clock::measure(&mut conn, &sql).await.map_err(at("cannot read the database's clock"))?;
            Ok::<_, BarrierError>((conn, clock))
        })?;
        let since_us = clock.db_now_us() - plan.timeout.as_micros() as i64;
        let host = host.chars().filter(|c| c.is_ascii_alphanumeric() || "._-".contains(*c)).take(100).collect();
        Ok(Barrier { conn, rt, plan: plan.clone(), host, clock, since_us })
    }

    /// Now on the database's clock, as this host estimates it.
    pub fn now_us(&self) -> i64 {
        self.clock.db_now_us()
    }

    /// Registers this shard at `phase`, then waits for every shard to have registered (shard
    /// 0) or for shard 0's start instant (the others). Returns that instant, on the
    /// database's clock. A shard missing after the timeout fails the run, and shard 0 tells
    /// the others (`abort`).
    pub fn meet(&mut self, phase: &str, stop: &dyn Fn() -> bool) -> Result<i64, BarrierError> {
        let arrived = self.arrive(phase)?;
        let deadline = Instant::now() + self.plan.timeout;
        let go = format!("{phase}:go");
        loop {
            if let Some(why) = self.aborted()? {
                return Err(BarrierError::Failed(why));
            }
            if self.plan.leads() {
                let missing = self.missing(phase)?;
                if missing.is_empty() {
                    let start = self.now_us() + LEAD.as_micros() as i64;
                    self.write(&go, start)?;
                    return Ok(start);
                }
                if Instant::now() >= deadline {
                    let why = self.timed_out(&missing);
                    self.abort(&why);
                    return Err(BarrierError::Failed(why));
                }
            } else {
                // A start older than this shard's arrival is an earlier run's.
                if let Some(start) = self.value(0, &go)?.filter(|s| *s >= arrived - 1_000_000) {
                    return Ok(start);
                }
                if Instant::now() >= deadline + LEAD * 2 {
                    let missing = self.missing(phase)?;
                    return Err(BarrierError::Failed(self.timed_out(&missing)));
                }
            }
            if stop() {
                self.abort(&format!("shard {} was interrupted before the start", self.plan.index));
                return Err(BarrierError::Failed("interrupted at the shard barrier".into()));
            }
            std::thread::sleep(POLL);
        }
    }

    /// Registers at `phase` without waiting; returns when, on the database's clock.
    pub fn arrive(&mut self, phase: &str) -> Result<i64, BarrierError> {
        let now = self.now_us();
        self.write(phase, now)?;
        Ok(now)
    }

    /// Waits until every shard registered at `phase`, at most `limit`; the shards missing
    /// then.
    pub fn wait_all(&mut self, phase: &str, limit: Duration) -> Result<Vec<u32>, BarrierError> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(why) = self.aborted()? {
                return Err(BarrierError::Failed(why));
            }
            let missing = self.missing(phase)?;
            if missing.is_empty() || Instant::now() >= deadline {
                return Ok(missing);
            }
            std::thread::sleep(POLL);
        }
    }

    /// Waits until shard `from` registered at `phase` (or called the run off), at most the
    /// timeout.
    pub fn wait_for(&mut self, from: u32, phase: &str, stop: &dyn Fn() -> bool) -> Result<(), BarrierError> {
        let deadline = Instant::now() + self.plan.timeout;
        loop {
            if let Some(why) = self.aborted()? {
                return Err(BarrierError::Failed(why));
            }
            if self.value(from, phase)?.is_some() {
                return Ok(());
            }
            if Instant::now() >= deadline || stop() {
                return Err(BarrierError::Failed(format!(
                    "shard {from} did not reach `{phase}` within {} s (--shard-timeout)",
                    self.plan.timeout.as_secs()
                )));
            }
            std::thread::sleep(POLL);
        }
    }

    /// Sleeps until `db_us` on the database's clock (this host's clock and offset): one
    /// absolute sleep on the wall clock, woken by the kernel's high-resolution timer, no
    /// spinning (shards on one host would take each other's cores as they wake).
    pub fn sleep_until(&self, db_us: i64) {
        let until = self.clock.local_us(db_us);
        let at = libc::timespec { tv_sec: until.div_euclid(1_000_000), tv_nsec: until.rem_euclid(1_000_000) * 1000 };
        // SAFETY: clock_nanosleep reads `at` only; no remainder is asked for (absolute time).
        while unsafe { libc::clock_nanosleep(libc::CLOCK_REALTIME, libc::TIMER_ABSTIME, &at, std::ptr::null_mut()) }
            == libc::EINTR
        {}
    }

    /// Tells the other shards the run is off, and why (best effort: the run fails anyway).
    pub fn abort(&mut self, why: &str) {
        let note: String = why.chars().filter(|c| *c != '\'' && *c != '\\').take(250).collect();
        let now = self.now_us();
        let _ = self.put("abort", now, &note);
    }

    /// Removes this run's rows (shard 0, when the run is over).
    pub fn clean_up(&mut self) {
        let sql = format!("DELETE FROM {TABLE} WHERE run_key = '{}'", self.plan.key);
        let conn = &mut self.conn;
        let _ = self.rt.block_on(async { tokio::time::timeout(Duration::from_secs(5), conn.simple(&sql)).await });
    }

    fn timed_out(&mut self, missing: &[u32]) -> String {
        let list: Vec<String> = missing.iter().map(u32::to_string).collect();
        let others = self.other_keys();
        format!(
            "{} of {} shards reached the barrier within {} s (--shard-timeout); missing: shard {}; the run did not start{}",
            self.plan.count as usize - missing.len(),
            self.plan.count,
            self.plan.timeout.as_secs(),
            list.join(", "),
            others
        )
    }

    /// Shards that registered meanwhile under other keys (started with other options, or
    /// another --shard-key), for the message of a barrier that timed out.
    fn other_keys(&mut self) -> String {
        let sql = format!(
            "SELECT run_key, shard FROM {TABLE} WHERE run_key <> '{}' AND at_us >= {} ORDER BY run_key, shard",
            self.plan.key, self.since_us
        );
        let mut keys: Vec<(String, Vec<String>)> = Vec::new();
        for row in self.rows(&sql).unwrap_or_default() {
            let (Some(Some(key)), Some(Some(shard))) = (row.first().cloned(), row.get(1).cloned()) else { continue };
            match keys.last_mut().filter(|(k, _)| *k == key) {
                Some((_, shards)) if !shards.contains(&shard) => shards.push(shard),
                Some(_) => {}
                None => keys.push((key, vec![shard])),
            }
        }
        if keys.is_empty() {
            return String::new();
        }
        let named: Vec<String> = keys.iter().map(|(k, s)| format!("{k} (shard {})", s.join(", "))).collect();
        format!(
            "; meanwhile shards registered under other keys: {}: their command lines differ from this one's ({}); start every shard with the same --shard-key to join them",
            named.join(", "),
            self.plan.key
        )
    }

    fn write(&mut self, phase: &str, at_us: i64) -> Result<(), BarrierError> {
        let host = self.host.clone();
        self.put(phase, at_us, &host).map_err(at(format!("cannot register shard {} at `{phase}`", self.plan.index)))
    }

    /// This shard's row at `phase` (replacing one an earlier run with the same key left).
    fn put(&mut self, phase: &str, at_us: i64, note: &str) -> Result<(), DbError> {
        let (key, shard) = (&self.plan.key, self.plan.index);
        let sql = [
            format!("DELETE FROM {TABLE} WHERE run_key = '{key}' AND shard = {shard} AND phase = '{phase}'"),
            format!("INSERT INTO {TABLE} (run_key, shard, phase, at_us, note) VALUES ('{key}', {shard}, '{phase}', {at_us}, '{note}')"),
        ];
        let conn = &mut self.conn;
        self.rt.block_on(async {
            for s in &sql {
                conn.simple(s).await?;
            }
            Ok(())
        })
    }

    /// Shard `shard`'s time at `phase`, if it registered in this run.
    fn value(&mut self, shard: u32, phase: &str) -> Result<Option<i64>, BarrierError> {
        let sql = format!(
            "SELECT at_us FROM {TABLE} WHERE run_key = '{}' AND shard = {shard} AND phase = '{phase}' AND at_us >= {}",
            self.plan.key, self.since_us
        );
        let rows = self.rows(&sql)?;
        Ok(rows.first().and_then(|r| r.first().cloned().flatten()).and_then(|v| v.parse().ok()))
    }

    /// Shards not registered at `phase` in this run.
    fn missing(&mut self, phase: &str) -> Result<Vec<u32>, BarrierError> {
        let sql = format!(
            "SELECT shard FROM {TABLE} WHERE run_key = '{}' AND phase = '{phase}' AND at_us >= {}",
            self.plan.key, self.since_us
        );
        let rows = self.rows(&sql)?;
        let present: Vec<u32> =
            rows.iter().filter_map(|r| r.first().cloned().flatten()).filter_map(|v| v.parse().ok()).collect();
        Ok((0..self.plan.count).filter(|s| !present.contains(s)).collect())
    }

    /// Why another shard called the run off, if one did.
    fn aborted(&mut self) -> Result<Option<String>, BarrierError> {
        let sql = format!(
            "SELECT shard, note FROM {TABLE} WHERE run_key = '{}' AND phase = 'abort' AND at_us >= {}",
            self.plan.key, self.since_us
        );
        let rows = self.rows(&sql)?;
        Ok(rows.first().map(|r| {
            let shard = r.first().cloned().flatten().unwrap_or_default();
            let note = r.get(1).cloned().flatten().unwrap_or_default();
            format!("shard {shard} called the run off: {note}")
        }))
    }

    fn rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, BarrierError> {
        let conn = &mut self.conn;
        self.rt.block_on(conn.text_rows(sql)).map_err(at("cannot read the barrier"))
    }
}

pub fn table() -> TableDef {
    let column = |name: &str, ty| ColumnDef { name: name.into(), ty, generated: false };
    TableDef {
        name: TABLE.into(),
        columns: vec![
            column("run_key", ColumnType::Varchar(64)),
            column("shard", ColumnType::Integer),
            column("phase", ColumnType::Varchar(40)),
            column("at_us", ColumnType::BigInt),
            column("note", ColumnType::Varchar(255)),
        ],
        primary_key: vec!["run_key".into(), "shard".into(), "phase".into()],
        indexes: Vec::new(),
    }
}
