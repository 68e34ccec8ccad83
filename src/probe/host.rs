//! What a probe is lent, and what it hands back. A `--with` workload runs as a normal run
//! session, which lives in the measure room (`measure::measure_probe` lends it as a
//! [`Host`]); the probe's notices go to whoever watches the measurement. The probe room
//! never names the measure room: it comes in as a [`Host`].

use super::discover::NotRead;
use super::ProbeError;
use crate::db::{Database, TargetUrl};
use crate::model::{ResultDocument, RunRequest};
use std::path::PathBuf;
use std::sync::Arc;

/// The run session and the notices a probe borrows from whoever runs it.
pub trait Host {
    /// The host's own error: a probe's failures become one, the workload's stay as they are.
    type Error: From<ProbeError>;

    /// The `--with` workload measured as a run against `db` (the nodes `urls` as one): its
    /// record closed (the probe completes its result, its own figures in it), and where the
    /// result goes.
    fn measure<D: Database>(
        &self,
        db: Arc<D>,
        request: &RunRequest,
        urls: &[TargetUrl],
    ) -> Result<(crate::result::Closed, PathBuf), Self::Error>;

    /// Where a result goes when the request names no file (`name`: `probe-failover`, ...).
    fn default_out(&self, name: &str) -> PathBuf;

    /// Something the user should hear while the probe runs.
    fn notice(&self, notice: Notice<'_>);
}

/// What a probe tells as it goes.
pub enum Notice<'a> {
    /// A failover probe starts writing to `writers` (in this order on each reconnect), and
    /// reads the role of them and of `others` more nodes.
    FailoverStarts { rate: f64, writers: &'a [String], others: usize, role_poll_ms: f64, run_id: i64 },
    /// A lag probe starts its heartbeats on `primary`.
    LagStarts { rate: f64, primary: &'a str, poll_ms: f64, run_id: i64 },
    /// A node the cluster names (`what`: its name and who named it) is read too.
    AlsoReading { what: &'a str },
    /// A node the cluster names is not read.
    NotReading { what: &'a str, why: &'a NotRead },
    /// The files streamed beside the result stopped at a write error (the result has every
    /// entry).
    StreamError { error: &'a str },
}

impl std::fmt::Display for Notice<'_> {
    /// The notice's one line.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Notice::FailoverStarts { rate, writers, others, role_poll_ms, run_id } => {
                let others = match others {
                    0 => String::new(),
                    n => format!(" and {n} other node(s) of the cluster"),
                };
                write!(
                    f,
                    "probe failover: one write every {:.1} ms to {} (in this order on each reconnect), the role of every target{others} read every {role_poll_ms} ms, run id {run_id}",
                    1000.0 / rate,
                    writers.join(", "),
                )
            }
            Notice::LagStarts { rate, primary, poll_ms, run_id } => write!(
                f,
                "probe lag: a heartbeat every {:.1} ms on {primary}, each replica read every {poll_ms} ms, run id {run_id}",
                1000.0 / rate
            ),
            Notice::AlsoReading { what } => write!(f, "probe failover: also reading {what}, a node the cluster names"),
            Notice::NotReading { what, why } => {
                write!(f, "probe failover: not reading {what}: {why} (give a node with --node)")
            }
            Notice::StreamError { error } => {
                write!(f, "the streamed files stopped at a write error ({error}); the result has every entry")
            }
        }
    }
}

/// A probe's finished result (not yet saved) and where it goes.
pub struct Probed {
    pub doc: ResultDocument,
    pub path: PathBuf,
    /// The workload beside the probe (its options say how to print the result).
    pub workload: Option<RunRequest>,
}
