//! Where a run's result goes, checked before any load: a result that cannot be written is
//! found now, not after the run.

use super::Refusal;
use crate::plan::RunPlan;
use std::path::PathBuf;

/// The result file's directory exists (or is created), is writable, and has room for the
/// result of this plan (about 6 KB per measured second plus 1 MB).
pub fn check_out(out: &std::path::Path, plan: &RunPlan) -> Result<(), Refusal> {
    let fail = |path: &std::path::Path, source| Refusal::ResultUnwritable { path: path.into(), source };
    if std::fs::metadata(out).is_ok_and(|m| !m.is_file()) {
        return Ok(()); // a device or pipe (/dev/null): written in place
    }
    let dir = match out.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(d) => d.to_path_buf(),
        None => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(|e| fail(out, e))?;
    let probe = dir.join(format!(".fairbench-write-check-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| fail(out, e))?;
    let _ = std::fs::remove_file(&probe);
    let seconds = plan.stop.time.map(|t| t.as_secs()).unwrap_or(3600) + plan.warmup_s as u64;
    let needed = (1 << 20) + seconds.min(30 * 86_400) * 6_000;
    if let Some(free) = free_bytes(&dir) {
        if free < needed {
            return Err(Refusal::NoRoom { dir, free_mb: free >> 20, needed_mb: (needed >> 20).max(1) });
        }
    }
    Ok(())
}

fn free_bytes(dir: &std::path::Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs fills the struct we pass; the path is NUL-terminated.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    (unsafe { libc::statvfs(c.as_ptr(), &mut st) } == 0).then(|| st.f_bavail as u64 * st.f_frsize as u64)
}

pub fn default_out(name: &str) -> PathBuf {
    let stamp = crate::model::rfc3339(std::time::SystemTime::now()).replace([':', '-'], "").replace('.', "-");
    PathBuf::from("fairbench-results").join(format!("{name}-{}.json", stamp.trim_end_matches('Z')))
}
