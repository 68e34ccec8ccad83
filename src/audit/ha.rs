//! The rules of a high-availability probe, read from its nodes' facts (what each driver read
//! in its settings) and its figures: what keeps a "no data loss" or "lag ~100 ms" claim from
//! following from these numbers.

use super::rules::finding;
use super::{Finding, Severity};
use crate::model::ha::HaRecord;
use crate::model::ResultDocument;
use serde_json::json;

pub fn all(d: &ResultDocument) -> Vec<Finding> {
    let Some(h) = &d.ha else { return Vec::new() };
    let mut out = Vec::new();
    out.extend(durability_off(h));
    out.extend(asynchronous(h));
    out.extend(lost_writes(h));
    out.extend(lag_without_load(h));
    out.extend(never_recovered(h));
    out
}

/// Nodes whose settings let an acknowledged commit vanish in a crash of that node.
fn durability_off(h: &HaRecord) -> Option<Finding> {
    let off: Vec<(String, serde_json::Value)> = h
        .nodes
        .iter()
        .filter_map(|n| {
            let f = n.facts.as_ref()?;
            f.durability.is_off().then(|| (n.name.clone(), json!(f.durability.off_because)))
        })
        .collect();
    if off.is_empty() {
        return None;
    }
    let names: Vec<&str> = off.iter().map(|(n, _)| n.as_str()).collect();
    Some(finding(
        "ha-durability-off",
        Severity::Critical,
        format!("{} allow(s) losing acknowledged commits in a crash", names.join(", ")),
        off.iter().map(|(n, v)| (n.as_str(), v.clone())).collect(),
        "a crash of such a node loses what it acknowledged in the last second or so (innodb_flush_log_at_trx_commit != 1, sync_binlog != 1, synchronous_commit = off, fsync = off): measure failover with the settings production runs, and do not call a setup with these settings durable",
    ))
}

/// Replicas that do not acknowledge commits: a failover to one can lose acknowledged writes.
fn asynchronous(h: &HaRecord) -> Option<Finding> {
    let replicated = h.nodes.len() > 1;
    let acknowledging =
        h.nodes.iter().any(|n| n.facts.as_ref().and_then(|f| f.durability.replica_acknowledges) == Some(true));
    if !replicated || acknowledging || h.nodes.iter().all(|n| n.unreachable.is_some()) {
        return None;
    }
    let roles: Vec<(String, serde_json::Value)> = h.nodes.iter().map(|n| (n.name.clone(), json!(n.role))).collect();
    Some(finding(
        "ha-async-replication",
        Severity::Warn,
        "asynchronous replication: no node waits for a replica before acknowledging a commit",
        roles.iter().map(|(n, v)| (n.as_str(), v.clone())).collect(),
        "a failover to a replica loses the commits it had not received yet, however durable each node is: a claim of no data loss across nodes needs semi-synchronous replication (MySQL/MariaDB rpl_semi_sync_*) or synchronous_standby_names with synchronous_commit on/remote_apply (PostgreSQL), or a managed service's own replication; 0 lost in one probe shows only that this failover lost nothing",
    ))
}

fn lost_writes(h: &HaRecord) -> Option<Finding> {
    let f = h.failover.as_ref()?;
    let Some(v) = &f.verification else {
        return Some(finding(
            "ha-unverified",
            Severity::Warn,
            "the acknowledged writes were not looked up after the probe (no node answered)",
            vec![("acknowledged", json!(f.outcomes.get("acknowledged").copied().unwrap_or(0)))],
            "start the surviving primary and run the probe again: without the lookup, lost writes are unknown",
        ));
    };
    (v.lost > 0).then(|| {
        finding(
            "ha-lost-writes",
            Severity::Critical,
            format!("{} acknowledged write(s) are missing on {}", v.lost, v.node),
            vec![("lost", json!(v.lost)), ("lost_seqs", json!(v.lost_seqs)), ("acknowledged", json!(v.acknowledged))],
            "the database said these commits succeeded and no longer has them: durability off, asynchronous replication with a failover, or rows deleted by someone else; find which in the nodes' settings before trusting this setup with data",
        )
    })
}

fn lag_without_load(h: &HaRecord) -> Option<Finding> {
    let l = h.lag.as_ref()?;
    (h.load.is_none()).then(|| {
        finding(
            "lag-without-load",
            Severity::Warn,
            "replica lag measured without load on the primary",
            vec![("heartbeats", json!(l.heartbeats_written)), ("rate", json!(l.rate))],
            "an idle replica keeps up with a few heartbeats a second: lag grows with the write load it must apply (the HA study saw 18 s where ~100 ms was claimed); measure under the claim's workload with --with",
        )
    })
}

fn never_recovered(h: &HaRecord) -> Option<Finding> {
    let f = h.failover.as_ref()?;
    let open = f.outages.iter().find(|o| o.to_us.is_none())?;
    Some(finding(
        "ha-not-recovered",
        Severity::Warn,
        format!("no write was acknowledged again in the last {:.1} s of the probe", open.duration_ms / 1000.0),
        vec![("from_s", json!(open.from_us as f64 / 1e6)), ("errors", json!(open.errors))],
        "the downtime is at least this long, not measured: run the probe longer than the failover takes, and give it every endpoint the primary may move to (--target, repeated)",
    ))
}
