//! The open-loop schedule: intended start times of all events of a run, shared by clients.
//! A free client takes the next due event; if too many are overdue, the oldest are dropped
//! (and counted) instead of being fired in one burst when the server recovers.

use crate::plan::Arrival;
use crate::random::Rng;
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub struct ArrivalSchedule {
    start: Instant,
    rate: f64,
    arrival: Arrival,
    max_backlog: u64,
    state: Mutex<Cursor>,
}

struct Cursor {
    index: u64,
    /// Intended start of event `index`, as an offset from `start`.
    next: Duration,
    rng: Rng,
}

/// The event a client should run next.
pub struct DueEvent {
    pub intended: Instant,
    /// Events skipped because the backlog was full.
    pub dropped: u64,
}

/// Offsets are capped here: far beyond any run (--time is at most ten years), and still
/// representable when added to an `Instant`. A tiny rate's next arrival lands here instead
/// of overflowing `Duration` (which panics).
const NEVER: Duration = Duration::from_secs(100 * 365 * 86_400);

/// Above this many dropped Poisson arrivals at once, they are skipped in one step (their
/// expected number) rather than drawn one by one under the lock.
const DROP_IN_ONE_STEP: f64 = 1000.0;

impl ArrivalSchedule {
    pub fn new(start: Instant, rate: f64, arrival: Arrival, max_backlog: u64, seed: u64) -> Self {
        let mut state = Cursor { index: 0, next: Duration::ZERO, rng: Rng::seeded(seed ^ 0x5eed_a771_7a15) };
        if arrival == Arrival::Poisson {
            state.next = exponential(&mut state.rng, rate);
        }
        ArrivalSchedule { start, rate, arrival, max_backlog, state: Mutex::new(state) }
    }

    /// Takes the next event, dropping overdue ones beyond the backlog bound.
    pub fn claim(&self, now: Instant) -> DueEvent {
        let mut s = crate::lock(&self.state);
        let elapsed = now.saturating_duration_since(self.start);
        let mut dropped = 0;
        match self.arrival {
            Arrival::Fixed => {
                // Events 0..=due are due now; the backlog is due - index + 1.
                let backlog = self.due_by(elapsed).saturating_add(1).saturating_sub(s.index);
                if backlog > self.max_backlog {
                    dropped = backlog - self.max_backlog;
                    s.index = s.index.saturating_add(dropped);
                    s.next = seconds(s.index as f64 / self.rate);
                }
            }
            Arrival::Poisson => {
                let max_lag = seconds(self.max_backlog as f64 / self.rate);
                let horizon = elapsed.saturating_sub(max_lag);
                // Arrivals are memoryless: after skipping a long stretch, the next one is an
                // exponential gap after its end.
                let behind = horizon.saturating_sub(s.next).as_secs_f64() * self.rate;
                if behind > DROP_IN_ONE_STEP {
                    dropped = behind as u64;
                    s.index = s.index.saturating_add(dropped);
                    s.next = horizon.saturating_add(exponential(&mut s.rng, self.rate)).min(NEVER);
                }
                while s.next < horizon {
                    self.advance(&mut s);
                    dropped += 1;
                }
            }
        }
        let intended = self.start + s.next;
        self.advance(&mut s);
        DueEvent { intended, dropped }
    }

    /// Events due by `now` and not yet taken by a client: how far the clients are behind.
    pub fn backlog(&self, now: Instant) -> u64 {
        let s = crate::lock(&self.state);
        let elapsed = now.saturating_duration_since(self.start);
        match self.arrival {
            Arrival::Fixed => self.due_by(elapsed).saturating_add(1).saturating_sub(s.index),
            // The next intended start is in the past: at least that one is waiting; beyond
            // it, the expected number of arrivals since.
            Arrival::Poisson if s.next <= elapsed => {
                (((elapsed - s.next).as_secs_f64() * self.rate) as u64).saturating_add(1)
            }
            Arrival::Poisson => 0,
        }
    }

    /// The index of the last fixed arrival at or before `elapsed` (saturating).
    fn due_by(&self, elapsed: Duration) -> u64 {
        (elapsed.as_secs_f64() * self.rate).floor() as u64
    }

