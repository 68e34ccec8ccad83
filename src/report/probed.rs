//! What a result ran on, as its headers and titles say it. A workload names the server it
//! measured; a probe that ran alone names the node it wrote to first, from the nodes as the
//! probe found them when it started: its conditions are read from that node after the run,
//! and a node killed or down by then leaves them empty.

use crate::model::ha::{HaRecord, NodeRecord};
use crate::model::ResultDocument;

/// `MariaDB 10.11.6`; for a probe alone `target1 mysql://... (MariaDB 10.11.6)`, or its first
/// node said unreachable with the first node that answered.
pub fn subject(d: &ResultDocument) -> String {
    match alone(d) {
        Some(h) => first_node(h),
        None => format!("{} {}", d.conditions.server.product, d.conditions.server.version),
    }
}

/// The nodes a probe alone wrote to, with the driver and transport; None for a workload.
pub fn probed_nodes(d: &ResultDocument) -> Option<String> {
    let h = alone(d)?;
    let nodes: Vec<String> = h.nodes.iter().map(|n| format!("{} {} ({})", n.name, n.url, server(n))).collect();
    let t = &d.target;
    Some(format!("{}; {} over {}", nodes.join("; "), t.driver.name(), t.transport.name()))
}

/// A probe without a workload beside it: its nodes are what it measured.
fn alone(d: &ResultDocument) -> Option<&HaRecord> {
    d.ha.as_ref().filter(|h| h.load.is_none() && !h.nodes.is_empty())
}

fn first_node(h: &HaRecord) -> String {
    let first = &h.nodes[0];
    let what = match &first.unreachable {
        None => server(first),
        Some(_) => match h.nodes.iter().find(|n| n.unreachable.is_none()) {
            Some(n) => format!("unreachable at the start; {} answered: {}", n.name, server(n)),
            None => "unreachable at the start, as was every node".into(),
        },
    };
    format!("{} {} ({what})", first.name, first.url)
}

fn server(n: &NodeRecord) -> String {
    match &n.unreachable {
        Some(_) => "unreachable at the start".into(),
        None => format!("{} {}", n.product, n.version),
    }
}
