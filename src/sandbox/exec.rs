//! `exec 'COMMAND' @Ns`: a user's command run on the run's clock, for a failover fairbench
//! does not perform itself (`aws rds failover-db-cluster`, `patronictl failover`, `repmgr
//! standby switchover`). Its exit status and the first and last lines of its output are recorded; a
//! command still running when the run ends is killed, so it cannot hold the run open.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Lines kept from the start and from the end of each of the command's outputs: a
/// command's verdict is usually its last line (`patronictl failover` prints the cluster's
/// table first and whether it failed over after it).
const HEAD_LINES: usize = 3;
const TAIL_LINES: usize = 3;

/// What the command did.
pub struct Ran {
    /// None: killed by a signal (or at the run's end).
    pub exit_code: Option<i32>,
    /// The first and last lines of stdout, then of stderr (a line saying how many between
    /// them were left out).
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
    let out = child.stdout.take().map(|r| std::thread::spawn(move || kept_lines(r)));
    let err = child.stderr.take().map(|r| std::thread::spawn(move || kept_lines(r)));
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
    Ok(Ran { exit_code: status.code(), output, cut })
}

/// The first [`HEAD_LINES`] and last [`TAIL_LINES`] non-empty lines; everything is read
/// (the command never blocks on a full pipe) and only the start and the end are held.
fn kept_lines(mut reader: impl Read) -> Vec<String> {
    const HEAD_BYTES: usize = 64 * 1024;
    const TAIL_BYTES: usize = 16 * 1024;
    let (mut head, mut tail, mut total) = (Vec::new(), std::collections::VecDeque::new(), 0usize);
    let mut buf = [0u8; 8192];
    while let Ok(n) = reader.read(&mut buf) {
        if n == 0 {
            break;
        }
        total += n;
        let room = HEAD_BYTES.saturating_sub(head.len()).min(n);
        head.extend_from_slice(&buf[..room]);
        tail.extend(&buf[..n]);
        while tail.len() > TAIL_BYTES {
            tail.pop_front();
        }
    }
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    let non_empty = |t: &str| t.lines().filter(|l| !l.trim().is_empty()).map(str::to_string).collect::<Vec<_>>();
    if total <= HEAD_BYTES {
        return ends(non_empty(&text(&head)));
    }
    let first = non_empty(&text(&head));
    let tail = tail.make_contiguous();
    // The tail's first line is likely cut: skip to the first whole one.
    let whole = tail.iter().position(|b| *b == b'\n').map_or(&tail[..], |i| &tail[i + 1..]);
    let mut last = non_empty(&text(whole));
    let mut lines = first.into_iter().take(HEAD_LINES).collect::<Vec<_>>();
    lines.push(format!("... (output past its first {HEAD_BYTES} bytes, {total} in all, not kept but for its end) ..."));
    let skip = last.len().saturating_sub(TAIL_LINES);
    lines.extend(last.drain(skip..));
    lines
}

/// `lines` with those between the first and the last few left out, and said so.
fn ends(mut lines: Vec<String>) -> Vec<String> {
    if lines.len() <= HEAD_LINES + TAIL_LINES + 1 {
        return lines;
    }
    let tail = lines.split_off(lines.len() - TAIL_LINES);
    let left_out = lines.len() - HEAD_LINES;
    lines.truncate(HEAD_LINES);
    lines.push(format!("... ({left_out} lines not kept) ..."));
    lines.extend(tail);
    lines
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

#[cfg(test)]
mod output_tests {
    use super::*;

    #[test]
    fn a_long_output_keeps_its_first_and_last_lines() {
        let table: String = (1..=12).map(|n| format!("| row {n} |\n")).collect();
        let out = kept_lines(format!("{table}\nSuccessfully failed over to \"replica1\"\n").as_bytes());
        assert_eq!(out.len(), HEAD_LINES + 1 + TAIL_LINES, "{out:?}");
        assert_eq!(out[0], "| row 1 |");
        assert_eq!(out[3], "... (7 lines not kept) ...", "13 lines, 6 kept");
        assert_eq!(out.last().unwrap(), "Successfully failed over to \"replica1\"");
        assert_eq!(kept_lines(&b"one\n\ntwo\n"[..]), ["one", "two"], "a short output whole, blank lines left out");
    }

    #[test]
    fn an_output_past_what_is_held_still_ends_with_its_last_line() {
        let mut text = "first\n".to_string();
        text += &format!("{}\n", "x".repeat(100)).repeat(2000);
        text += "the verdict\n";
        let out = kept_lines(text.as_bytes());
        assert_eq!(out[0], "first");
        assert!(out[HEAD_LINES].contains("not kept but for its end"), "{out:?}");
        assert_eq!(out.last().unwrap(), "the verdict");
    }
}
