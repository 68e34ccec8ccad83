//! Server processes: their pid files and /proc state, signals, and the commands that create
//! and start them (detached from fairbench, optionally as another OS user).

use super::SandboxError;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What `sandbox ls` shows for a node's server process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcessStatus {
    Running,
    Stopped,
    /// SIGSTOPped: the process exists but does nothing (/proc state `T`).
    Paused,
}

impl ProcessStatus {
    pub fn name(self) -> &'static str {
        match self {
            ProcessStatus::Running => "running",
            ProcessStatus::Stopped => "stopped",
            ProcessStatus::Paused => "paused",
        }
    }
}

/// The signals `sandbox kill` sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    Kill,
    Stop,
    Cont,
    Term,
}

impl Signal {
    pub fn parse(s: &str) -> Result<Signal, SandboxError> {
        match s.to_ascii_uppercase().trim_start_matches("SIG") {
            "KILL" | "9" => Ok(Signal::Kill),
            "STOP" => Ok(Signal::Stop),
            "CONT" => Ok(Signal::Cont),
            "TERM" | "15" => Ok(Signal::Term),
            _ => Err(SandboxError::Invalid(format!("unknown signal {s:?}: use KILL, STOP, CONT or TERM"))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Signal::Kill => "SIGKILL",
            Signal::Stop => "SIGSTOP",
            Signal::Cont => "SIGCONT",
            Signal::Term => "SIGTERM",
        }
    }

    fn number(self) -> i32 {
        match self {
            Signal::Kill => libc::SIGKILL,
            Signal::Stop => libc::SIGSTOP,
            Signal::Cont => libc::SIGCONT,
            Signal::Term => libc::SIGTERM,
        }
    }
}

/// The pid a server wrote in its pid file (first line; PostgreSQL's postmaster.pid has more).
pub fn read_pid(file: &Path) -> Option<i32> {
    let text = std::fs::read_to_string(file).ok()?;
    text.lines().next()?.trim().parse().ok().filter(|&p| p > 0)
}

/// The state of `pid` when it is still the server: a process named `comm` working in `cwd`
/// (both servers work in their data directory; a pid file left by a crash may name a pid
/// reused since by another program). Zombies count as stopped.
pub fn status(pid: Option<i32>, comm: &str, cwd: &Path) -> ProcessStatus {
    let Some(pid) = pid else { return ProcessStatus::Stopped };
    let at = std::fs::read_link(format!("/proc/{pid}/cwd")).ok();
    if at.is_none() || at != std::fs::canonicalize(cwd).ok() {
        return ProcessStatus::Stopped;
    }
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return ProcessStatus::Stopped };
    // "PID (COMM) S ...": the name may hold spaces and parentheses, the state follows the last ')'.
    let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else { return ProcessStatus::Stopped };
    if &stat[open + 1..close] != comm {
        return ProcessStatus::Stopped;
    }
    match stat[close + 1..].trim_start().chars().next() {
        Some('T') | Some('t') => ProcessStatus::Paused,
        Some('Z') | Some('X') | None => ProcessStatus::Stopped,
        Some(_) => ProcessStatus::Running,
    }
}

/// Every live process of a server: named `comm`, working in `cwd`. PostgreSQL's postmaster
/// forks processes that each open a session of their own: neither its process group nor its
/// children after its death find them, their directory does.
pub fn server_pids(comm: &str, cwd: &Path) -> Vec<i32> {
    let pids = std::fs::read_dir("/proc").into_iter().flatten().flatten();
    let pids = pids.filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok());
    pids.filter(|&p| status(Some(p), comm, cwd) != ProcessStatus::Stopped).collect()
}

/// Sends `signal` to the server `pid` (named `comm`, working in `cwd`). TERM goes to the
/// server process, which shuts its helpers down itself; KILL, STOP and CONT go to all its
/// processes (a crash or a pause of the whole server). Before a KILL the server is stopped,
/// so that it forks nothing the KILL would miss.
pub fn send(pid: i32, signal: Signal, comm: &str, cwd: &Path) -> Result<(), SandboxError> {
    let kill = |p: i32, s: i32| {
        // SAFETY: kill only reads its integer arguments.
        if unsafe { libc::kill(p, s) } == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        Err(SandboxError::Failed(format!("cannot send {} to pid {p}: {e}", signal.name())))
    };
    if signal == Signal::Term {
        return kill(pid, libc::SIGTERM);
    }
    if signal == Signal::Kill {
        kill(pid, libc::SIGSTOP)?;
    }
    for p in server_pids(comm, cwd).into_iter().filter(|&p| p != pid) {
        // A helper may exit meanwhile: only the server process's own signal must arrive.
        let _ = kill(p, signal.number());
    }
    kill(pid, signal.number())
}

