//! A node as the sandbox commands list it (`sandbox ls`, `up`, `start`, `promote`).

use super::engine::{process_of, Engine};
use super::process::ProcessStatus;
use super::{Node, Sandbox};

/// One node as `sandbox ls` shows it.
#[derive(Clone, Debug)]
pub struct NodeLine {
    pub sandbox: String,
    pub engine: String,
    pub node: String,
    /// Read from the server when it runs, else as fairbench last recorded it.
    pub role: String,
    pub url: String,
    pub pid: Option<i32>,
    pub status: ProcessStatus,
}

/// The node with its recorded role.
pub fn recorded_line(engine: &dyn Engine, sb: &Sandbox, node: &Node) -> NodeLine {
    let (pid, status) = process_of(engine, node);
    NodeLine {
        sandbox: sb.name.clone(),
        engine: sb.engine.clone(),
        node: node.name.clone(),
        role: node.role.name().into(),
        url: engine.url(&node.host, node.port),
        pid,
        status,
    }
}

/// The node with its role as the running server says.
pub fn live_line(engine: &dyn Engine, sb: &Sandbox, node: &Node) -> NodeLine {
    let mut line = recorded_line(engine, sb, node);
    if line.status == ProcessStatus::Running {
        if let Ok(role) = engine.role(node) {
            line.role = role.into();
        }
    }
    line
}
