//! The probe watching itself: a probe that does not run (host load, the process stopped)
//! sees nothing, so it must know when it did not run. A thread of its own wakes every few
//! milliseconds and records each time it woke much later than it asked; the writer's pacer
//! records each slot that began much later than its time. Both become the stalls of
//! [`ProbeTiming`], which the verdict and the audit read.

use super::{Clock, Pacer};
use crate::model::ha_node::{merge_stalls, ProbeStall, ProbeTiming};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often the watching thread wakes.
const TICK: Duration = Duration::from_millis(5);

/// The lateness that makes a stall: two slots, and at least 100 ms (a busy host delays a
/// thread's wake by tens of milliseconds without the probe losing sight of anything).
pub fn threshold(rate: f64) -> Duration {
    Duration::from_secs_f64(2.0 / rate).max(Duration::from_millis(100))
}

/// The watching thread, running until [`StallWatch::finish`].
pub struct StallWatch {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Vec<ProbeStall>>>,
}

impl StallWatch {
    pub fn start(clock: Clock, threshold: Duration) -> StallWatch {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("fairbench-probe-clock".into())
            .spawn(move || watch(clock, threshold, &flag))
            .ok();
        StallWatch { stop, thread }
    }

    /// The stalls seen (none if the thread could not be started).
    pub fn finish(mut self) -> Vec<ProbeStall> {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.take().and_then(|t| t.join().ok()).unwrap_or_default()
    }
}

impl Drop for StallWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

fn watch(clock: Clock, threshold: Duration, stop: &AtomicBool) -> Vec<ProbeStall> {
    let mut out = Vec::new();
    let mut asked = Instant::now();
    while !stop.load(Ordering::SeqCst) {
        std::thread::sleep(TICK);
        let now = Instant::now();
        let woke_late = now.saturating_duration_since(asked + TICK);
        if woke_late > threshold {
            out.push(ProbeStall { from_us: clock.us(asked), to_us: clock.us(now) });
        }
        asked = now;
    }
    out
}

/// The probe's timing: the watcher's stalls with the pacer's late slots, merged.
pub fn timing(watched: Vec<ProbeStall>, pacer: &Pacer, clock: &Clock, threshold: Duration) -> ProbeTiming {
    let late = pacer.late_spans.iter().map(|(from, to)| ProbeStall { from_us: clock.us(*from), to_us: clock.us(*to) });
    ProbeTiming {
        stalls: merge_stalls(watched.into_iter().chain(late).collect()),
        threshold_ms: threshold.as_secs_f64() * 1000.0,
        dropped_slots: pacer.skipped,
        max_slot_delay_ms: pacer.delays.max_ns() as f64 / 1e6,
    }
}
