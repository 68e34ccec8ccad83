//! A failover probe's record read by server and over time: which server each reading and
//! attempt names (a proxy's one target is several servers), each server's role at a moment,
//! and the writes each acknowledged in a span.

use super::ha::{Attempt, FailoverRecord, NodeCheck, NodeRole, Outcome, RoleChange};
use std::collections::BTreeMap;

/// The role changes of a probe, in time order.
pub struct Timeline<'a>(pub &'a [RoleChange]);

impl Timeline<'_> {
    /// The last role `target` was read in at or before `at_us`, skipping readings that got no
    /// answer: a node that acknowledged a write answered, and is what it last said it was.
    pub fn known_role(&self, target: u32, at_us: u64) -> Option<NodeRole> {
        self.before(target, at_us).find_map(|c| c.role)
    }

    /// Whether `target` took writes at `at_us` as far as the readings tell: its last reading
    /// said primary (one that got no answer says it did not).
    pub fn writer_at(&self, target: u32, at_us: u64) -> bool {
        self.before(target, at_us).next().and_then(|c| c.role).is_some_and(NodeRole::is_writer)
    }

    /// Both nodes read as members of one multi-primary cluster at `at_us`: writes on both
    /// are the cluster's design, not two primaries.
    pub fn members_at(&self, a: u32, b: u32, at_us: u64) -> bool {
        self.member_at(a, at_us) && self.member_at(b, at_us)
    }

    fn member_at(&self, target: u32, at_us: u64) -> bool {
        self.before(target, at_us).next().and_then(|c| c.role).is_some_and(NodeRole::shares_writes)
    }

    fn before(&self, target: u32, at_us: u64) -> impl Iterator<Item = &RoleChange> {
        self.0.iter().rev().filter(move |c| c.target == target && c.at_us <= at_us)
    }

    /// Spans in which two or more nodes read as primaries at once: (from, to, targets).
    pub fn several_writers(&self, end_us: u64) -> Vec<(u64, u64, Vec<u32>)> {
        let mut out: Vec<(u64, u64, Vec<u32>)> = Vec::new();
        let targets: std::collections::BTreeSet<u32> = self.0.iter().map(|c| c.target).collect();
        let times = self.0.iter().map(|c| c.at_us);
        for (i, t) in times.clone().enumerate() {
            let writers: Vec<u32> = targets.iter().copied().filter(|&n| self.writer_at(n, t)).collect();
            let until = self.0.get(i + 1).map_or(end_us, |c| c.at_us);
            let members = writers.iter().all(|&n| self.member_at(n, t));
            if writers.len() < 2 || until <= t || members {
                continue;
            }
            match out.last_mut() {
                Some(last) if last.1 == t && last.2 == writers => last.1 = until,
                _ => out.push((t, until, writers)),
            }
        }
        out
    }
}

impl FailoverRecord {
    /// 1-based number of the server `key` names in `servers` (0: none).
    pub fn server_number(&self, key: &str) -> u32 {
        self.servers.iter().position(|s| s.key == key).map_or(0, |i| i as u32 + 1)
    }

    /// How reports name a check's node: its server's name, else the name of the server its
    /// URL reached directly during the run (a node down after it), else the URL.
    pub fn check_name(&self, c: &NodeCheck) -> String {
        match c.server.is_empty() {
            false => self.name_of(&c.server),
            true => self
                .servers
                .iter()
                .find(|s| s.direct.as_deref() == Some(c.node.as_str()))
                .map_or_else(|| c.node.clone(), |s| format!("{} ({})", s.name, c.node)),
        }
    }

    /// How reports name the server `key` names (its key when it is unknown).
    pub fn name_of(&self, key: &str) -> String {
        self.servers.iter().find(|s| s.key == key).map_or_else(|| key.to_string(), |s| s.name.clone())
    }

    /// The role changes by server rather than by the endpoint read: `target` becomes the
    /// server's number (results without servers: unchanged).
    pub fn server_roles(&self) -> Vec<RoleChange> {
        match self.servers.is_empty() {
            true => self.roles.clone(),
            false => by_server(&self.roles, &|key| self.server_number(key)),
        }
    }
}

/// Writes the server `key` acknowledged from `from_us` to `to_us` (acknowledgement times).
pub fn acknowledged_by(attempts: &[Attempt], key: &str, from_us: u64, to_us: u64) -> u64 {
    let by = |a: &&Attempt| a.outcome == Outcome::Acknowledged && a.node.as_deref() == Some(key);
    attempts.iter().filter(by).filter(|a| (from_us..=to_us).contains(&a.acked_at_us())).count() as u64
}

/// The server a reading names; a reading that names none (an embedded database) stands for
/// the endpoint read.
pub fn reading_key(c: &RoleChange) -> String {
    server_key(&c.node, c.target)
}

/// `node`, or for a server that names itself not (an embedded database) its endpoint.
pub fn server_key(node: &str, target: u32) -> String {
    match node.is_empty() {
        true => format!("target{target}"),
        false => node.to_string(),
    }
}

/// The server an attempt's connection named (none: it never connected).
pub fn attempt_key(a: &Attempt) -> Option<String> {
    match (&a.node, a.target) {
        (Some(n), _) => Some(n.clone()),
        (None, 0) => None,
        (None, t) if a.role.is_some() => Some(format!("target{t}")),
        (None, _) => None,
    }
}

/// `roles` with each change's `target` made the number `number` gives its server. A reading
/// without an answer counts for the server behind its endpoint only when that endpoint
/// always reached the same server (a node, not a proxy); else it says nothing of any server.
pub fn by_server(roles: &[RoleChange], number: &dyn Fn(&str) -> u32) -> Vec<RoleChange> {
    let mut one_server: BTreeMap<u32, Option<String>> = BTreeMap::new();
    for c in roles.iter().filter(|c| c.role.is_some()) {
        let key = reading_key(c);
        let seen = one_server.entry(c.target).or_insert_with(|| Some(key.clone()));
        if seen.as_deref() != Some(key.as_str()) {
            *seen = None;
        }
    }
    roles
        .iter()
        .filter_map(|c| {
            let key = match c.role {
                Some(_) => reading_key(c),
                None => one_server.get(&c.target).cloned().flatten()?,
            };
            Some(RoleChange { target: number(&key), ..c.clone() })
        })
        .filter(|c| c.target > 0)
        .collect()
}
