//! The same outage seen twice: by the failover probe (its writer's longest span without a
//! write acknowledged on a primary) and by the workload run beside it (its longest stall:
//! the longest event, or the longest span of intervals in which no event completed). The
//! two agree when they differ by no more than the coarser of their resolutions.

use super::ResultDocument;

/// Both views of the longest outage, milliseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct OutageViews {
    /// The probe's downtime (its longest outage).
    pub probe_ms: f64,
    /// The probe's resolution: one attempt per slot.
    pub probe_resolution_ms: f64,
    /// The workload's longest single event.
    pub longest_event_ms: f64,
    /// The workload's longest span of measured intervals in which no event completed.
    pub no_event_ms: f64,
    /// The workload's resolution for `no_event_ms`: its interval length.
    pub interval_ms: f64,
    /// Its events that ended in an error (retried or not).
    pub errors: u64,
    /// When the workload reconnected: its clients' longest wait between attempts (a client
    /// sees the writer back up to this late).
    pub reconnect_step_ms: f64,
}

impl OutageViews {
    /// The workload's stall: its longest event or its longest span without one.
    pub fn workload_ms(&self) -> f64 {
        self.longest_event_ms.max(self.no_event_ms)
    }

    /// How far apart the two views may be and still agree: the probe's outage is bounded by
    /// its slots at both ends (the last write before may be a slot early, the first after a
    /// slot late), the workload's reconnecting clients see the writer back up to a backoff
    /// step late, and a span without events is counted in whole intervals.
    pub fn tolerance_ms(&self) -> f64 {
        let interval = if self.no_event_ms > self.longest_event_ms { self.interval_ms } else { 0.0 };
        (2.0 * self.probe_resolution_ms + self.reconnect_step_ms).max(interval)
    }

    /// Workload minus probe, milliseconds.
    pub fn difference_ms(&self) -> f64 {
        self.workload_ms() - self.probe_ms
    }

    pub fn agree(&self) -> bool {
        self.difference_ms().abs() <= self.tolerance_ms()
    }
}

impl ResultDocument {
    /// A workload run beside a failover probe that saw an outage: both views of it.
    pub fn outage_views(&self) -> Option<OutageViews> {
        let ha = self.ha.as_ref().filter(|h| h.load.is_some())?;
        let f = ha.failover.as_ref().filter(|f| !f.outages.is_empty())?;
        let measured: Vec<_> = self.intervals.iter().filter(|i| !i.warmup).collect();
        let stall = Stall::of(&measured);
        Some(OutageViews {
            probe_ms: f.downtime_ms,
            probe_resolution_ms: 1000.0 / f.rate,
            longest_event_ms: stall.longest_event_ms,
            no_event_ms: stall.no_event_ms,
            interval_ms: stall.interval_ms,
            errors: stall.errors,
            reconnect_step_ms: match (self.errors.reconnects, &self.conditions.run.reconnect) {
                (1.., Some(r)) => r.backoff_max_ms as f64,
                _ => 0.0,
            },
        })
    }
}

/// A workload's stall over some intervals: its longest event (an event caught by an outage
/// is retried to its end, its latency spanning what it waited) and its longest span of whole
/// intervals without a completed event, in milliseconds; its errors.
struct Stall {
    longest_event_ms: f64,
    no_event_ms: f64,
    interval_ms: f64,
    errors: u64,
}

impl Stall {
    fn of(intervals: &[&crate::model::IntervalStats]) -> Stall {
        let (mut run, mut no_event_ms) = (0.0f64, 0.0f64);
        for i in intervals {
            run = if i.event.count == 0 { run + i.duration_s * 1000.0 } else { 0.0 };
            no_event_ms = no_event_ms.max(run);
        }
        Stall {
            longest_event_ms: intervals.iter().map(|i| i.event.max_us / 1000.0).fold(0.0, f64::max),
            no_event_ms,
            interval_ms: intervals.first().map_or(1000.0, |i| i.duration_s * 1000.0),
            errors: intervals.iter().map(|i| i.errors).sum(),
        }
    }
}

