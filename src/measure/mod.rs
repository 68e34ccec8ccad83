//! A [`RunRequest`] measured end to end: the dataset checked (bench prepares it), the run
//! planned and announced, its phases measured through the collector while its record
//! streams, and the record closed ([`crate::result::Closed`]) for the result to be completed.
//! A probe request is measured here too ([`measure_probe`]): the probe in its room, its
//! `--with` workload in this room's run session.
//! What a run says as it goes (the announce line, interval lines, the live status, warnings)
//! goes through an [`Observer`], which the command surface implements: this room prints
//! nothing itself.

mod dataset;
mod error;
mod faults;
pub mod hints;
mod out;
mod probe;
mod session;
mod shard;

pub use error::{DatasetError, Refusal};
pub use out::{check_out, default_out};
pub use probe::measure_probe;
pub use session::{Phases, Session};

use crate::collector::Progress;
use crate::db::{Database, TargetUrl};
use crate::metrics::LiveMetrics;
use crate::model::{RunRequest, WorkloadRequest};
use crate::plan::{RunPlan, WorkloadPlan};
use std::path::PathBuf;
use std::sync::Arc;

/// The errors a measurement passes on: its own refusals and those of the rooms it drives.
pub trait Failure:
    std::fmt::Display
    + From<Refusal>
    + From<DatasetError>
    + From<crate::plan::PlanError>
    + From<crate::runner::RunError>
    + From<crate::db::DbError>
    + From<crate::model::ResultFileError>
    + From<crate::result::BuildError>
    + From<crate::timeline::record::ReadRecordError>
    + From<crate::probe::ProbeError>
    + From<crate::shard::BarrierError>
    + From<crate::metrics::MetricsError>
    + From<crate::workload::file::LoadError>
    + From<crate::workload::OptionsError>
{
}

/// Whoever watches a measurement: it hears what the run says, draws its progress, and
/// prepares missing tables for `bench` (prepare's progress is its to show).
pub trait Observer: Sync {
    type Error: Failure;

    /// An informational line (the announce line, notes).
    fn say(&self, line: std::fmt::Arguments<'_>);
    /// A warning: the run goes on.
    fn warn(&self, line: std::fmt::Arguments<'_>);
    /// The job will measure `parts` phases, unless it already knows how many.
    fn expect_parts(&self, parts: u32);
    /// A repeat of the run begins (said, and the status line's label).
    fn repeat(&self, line: std::fmt::Arguments<'_>);
    /// A measured phase begins: `warmup_s` then `time` (none: limited by events only).
    fn part_starts(&self, warmup_s: u32, time: Option<std::time::Duration>);
    /// The phase is over (measured, interrupted or failed).
    fn part_ends(&self);
    /// What reads the run's published progress: interval lines, the status line, and each
    /// interval to `metrics` (`--metrics-listen`).
    fn progress(
        &self,
        request: &RunRequest,
        plan: &RunPlan,
        metrics: Option<Arc<LiveMetrics>>,
    ) -> Box<dyn Progress + Send>;
    /// `bench`: the workload's tables, all missing, prepared.
    fn prepare<D: Database>(
        &self,
        db: Arc<D>,
        request: &RunRequest,
        plan: &RunPlan,
        target: &TargetUrl,
    ) -> Result<(), Self::Error>;
}

/// A run up to its closed record (its result not yet completed nor saved) and where the
/// result goes (`out`, else the default file). `db`: the targets as one.
pub fn measure_run<D: Database, O: Observer>(
    db: Arc<D>,
    request: &RunRequest,
    targets: &[TargetUrl],
    bench: bool,
    out: Option<&std::path::Path>,
    observer: &O,
) -> Result<(crate::result::Closed, PathBuf), O::Error> {
    let mut session = Session::open(db, request, targets, bench, out, observer)?;
    let repeats = session.plan().repeats;
    observer.expect_parts(repeats);
    for repeat in 1..=repeats {
        if repeats > 1 {
            observer.repeat(format_args!("repeat {repeat} of {repeats}"));
        }
        if !session.measure_next()? {
            break; // interrupted or failed: what was measured is kept
        }
    }
    Box::new(session).finish()
}

/// The workload a request names: a built-in, or a file compiled for `dialect`.
pub fn workload_plan<E>(args: &WorkloadRequest, dialect: crate::db::Dialect) -> Result<WorkloadPlan, E>
where
    E: Failure,
{
    if !crate::workload::file::is_file(&args.workload) {
        return Ok(args.builtin(dialect)?);
    }
    let f = crate::workload::file::load(std::path::Path::new(&args.workload), dialect, &args.set)?;
    Ok(WorkloadPlan::File(Arc::new(f)))
}
