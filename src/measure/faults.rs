//! `--fault` on run and bench: the schedule checked before anything starts (as a probe's
//! is, [`crate::probe::faults`]), and performed on the run's own clock (the runner's start,
//! as the collector publishes it), so that the faults and the run's timeline share one zero.

use super::{Failure, Refusal};
use crate::collector::{Progress, Window};
use crate::db::TargetUrl;
use crate::model::fault::FaultRecord;
use crate::model::request::FaultRequest;
use crate::model::IntervalStats;
use crate::plan::RunPlan;
use crate::recorder::classes::ClassHistograms;
use crate::sandbox::fault::{self, Performer, Schedule};
use std::time::{Duration, Instant};

/// A run's schedule: one measured phase with a known end (warmup and --time), one process.
pub(super) fn for_run<E: Failure>(
    args: &FaultRequest,
    plan: &RunPlan,
    first: &TargetUrl,
) -> Result<Option<Schedule>, E> {
    if args.fault.is_none() {
        return Ok(None);
    }
    if plan.repeats > 1 {
        return Err(Refusal::FaultWithRepeat.into());
    }
    if plan.shard.is_some() {
        return Err(Refusal::FaultOnShard.into());
    }
    let Some(time) = plan.stop.time else {
        return Err(Refusal::FaultWithoutTime.into());
    };
    Ok(crate::probe::faults::schedule(args, first, Duration::from_secs(u64::from(plan.warmup_s)) + time)?)
}

/// A reader of the run's published progress that starts the schedule when the run starts
/// (its times count from the runner's start, warmup included) and passes everything on to
/// `inner`.
pub(super) struct FaultReader<'a> {
    inner: &'a mut (dyn Progress + Send),
    /// Where a schedule that could not start is told.
    warn: &'a (dyn Fn(std::fmt::Arguments<'_>) + Sync),
    schedule: Option<Schedule>,
    performer: Option<Performer>,
}

impl<'a> FaultReader<'a> {
    pub fn new(
        inner: &'a mut (dyn Progress + Send),
        schedule: Option<Schedule>,
        warn: &'a (dyn Fn(std::fmt::Arguments<'_>) + Sync),
    ) -> Self {
        FaultReader { inner, warn, schedule, performer: None }
    }

    /// What was performed (steps not reached when the run ended: not performed).
    pub fn finish(self) -> Option<FaultRecord> {
        self.performer.map(Performer::finish)
    }
}

impl Progress for FaultReader<'_> {
    fn started(&mut self, at: Instant) {
        if let Some(s) = self.schedule.take() {
            // The run is under way: it goes on without its faults rather than lose its numbers.
            match fault::perform(s, at) {
                Ok(p) => self.performer = Some(p),
                Err(e) => (self.warn)(format_args!("no fault was performed: {e}")),
            }
        }
        self.inner.started(at);
    }

    fn second(&mut self, s: &IntervalStats, h: &ClassHistograms) {
        self.inner.second(s, h);
    }

    fn wants_seconds(&self) -> bool {
        self.inner.wants_seconds()
    }

    fn window(&mut self, w: &Window<'_>) {
        self.inner.window(w);
    }

    fn stopped(&mut self) {
        self.inner.stopped();
    }
}
