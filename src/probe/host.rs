//! What the command surface lends a probe, and what a probe hands back. A `--with` workload
//! runs as a normal run session, which lives with the commands; the probe's notices are
//! printed there too. The probe room never names the commands: they come in as a [`Host`].

use super::discover::NotRead;
use super::ProbeError;
use crate::db::{Database, TargetUrl};
use crate::model::{ResultDocument, RunRequest};
use std::path::PathBuf;
use std::sync::Arc;

/// The run session and the printing a probe borrows from whoever runs it.
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

/// A probe's finished result (not yet saved) and where it goes.
pub struct Probed {
    pub doc: ResultDocument,
    pub path: PathBuf,
    /// The workload beside the probe (its options say how to print the result).
    pub workload: Option<RunRequest>,
}
