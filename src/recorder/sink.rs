//! The seam between the runner and whatever consumes measurements.

use super::TickRecorder;
use std::time::{Duration, Instant};

/// Receives what clients recorded, once per tick of the run loop. The runner merges its
/// workers' recorders and hands the merged one over; it never builds results itself. A
/// local collector is the sink today; a shard forwarder, a live metrics endpoint or a
/// progress display plugs into the same seam.
pub trait Sink {
    /// All clients are connected; the first event may start at `start`. With a warmup,
    /// ticks are warmup until [`Sink::measuring`] says otherwise (planned: `start + warmup`).
    /// `process_cpu`: CPU time the process has used so far.
    fn started(&mut self, start: Instant, warmup: Duration, process_cpu: Duration);
    /// The warmup ended (after its last tick): measured time, and its ticks and report
    /// windows, start at `from`, a little after the planned end (events in flight finished
    /// first).
    fn measuring(&mut self, _from: Instant) {}
    /// Everything recorded since the previous tick, up to `until`.
    fn tick(&mut self, tick: &Tick<'_>);
    /// The last tick has been handed over: the clients stop and the run's end is read.
    fn stopped(&mut self) {}
}

/// One tick's measurements.
pub struct Tick<'a> {
    pub recorder: &'a TickRecorder,
    /// When the recorders were swapped: the interval covers what was recorded until then.
    pub until: Instant,
    /// When the tick was due (whole seconds from the start; the last one: the end). Decides
    /// warmup, which ends on a tick boundary, however late the swap ran.
    pub due: Instant,
    /// CPU time the fairbench process has used so far.
    pub process_cpu: Duration,
    /// Open loop: events due and not yet started when the tick was taken.
    pub backlog: Option<u64>,
    /// The server's figures read since the previous tick (see runner::sampler), if any.
    pub server: Option<std::collections::BTreeMap<String, f64>>,
}
