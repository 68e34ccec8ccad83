//! Naming the servers a failover probe met. A server is known by the identity it reports;
//! reports call it by the name of an endpoint that reaches it directly (a sandbox's node
//! name, a `--node` NAME), else by the address it reports, never by a target's number.

use crate::model::ha::FailoverRecord;
use crate::model::ha_node::Server;

/// How the endpoints were given: a label per endpoint (None: none known), how many are
/// `--target`s, each one's `host:port` as dialled and its redacted URL.
pub struct EndpointNames {
    pub labels: Vec<Option<String>>,
    pub writers: usize,
    pub dialled: Vec<String>,
    pub urls: Vec<String>,
}

impl EndpointNames {
    fn direct(&self, i: usize, address: &str) -> bool {
        reaches_itself(i, self.writers, &self.dialled, address)
    }
}

/// Endpoint `i` reaches the server at `address` itself, not a proxy or a DNS name in front
/// of it: a node given as such (`i >= writers`: a `--node`, a sandbox's node), or a target
/// whose dialled `host:port` is the one the server reports.
pub fn reaches_itself(i: usize, writers: usize, dialled: &[String], address: &str) -> bool {
    let local = |a: &str| a.replace("localhost:", "127.0.0.1:");
    i >= writers || dialled.get(i).is_some_and(|d| local(d) == local(address))
}

/// Adds the servers the checks met that the run did not, then names each server and notes
/// the URL that reaches it directly.
pub fn name(record: &mut FailoverRecord, e: &EndpointNames) {
    for c in record.checks.iter().filter(|c| !c.server.is_empty()) {
        if record.server_number(&c.server) == 0 {
            let address = c.role.as_ref().map(|r| r.address.clone()).unwrap_or_default();
            record.servers.push(Server { key: c.server.clone(), name: address.clone(), address, direct: None });
        }
    }
    let mut reached: Vec<(usize, String)> =
        record.roles.iter().filter(|c| !c.node.is_empty()).map(|c| (c.target as usize - 1, c.node.clone())).collect();
    reached.extend(
        record.checks.iter().filter(|c| !c.server.is_empty()).map(|c| (c.target as usize - 1, c.server.clone())),
    );
    for s in record.servers.iter_mut() {
        let direct = reached.iter().filter(|(_, k)| *k == s.key).map(|(i, _)| *i).find(|&i| e.direct(i, &s.address));
        if let Some(i) = direct {
            s.direct = e.urls.get(i).cloned();
            s.name = e.labels.get(i).cloned().flatten().unwrap_or_else(|| s.address.clone());
        }
    }
}
