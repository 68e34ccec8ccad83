//! A validated run: what the flags mean once checked, as plain data (no I/O).

use crate::random::DistributionSpec;
use crate::workload::{OltpOptions, Workload};
use serde::Serialize;
use std::time::Duration;

/// How load is offered.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "model")]
pub enum LoopModel {
    /// Each client sends its next event as soon as the previous one ends (sysbench without
    /// --rate). Latency is service time at maximum throughput: stalls that stop a client
    /// also stop it from sending, so percentiles understate what waiting users would see.
    Closed,
    /// Events arrive on a schedule of their own, whatever the server does; latency is
    /// measured from each event's intended start (no coordinated omission).
    Open {
        /// Events per second over all clients.
        rate: f64,
        arrival: Arrival,
        /// Most events allowed to be due but not yet started; older ones are dropped
        /// (counted) so that a recovered server is not hit by an unbounded burst.
        max_backlog: u64,
    },
}

/// Spacing of intended start times in an open loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Arrival {
    /// Exactly 1/rate apart.
    Fixed,
    /// Exponentially distributed gaps with mean 1/rate (a Poisson process), seeded by --rand-seed.
    Poisson,
}

impl LoopModel {
    pub fn name(&self) -> &'static str {
        match self {
            LoopModel::Closed => "closed",
            LoopModel::Open { .. } => "open",
        }
    }

    pub fn describe(&self) -> String {
        match self {
            LoopModel::Closed => "closed loop (each client sends its next event when the previous one ends; latency = service time at maximum throughput)".into(),
            LoopModel::Open { rate, arrival, max_backlog } => format!(
                "open loop at {rate} events/s, {} arrivals (latency measured from each event's intended start; service time reported separately; backlog bounded at {max_backlog} events)",
                match arrival {
                    Arrival::Fixed => "fixed-interval",
                    Arrival::Poisson => "Poisson",
                }
            ),
        }
    }

    pub fn is_open(&self) -> bool {
        matches!(self, LoopModel::Open { .. })
    }
}

/// When a run ends: whichever comes first.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct StopCondition {
    /// Measured seconds (after warmup); `None`: no time limit.
    #[serde(rename = "time_s", serialize_with = "ser_secs")]
    pub time: Option<Duration>,
    /// Events after warmup, over all clients; `None`: no limit.
    pub events: Option<u64>,
}

fn ser_secs<S: serde::Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_some(&d.as_secs_f64()),
        None => s.serialize_none(),
    }
}

/// Everything `run` needs, validated.
#[derive(Clone, Debug)]
pub struct RunPlan {
    pub workload: Workload,
    pub oltp: OltpOptions,
    pub distribution: DistributionSpec,
    pub threads: u32,
    pub stop: StopCondition,
    /// Seconds run before statistics start (whole seconds: the timeline resolution).
    pub warmup_s: u32,
    /// Print a line every N seconds; `None`: no interval lines.
    pub report_interval_s: Option<u32>,
    /// The percentile of the report table's P columns.
    pub percentile: f64,
    /// Further percentiles reported for every class.
    pub percentiles: Vec<f64>,
    /// Errors that roll back and retry the event.
    pub retry: crate::model::RetryPolicy,
    /// Seed of every client's random stream (client i uses seed and i).
    pub rand_seed: u64,
    pub loop_model: LoopModel,
    /// Seconds a client keeps trying to reconnect after losing its connection.
    pub reconnect_timeout_s: u32,
}

impl RunPlan {
    pub fn validate(&self) -> Result<(), String> {
        self.oltp.validate()?;
        self.distribution.validate()?;
        if self.threads == 0 {
            return Err("--threads must be at least 1".into());
        }
        if !(self.percentile > 0.0 && self.percentile <= 100.0) {
            return Err("--percentile must be in (0, 100]".into());
        }
        if let Some(p) = self.percentiles.iter().find(|p| !(**p > 0.0 && **p <= 100.0)) {
            return Err(format!("--percentiles: {p} is not in (0, 100]"));
        }
        if let LoopModel::Open { rate, max_backlog, .. } = self.loop_model {
            if !(rate > 0.0 && rate.is_finite()) {
                return Err("--rate must be a positive number of events per second".into());
            }
            if max_backlog == 0 {
                return Err("--max-backlog must be at least 1 event".into());
            }
        }
        if self.report_interval_s == Some(0) {
            return Err("--report-interval must be at least 1 second (omit it for no interval lines)".into());
        }
        Ok(())
    }
}
