//! A sleep with microsecond precision for open-loop arrivals: a timerfd armed at an absolute
//! CLOCK_MONOTONIC time, awaited through the runtime's epoll. tokio's own timer rounds up to
//! whole milliseconds, which would add up to 1 ms of client lateness to every latency.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Instant;
use tokio::io::unix::AsyncFd;

pub struct PreciseTimer {
    fd: AsyncFd<OwnedFd>,
}

impl PreciseTimer {
    pub fn new() -> std::io::Result<Self> {
        // SAFETY: plain syscall; the returned descriptor is owned by OwnedFd below.
        let raw = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) };
        if raw < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `raw` is a fresh, valid descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: we own the descriptor and nothing else registers or closes it.
        let fd = unsafe { AsyncFd::register(fd) }.map_err(|e| std::io::Error::other(e.to_string()))?;
        Ok(PreciseTimer { fd })
    }

    /// Returns at `deadline` (immediately if it has passed).
    pub async fn sleep_until(&mut self, deadline: Instant) -> std::io::Result<()> {
        let now = Instant::now();
        if deadline <= now {
            return Ok(());
        }
        // Instant is CLOCK_MONOTONIC on Linux: translate through the current reading.
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: valid out-pointer.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
        let target = ts.tv_sec as i128 * 1_000_000_000 + ts.tv_nsec as i128 + (deadline - now).as_nanos() as i128;
        let spec = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: libc::timespec {
                tv_sec: (target / 1_000_000_000) as libc::time_t,
                tv_nsec: (target % 1_000_000_000) as libc::c_long,
            },
        };
        // SAFETY: valid descriptor and pointers.
        let rc =
            unsafe { libc::timerfd_settime(self.fd.as_raw_fd(), libc::TFD_TIMER_ABSTIME, &spec, std::ptr::null_mut()) };
        if rc < 0 {
            return Err(std::io::Error::last_os_error());
        }
        loop {
            let mut guard = self.fd.readable().await?;
            let mut expirations = 0u64;
            // SAFETY: reads 8 bytes into a u64.
            let n = unsafe { libc::read(self.fd.as_raw_fd(), &mut expirations as *mut u64 as *mut libc::c_void, 8) };
            if n == 8 {
                return Ok(());
            }
            guard.clear_ready();
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
}
