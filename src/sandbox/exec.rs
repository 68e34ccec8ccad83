//! `exec 'COMMAND' @Ns`: a user's command run on the run's clock, for a failover fairbench
//! does not perform itself (`aws rds failover-db-cluster`, `patronictl failover`, `repmgr
//! standby switchover`). Its exit status and the first lines of its output are recorded; a
//! command still running when the run ends is killed, so it cannot hold the run open.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Lines of the command's output kept in the result.
pub const KEPT_LINES: usize = 5;

/// What the command did.
pub struct Ran {
    /// None: killed by a signal (or at the run's end).
    pub exit_code: Option<i32>,
    /// The first lines of stdout and stderr together, as it wrote them.
    pub output: Vec<String>,
    /// Killed at the run's end, still running.
    pub cut: bool,
}

/// Runs `command` with `sh -c` in a process group of its own, until it exits or `cancel`
/// says the run has ended (then the whole group is killed).
pub fn run(command: &str, cancel: &AtomicBool) -> std::io::Result<Ran> {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()?;
    let out = child.stdout.take().map(|r| std::thread::spawn(move || first_lines(r)));
    let err = child.stderr.take().map(|r| std::thread::spawn(move || first_lines(r)));
    let mut cut = false;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if cancel.load(Ordering::SeqCst) && !cut {
            cut = true;
            // The group: a shell's children die with it.
            let _ = Command::new("kill").args(["-KILL", &format!("-{}", child.id())]).status();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let lines = |t: Option<std::thread::JoinHandle<Vec<String>>>| t.and_then(|t| t.join().ok()).unwrap_or_default();
    let mut output = lines(out);
    output.extend(lines(err));
    output.truncate(KEPT_LINES);
    Ok(Ran { exit_code: status.code(), output, cut })
}

/// The first [`KEPT_LINES`] lines; the rest is read and dropped so the command never blocks
/// on a full pipe.
fn first_lines(mut reader: impl Read) -> Vec<String> {
    let mut all = Vec::new();
    let mut buf = [0u8; 8192];
    while let Ok(n) = reader.read(&mut buf) {
        if n == 0 {
            break;
        }
        if all.len() < 64 * 1024 {
            all.extend_from_slice(&buf[..n]);
        }
    }
    let text = String::from_utf8_lossy(&all);
    text.lines().filter(|l| !l.trim().is_empty()).take(KEPT_LINES).map(str::to_string).collect()
}

/// `COMMAND` of `'COMMAND' rest` or `"COMMAND" rest`: the quoted command and what follows.
pub fn quoted(text: &str) -> Option<(&str, &str)> {
    let quote = text.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let end = text[1..].find(quote)? + 1;
    Some((&text[1..end], &text[end + 1..]))
}

/// `text` split at `;` outside quotes.
pub fn split_steps(text: &str) -> Vec<&str> {
    let (mut out, mut start, mut quote) = (Vec::new(), 0, None);
    for (i, c) in text.char_indices() {
        match (c, quote) {
            ('\'' | '"', None) => quote = Some(c),
            (c, Some(q)) if c == q => quote = None,
            (';', None) => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&text[start..]);
    out
}
