//! Faults on a schedule: `--fault 'kill primary @5s; start primary @8s; promote replica1 @6s;
//! pause replica1 @3s for 2s; exec "aws rds failover-db-cluster ..." @10s'` parsed and checked
//! against a sandbox's nodes and the run's length before anything starts, then performed on
//! the run's clock by a thread of its own, each step recorded with when it began and ended
//! and what it did. `exec` steps need no sandbox: they start a failover fairbench does not
//! perform itself, and place it on the run's clock.

use super::{lifecycle, patronictl, Sandbox, SandboxError, Signal};
use crate::model::fault::{FaultEvent, FaultRecord};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Kill,
    Stop,
    Start,
    Pause,
    Resume,
    Promote,
    /// A user's command (`exec 'COMMAND' @T`), run with `sh -c`.
    Exec,
    /// Patroni's planned switchover to the node (`patronictl switchover`).
    Switchover,
    /// Patroni's manual failover to the node (`patronictl failover`).
    Failover,
}

const ACTIONS: [(&str, Action); 9] = [
    ("kill", Action::Kill),
    ("stop", Action::Stop),
    ("start", Action::Start),
    ("pause", Action::Pause),
    ("resume", Action::Resume),
    ("promote", Action::Promote),
    ("exec", Action::Exec),
    ("switchover", Action::Switchover),
    ("failover", Action::Failover),
];

impl Action {
    pub fn name(self) -> &'static str {
        ACTIONS.iter().find(|(_, a)| *a == self).map_or("?", |(n, _)| n)
    }

    /// What undoes it after `for D`: a killed or stopped node is started, a paused one resumed.
    fn undo(self) -> Option<Action> {
        match self {
            Action::Kill | Action::Stop => Some(Action::Start),
            Action::Pause => Some(Action::Resume),
            _ => None,
        }
    }
}

/// One step of a schedule.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub action: Action,
    /// The sandbox node (empty for `exec`).
    pub node: String,
    pub at: Duration,
    /// `exec`'s command.
    pub command: Option<String>,
}

impl Step {
    /// The step acts on a sandbox's node (every action but `exec`).
    pub fn needs_sandbox(&self) -> bool {
        self.action != Action::Exec
    }
}

/// A schedule checked against its sandbox: the steps in time order.
#[derive(Clone, Debug)]
pub struct Schedule {
    /// Empty when every step is an `exec`.
    pub sandbox: String,
    pub text: String,
    pub steps: Vec<Step>,
}

fn bad(step: &str, why: impl std::fmt::Display) -> SandboxError {
    SandboxError::Invalid(format!("--fault {step:?}: {why}"))
}

/// `ACTION NODE @TIME [for DURATION]; ...` and `exec 'COMMAND' @TIME`, times as `5s`, `1.5s`
/// or `500ms`.
pub fn parse(text: &str) -> Result<Vec<Step>, SandboxError> {
    let mut steps = Vec::new();
    for part in super::exec::split_steps(text).into_iter().map(str::trim).filter(|p| !p.is_empty()) {
        match part.strip_prefix("exec").filter(|r| r.starts_with(char::is_whitespace)) {
            Some(rest) => steps.push(exec_step(part, rest.trim_start())?),
            None => parse_step(part, &mut steps)?,
        }
    }
    if steps.is_empty() {
        return Err(SandboxError::Invalid("--fault is empty: e.g. --fault 'kill primary @5s'".into()));
    }
    steps.sort_by_key(|s| s.at);
    Ok(steps)
}

/// `exec 'COMMAND' @TIME`.
fn exec_step(part: &str, rest: &str) -> Result<Step, SandboxError> {
    let usage = "write exec 'COMMAND' @TIME, the command in quotes, e.g. exec 'patronictl failover --force' @5s";
    let (command, rest) = super::exec::quoted(rest).ok_or_else(|| bad(part, usage))?;
    let at = match rest.split_whitespace().collect::<Vec<_>>().as_slice() {
        [at] => at.strip_prefix('@').ok_or_else(|| bad(part, usage))?,
        _ => return Err(bad(part, usage)),
    };
    let at = duration(at).ok_or_else(|| bad(part, format!("{at:?} is not a time such as 5s or 500ms")))?;
    if command.trim().is_empty() {
        return Err(bad(part, "the command is empty"));
    }
    Ok(Step { action: Action::Exec, node: String::new(), at, command: Some(command.to_string()) })
}

