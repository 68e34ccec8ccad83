//! Process arguments: hides passwords from `ps`.
//!
//! `ps` and /proc/PID/cmdline read the argument strings in the process's own memory, so
//! overwriting them there hides them, as the mysql client does. Only on Linux with glibc,
//! whose `.init_array` calls hand over that memory; elsewhere [`hide_passwords`] does nothing.

use std::ops::Range;

/// Bytes to blank, as (argument index, byte range within it).
pub type Spans = Vec<(usize, Range<usize>)>;

/// Overwrites with `x`, in place, the bytes `spans` names as (argument index, byte range) in
/// the process arguments; lengths stay, so nothing moves. Call it first thing in `main`,
/// before any thread starts, and after copying the arguments (`std::env::args_os`): std reads
/// this same memory on demand. An argument that is not UTF-8 is blanked whole if named.
pub fn hide_passwords(spans: impl Fn(&[String]) -> Spans) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    glibc::hide(&spans);
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = spans;
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod glibc {
    use super::Spans;
    use std::ffi::{c_char, c_int, CStr};
    use std::sync::atomic::{AtomicIsize, AtomicPtr, Ordering};

    static ARGC: AtomicIsize = AtomicIsize::new(0);
    static ARGV: AtomicPtr<*mut c_char> = AtomicPtr::new(std::ptr::null_mut());

    /// glibc calls `.init_array` functions with main's (argc, argv, envp): the only way to the
    /// original argument memory, since std keeps its own pointer private.
    #[used]
    #[link_section = ".init_array"]
    static CAPTURE: extern "C" fn(c_int, *mut *mut c_char, *mut *mut c_char) = capture;

    extern "C" fn capture(argc: c_int, argv: *mut *mut c_char, _envp: *mut *mut c_char) {
        ARGC.store(argc as isize, Ordering::Relaxed);
        ARGV.store(argv, Ordering::Relaxed);
    }

    pub fn hide(spans: &dyn Fn(&[String]) -> Spans) {
        // Naming CAPTURE keeps its object, and so its .init_array entry, in the link.
        std::hint::black_box(&CAPTURE);
        let argv = ARGV.load(Ordering::Relaxed);
        let argc = if argv.is_null() { 0 } else { ARGC.load(Ordering::Relaxed).max(0) as usize };
        let mut args: Vec<&mut [u8]> = Vec::with_capacity(argc);
        for i in 0..argc {
            // SAFETY: glibc's argv holds argc string pointers then NULL (an earlier NULL stops
            // us too); each string is NUL-terminated, writable and lives as long as the process.
            // No one else touches it now: std only reads it when asked, and `main` has copied
            // the arguments before calling us, with no other thread running.
            let arg = unsafe {
                let p = *argv.add(i);
                if p.is_null() {
                    break;
                }
                std::slice::from_raw_parts_mut(p.cast::<u8>(), CStr::from_ptr(p).to_bytes().len())
            };
            args.push(arg);
        }
        let text: Vec<String> = args.iter().map(|a| String::from_utf8_lossy(a).into_owned()).collect();
        for (i, range) in spans(&text) {
            let Some(arg) = args.get_mut(i) else { continue };
            // Lossy decoding moved the byte offsets: blank it all rather than guess.
            let exact = text[i].as_bytes() == &arg[..] && range.end <= arg.len() && range.start <= range.end;
            let range = if exact { range } else { 0..arg.len() };
            arg[range].fill(b'x');
        }
    }
}
