//! Process arguments: hides passwords from `ps` and /proc/PID/cmdline, as the mysql client
//! does, by overwriting them in place in the memory the kernel shows (same length: nothing
//! moves). std reads that same memory whenever `std::env::args` is called, so the caller
//! copies the arguments first; afterwards `args()` returns the wiped text.
//!
//! Only on Linux with glibc, where the C runtime hands `(argc, argv, envp)` to functions in
//! `.init_array` (std captures its own copy the same way). Elsewhere this does nothing, and
//! docs/security.md says so. Between exec and this wipe (microseconds) the password is visible.

use std::ops::Range;

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod original {
    use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

    static ARGC: AtomicUsize = AtomicUsize::new(0);
    static ARGV: AtomicPtr<*mut libc::c_char> = AtomicPtr::new(std::ptr::null_mut());

    extern "C" fn capture(argc: libc::c_int, argv: *mut *mut libc::c_char, _envp: *mut *mut libc::c_char) {
        ARGC.store(argc.max(0) as usize, Ordering::Relaxed);
        ARGV.store(argv, Ordering::Relaxed);
    }

    #[used]
    #[link_section = ".init_array.00099"]
    static CAPTURE: extern "C" fn(libc::c_int, *mut *mut libc::c_char, *mut *mut libc::c_char) = capture;

    /// The original argument strings, writable in place.
    pub fn each(mut f: impl FnMut(&mut [u8])) {
        // Referenced here so the linker keeps the capture with the code that needs it.
        let _ = std::hint::black_box(&CAPTURE);
        let (argc, argv) = (ARGC.load(Ordering::Relaxed), ARGV.load(Ordering::Relaxed));
        if argv.is_null() {
            return;
        }
        for i in 0..argc {
            // SAFETY: glibc passes argv with argc valid, NUL-terminated, writable strings that
            // live for the whole process; std only reads them inside `args()` calls, and this
            // runs on the main thread before any other thread starts.
            unsafe {
                let p = *argv.add(i);
                if p.is_null() {
                    continue;
                }
                let len = libc::strlen(p);
                f(std::slice::from_raw_parts_mut(p as *mut u8, len));
            }
        }
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
mod original {
    pub fn each(_f: impl FnMut(&mut [u8])) {}
}

/// Overwrites with `x` the bytes `spans` finds in each original argument. Call first thing
/// in main, after copying `std::env::args_os()`, before any thread starts.
pub fn hide(spans: impl Fn(&str) -> Option<Range<usize>>) {
    original::each(|arg| {
        let Ok(text) = std::str::from_utf8(arg) else { return };
        if let Some(r) = spans(text) {
            if r.end <= arg.len() {
                arg[r].fill(b'x');
            }
        }
    });
}
