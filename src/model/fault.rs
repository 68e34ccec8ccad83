//! Faults performed on a sandbox's nodes on a schedule (`--fault`): what was asked, when it
//! began and ended on the run's clock, and what it did.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FaultRecord {
    /// The sandbox whose nodes the faults were performed on (empty: only `exec` steps).
    pub sandbox: String,
    /// The schedule as given.
    pub schedule: String,
    /// Each step in time order (a `for D` adds the step that undoes it).
    pub events: Vec<FaultEvent>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FaultEvent {
    /// `kill` (SIGKILL), `stop` (SIGTERM), `start`, `pause` (SIGSTOP), `resume` (SIGCONT),
    /// `promote`, `exec` (a user's command).
    pub action: String,
    /// The sandbox node; for `exec`, the command.
    pub node: String,
    /// When it was planned, milliseconds on the run's clock.
    pub planned_ms: u64,
    /// When it began, microseconds on the run's clock; absent: never performed (the run
    /// ended first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_us: Option<u64>,
    /// When it was done (the signal delivered and its effect seen, the server answering, the
    /// promoted node taking a write).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub done_us: Option<u64>,
    /// `done`, `failed` or `not performed`.
    pub outcome: String,
    /// What it did, or why it failed or was not performed.
    pub detail: String,
    /// `exec`: the command's exit status (absent: killed by a signal, or not an `exec`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// `exec`: the first lines of its output (stdout, then stderr).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub output: Vec<String>,
}

impl FaultRecord {
    /// The steps that began more than `threshold_ms` after their planned time (the probe or
    /// the host did not run them on time), with how late, milliseconds.
    pub fn late(&self, threshold_ms: f64) -> Vec<(&FaultEvent, f64)> {
        let late = |e: &FaultEvent| Some(e.at_us?.saturating_sub(e.planned_ms * 1000) as f64 / 1000.0);
        self.events
            .iter()
            .filter_map(|e| late(e).filter(|ms| threshold_ms > 0.0 && *ms > threshold_ms).map(|ms| (e, ms)))
            .collect()
    }
}

impl FaultEvent {
    /// A fault that interrupts writes where it lands (not a start, resume or promote); a
    /// user's command or a manager's switchover starts a failover, which does.
    pub fn disrupts(&self) -> bool {
        matches!(self.action.as_str(), "kill" | "stop" | "pause" | "exec" | "switchover" | "failover")
    }

    /// `kill primary @5.000 s`.
    pub fn label(&self) -> String {
        format!("{} {}", self.action, self.node)
    }
}
