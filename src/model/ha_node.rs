//! Who answered, and whether the probe itself kept time: the servers a failover probe met,
//! each known by the identity it reports (never by the address dialled), and the spans in
//! which the probe's own process did not run on time.

use super::is_zero;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A server as it identified itself to the probe: through a proxy or a DNS name, the node
/// that answered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Server {
    /// Its identity, unique per server and the same across restarts (MySQL `server_uuid`;
    /// MariaDB `server_id` with the host and port it reports; PostgreSQL the address and
    /// port it accepted the connection on with its system identifier). Attempts, role
    /// changes and checks name servers by it.
    pub key: String,
    /// `host:port` as the server reports them.
    pub address: String,
    /// How reports name it: the sandbox's node name or the `--node` given for it, else its
    /// address.
    pub name: String,
    /// The URL (without password) that reaches this server directly, when one is known (a
    /// sandbox node, a `--node`, or a target that is the server itself rather than a proxy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direct: Option<String>,
}

/// How the probe kept its own schedule: a probe that did not run (host load, the process
/// stopped) saw nothing in that span, and its figures must say so.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProbeTiming {
    /// Spans in which the probe's process did not run on time: its own clock thread woke
    /// late, or a write slot began late, by more than `threshold_ms`.
    pub stalls: Vec<ProbeStall>,
    /// The lateness that makes a stall, milliseconds: at least 100 ms and two slot intervals.
    pub threshold_ms: f64,
    /// Write slots skipped because the probe was late (an attempt hung, or the probe
    /// stalled): no write was tried in them.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dropped_slots: u64,
    /// The largest lateness of a slot's start, milliseconds.
    pub max_slot_delay_ms: f64,
}

/// The probe's process did not run from `from_us` to `to_us` (microseconds on its clock).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProbeStall {
    pub from_us: u64,
    pub to_us: u64,
}

impl ProbeStall {
    pub fn overlaps(&self, from_us: u64, to_us: u64) -> bool {
        self.from_us < to_us && from_us < self.to_us
    }

    pub fn ms(&self) -> f64 {
        self.to_us.saturating_sub(self.from_us) as f64 / 1000.0
    }
}

/// Spans merged when they touch or overlap, in time order.
pub fn merge_stalls(mut spans: Vec<ProbeStall>) -> Vec<ProbeStall> {
    spans.sort_by_key(|s| s.from_us);
    let mut out: Vec<ProbeStall> = Vec::new();
    for s in spans {
        match out.last_mut() {
            Some(last) if s.from_us <= last.to_us => last.to_us = last.to_us.max(s.to_us),
            _ => out.push(s),
        }
    }
    out
}
