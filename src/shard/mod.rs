//! Runs split over client hosts (`--shard I/N`): the barrier in the target database where
//! the shards agree on a common start, each host's clock offset to the database's, and what
//! each shard records of how it started and ended (docs/distributed.md).

pub mod barrier;
pub mod clock;
mod key;

pub use barrier::{Barrier, BarrierError};
pub use key::{prepare_key, run_key};

use crate::db::Database;
use crate::model::shard::{ShardRecord, ShardStart};
use crate::plan::ShardPlan;
use sha2::Digest;
use std::time::{Duration, Instant};

/// One shard's run: meets the others at each measured phase's start and end, and records
/// how it went (the `runner::Rendezvous` of a shard).
pub struct ShardRun<D: Database> {
    barrier: Barrier<D>,
    /// Measured phases begun.
    phase: u32,
    agreed_us: i64,
    waited: Duration,
    starts: Vec<ShardStart>,
    /// Shard 0: shards that had not ended when it read the server's counters.
    not_ended: Vec<u32>,
}

impl<D: Database> ShardRun<D> {
    pub fn new(barrier: Barrier<D>) -> Self {
        ShardRun { barrier, phase: 0, agreed_us: 0, waited: Duration::ZERO, starts: Vec::new(), not_ended: Vec::new() }
    }

    pub fn barrier(&mut self) -> &mut Barrier<D> {
        &mut self.barrier
    }

    /// What this shard records of itself.
    pub fn record(&self) -> ShardRecord {
        let p = &self.barrier.plan;
        ShardRecord {
            index: p.index,
            count: p.count,
            key: p.key.clone(),
            total_threads: p.total_threads,
            threads: p.threads,
            first_client: p.first_client,
            total_rate: p.total_rate,
            reads_server_facts: p.leads(),
            starts: self.starts.clone(),
            not_ended: {
                let mut n = self.not_ended.clone();
                n.sort_unstable();
                n.dedup();
                n
            },
        }
    }

    /// The run is over: shard 0 removes its rows from the barrier's table.
    pub fn finish(mut self) -> ShardRecord {
        if self.barrier.plan.leads() {
            self.barrier.clean_up();
        }
        self.record()
    }
}

impl<D: Database> crate::runner::Rendezvous for ShardRun<D> {
    fn agree(&mut self, stop: &dyn Fn() -> bool) -> Result<(), crate::runner::RendezvousError> {
        self.phase += 1;
        let t = Instant::now();
        self.agreed_us = self.barrier.meet(&format!("start-{}", self.phase), stop)?;
        self.waited = t.elapsed();
        Ok(())
    }

    fn wait_for_start(&mut self) {
        self.barrier.sleep_until(self.agreed_us);
        let started_us = self.barrier.now_us();
        let clock = self.barrier.clock;
        self.starts.push(ShardStart {
            agreed_us: self.agreed_us,
            started_us,
            ended_us: started_us,
            clock_offset_us: clock.offset_us,
            clock_uncertainty_us: clock.uncertainty_us,
            bound_us: clock.uncertainty_us + barrier::WAKE_ALLOWANCE_US,
            waited_s: self.waited.as_secs_f64(),
        });
    }

    fn ended(&mut self, ran: Duration) {
        // When measuring stopped (not after the in-flight statements' grace).
        if let Some(s) = self.starts.last_mut() {
            s.ended_us = s.started_us + ran.as_micros() as i64;
        }
        let phase = format!("end-{}", self.phase);
        let arrived = self.barrier.arrive(&phase);
        if self.barrier.plan.leads() && arrived.is_ok() {
            // The server's counters count every shard's statements only once all ended
            // (after Ctrl-C the user wants the results now: a moment, not the timeout).
            let limit = match crate::runner::signal::interrupted() {
                true => Duration::from_secs(2),
                false => self.barrier.plan.timeout,
            };
            if let Ok(missing) = self.barrier.wait_all(&phase, limit) {
                self.not_ended.extend(missing);
            }
        }
    }

    fn reads_counters(&self) -> bool {
        self.barrier.plan.leads()
    }
}

/// The seed of a run whose shards were given no --rand-seed: the same on every shard (from
/// the run's key), at most 53 bits as every seed is.
pub fn seed_of(key: &str) -> u64 {
    let digest = sha2::Sha256::digest(format!("seed:{key}").as_bytes());
    let bytes: [u8; 8] = digest[..8].try_into().expect("8 bytes");
    (u64::from_le_bytes(bytes) & ((1 << 53) - 1)).max(1)
}

/// The plan's shard, its key filled in (`key`: the request's, [`run_key`] or
/// [`prepare_key`]) when none was given.
pub fn keyed(mut plan: ShardPlan, key: impl FnOnce() -> String) -> ShardPlan {
    if plan.key.is_empty() {
        plan.key = key();
    }
    plan
}
