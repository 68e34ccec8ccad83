//! What a high-availability probe measured (`fairbench probe failover|lag`): every write
//! attempt of the failover writer with its outcome, the outages between acknowledged writes,
//! which acknowledged writes the surviving primary still holds, and how long each heartbeat
//! took to become visible on each replica. Times are microseconds since the probe started
//! (`started_at` is its wall-clock start), so one clock orders every attempt.

use super::{ClassStats, ServerFacts};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct HaRecord {
    /// `failover` or `lag`.
    pub probe: String,
    /// RFC 3339 wall-clock time of the probe's time zero.
    pub started_at: String,
    /// Seconds the probe wrote for.
    pub duration_s: f64,
    /// The workload run alongside on the (first) primary (`--with`), by name; absent: the
    /// probe ran alone, without load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<String>,
    /// Every node the probe talked to, as it described itself when the probe started.
    pub nodes: Vec<NodeRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failover: Option<FailoverRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag: Option<LagRecord>,
}

/// One server of the topology.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct NodeRecord {
    /// `target1`, `target2`... (failover) or `primary`, `replica1`... (lag).
    pub name: String,
    /// The URL, password replaced by `***`.
    pub url: String,
    /// Unreachable when the probe started: why (its other fields are then empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreachable: Option<String>,
    #[serde(default)]
    pub product: String,
    #[serde(default)]
    pub version: String,
    /// `primary`, `replica` or `standalone`, with the evidence (the driver's reading).
    #[serde(default)]
    pub role: String,
    /// What the driver reads in the node's settings: durability, replica acknowledgement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub facts: Option<ServerFacts>,
    /// The node's durability and replication settings (the driver's groups of them).
    #[serde(default)]
    pub settings: BTreeMap<String, String>,
}

/// The failover writer: one row per attempt, at a fixed rate.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct FailoverRecord {
    /// Attempts per second asked for.
    pub rate: f64,
    /// Seconds an attempt (connect, or the write) may take before it counts as timed out.
    pub attempt_timeout_s: f64,
    /// Identifies this probe's rows in the probe table (`fairbench_probe.run_id`).
    pub run_id: i64,
    /// Every attempt in order.
    pub attempts: Vec<Attempt>,
    /// Attempts by outcome.
    pub outcomes: BTreeMap<String, u64>,
    /// Each span with no acknowledged write between two acknowledged ones (or until the end).
    pub outages: Vec<Outage>,
    /// The longest outage, milliseconds (0: none).
    pub downtime_ms: f64,
    /// The acknowledged writes looked for on the surviving primary after the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification: Option<Verification>,
}

/// How an attempt ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The server acknowledged the commit.
    Acknowledged,
    /// The server answered with an error (its code in `code`): not written.
    Failed,
    /// The connection broke or no answer came in time after the write was sent: it may or
    /// may not have been committed.
    Unknown,
    /// No target accepted a connection: nothing was sent.
    NotConnected,
}

impl Outcome {
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Acknowledged => "acknowledged",
            Outcome::Failed => "failed",
            Outcome::Unknown => "unknown",
            Outcome::NotConnected => "not_connected",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Attempt {
    /// The row's sequence number (`fairbench_probe.seq`), unique in the run.
    pub seq: u64,
    /// When the attempt started, microseconds since the probe started.
    pub at_us: u64,
    /// How long it took, microseconds.
    pub took_us: u64,
    pub outcome: Outcome,
    /// Which target (1-based, in `--target` order) it went to; 0 when none connected.
    pub target: u32,
    /// The error code (the server's, or fairbench's for a lost connection or a timeout).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// The error message, first attempt of each outage and code only (the rest repeat it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// No acknowledged write from `from_us` (the last before the fault) to `to_us` (the first
/// after it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Outage {
    pub from_us: u64,
    /// Absent when no write was acknowledged again before the probe ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_us: Option<u64>,
    /// `to_us - from_us` (or to the end of the probe), milliseconds.
    pub duration_ms: f64,
    /// Attempts in between that were not acknowledged, by outcome and code.
    pub errors: BTreeMap<String, u64>,
    /// The target acknowledged last before, and first after.
    pub target_before: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_after: Option<u32>,
}

/// The probe's rows looked up on a node after the run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Verification {
    /// The node read (redacted URL): the target acknowledged last.
    pub node: String,
    /// RFC 3339.
    pub at: String,
    pub acknowledged: u64,
    /// Acknowledged writes the node does not hold: lost (0 expected with durable settings).
    pub lost: u64,
    /// Their sequence numbers (at most 1,000; `lost` counts all).
    pub lost_seqs: Vec<u64>,
    /// Writes whose outcome the client never learned that the node holds (committed but
    /// not acknowledged).
    pub unacknowledged_present: u64,
    pub unacknowledged_present_seqs: Vec<u64>,
    /// Writes that failed with an error, yet are present: the server said no and did it.
    pub failed_present: u64,
}

/// Heartbeats written on the primary, read on each replica.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct LagRecord {
    /// Heartbeats per second written.
    pub rate: f64,
    /// How often each replica was read, milliseconds: the resolution of every lag.
    pub poll_ms: f64,
    pub run_id: i64,
    pub heartbeats_written: u64,
    pub write_errors: BTreeMap<String, u64>,
    pub replicas: Vec<ReplicaLag>,
}

/// One replica: each heartbeat's lag is the time from its acknowledgement on the primary to
/// the first read of the replica that saw it (or a later one: replication applies in order).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ReplicaLag {
    pub node: String,
    /// Lag of every heartbeat seen, in the usual latency statistics (microseconds).
    pub lag: ClassStats,
    /// Heartbeats not seen before the probe gave up waiting (`drain_s` after the last).
    pub unseen: u64,
    pub drain_s: f64,
    pub read_errors: BTreeMap<String, u64>,
    /// Per second of the probe: the heartbeats acknowledged in it and their lag.
    pub timeline: Vec<LagSecond>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LagSecond {
    pub second: u64,
    pub heartbeats: u64,
    pub p50_ms: f64,
    pub max_ms: f64,
    /// Heartbeats of this second never seen.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unseen: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
