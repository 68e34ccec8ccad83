//! Ctrl-C: the first press ends the run gracefully (results are still reported and saved);
//! a second press stops waiting for in-flight statements.

use std::sync::atomic::{AtomicU32, Ordering};

static PRESSES: AtomicU32 = AtomicU32::new(0);

extern "C" fn on_sigint(_: libc::c_int) {
    PRESSES.fetch_add(1, Ordering::SeqCst);
}

/// Installs the handler (idempotent).
pub fn install() {
    // SAFETY: the handler only touches an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, on_sigint as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_sigint as *const () as libc::sighandler_t);
    }
}

pub fn presses() -> u32 {
    PRESSES.load(Ordering::SeqCst)
}
