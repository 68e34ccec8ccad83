//! Ctrl-C: the first press ends the run gracefully (what was measured is reported and saved
//! within about 2 s); a second press exits at once.

use std::sync::atomic::{AtomicU32, Ordering};

static PRESSES: AtomicU32 = AtomicU32::new(0);

extern "C" fn on_sigint(_: libc::c_int) {
    if PRESSES.fetch_add(1, Ordering::SeqCst) >= 1 {
        // SAFETY: _exit is async-signal-safe.
        unsafe { libc::_exit(130) };
    }
}

/// Installs the handler (idempotent).
pub fn install() {
    // SAFETY: the handler only touches an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, on_sigint as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_sigint as *const () as libc::sighandler_t);
    }
}

/// Whether the run was asked to stop.
pub fn interrupted() -> bool {
    presses() > 0
}

/// Restores the default handlers (after the run: a press while saving must not be lost).
pub fn uninstall() {
    // SAFETY: restoring default dispositions.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_DFL);
        libc::signal(libc::SIGTERM, libc::SIG_DFL);
    }
}

pub fn presses() -> u32 {
    PRESSES.load(Ordering::SeqCst)
}
