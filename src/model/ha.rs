//! What a high-availability probe measured (`fairbench probe failover|lag`): every write
//! attempt of the failover writer with its outcome, the outages between acknowledged writes,
//! which acknowledged writes the surviving primary still holds, and how long each heartbeat
//! took to become visible on each replica. Times are microseconds since the probe started
//! (`started_at` is its wall-clock start), so one clock orders every attempt.

use super::ha_node::{ProbeTiming, Server};
use super::is_zero;
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
    /// The workload run alongside (`--with`; failover: following the primary over the targets), by name; absent: the
    /// probe ran alone, without load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<String>,
    /// Every node the probe talked to, as it described itself when the probe started.
    pub nodes: Vec<NodeRecord>,
    /// What the probe was asked to do (URLs without passwords): `rerun` executes it.
    /// Absent in results written before probes kept their requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<super::ProbeRequest>,
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
    /// The longest outage, milliseconds (0: none). Not the downtime of a clean failover when
    /// `split_brain` is present.
    pub downtime_ms: f64,
    /// Every node's role as the probe saw it change: read before the first write on each
    /// connection, and every `role_poll_ms` by the role watcher.
    #[serde(default)]
    pub roles: Vec<RoleChange>,
    /// Milliseconds between the role watcher's readings of each node.
    #[serde(default)]
    pub role_poll_ms: f64,
    /// Writes acknowledged by a node that was not the primary, or by two primaries at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split_brain: Option<SplitBrain>,
    /// The acknowledged writes looked for on the node that ends as primary after the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification: Option<Verification>,
    /// Every node's rows of this probe after the run, node by node.
    #[serde(default)]
    pub checks: Vec<NodeCheck>,
    /// Every server the probe met, by the identity it reported (attempts, role changes and
    /// checks name them by `key`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub servers: Vec<Server>,
    /// Whether the probe itself ran on time.
    #[serde(default)]
    pub timing: ProbeTiming,
    /// Seconds the check after the run waited at most for the nodes to settle (replicas to
    /// apply what they received) before reading their rows.
    #[serde(default)]
    pub settle_timeout_s: f64,
}

/// The writes that make a failover's figures untrue: acknowledged by a node that read as a
/// replica or read-only at that moment, or by two nodes that both took writes in
/// overlapping time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SplitBrain {
    pub on_non_primary: Vec<NonPrimaryWrites>,
    pub overlapping: Vec<OverlappingWriters>,
}

/// Writes one node acknowledged while it read as something other than a primary.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NonPrimaryWrites {
    /// The target (endpoint) the writes went to.
    pub target: u32,
    /// The server that acknowledged them (its key in `servers`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub node: String,
    /// `replica` or `read_only`; absent: its role was never read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<NodeRole>,
    pub acknowledged: u64,
    pub first_us: u64,
    pub last_us: u64,
}

/// Two nodes that each acknowledged writes between acknowledgements of the other while both
/// read as primaries.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OverlappingWriters {
    /// The two targets, lower first (through one proxy: the same target twice).
    pub targets: [u32; 2],
    /// The two servers (keys in `servers`), in the order of `acknowledged_each`.
    #[serde(default)]
    pub nodes: [String; 2],
    /// Acknowledged writes that interleaved (on either node).
    pub acknowledged: u64,
    /// Of the probe's writes from `from_us` to `to_us`, those each server acknowledged.
    #[serde(default)]
    pub acknowledged_each: [u64; 2],
    pub from_us: u64,
    pub to_us: u64,
}

