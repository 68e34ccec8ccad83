//! The commands on an existing sandbox: ls, kill, start, promote, down.

use super::engine::{on, process_of, Engine};
use super::engines;
use super::lines::{live_line, NodeLine};
use super::process::{self, ProcessStatus, Signal};
use super::{home, names, verify, Node, Role, Sandbox, SandboxError, START_DEADLINE, STOP_DEADLINE};
use std::time::Duration;

fn loaded(name: &str) -> Result<(Sandbox, &'static dyn Engine), SandboxError> {
    let sb = Sandbox::load(&home()?, name)?;
    let engine = engines::of(&sb)?;
    Ok((sb, engine))
}

fn send(engine: &dyn Engine, node: &Node, pid: i32, signal: Signal) -> Result<(), SandboxError> {
    engine.signal(node, pid, signal)
}

/// Every node of sandbox `name`, or of every sandbox.
pub fn ls(name: Option<&str>) -> Result<Vec<NodeLine>, SandboxError> {
    let home = home()?;
    let names = match name {
        Some(n) => vec![n.to_string()],
        None => names(&home),
    };
    let mut lines = Vec::new();
    for n in names {
        let (sb, engine) = loaded(&n)?;
        lines.extend(sb.nodes.iter().map(|node| live_line(engine, &sb, node)));
        lines.extend(super::proxy::lines(&sb, engine));
    }
    Ok(lines)
}

/// Sends `signal` to each node's server and waits for its effect (gone, paused, running).
pub fn kill(name: &str, nodes: &[String], signal: Signal) -> Result<Vec<String>, SandboxError> {
    let (sb, engine) = loaded(name)?;
    let mut out = Vec::new();
    for n in nodes {
        let node = sb.node(n)?;
        let (Some(pid), _) = process_of(engine, node) else {
            return Err(SandboxError::Failed(format!("{n} of sandbox {name} is not running")));
        };
        send(engine, node, pid, signal)?;
        let (wanted, within) = match signal {
            Signal::Kill => (ProcessStatus::Stopped, Duration::from_secs(10)),
            Signal::Term => (ProcessStatus::Stopped, STOP_DEADLINE),
            Signal::Stop => (ProcessStatus::Paused, Duration::from_secs(10)),
            Signal::Cont => (ProcessStatus::Running, Duration::from_secs(10)),
        };
        process::wait_until(within, || process_of(engine, node).1 == wanted);
        let now = process_of(engine, node).1.name();
        out.push(format!("{n}: {} sent to pid {pid}, now {now}", signal.name()));
    }
    Ok(out)
}

/// Starts the stopped (and resumes the paused) nodes named, every node by default, waits
/// until each answers, then verifies each replica whose source runs.
pub fn start(name: &str, nodes: &[String], note: &mut dyn FnMut(String)) -> Result<Vec<NodeLine>, SandboxError> {
    let (sb, engine) = loaded(name)?;
    let chosen: Vec<&Node> = match nodes {
        [] => sb.nodes.iter().collect(),
        names => names.iter().map(|n| sb.node(n)).collect::<Result<_, _>>()?,
    };
    engine.start_shared(&sb)?;
    for node in &chosen {
        match process_of(engine, node) {
            (_, ProcessStatus::Running) => note(format!("{} is running already", node.name)),
            (Some(pid), ProcessStatus::Paused) => {
                send(engine, node, pid, Signal::Cont)?;
                super::engine::await_answer(engine, node, None)?;
                note(format!("{} resumed (SIGCONT to pid {pid})", node.name));
            }
            _ => {
                note(format!("Starting {} on port {}", node.name, node.port));
                engine.start(&sb, node)?;
            }
        }
    }
    for replica in sb.nodes.iter().filter(|r| r.role == Role::Replica) {
        let Some(source) = sb.source_of(replica) else { continue };
        let running = |n: &Node| process_of(engine, n).1 == ProcessStatus::Running;
        let touched = chosen.iter().any(|c| c.name == replica.name || c.name == source.name);
        if touched && running(replica) && running(source) {
            verify::replication(engine, &sb, source, replica)?;
            note(format!("Verified: {} replicates from {}", replica.name, source.name));
        }
    }
    if sb.proxy.is_some() && super::proxy::state(&sb).1 != ProcessStatus::Running {
        super::proxy::start(&sb, engine)?;
        note("Started the proxy (HAProxy)".into());
    }
    Ok(sb.nodes.iter().map(|n| live_line(engine, &sb, n)).chain(super::proxy::lines(&sb, engine)).collect())
}

