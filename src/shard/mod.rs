//! Runs split over client hosts (`--shard I/N`): the barrier in the target database where
//! the shards agree on a common start, each host's clock offset to the database's, and what
//! each shard records of how it started and ended (docs/distributed.md).

pub mod barrier;
pub mod clock;

pub use barrier::{Barrier, BarrierError};

use crate::db::Database;
use crate::model::shard::{ShardRecord, ShardStart};
use crate::plan::ShardPlan;
use sha2::Digest;
use std::time::{Duration, Instant};

/// Flags (with a value) that each shard of one run may give differently: where its result
/// goes and how it is shown, and its own index. `--shard I/N` is kept as its count N.
const OWN_TO_A_SHARD: [&str; 5] = ["--out", "--shard-index", "--metrics-listen", "--format", "--report-interval"];
/// Switches that only change what a shard prints.
const OWN_SWITCHES: [&str; 6] = ["--print-result", "--quiet", "-q", "--verbose", "-v", "--histogram"];

/// The key of a run whose shards were given none: the command line without what each
/// shard may give its own way (`--out`, its index, `--print-result`, output options),
/// hashed; shards started the obvious way (the same options, each its own `--out`) agree.
pub fn default_key(args: &[String]) -> String {
    let mut kept: Vec<String> = Vec::new();
    let mut it = args.iter().skip(1);
    while let Some(a) = it.next() {
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) if n.starts_with('-') => (n, Some(v.to_string())),
            _ => (a.as_str(), None),
        };
        let mut value = || inline.clone().or_else(|| it.next().cloned()).unwrap_or_default();
        match name {
            "--shard" => kept.push(format!("--shard of {}", value().rsplit('/').next().unwrap_or(""))),
            n if OWN_TO_A_SHARD.contains(&n) => drop(value()),
            n if OWN_SWITCHES.contains(&n) => {}
            _ => kept.push(a.clone()),
        }
    }
    let digest = sha2::Sha256::digest(kept.join("\u{1f}").as_bytes());
    format!("cmd-{}", digest.iter().take(8).map(|b| format!("{b:02x}")).collect::<String>())
}

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

/// The plan's shard, its key filled in from the command line when none was given.
pub fn keyed(mut plan: ShardPlan, args: &[String]) -> ShardPlan {
    if plan.key.is_empty() {
        plan.key = default_key(args);
    }
    plan
}

#[cfg(test)]
mod key_tests {
    use super::default_key;

    fn key(line: &str) -> String {
        default_key(&line.split_whitespace().map(str::to_string).collect::<Vec<_>>())
    }

    #[test]
    fn shards_started_the_obvious_way_share_a_key() {
        let base = "fairbench run oltp_read_only --threads 8 --time 60 --target mysql://u@db/x";
        let shards = [
            format!("{base} --shard 0/3 --out a.json"),
            format!("{base} --shard=1/3 --out=b.json --print-result -q"),
            format!("{base} --out c.json --shard 2/3 --format json --metrics-listen 0.0.0.0:9100"),
        ];
        let keys: Vec<String> = shards.iter().map(|s| key(s)).collect();
        assert!(keys.iter().all(|k| *k == keys[0]), "{keys:?}");
        // What the shards run is the key: another count, workload or option is another run.
        assert_ne!(key(&format!("{base} --shard 0/4 --out a.json")), keys[0]);
        assert_ne!(key(&format!("{base} --threads 9 --shard 0/3")), keys[0]);
        assert_ne!(key(&shards[0].replace("oltp_read_only", "oltp_read_write")), keys[0]);
    }
}