fn parse_step(part: &str, steps: &mut Vec<Step>) -> Result<(), SandboxError> {
    let words: Vec<&str> = part.split_whitespace().collect();
    let (action, node, at, rest) = match words.as_slice() {
        [a, n, at, rest @ ..] if at.starts_with('@') => (*a, *n, &at[1..], rest),
        _ => return Err(bad(part, "write ACTION NODE @TIME [for DURATION], e.g. 'kill primary @5s'")),
    };
    let names: Vec<&str> = ACTIONS.iter().map(|(n, _)| *n).collect();
    let action = ACTIONS
        .iter()
        .find(|(n, _)| *n == action)
        .map(|(_, a)| *a)
        .ok_or_else(|| bad(part, format!("unknown action {action:?}: use {}", names.join(", "))))?;
    let at = duration(at).ok_or_else(|| bad(part, format!("{at:?} is not a time such as 5s or 500ms")))?;
    steps.push(Step { action, node: node.to_string(), at, command: None });
    match rest {
        [] => Ok(()),
        ["for", d] => {
            let d = duration(d).ok_or_else(|| bad(part, format!("{d:?} is not a duration such as 2s")))?;
            let undo = action.undo().ok_or_else(|| bad(part, format!("{} takes no 'for'", action.name())))?;
            steps.push(Step { action: undo, node: node.to_string(), at: at + d, command: None });
            Ok(())
        }
        _ => Err(bad(part, "only 'for DURATION' may follow the time")),
    }
}

fn duration(s: &str) -> Option<Duration> {
    let (number, scale) = match s.strip_suffix("ms") {
        Some(n) => (n, 0.001),
        None => (s.strip_suffix('s')?, 1.0),
    };
    let v: f64 = number.parse().ok()?;
    (v.is_finite() && v >= 0.0).then(|| Duration::from_secs_f64(v * scale))
}

/// Whether the schedule `text` acts on a sandbox (any step but `exec`).
pub fn needs_sandbox(text: &str) -> Result<bool, SandboxError> {
    Ok(parse(text)?.iter().any(Step::needs_sandbox))
}

/// The schedule for sandbox `name` (None: only `exec` steps): every node exists, every step
/// before `end`.
pub fn check(text: &str, name: Option<&str>, end: Duration) -> Result<Schedule, SandboxError> {
    let steps = parse(text)?;
    let sb = name.map(|n| Sandbox::load(&super::home()?, n)).transpose()?;
    for s in &steps {
        match (&sb, s.needs_sandbox()) {
            (Some(sb), true) => {
                sb.node(&s.node).map_err(|e| bad(text, e))?;
                if matches!(s.action, Action::Switchover | Action::Failover) && sb.patroni.is_none() {
                    let (step, action, sandbox) = (text.to_string(), s.action.name(), sb.name.clone());
                    return Err(SandboxError::NeedsPatroni { step, action, sandbox });
                }
            }
            (None, true) => {
                return Err(bad(text, format!("{} acts on a sandbox's node: name the sandbox", s.action.name())))
            }
            _ => {}
        }
        if s.at >= end {
            return Err(bad(
                text,
                format!(
                    "{} {} at {:.3} s is past the run's end ({:.3} s)",
                    s.action.name(),
                    s.node,
                    s.at.as_secs_f64(),
                    end.as_secs_f64()
                ),
            ));
        }
    }
    Ok(Schedule { sandbox: name.unwrap_or_default().to_string(), text: text.to_string(), steps })
}