    fn advance(&self, s: &mut Cursor) {
        s.index = s.index.saturating_add(1);
        s.next = match self.arrival {
            Arrival::Fixed => seconds(s.index as f64 / self.rate),
            Arrival::Poisson => s.next.saturating_add(exponential(&mut s.rng, self.rate)).min(NEVER),
        };
    }
}

/// `secs` as a schedule offset, capped at [`NEVER`] (also for infinity and NaN).
fn seconds(secs: f64) -> Duration {
    Duration::try_from_secs_f64(secs).map_or(NEVER, |d| d.min(NEVER))
}

/// An exponentially distributed gap with mean 1/rate.
fn exponential(rng: &mut Rng, rate: f64) -> Duration {
    seconds(-(1.0 - rng.next_f64()).ln() / rate)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backlog_counts_due_events_not_taken() {
        let start = Instant::now();
        let s = ArrivalSchedule::new(start, 100.0, Arrival::Fixed, 1000, 1);
        // 1 s in: events 0..=100 are due, none taken.
        assert_eq!(s.backlog(start + Duration::from_secs(1)), 101);
        for _ in 0..60 {
            s.claim(start + Duration::from_secs(1));
        }
        assert_eq!(s.backlog(start + Duration::from_secs(1)), 41);
        // Taken ahead of their time (a client waits for them): nothing is behind.
        assert_eq!(s.backlog(start), 0);
    }

    #[test]
    fn fixed_spacing_and_bounded_backlog() {
        let start = Instant::now();
        let s = ArrivalSchedule::new(start, 100.0, Arrival::Fixed, 50, 1);
        let a = s.claim(start);
        let b = s.claim(start);
        assert_eq!(a.intended, start);
        assert_eq!(b.intended - a.intended, Duration::from_millis(10));
        // 3 s later 301 events are due, 2 taken: the backlog of 299 is cut to 50.
        let c = s.claim(start + Duration::from_secs(3));
        assert_eq!(c.dropped, 249);
        assert_eq!(c.intended, start + Duration::from_millis(2510));
    }

    #[test]
    fn poisson_has_the_right_mean_rate() {
        let start = Instant::now();
        let s = ArrivalSchedule::new(start, 1000.0, Arrival::Poisson, u64::MAX / 4, 7);
        let mut last = start;
        for _ in 0..100_000 {
            last = s.claim(start).intended;
        }
        let secs = (last - start).as_secs_f64();
        assert!((secs - 100.0).abs() < 2.0, "{secs}");
    }

    #[test]
    fn extreme_rates_and_backlogs_saturate_instead_of_panicking() {
        let start = Instant::now();
        let later = start + Duration::from_secs(3600);
        for arrival in [Arrival::Fixed, Arrival::Poisson] {
            for rate in [1e-300, 1e-9, 1e9, 1e20, 1e300] {
                for backlog in [1, u64::MAX] {
                    let s = ArrivalSchedule::new(start, rate, arrival, backlog, 3);
                    let first = s.claim(start);
                    let second = s.claim(later);
                    assert!(second.intended >= first.intended, "{rate} {arrival:?} {backlog}");
                    assert!(first.intended <= start + NEVER && second.intended <= start + NEVER);
                    s.backlog(later);
                }
            }
        }
    }

    #[test]
    fn a_long_poisson_stall_drops_its_arrivals_in_one_step() {
        let start = Instant::now();
        let s = ArrivalSchedule::new(start, 1e9, Arrival::Poisson, 1000, 5);
        // An hour behind at a billion a second: 3.6e12 arrivals, skipped without drawing each.
        let slot = s.claim(start + Duration::from_secs(3600));
        let expected = 3600.0 * 1e9;
        assert!((slot.dropped as f64 - expected).abs() < expected * 1e-6, "{}", slot.dropped);
        assert!(slot.intended <= start + Duration::from_secs(3600));
        assert!(slot.intended + Duration::from_micros(2) >= start + Duration::from_secs(3600));
    }
}