/// One node's rows of this probe, read after the run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NodeCheck {
    /// The endpoint read (1-based over the targets, then the other nodes known).
    pub target: u32,
    /// Redacted URL of the endpoint read.
    pub node: String,
    /// The server that answered (its key in `servers`; empty: none answered).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub server: String,
    /// Read through an endpoint that is not this server itself (a proxy, a DNS name): its URL.
    /// The other servers behind it were not read through it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub through: Option<String>,
    /// Its role when read after the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<RoleReading>,
    /// The node's rows could not be read (unreachable, or the lookup failed): why.
    /// Unverified, never counted as fine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unverified: Option<String>,
    /// Rows of this probe the node holds.
    pub present: u64,
    /// Acknowledged writes the node does not hold.
    pub missing: u64,
    pub missing_seqs: Vec<u64>,
    /// Rows the node holds whose write was never acknowledged (unknown outcome, or failed).
    pub unacknowledged_present: u64,
    pub unacknowledged_present_seqs: Vec<u64>,
    /// Rows this node holds that the final primary does not (0 on the final primary).
    #[serde(default)]
    pub diverged: u64,
    #[serde(default)]
    pub diverged_seqs: Vec<u64>,
    /// Milliseconds until the node had settled (nothing received left to apply, and its
    /// rows the same on two reads); absent: it had not within `settle_timeout_s`, and what
    /// it lacks may still arrive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settled_ms: Option<f64>,
}

/// How an attempt ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The server acknowledged the commit.
    Acknowledged,
    /// The server answered with an error (its code in `code`): not written.
    Failed,
    /// Indeterminate: the connection broke after the write was sent, or no answer came
    /// within `--attempt-timeout` (an answer after it does not count): it may or may not
    /// have been committed. Settled after the run by looking for its row (`settled`).
    #[serde(rename = "indeterminate", alias = "unknown")]
    Unknown,
    /// No target accepted a connection: nothing was sent.
    NotConnected,
}

impl Attempt {
    /// When its write was acknowledged (or the attempt ended), microseconds since the probe
    /// started.
    pub fn acked_at_us(&self) -> u64 {
        self.at_us + self.took_us
    }
}

impl Outcome {
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Acknowledged => "acknowledged",
            Outcome::Failed => "failed",
            Outcome::Unknown => "indeterminate",
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
    /// The node's role as read on this attempt's connection before its first write
    /// (absent: no connection, or the role could not be read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<NodeRole>,
    /// The server that answered on this connection, by its own identity (a target may be a
    /// proxy or DNS name in front of several).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Read on the same connection right after the acknowledgement, when the last reading
    /// before it said the node was not a primary: a promotion between the two readings shows
    /// here as a primary, a write a replica took as a replica still.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role_after: Option<NodeRole>,
    /// An indeterminate write settled after the run: true, its row is on the final primary
    /// (committed); false, it is not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settled: Option<bool>,
    /// The probe's own process stalled during this attempt: a timeout then says nothing
    /// about the database.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub probe_stalled: bool,
}

/// What a node is at one moment, as it says itself: whether an ordinary client's write
/// there is a write to the primary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NodeRole {
    /// Accepts writes and replicates from nobody, with replicas or a binary log to feed them.
    Primary,
    /// Accepts writes and replicates from nobody; nothing replicates from it.
    Standalone,
    /// Replicates from another node (MySQL/MariaDB: a source configured; PostgreSQL: in
    /// recovery). A write acknowledged here is not a write to the primary.
    Replica,
    /// Replicates from nobody but refuses ordinary writes (`read_only`, `super_read_only`,
    /// `default_transaction_read_only`).
    ReadOnly,
    /// An embedded database (SQLite): the only copy.
    Embedded,
    /// A node of a multi-primary cluster (Galera) in its primary component: takes writes
    /// beside the other members, each certified against all of them.
    Member,
}

impl NodeRole {
    pub fn name(self) -> &'static str {
        match self {
            NodeRole::Primary => "primary",
            NodeRole::Standalone => "standalone",
            NodeRole::Replica => "replica",
            NodeRole::ReadOnly => "read-only",
            NodeRole::Embedded => "embedded",
            NodeRole::Member => "member",
        }
    }

    /// A write acknowledged by a node in this role is a write to the primary.
    pub fn is_writer(self) -> bool {
        matches!(self, NodeRole::Primary | NodeRole::Standalone | NodeRole::Embedded | NodeRole::Member)
    }

    /// Several nodes in this role take writes at once by design (no split brain between them).
    pub fn shares_writes(self) -> bool {
        self == NodeRole::Member
    }
}