/// Makes replica `node` a writable primary; its source becomes a former primary, as it is.
pub fn promote(name: &str, node: &str, note: &mut dyn FnMut(String)) -> Result<Vec<NodeLine>, SandboxError> {
    let (mut sb, engine) = loaded(name)?;
    if let Some(manager) = engine.manager() {
        return Err(SandboxError::Managed { sandbox: name.into(), manager });
    }
    let n = sb.node(node)?.clone();
    if n.role != Role::Replica {
        return Err(SandboxError::Invalid(format!(
            "{node} is a {}, not a replica: only a replica is promoted",
            n.role.name()
        )));
    }
    if process_of(engine, &n).1 != ProcessStatus::Running {
        return Err(SandboxError::Failed(format!(
            "{node} is not running: start it first with `fairbench sandbox start {name} --node {node}`"
        )));
    }
    engine.promote(&n)?;
    let token = format!("promoted-{}", std::process::id());
    let mut last = String::new();
    let writable = process::wait_until(START_DEADLINE, || {
        engine.write_marker(&n, &token).map_err(|e| last = e.to_string()).is_ok()
    });
    if !writable {
        return Err(on(&n, "writing after promotion")(crate::db::DbError::timeout(last)));
    }
    let old = n.source.clone();
    for other in sb.nodes.iter_mut() {
        if other.name == n.name {
            (other.role, other.source) = (Role::Primary, None);
        } else if Some(&other.name) == old.as_ref() && other.role == Role::Primary {
            other.role = Role::FormerPrimary;
        } else if other.role == Role::Replica && other.source == old {
            note(format!(
                "note: {} still replicates from {} (replicas are not repointed)",
                other.name,
                old.as_deref().unwrap_or("?")
            ));
        }
    }
    sb.save()?;
    note(format!("{node} is a primary and accepts writes"));
    Ok(sb.nodes.iter().map(|n| live_line(engine, &sb, n)).collect())
}

/// Stops every node (TERM, then KILL after the deadline) and deletes the sandbox's directory.
pub fn down(name: &str, note: &mut dyn FnMut(String)) -> Result<(), SandboxError> {
    let (sb, engine) = loaded(name)?;
    if super::proxy::stop(&sb)? {
        note("Stopped the proxy (HAProxy)".into());
    }
    for node in &sb.nodes {
        if let Some(how) = stop(engine, node)? {
            note(format!("Stopped {} ({how})", node.name));
        }
    }
    for line in engine.stop_shared(&sb)? {
        note(line);
    }
    std::fs::remove_dir_all(&sb.dir).map_err(SandboxError::io("cannot remove", &sb.dir))?;
    note(format!("Removed {}", sb.dir.display()));
    Ok(())
}

/// Stops a node's server: TERM (and CONT, should it be paused), KILL after the deadline.
/// Says how, or None when it was not running.
pub(crate) fn stop(engine: &dyn Engine, node: &Node) -> Result<Option<&'static str>, SandboxError> {
    let (Some(pid), status) = process_of(engine, node) else { return Ok(None) };
    send(engine, node, pid, Signal::Term)?;
    if status == ProcessStatus::Paused {
        send(engine, node, pid, Signal::Cont)?;
    }
    let gone = || process_of(engine, node).1 == ProcessStatus::Stopped;
    if process::wait_until(STOP_DEADLINE, gone) {
        return Ok(Some("SIGTERM"));
    }
    send(engine, node, pid, Signal::Kill)?;
    if process::wait_until(Duration::from_secs(10), gone) {
        return Ok(Some("SIGKILL after the SIGTERM deadline"));
    }
    Err(SandboxError::Failed(format!("{} (pid {pid}) survives SIGKILL", node.name)))
}
