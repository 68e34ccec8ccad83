//! What a probe was asked to do, as typed data: which probe (failover or lag, and on which
//! nodes), its rate and duration, its faults, where its result goes, and the workload beside
//! it (`--with`, already a [`RunRequest`]). The command line becomes a [`ProbeRequest`] once
//! (src/cli); a study's probe cell is one too. Durations are seconds, as in [`RunRequest`].

use super::request::{ConnectRequest, FaultRequest, RunRequest};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// `probe failover|lag|verify`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProbeRequest {
    Failover(FailoverRequest),
    Lag(LagRequest),
    Verify(VerifyRequest),
}

/// What every probe that writes shares.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProbeOptions {
    /// Probe writes (attempts or heartbeats) per second.
    pub rate: f64,
    /// Seconds to probe (with a workload: until the workload ends).
    pub time_s: f64,
    /// Seconds an attempt (connect, or one write or read) may take.
    pub attempt_timeout_s: f64,
    /// The result file (None: `probe-<kind>-<time>.json` in fairbench-results).
    pub out: Option<PathBuf>,
    /// The password's file for URLs without one (the password itself is never kept).
    pub password_file: Option<PathBuf>,
    pub connect: ConnectRequest,
    pub faults: FaultRequest,
    pub verbose: bool,
    /// The workload run beside the probe, on its first node, parsed from `--with`.
    pub with: Option<RunRequest>,
    /// `--with` as written: what the result says ran beside the probe (`ha.load`).
    pub with_text: Option<String>,
}

impl ProbeOptions {
    pub fn time(&self) -> Duration {
        Duration::from_secs_f64(self.time_s)
    }

    pub fn attempt_timeout(&self) -> Duration {
        Duration::from_secs_f64(self.attempt_timeout_s)
    }
}

/// `probe failover`: a writer through a failover.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FailoverRequest {
    /// The writer's endpoints, tried in this order on every reconnect.
    pub targets: Vec<String>,
    /// Nodes reached directly, `[NAME=]URL`.
    pub nodes: Vec<String>,
    /// Patroni's REST API, whose members are read as nodes.
    pub patroni_api: Option<String>,
    /// Milliseconds between readings of every node's role.
    pub role_poll_ms: f64,
    /// Seconds the check after the run waits at most for every node to settle.
    pub settle_timeout_s: f64,
    pub common: ProbeOptions,
}

/// `probe lag`: heartbeats on a primary, read on its replicas.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LagRequest {
    pub primary: String,
    pub replicas: Vec<String>,
    /// Milliseconds between reads of each replica.
    pub poll_ms: f64,
    /// Seconds replicas are still read after the last heartbeat.
    pub drain_s: f64,
    pub common: ProbeOptions,
}

/// `probe verify`: a saved failover probe's rows looked up again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct VerifyRequest {
    pub result: PathBuf,
    /// The nodes to look on (empty: every node the probe wrote to).
    pub targets: Vec<String>,
    pub password_file: Option<PathBuf>,
    /// Seconds to wait at most for every node to settle.
    pub settle_timeout_s: f64,
    pub connect: ConnectRequest,
}

impl ProbeRequest {
    /// The request as a result keeps it: every URL (targets, nodes, `--with`'s) without its
    /// password.
    pub fn redacted(&self, redact: impl Fn(&str) -> String + Copy) -> Self {
        let urls = |v: &[String]| -> Vec<String> { v.iter().map(|u| redact(u)).collect() };
        let common = |c: &ProbeOptions| ProbeOptions {
            with: c.with.as_ref().map(|w| w.redacted(redact)),
            with_text: c.with_text.as_ref().map(|t| redact(t)),
            ..c.clone()
        };
        match self {
            ProbeRequest::Failover(f) => ProbeRequest::Failover(FailoverRequest {
                targets: urls(&f.targets),
                nodes: urls(&f.nodes),
                common: common(&f.common),
                ..f.clone()
            }),
            ProbeRequest::Lag(l) => ProbeRequest::Lag(LagRequest {
                primary: redact(&l.primary),
                replicas: urls(&l.replicas),
                common: common(&l.common),
                ..l.clone()
            }),
            ProbeRequest::Verify(v) => ProbeRequest::Verify(VerifyRequest { targets: urls(&v.targets), ..v.clone() }),
        }
    }

    /// The options of a probe that writes (None: `verify`).
    pub fn common(&self) -> Option<&ProbeOptions> {
        match self {
            ProbeRequest::Failover(f) => Some(&f.common),
            ProbeRequest::Lag(l) => Some(&l.common),
            ProbeRequest::Verify(_) => None,
        }
    }

    pub fn common_mut(&mut self) -> Option<&mut ProbeOptions> {
        match self {
            ProbeRequest::Failover(f) => Some(&mut f.common),
            ProbeRequest::Lag(l) => Some(&mut l.common),
            ProbeRequest::Verify(_) => None,
        }
    }
}