/// A node's role and what it was read from (`read_only=OFF, not a replica`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RoleReading {
    pub role: NodeRole,
    pub evidence: String,
    /// The server's own identity, read from the server (never from the address dialled):
    /// unique per server and the same across its restarts; through a proxy, which node
    /// answered. See [`RoleReading::address`] for the readable part.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub node: String,
    /// `host:port` as the server reports them (the address it accepted the connection on,
    /// or its configured one): how reports name a node no sandbox or `--node` names.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub address: String,
}

impl RoleReading {
    /// A reading that names no server (an embedded database; tests).
    pub fn anonymous(role: NodeRole, evidence: impl Into<String>) -> RoleReading {
        RoleReading { role, evidence: evidence.into(), node: String::new(), address: String::new() }
    }

    /// `primary (binary log on, not a replica, read_only=OFF)`.
    pub fn describe(&self) -> String {
        format!("{} ({})", self.role.name(), self.evidence)
    }

    /// The identity with the address it reports, unless the identity holds it already
    /// (`server_uuid 3e1f... at 10.0.0.5:3306`); none for an anonymous reading.
    pub fn identity(&self) -> Option<String> {
        match (self.node.is_empty(), self.node.contains(&self.address)) {
            (true, _) => None,
            (false, true) => Some(self.node.clone()),
            (false, false) => Some(format!("{} at {}", self.node, self.address)),
        }
    }
}

/// A change of a node's role as the probe saw it: on a writer's connection before its first
/// write, or by the role watcher that reads every node while the probe runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RoleChange {
    /// When the read that saw it began, microseconds since the probe started (a read that
    /// began earlier and returned later is older news, and is not recorded).
    pub at_us: u64,
    /// 1-based, in `--target` order.
    pub target: u32,
    /// Absent: the node did not answer (its role unknown from then on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<NodeRole>,
    /// What the role was read from, or why the node did not answer.
    pub evidence: String,
    /// The server that answered (its key in `servers`); empty: no answer.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub node: String,
    /// `host:port` as that server reports them.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub address: String,
}

/// No acknowledged write from `from_us` (the last before the fault) to `to_us` (the first
/// after it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Outage {
    /// The last write acknowledged on a primary before it, or the end of a stall of the
    /// probe's own after it (the probe saw nothing while it stalled).
    pub from_us: u64,
    /// Present when the probe stalled between its last acknowledgement (this time) and its
    /// next attempt: the outage began between `earliest_from_us` and `from_us`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub earliest_from_us: Option<u64>,
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
    /// The servers (their own identity) that acknowledged last before and first after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_before: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_after: Option<String>,
}

impl Outage {
    /// The server that took writes after is another than before (a proxy's target included).
    pub fn moved(&self) -> bool {
        match (&self.node_before, &self.node_after, self.target_after) {
            (Some(b), Some(a), _) => a != b,
            (_, _, Some(t)) => t != self.target_before && self.target_before > 0,
            _ => false,
        }
    }
}

/// The probe's rows looked up on the node that ends as primary.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Verification {
    /// The node read (redacted URL): the one that reads as primary after the run.
    pub node: String,
    /// Its server (key in `servers`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub server: String,
    /// Read only through this endpoint (no node of the cluster known to read directly):
    /// rows on the other nodes were not looked at, and no `diverged` figure holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub through: Option<String>,
    /// Its target number (0 in files of fairbench before 0.2: the target acknowledged last).
    #[serde(default)]
    pub target: u32,
    /// Why this node is taken as the final primary.
    #[serde(default)]
    pub why: String,
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
    /// Rows present on another node but not on this one: copies that went their own way.
    #[serde(default)]
    pub diverged: u64,
    #[serde(default)]
    pub diverged_seqs: Vec<u64>,
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
