//! What the machine can hold, checked before a run starts: a run that would die of
//! exhausted threads, memory or file descriptors midway is refused up front, naming the limit.

/// Memory one embedded (SQLite) client costs at most: its thread's stack, runtime and the
/// connection's page cache (SQLite's default cache_size is 2 MiB).
const EMBEDDED_CLIENT_BYTES: u64 = 4 << 20;
/// Descriptors a process needs besides its connections (stdio, admin connection, timers, files).
const SPARE_FDS: u64 = 64;

/// A run this machine cannot hold.
#[derive(Debug, thiserror::Error)]
pub enum LimitsError {
    #[error("--threads {threads} is more than this machine can run for SQLite (one thread per client): {what} allows {limit}")]
    Threads { threads: u64, what: &'static str, limit: u64 },
    #[error("--threads {threads} needs {needed} open files, and the open-files limit is {limit} (hard limit {hard}): raise it with `ulimit -n {needed}` or use fewer threads")]
    OpenFiles { threads: u64, needed: u64, limit: u64, hard: u64 },
}

/// Checks that `threads` clients fit; raises the soft open-files limit to the hard one
/// when connections need it.
pub fn check_clients(thread_per_client: bool, threads: u32) -> Result<(), LimitsError> {
    let threads = threads as u64;
    if thread_per_client {
        let by_memory = available_memory().map(|m| m / EMBEDDED_CLIENT_BYTES);
        let by_tasks = rlimit(libc::RLIMIT_NPROC).map(|(soft, _)| soft.saturating_sub(64));
        let by_kernel = read_u64("/proc/sys/kernel/threads-max").map(|t| t / 2);
        if let Some((limit, what)) = [
            (by_memory, "available memory (4 MiB per SQLite client thread)"),
            (by_tasks, "the process limit (ulimit -u)"),
            (by_kernel, "half of kernel.threads-max"),
        ]
        .into_iter()
        .filter_map(|(l, w)| l.map(|l| (l, w)))
        .min_by_key(|(l, _)| *l)
        {
            if threads > limit {
                return Err(LimitsError::Threads { threads, what, limit });
            }
        }
        return Ok(());
    }
    // One socket per client (an open loop's timers are one per worker thread).
    let needed = threads + SPARE_FDS;
    if let Some((soft, hard)) = rlimit(libc::RLIMIT_NOFILE) {
        if needed > soft {
            let raised = needed.min(hard);
            let rl = libc::rlimit { rlim_cur: raised, rlim_max: hard };
            // SAFETY: setrlimit reads the struct we pass.
            let ok = unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &rl) } == 0;
            if !ok || raised < needed {
                return Err(LimitsError::OpenFiles { threads, needed, limit: if ok { raised } else { soft }, hard });
            }
        }
    }
    Ok(())
}

fn rlimit(resource: libc::__rlimit_resource_t) -> Option<(u64, u64)> {
    let mut rl = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit fills the struct we pass.
    if unsafe { libc::getrlimit(resource, &mut rl) } != 0 {
        return None;
    }
    let cap = |v: libc::rlim_t| if v == libc::RLIM_INFINITY { u64::MAX } else { v };
    Some((cap(rl.rlim_cur), cap(rl.rlim_max)))
}

fn read_u64(path: &str) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

fn available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kb: u64 = info.lines().find(|l| l.starts_with("MemAvailable:"))?.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absurd_thread_counts_are_refused_with_the_limit() {
        let e = check_clients(true, 10_000_000).unwrap_err().to_string();
        assert!(e.contains("--threads 10000000") && e.contains("allows"), "{e}");
        assert!(check_clients(true, 4).is_ok());
        assert!(check_clients(false, 8).is_ok());
    }
}
