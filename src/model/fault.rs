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
    /// `exec`: the first and last lines of its output (stdout, then stderr; a line says how many were left out between).
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

/// Who ended a failover's outage, which decides what its downtime measures and what it may
/// be ranked against.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DowntimeOrigin {
    /// This run's own `promote` step made the new primary: the downtime is the schedule's
    /// (when the step was planned, plus fairbench's reaction), not a failover anything detected.
    Scheduled,
    /// A step of this run asked the cluster to fail over (`exec`, a manager's `switchover` or
    /// `failover`): the cluster chose the new primary and when, but no failure was detected.
    Requested,
    /// No step of this run promoted a node or asked for a failover: the cluster or its
    /// manager detected the failure by itself.
    Detected,
}

impl DowntimeOrigin {
    pub fn name(self) -> &'static str {
        match self {
            DowntimeOrigin::Scheduled => "scheduled",
            DowntimeOrigin::Requested => "requested",
            DowntimeOrigin::Detected => "detected",
        }
    }

    /// Whether a downtime of this origin answers a claim on failover time: a scheduled one
    /// measures the schedule.
    pub fn measures_failover(self) -> bool {
        self != DowntimeOrigin::Scheduled
    }
}

impl FaultRecord {
    /// How the outage `from_us..to_us` (`None`: still open) ended: a `promote` step performed
    /// within it scheduled it; else a step asking for a failover performed before its end
    /// requested it; else it was detected. With the step that decided.
    pub fn origin(&self, from_us: u64, to_us: Option<u64>) -> (DowntimeOrigin, Option<&FaultEvent>) {
        let end = to_us.unwrap_or(u64::MAX);
        let done_by =
            |e: &FaultEvent, from: u64| e.outcome == "done" && e.at_us.is_some_and(|at| at >= from && at <= end);
        if let Some(e) = self.events.iter().find(|e| e.action == "promote" && done_by(e, from_us)) {
            return (DowntimeOrigin::Scheduled, Some(e));
        }
        let asks = |e: &&FaultEvent| matches!(e.action.as_str(), "exec" | "switchover" | "failover") && done_by(e, 0);
        match self.events.iter().filter(asks).last() {
            Some(e) => (DowntimeOrigin::Requested, Some(e)),
            None => (DowntimeOrigin::Detected, None),
        }
    }
}

/// The origin of a failover probe's downtime (its longest outage), with the step that
/// decided it; none without an outage. A run without faults detected its own.
pub fn downtime_origin<'a>(
    f: &crate::model::ha::FailoverRecord,
    faults: Option<&'a FaultRecord>,
) -> Option<(DowntimeOrigin, Option<&'a FaultEvent>)> {
    let longest = f.outages.iter().max_by(|a, b| a.duration_ms.total_cmp(&b.duration_ms))?;
    Some(match faults {
        Some(r) => r.origin(longest.from_us, longest.to_us),
        None => (DowntimeOrigin::Detected, None),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(action: &str, at_ms: u64, outcome: &str) -> FaultEvent {
        FaultEvent {
            action: action.into(),
            node: "replica1".into(),
            planned_ms: at_ms,
            at_us: Some(at_ms * 1000),
            done_us: Some(at_ms * 1000 + 10_000),
            outcome: outcome.into(),
            detail: String::new(),
            exit_code: None,
            output: vec![],
        }
    }

    fn record(events: Vec<FaultEvent>) -> FaultRecord {
        FaultRecord { sandbox: "ha".into(), schedule: String::new(), events }
    }

    #[test]
    fn a_promote_inside_the_outage_schedules_it_and_nothing_else_does() {
        let r = record(vec![step("kill", 3000, "done"), step("promote", 4000, "done")]);
        assert_eq!(r.origin(2_950_000, Some(4_100_000)).0, DowntimeOrigin::Scheduled);
        // A promote before the outage, or one that failed, did not end it.
        assert_eq!(r.origin(5_000_000, Some(6_000_000)).0, DowntimeOrigin::Detected);
        let failed = record(vec![step("kill", 3000, "done"), step("promote", 4000, "failed")]);
        assert_eq!(failed.origin(2_950_000, Some(9_000_000)).0, DowntimeOrigin::Detected);
        let asked = record(vec![step("exec", 4000, "done")]);
        assert_eq!(asked.origin(4_100_000, Some(9_000_000)).0, DowntimeOrigin::Requested);
        // An open outage with a promote in it is still the schedule's.
        assert_eq!(r.origin(2_950_000, None).0, DowntimeOrigin::Scheduled);
    }
}
