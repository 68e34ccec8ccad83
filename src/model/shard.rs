//! Runs split over several client hosts: what one shard records of itself, and the rows a
//! combined result keeps per shard (docs/distributed.md).

use super::{ClientConditions, ClientRecord};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One shard of a run split over client hosts (`--shard I/N`), as it recorded itself.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ShardRecord {
    /// From 0.
    pub index: u32,
    pub count: u32,
    /// The run every shard belongs to (`--shard-key`, or derived from the command line).
    pub key: String,
    /// Clients of the whole run (`--threads`); this shard ran `threads` of them, with the
    /// ids `first_client` .. `first_client + threads - 1`.
    pub total_threads: u32,
    pub threads: u32,
    pub first_client: u32,
    /// Open loop: the whole run's target rate (this shard's share is `open_loop.rate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_rate: Option<f64>,
    /// Whether this shard read the server-wide facts (counters around the run, the tables
    /// at its end): shard 0 does, once for the run, after every shard ended.
    pub reads_server_facts: bool,
    /// How the shards started together, one record per measured phase.
    pub starts: Vec<ShardStart>,
    /// Shard 0: shards that had not ended within `--shard-timeout` of it, when it read the
    /// server's counters (their last statements are missing from the counters).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_ended: Vec<u32>,
}

/// One common start through the barrier in the target database, timed on the database's
/// clock (microseconds since the Unix epoch), as this shard measured it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ShardStart {
    /// The instant every shard agreed to start at (chosen by shard 0).
    pub agreed_us: i64,
    /// When this shard started, converted to the database's clock with its offset.
    pub started_us: i64,
    /// When its measured phase ended, on the database's clock.
    pub ended_us: i64,
    /// The database's clock minus this host's, from the round trip with the least delay.
    pub clock_offset_us: i64,
    /// Half that round trip: the offset is exact within this.
    pub clock_uncertainty_us: i64,
    /// The stated bound of this shard's start: its offset's uncertainty plus the host's
    /// wake-up delay allowance; `started_us` lies within it of `agreed_us` when the host
    /// kept time.
    pub bound_us: i64,
    /// Seconds this shard waited in the barrier for the others.
    pub waited_s: f64,
}

/// A shard's own figures in a combined result (`fairbench combine`): which host ran which
/// clients, and how it did.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ShardRow {
    pub shard: ShardRecord,
    /// The result file it came from, as given to combine.
    pub source: String,
    /// Its client host and command line.
    pub client: ClientConditions,
    pub client_cost: ClientRecord,
    pub measured_s: f64,
    pub events: u64,
    /// Events per second, statements per second.
    pub tps: f64,
    pub qps: f64,
    /// Every statement's 95th percentile, microseconds.
    pub p95_us: f64,
    /// Whole events' 95th percentile (the headline's), microseconds; absent in results
    /// combined before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_p95_us: Option<f64>,
    pub errors: u64,
    /// The shard's own status (`completed`, `failed`, ...).
    pub status: super::RunStatus,
}

/// How far apart the shards' first measured phases started and ended (microseconds), and
/// the largest bound any shard stated for its start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StartSpread {
    pub starts_us: i64,
    pub ends_us: i64,
    pub bound_us: i64,
}

impl StartSpread {
    /// `None` when no shard recorded a start.
    pub fn of(rows: &[ShardRow]) -> Option<StartSpread> {
        let starts: Vec<&ShardStart> = rows.iter().filter_map(|r| r.shard.starts.first()).collect();
        let extent = |f: fn(&ShardStart) -> i64| {
            let values = starts.iter().map(|s| f(s));
            values.clone().max().unwrap_or(0) - values.min().unwrap_or(0)
        };
        let bound_us = starts.iter().map(|s| s.bound_us).max()?;
        Some(StartSpread { starts_us: extent(|s| s.started_us), ends_us: extent(|s| s.ended_us), bound_us })
    }
}
