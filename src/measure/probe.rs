//! A probe request measured: the probe runs in its room ([`crate::probe::run`]) and its
//! `--with` workload here, in a run session of this room, as any run is: the probe is lent
//! this room as its [`Host`]. What the probe tells goes to the [`Observer`], as a run's
//! lines do.

use super::{default_out, measure_run, Observer};
use crate::db::{Database, TargetUrl};
use crate::model::{ProbeRequest, RunRequest};
use crate::probe::{Host, Notice, Probed};
use std::path::PathBuf;
use std::sync::Arc;

/// A failover or lag probe run from `request`, beside its workload if it has one; its
/// result finished, not yet saved.
pub fn measure_probe<O: Observer>(request: &ProbeRequest, observer: &O) -> Result<Probed, O::Error> {
    crate::probe::run(request, &Beside(observer))
}

/// This room lent to a probe: the workload's run session, the default result file, and
/// the observer for its notices.
struct Beside<'a, O>(&'a O);

impl<O: Observer> Host for Beside<'_, O> {
    type Error = O::Error;

    fn measure<D: Database>(
        &self,
        db: Arc<D>,
        request: &RunRequest,
        urls: &[TargetUrl],
    ) -> Result<(crate::result::Closed, PathBuf), O::Error> {
        measure_run(db, request, urls, request.bench, request.out.as_deref(), self.0)
    }

    fn default_out(&self, name: &str) -> PathBuf {
        default_out(name)
    }

    fn notice(&self, notice: Notice<'_>) {
        match notice {
            Notice::StreamError { .. } => self.0.warn(format_args!("{notice}")),
            _ => self.0.say(format_args!("{notice}")),
        }
    }
}
