//! The warmup's end as a boundary between events. When the warmup ends, clients start no
//! new event; once the events in flight have finished, the measuring thread ends the
//! warmup's totals, reads the server's counters and opens the measured phase. The counters
//! and the counted events then describe the same statements, with no event on both sides.
//! After the gate opens a client pays one relaxed load per event.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use tokio::sync::watch;

pub struct WarmupGate {
    /// Set when the measured phase has begun: every event from then on is measured.
    measuring: AtomicBool,
    /// Set when the warmup ends: no warmup event starts any more.
    closing: AtomicBool,
    /// Clients inside a warmup event.
    busy: AtomicU32,
    /// Wakes the clients waiting at the closed gate (when it opens, or the run stops).
    woken: watch::Sender<()>,
}

/// What a client may do with the event it is about to start.
pub enum GatePass<'a> {
    /// Run it as a measured event.
    Measured,
    /// Run it as a warmup event; the gate waits for it while the guard lives.
    Warmup(#[allow(dead_code)] Busy<'a>),
    /// The warmup has ended: wait for the measured phase ([`WarmupGate::wait`]).
    Closed,
}

/// A warmup event in flight.
pub struct Busy<'a>(&'a AtomicU32);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl WarmupGate {
    /// Measured from the start when there is no warmup.
    pub fn new(warmup: bool) -> Self {
        WarmupGate {
            measuring: AtomicBool::new(!warmup),
            closing: AtomicBool::new(false),
            busy: AtomicU32::new(0),
            woken: watch::channel(()).0,
        }
    }

    #[inline]
    pub fn enter(&self) -> GatePass<'_> {
        if self.measuring.load(Ordering::Acquire) {
            return GatePass::Measured;
        }
        // Counted before `closing` is read, and `close` sets it before reading the count
        // (both SeqCst): either the measuring thread waits for this event, or the event
        // does not start.
        self.busy.fetch_add(1, Ordering::SeqCst);
        if self.closing.load(Ordering::SeqCst) {
            self.busy.fetch_sub(1, Ordering::SeqCst);
            return GatePass::Closed;
        }
        GatePass::Warmup(Busy(&self.busy))
    }

    /// Waits until the gate opens or `stopping` says the run ended.
    pub async fn wait(&self, stopping: impl Fn() -> bool) {
        let mut rx = self.woken.subscribe();
        let _ = rx.wait_for(|_| self.measuring.load(Ordering::Acquire) || stopping()).await;
    }

    /// The warmup ends: no warmup event starts from now on.
    pub fn close(&self) {
        self.closing.store(true, Ordering::SeqCst);
    }

    /// Warmup events still in flight.
    pub fn in_flight(&self) -> u32 {
        self.busy.load(Ordering::SeqCst)
    }

    /// The measured phase begins.
    pub fn open(&self) {
        self.measuring.store(true, Ordering::Release);
        self.woken.send_replace(());
    }

    /// The run stops: waiting clients look again.
    pub fn wake(&self) {
        self.woken.send_replace(());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_gate_admits_no_warmup_event_and_counts_those_in_flight() {
        let gate = WarmupGate::new(true);
        let first = gate.enter();
        assert!(matches!(first, GatePass::Warmup(_)));
        gate.close();
        assert_eq!(gate.in_flight(), 1);
        assert!(matches!(gate.enter(), GatePass::Closed));
        assert_eq!(gate.in_flight(), 1, "a refused event is not in flight");
        drop(first);
        assert_eq!(gate.in_flight(), 0);
        gate.open();
        assert!(matches!(gate.enter(), GatePass::Measured));
        assert!(matches!(WarmupGate::new(false).enter(), GatePass::Measured));
    }

    #[test]
    fn waiting_clients_go_on_when_the_gate_opens_or_the_run_stops() {
        use futures_util::FutureExt;
        let gate = WarmupGate::new(true);
        gate.close();
        let mut waiting = Box::pin(gate.wait(|| false));
        assert!(waiting.as_mut().now_or_never().is_none(), "a closed gate holds its client");
        gate.open();
        assert!(waiting.now_or_never().is_some(), "the open gate lets it go on");
        let gate = WarmupGate::new(true);
        let stop = AtomicBool::new(false);
        let mut waiting = Box::pin(gate.wait(|| stop.load(Ordering::SeqCst)));
        assert!(waiting.as_mut().now_or_never().is_none());
        stop.store(true, Ordering::SeqCst);
        gate.wake();
        assert!(waiting.now_or_never().is_some(), "a stopped run lets it go on");
    }
}