/// What a workload saw after a fault performed on its own clock (`run --fault`): from the
/// fault to the next fault that disrupts writes (or the run's end).
#[derive(Clone, Debug, PartialEq)]
pub struct FaultStall {
    /// `kill primary`.
    pub fault: String,
    /// When the fault began, seconds on the run's clock.
    pub at_s: f64,
    /// The longest event that ended in the window (an event caught by the fault waits
    /// through the reconnect and its retry: its latency spans the outage it saw).
    pub longest_event_ms: f64,
    /// The longest span of whole intervals in the window in which no event completed.
    pub no_event_ms: f64,
    pub interval_ms: f64,
    pub errors: u64,
    pub reconnects: u64,
    pub reconnect_failures: u64,
}

impl FaultStall {
    /// The workload's stall after the fault: its longest event or its longest span without one.
    pub fn stall_ms(&self) -> f64 {
        self.longest_event_ms.max(self.no_event_ms)
    }
}

impl ResultDocument {
    /// Each fault that disrupts writes, performed on the run's own clock (no probe), with what
    /// the workload's timeline shows after it.
    pub fn fault_stalls(&self) -> Vec<FaultStall> {
        let Some(f) = self.faults.as_ref().filter(|_| self.ha.is_none()) else { return vec![] };
        let begun: Vec<_> = f.events.iter().filter(|e| e.disrupts()).filter_map(|e| Some((e, e.at_us?))).collect();
        let end = self.intervals.last().map_or(0.0, |i| i.from_s + i.duration_s);
        let mut out = Vec::new();
        for (n, (event, at_us)) in begun.iter().enumerate() {
            let from = *at_us as f64 / 1e6;
            let to = begun.get(n + 1).map_or(end, |(_, next)| *next as f64 / 1e6);
            let window: Vec<_> =
                self.intervals.iter().filter(|i| i.from_s + i.duration_s > from && i.from_s < to).collect();
            let stall = Stall::of(&window);
            out.push(FaultStall {
                fault: event.label(),
                at_s: from,
                longest_event_ms: stall.longest_event_ms,
                no_event_ms: stall.no_event_ms,
                interval_ms: stall.interval_ms,
                errors: stall.errors,
                reconnects: window.iter().map(|i| i.reconnects).sum(),
                reconnect_failures: window.iter().map(|i| i.reconnect_failures).sum(),
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn views(probe_ms: f64, event_ms: f64, no_event_ms: f64) -> OutageViews {
        OutageViews {
            probe_ms,
            probe_resolution_ms: 50.0,
            longest_event_ms: event_ms,
            no_event_ms,
            interval_ms: 1000.0,
            errors: 0,
            reconnect_step_ms: 0.0,
        }
    }

    #[test]
    fn the_views_agree_within_the_coarser_resolution() {
        // A workload event held through the whole outage: exact on its side, the slot on the probe's.
        assert!(views(2205.0, 2240.0, 1000.0).agree());
        let far = views(101.0, 2430.0, 2000.0);
        assert!(!far.agree());
        assert_eq!((far.workload_ms(), far.difference_ms(), far.tolerance_ms()), (2430.0, 2329.0, 100.0));
        assert!(views(6347.0, 6292.0, 5995.0).agree(), "a slot at each end");
        assert!(!views(6347.0, 6240.0, 5995.0).agree());
        // Only whole seconds without events: a second's resolution.
        assert!(views(1800.0, 300.0, 2000.0).agree());
        // Reconnecting clients see the writer back up to a backoff step late.
        let mut reconnected = views(1056.0, 1183.0, 995.0);
        assert!(!reconnected.agree());
        reconnected.reconnect_step_ms = 50.0;
        assert!(reconnected.agree() && reconnected.tolerance_ms() == 150.0);
    }
}