/// The sandbox one of whose nodes listens on `host`:`port` (localhost for 127.0.0.1), or
/// whose proxy listens on 127.0.0.1:`port`.
pub fn owning(host: &str, port: u16) -> Option<String> {
    let host = if host == "localhost" { "127.0.0.1" } else { host };
    let home = super::home().ok()?;
    let listens = |sb: &Sandbox| {
        let proxy = sb.proxy.as_ref().is_some_and(|p| p.writer_port == port || p.reader_port == port);
        (host == "127.0.0.1" && proxy) || sb.nodes.iter().any(|x| x.host == host && x.port == port)
    };
    super::names(&home).into_iter().find(|n| Sandbox::load(&home, n).is_ok_and(|sb| listens(&sb)))
}

/// The schedule being performed on a thread of its own.
pub struct Performer {
    thread: std::thread::JoinHandle<Vec<FaultEvent>>,
    cancel: Arc<AtomicBool>,
    sandbox: String,
    text: String,
}

/// Starts performing `schedule`, its times counted from `zero`.
pub fn perform(schedule: Schedule, zero: Instant) -> Result<Performer, SandboxError> {
    let cancel = Arc::new(AtomicBool::new(false));
    let stop = cancel.clone();
    let (sandbox, text) = (schedule.sandbox.clone(), schedule.text.clone());
    let thread = std::thread::Builder::new()
        .name("fairbench-faults".into())
        .spawn(move || run(&schedule, zero, &stop))
        .map_err(|e| SandboxError::Failed(format!("cannot start the fault schedule's thread: {e}")))?;
    Ok(Performer { thread, cancel, sandbox, text })
}

impl Performer {
    /// Stops at the next step (one being performed finishes) and returns what was done.
    pub fn finish(self) -> FaultRecord {
        self.cancel.store(true, Ordering::SeqCst);
        let events = self.thread.join().unwrap_or_default();
        FaultRecord { sandbox: self.sandbox, schedule: self.text, events }
    }
}

fn run(schedule: &Schedule, zero: Instant, cancel: &AtomicBool) -> Vec<FaultEvent> {
    let us = |t: Instant| t.saturating_duration_since(zero).as_micros() as u64;
    let mut out = Vec::new();
    for step in &schedule.steps {
        let mut event = FaultEvent {
            action: step.action.name().into(),
            node: step.command.clone().unwrap_or_else(|| step.node.clone()),
            planned_ms: step.at.as_millis() as u64,
            at_us: None,
            done_us: None,
            outcome: "not performed".into(),
            detail: "the run ended first".into(),
            exit_code: None,
            output: Vec::new(),
        };
        if wait_until(zero + step.at, cancel) {
            let began = Instant::now();
            event.at_us = Some(us(began));
            match &step.command {
                Some(command) => exec(command, cancel, &mut event),
                None => {
                    (event.outcome, event.detail) = match act(&schedule.sandbox, step) {
                        Ok(what) => ("done".into(), what),
                        Err(e) => ("failed".into(), e.to_string()),
                    }
                }
            }
            event.done_us = Some(us(Instant::now()));
        }
        out.push(event);
    }
    out
}

/// Sleeps until `t`; false when cancelled first.
fn wait_until(t: Instant, cancel: &AtomicBool) -> bool {
    loop {
        if cancel.load(Ordering::SeqCst) {
            return false;
        }
        let now = Instant::now();
        if now >= t {
            return true;
        }
        std::thread::sleep((t - now).min(Duration::from_millis(5)));
    }
}

/// Runs an `exec` step's command: done when it exits 0, failed otherwise (its status and
/// first and last lines recorded either way).
fn exec(command: &str, cancel: &AtomicBool, event: &mut FaultEvent) {
    match super::exec::run(command, cancel) {
        Ok(ran) => {
            event.exit_code = ran.exit_code;
            event.output = ran.output;
            let status = match (ran.cut, ran.exit_code) {
                (true, _) => "still running at the run's end: killed".to_string(),
                (false, Some(code)) => format!("exit status {code}"),
                (false, None) => "killed by a signal".to_string(),
            };
            event.outcome = if ran.exit_code == Some(0) { "done" } else { "failed" }.into();
            event.detail = match event.output.first() {
                Some(line) => format!("{status}: {line}"),
                None => status,
            };
        }
        Err(e) => (event.outcome, event.detail) = ("failed".into(), format!("cannot run sh -c: {e}")),
    }
}

