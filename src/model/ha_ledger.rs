//! What a probe streams into its record beside its timeline entries (`ha` lines of
//! [`super::record`]): how it was asked to run, every write attempt and the node that
//! answered it (the ledger of acknowledged writes), every role reading that changed, each
//! heartbeat and what the replicas showed, and at its end the verdict made from these lines
//! read back. A probe killed mid-run leaves the lines up to the kill; `recover` judges them.

use super::ha::{Attempt, HaRecord, RoleChange};
use serde::{Deserialize, Serialize};

/// One `ha` line of a probe's record.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "ha", rename_all = "snake_case")]
pub enum HaLine {
    /// The failover writer's options (first line of a failover probe's ledger).
    Failover(FailoverPlan),
    /// The lag probe's options.
    Lag(LagPlan),
    /// One write attempt of the failover writer, with its outcome and the node that answered.
    Attempt(Attempt),
    /// A node's role as read, when it differed from the last reading.
    Role(RoleChange),
    /// A heartbeat written (`acked_us`: when the primary acknowledged it; none: it failed).
    Heartbeat { seq: u64, acked_us: Option<u64> },
    /// Replica `replica` (1-based) showed heartbeat `seq` or later at `at_us`.
    Shown { replica: u32, at_us: u64, seq: u64 },
    /// The probe's figures, judged on the lines above read back, and what only its end read
    /// (the rows on every node, the probe's own timing).
    Verdict(Box<HaRecord>),
}

/// How a failover probe was asked to write.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FailoverPlan {
    pub rate: f64,
    pub attempt_timeout_s: f64,
    pub role_poll_ms: f64,
    pub settle_timeout_s: f64,
    pub run_id: i64,
}

/// How a lag probe was asked to run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LagPlan {
    pub rate: f64,
    pub poll_ms: f64,
    pub drain_s: f64,
    pub run_id: i64,
}
