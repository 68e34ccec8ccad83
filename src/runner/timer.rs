//! Sleeps with microsecond precision for open-loop arrivals: a timerfd armed at an absolute
//! CLOCK_MONOTONIC time, awaited through the runtime's epoll. tokio's own timer rounds up to
//! whole milliseconds, which would add up to 1 ms of client lateness to every latency.
//!
//! [`PreciseTimer`] is one sleeper's timer. [`ClientTimers`] serves every client of one worker
//! thread from one timerfd armed at the earliest deadline: 10,000 open-loop clients need
//! one descriptor per worker, not one each, and a run's end wakes them all at once instead of
//! each client looking every 100 ms.

use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::future::Future;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};
use tokio::io::unix::AsyncFd;

fn timerfd() -> std::io::Result<AsyncFd<OwnedFd>> {
    // SAFETY: plain syscall; the returned descriptor is owned by OwnedFd below.
    let raw = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) };
    if raw < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `raw` is a fresh, valid descriptor that nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    // SAFETY: we own the descriptor and nothing else registers or closes it.
    unsafe { AsyncFd::register(fd) }.map_err(|e| std::io::Error::other(e.to_string()))
}

/// Arms `fd` to fire at `deadline`, never before it.
fn arm(fd: &AsyncFd<OwnedFd>, deadline: Instant) -> std::io::Result<()> {
    let now = Instant::now();
    // Instant is CLOCK_MONOTONIC on Linux: translate through the current reading (taken
    // after `now`, so the target can only be late, by nanoseconds).
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    let ahead = deadline.saturating_duration_since(now).as_nanos().max(1) as i128;
    let target = ts.tv_sec as i128 * 1_000_000_000 + ts.tv_nsec as i128 + ahead;
    let spec = libc::itimerspec {
        it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
        it_value: libc::timespec {
            tv_sec: (target / 1_000_000_000) as libc::time_t,
            tv_nsec: (target % 1_000_000_000) as libc::c_long,
        },
    };
    // SAFETY: valid descriptor and pointers.
    let rc = unsafe { libc::timerfd_settime(fd.as_raw_fd(), libc::TFD_TIMER_ABSTIME, &spec, std::ptr::null_mut()) };
    if rc < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Waits until `fd` has fired (and consumes the expiration).
async fn fired(fd: &AsyncFd<OwnedFd>) -> std::io::Result<()> {
    loop {
        let mut guard = fd.readable().await?;
        let mut expirations = 0u64;
        // SAFETY: reads 8 bytes into a u64.
        let n = unsafe { libc::read(fd.as_raw_fd(), &mut expirations as *mut u64 as *mut libc::c_void, 8) };
        // Read to empty: the next expiration is a new edge, so readiness can go now.
        guard.clear_ready();
        if n == 8 {
            return Ok(());
        }
    }
}

pub struct PreciseTimer {
    fd: AsyncFd<OwnedFd>,
}

impl PreciseTimer {
    pub fn new() -> std::io::Result<Self> {
        Ok(PreciseTimer { fd: timerfd()? })
    }

    /// Returns at `deadline` (immediately if it has passed).
    pub async fn sleep_until(&mut self, deadline: Instant) -> std::io::Result<()> {
        if deadline <= Instant::now() {
            return Ok(());
        }
        arm(&self.fd, deadline)?;
        fired(&self.fd).await
    }
}

/// How often the timers of a worker look whether the run has ended, when nothing else
/// wakes them.
const STOP_CHECK: Duration = Duration::from_millis(100);

/// The precise sleeps of every client on one worker thread (a current-thread runtime: the
/// handle is `Rc`, not `Send`). [`ClientTimers::drive`] must run as a task beside them.
#[derive(Clone)]
pub struct ClientTimers(Rc<Timers>);

struct Timers {
    fd: AsyncFd<OwnedFd>,
    state: RefCell<TimerState>,
}

#[derive(Default)]
struct TimerState {
    /// Deadlines with the sleeper's slot and generation; entries of sleepers gone since
    /// (their generation moved on) are skipped when they come up.
    due: BinaryHeap<Reverse<(Instant, usize, u64)>>,
    slots: Vec<Sleeper>,
    free: Vec<usize>,
    /// When the timerfd fires next, if armed.
    armed: Option<Instant>,
    /// The run has ended: every sleep returns at once.
    stopped: bool,
    /// An arming that failed, reported by the next sleep.
    failed: Option<std::io::ErrorKind>,
}

#[derive(Default)]
struct Sleeper {
    generation: u64,
    waker: Option<Waker>,
}

impl ClientTimers {
    /// Must be called inside the worker's runtime (the timerfd registers with its reactor).
    pub fn new() -> std::io::Result<Self> {
        Ok(ClientTimers(Rc::new(Timers { fd: timerfd()?, state: RefCell::default() })))
    }

    /// Wakes sleepers whose deadline came, and all of them once `stopping()` says the run
    /// has ended; returns then, or on a timerfd error (after waking every sleeper).
    pub async fn drive(self, stopping: impl Fn() -> bool) {
        let timers = &self.0;
        loop {
            timers.arm_next(Instant::now());
            if fired(&timers.fd).await.is_err() {
                timers.fail(std::io::ErrorKind::Other);
                return;
            }
            let now = Instant::now();
            let mut state = timers.state.borrow_mut();
            state.armed = None;
            if stopping() {
                state.stopped = true;
                state.wake_all();
                return;
            }
            state.wake_due(now);
        }
    }

    /// Sleeps until `deadline`: `Ok(true)` at it (never before, and also when the run ended
    /// while the sleeper waited to be polled), `Ok(false)` if the run ended first.
    pub fn sleep_until(&self, deadline: Instant) -> Sleep {
        Sleep { timers: self.0.clone(), deadline, slot: None }
    }
}

impl Timers {
    /// Arms the timerfd for the earliest deadline, or for the next look at the stop flag.
    fn arm_next(&self, now: Instant) {
        let mut state = self.state.borrow_mut();
        let look = now + STOP_CHECK;
        let next = state.due.peek().map_or(look, |Reverse((at, _, _))| (*at).min(look));
        if state.armed.is_some_and(|a| a <= next) {
            return;
        }
        match arm(&self.fd, next) {
            Ok(()) => state.armed = Some(next),
            Err(e) => {
                drop(state);
                self.fail(e.kind());
            }
        }
    }

    fn fail(&self, kind: std::io::ErrorKind) {
        let mut state = self.state.borrow_mut();
        state.failed = Some(kind);
        state.wake_all();
    }
}

impl TimerState {
    fn wake_due(&mut self, now: Instant) {
        while let Some(&Reverse((at, slot, generation))) = self.due.peek() {
            if at > now {
                break;
            }
            self.due.pop();
            let s = &mut self.slots[slot];
            if s.generation == generation {
                if let Some(w) = s.waker.take() {
                    w.wake();
                }
            }
        }
    }

    fn wake_all(&mut self) {
        self.due.clear();
        for s in &mut self.slots {
            if let Some(w) = s.waker.take() {
                w.wake();
            }
        }
    }
}

/// One client's sleep on its worker's [`ClientTimers`].
pub struct Sleep {
    timers: Rc<Timers>,
    deadline: Instant,
    /// Registered: its slot and generation.
    slot: Option<(usize, u64)>,
}

impl Future for Sleep {
    type Output = std::io::Result<bool>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let now = Instant::now();
        let timers = self.timers.clone();
        let mut state = timers.state.borrow_mut();
        if let Some(kind) = state.failed {
            return Poll::Ready(Err(std::io::Error::new(kind, "the open loop's timer failed")));
        }
        // Due before the stop was seen (a busy worker polls late): the event lies within
        // the measured phase and runs, as one in flight does; dropping it would drop the
        // latest-served events of the run's end.
        if now >= self.deadline {
            return Poll::Ready(Ok(true));
        }
        if state.stopped {
            return Poll::Ready(Ok(false));
        }
        match self.slot {
            Some((slot, _)) => match &mut state.slots[slot].waker {
                Some(w) if w.will_wake(cx.waker()) => {}
                w => *w = Some(cx.waker().clone()),
            },
            None => {
                let slot = state.free.pop().unwrap_or_else(|| {
                    state.slots.push(Sleeper::default());
                    state.slots.len() - 1
                });
                let generation = state.slots[slot].generation;
                state.slots[slot].waker = Some(cx.waker().clone());
                state.due.push(Reverse((self.deadline, slot, generation)));
                self.slot = Some((slot, generation));
                if state.armed.is_none_or(|a| self.deadline < a) {
                    drop(state);
                    timers.arm_next(now);
                }
            }
        }
        Poll::Pending
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        if let Some((slot, _)) = self.slot {
            let mut state = self.timers.state.borrow_mut();
            let s = &mut state.slots[slot];
            s.generation += 1;
            s.waker = None;
            state.free.push(slot);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn never_wakes_early_and_can_wake_within_a_millisecond() {
        let rt = crate::local_runtime();
        rt.block_on(async {
            let mut t = PreciseTimer::new().unwrap();
            let mut best = Duration::MAX;
            for _ in 0..50 {
                let deadline = Instant::now() + Duration::from_micros(300);
                t.sleep_until(deadline).await.unwrap();
                // Never early (checked_duration_since is None before the deadline).
                let late = Instant::now().checked_duration_since(deadline).expect("woke before the deadline");
                best = best.min(late);
            }
            // Finer than tokio's timer, which rounds every sleep up to a whole millisecond: a
            // busy machine may delay many wakes, the best of 50 stays under it.
            assert!(best < Duration::from_millis(1), "{best:?}");
        });
    }

    #[test]
    fn client_timers_wake_each_sleeper_at_its_deadline_and_all_at_the_end() {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::Arc;
        let rt = crate::local_runtime();
        rt.block_on(async {
            let timers = ClientTimers::new().unwrap();
            let stop = Arc::new(AtomicBool::new(false));
            let flag = stop.clone();
            let driver = tokio::task::spawn_local(timers.clone().drive(move || flag.load(Ordering::SeqCst)));
            let start = Instant::now();
            // Deadlines out of order, some equal, one long after the end of the run.
            let offsets_us = [3_000u64, 700, 12_000, 700, 5_500, 40_000, 1_500, 60_000_000];
            let sleepers: Vec<_> = offsets_us
                .iter()
                .map(|&us| {
                    let deadline = start + Duration::from_micros(us);
                    let sleep = timers.sleep_until(deadline);
                    tokio::task::spawn_local(async move { (sleep.await.unwrap(), deadline, Instant::now()) })
                })
                .collect();
            // A sleep dropped before its deadline leaves no waker behind.
            drop(timers.sleep_until(start + Duration::from_micros(900)));
            let mut ends = Vec::new();
            for s in sleepers.into_iter().take(offsets_us.len() - 1) {
                let (on_time, deadline, woke) = s.await.unwrap();
                assert!(on_time);
                assert!(woke >= deadline, "woke {:?} before its deadline", deadline - woke);
                ends.push(woke);
            }
            stop.store(true, Ordering::SeqCst);
            // The distant sleeper is told the run ended (within the 100 ms look).
            let last = timers.sleep_until(start + Duration::from_secs(60));
            assert!(!last.await.unwrap());
            driver.await.unwrap();
            // A deadline that passed before the sleeper was polled still counts after the end.
            assert!(timers.sleep_until(start + Duration::from_micros(700)).await.unwrap());
            assert!(ends.len() == offsets_us.len() - 1);
        });
    }
}