fn act(sandbox: &str, step: &Step) -> Result<String, SandboxError> {
    let node = std::slice::from_ref(&step.node);
    let mut notes = Vec::new();
    let mut note = |line: String| notes.push(line);
    let signal = |s: Signal| lifecycle::kill(sandbox, node, s).map(|lines| lines.join("; "));
    match step.action {
        Action::Kill => signal(Signal::Kill),
        Action::Stop => signal(Signal::Term),
        Action::Pause => signal(Signal::Stop),
        Action::Resume => signal(Signal::Cont),
        Action::Start => lifecycle::start(sandbox, node, &mut note).map(|_| format!("{} answers", step.node)),
        Action::Promote => {
            lifecycle::promote(sandbox, &step.node, &mut note).map(|_| format!("{} promoted, takes writes", step.node))
        }
        Action::Exec => Err(SandboxError::Invalid("exec runs no sandbox action".into())),
        Action::Switchover => patronictl::switchover(sandbox, &step.node),
        Action::Failover => patronictl::failover(sandbox, &step.node),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schedule_is_steps_in_time_order_and_for_adds_the_undo() {
        let steps =
            parse("kill primary @5s; start primary @8s; promote replica1 @6s; pause replica1 @3s for 2s").unwrap();
        let got: Vec<(Action, &str, u128)> =
            steps.iter().map(|s| (s.action, s.node.as_str(), s.at.as_millis())).collect();
        assert_eq!(
            got,
            vec![
                (Action::Pause, "replica1", 3000),
                (Action::Kill, "primary", 5000),
                (Action::Resume, "replica1", 5000),
                (Action::Promote, "replica1", 6000),
                (Action::Start, "primary", 8000)
            ]
        );
        assert_eq!(parse("kill primary @500ms").unwrap()[0].at, Duration::from_millis(500));
        let patroni: Vec<Action> =
            parse("switchover replica1 @4s; failover primary @9s").unwrap().iter().map(|s| s.action).collect();
        assert_eq!(patroni, [Action::Switchover, Action::Failover]);
    }

    #[test]
    fn an_exec_step_takes_a_quoted_command_that_may_hold_semicolons() {
        let steps =
            parse("kill primary @2s; exec 'patronictl failover --force; echo done' @3s; exec \"true\" @500ms").unwrap();
        let got: Vec<(Action, Option<&str>, u128)> =
            steps.iter().map(|s| (s.action, s.command.as_deref(), s.at.as_millis())).collect();
        assert_eq!(
            got,
            vec![
                (Action::Exec, Some("true"), 500),
                (Action::Kill, None, 2000),
                (Action::Exec, Some("patronictl failover --force; echo done"), 3000)
            ]
        );
        assert!(!steps[0].needs_sandbox() && steps[1].needs_sandbox());
        for (text, says) in [
            ("exec patronictl @3s", "the command in quotes"),
            ("exec 'true' 3s", "the command in quotes"),
            ("exec 'true' @3s for 2s", "the command in quotes"),
            ("exec '' @3s", "the command is empty"),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.contains(says) && e.lines().count() == 1, "{text}: {e}");
        }
    }

    #[test]
    fn a_bad_schedule_is_one_line_naming_the_step() {
        for (text, says) in [
            ("kil primary @5s", "unknown action \"kil\""),
            ("kill primary 5s", "write ACTION NODE @TIME"),
            ("kill primary @5x", "not a time"),
            ("promote replica1 @5s for 2s", "promote takes no 'for'"),
            ("kill primary @5s now", "only 'for DURATION'"),
            (" ; ", "--fault is empty"),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.contains(says) && e.lines().count() == 1, "{text}: {e}");
        }
    }
}