/// Polls until `done` holds or `deadline` passes; true when it held.
pub fn wait_until(deadline: Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    loop {
        if done() {
            return true;
        }
        if start.elapsed() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Polls `check` until it finds nothing wrong (`Ok(None)`), for at most `deadline`: None
/// then; else the problem that remained (its error, or what it said was wrong).
pub fn wait_until_fine<E: std::fmt::Display>(
    deadline: Duration,
    mut check: impl FnMut() -> Result<Option<String>, E>,
) -> Option<String> {
    let mut last = String::new();
    let fine = wait_until(deadline, || match check() {
        Ok(None) => true,
        Ok(Some(problem)) => {
            last = problem;
            false
        }
        Err(e) => {
            last = e.to_string();
            false
        }
    });
    (!fine).then_some(last)
}

/// The OS user servers run as when fairbench runs as root and the server refuses root.
#[derive(Clone, Copy, Debug)]
pub struct OsUser {
    pub uid: u32,
    pub gid: u32,
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no arguments and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// The uid and gid of OS user `name`.
pub fn os_user(name: &str) -> Option<OsUser> {
    let c = std::ffi::CString::new(name).ok()?;
    // SAFETY: getpwnam returns null or a pointer to a static record read at once (fairbench
    // runs sandbox commands on one thread).
    let pw = unsafe { libc::getpwnam(c.as_ptr()) };
    if pw.is_null() {
        return None;
    }
    Some(unsafe { OsUser { uid: (*pw).pw_uid, gid: (*pw).pw_gid } })
}

/// A command run in `dir` (a directory the user can enter), as `user` when given.
pub fn command(program: &Path, dir: &Path, user: Option<OsUser>) -> Command {
    let mut cmd = Command::new(program);
    cmd.current_dir(dir).stdin(Stdio::null());
    if let Some(u) = user {
        cmd.uid(u.uid).gid(u.gid);
    }
    cmd
}

/// Runs `cmd` to its end; on failure, one line with what it printed last.
pub fn run(mut cmd: Command, what: &str) -> Result<String, SandboxError> {
    let out = cmd.output().map_err(|e| SandboxError::Failed(format!("cannot run {what}: {e}")))?;
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    if !out.status.success() {
        return Err(SandboxError::Failed(format!("{what} failed, {}: {}", out.status, last_lines(&text, 2))));
    }
    Ok(text)
}

/// Starts `cmd` in a session of its own, detached from fairbench (the terminal's Ctrl-C and
/// hangup do not reach it) with its output appended to `log`.
pub fn spawn_detached(mut cmd: Command, log: &Path) -> Result<std::process::Child, SandboxError> {
    let open = || std::fs::OpenOptions::new().create(true).append(true).open(log);
    let out = open().map_err(SandboxError::io("cannot open", log))?;
    let err = open().map_err(SandboxError::io("cannot open", log))?;
    cmd.stdout(out).stderr(err);
    // SAFETY: setsid is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    let program = std::path::PathBuf::from(cmd.get_program());
    cmd.spawn().map_err(|e| SandboxError::Failed(format!("cannot start {}: {e}", program.display())))
}

/// The last `n` non-empty lines of `text`, joined into one line.
pub fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let tail = lines[lines.len().saturating_sub(n)..].join(" | ");
    if tail.is_empty() {
        "(nothing)".into()
    } else {
        tail
    }
}

/// The last `n` lines of a log file (a missing file says so).
pub fn log_tail(log: &Path, n: usize) -> String {
    match std::fs::read(log) {
        Ok(bytes) => last_lines(&String::from_utf8_lossy(&bytes), n),
        Err(e) => format!("(cannot read it: {e})"),
    }
}

/// Adds `o+x` (enter, not list) to every directory from `/` down to `dir` that `user` could
/// not enter (a private temp dir, root's home), so the server's user reaches its node
/// directory. Returns the directories changed.
pub fn open_path(dir: &Path, user: OsUser) -> Result<Vec<std::path::PathBuf>, SandboxError> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let mut changed = Vec::new();
    for d in dir.ancestors().collect::<Vec<_>>().into_iter().rev() {
        let meta = std::fs::metadata(d).map_err(SandboxError::io("cannot read", d))?;
        let mode = meta.mode();
        let enters = if meta.uid() == user.uid {
            mode & 0o100 != 0
        } else if meta.gid() == user.gid {
            mode & 0o010 != 0
        } else {
            mode & 0o001 != 0
        };
        if !enters {
            let perms = std::fs::Permissions::from_mode((mode | 0o001) & 0o7777);
            std::fs::set_permissions(d, perms).map_err(SandboxError::io("cannot chmod", d))?;
            changed.push(d.to_path_buf());
        }
    }
    Ok(changed)
}

/// Gives `path` (a file or a directory, not recursively) to `user`.
pub fn chown(path: &Path, user: OsUser) -> Result<(), SandboxError> {
    std::os::unix::fs::chown(path, Some(user.uid), Some(user.gid)).map_err(SandboxError::io("cannot chown", path))
}
