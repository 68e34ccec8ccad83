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
    out.extend(split_brain(h));
    out.extend(two_primaries(h));
    out.extend(lost_writes(h));
    out.extend(unverified_nodes(h));
    out.extend(lag_without_load(h));
    out.extend(never_recovered(h));
    out.extend(probe_stalled(d));
    out.extend(views_differ(d));
    out.extend(scheduled_failover(d));
    out
}

/// A failover whose new primary this run's own promote step made: its downtime is the
/// schedule's, not how long anything took to detect the failure.
fn scheduled_failover(d: &ResultDocument) -> Option<Finding> {
    use crate::model::fault::{downtime_origin, DowntimeOrigin};
    let f = d.ha.as_ref()?.failover.as_ref()?;
    let (DowntimeOrigin::Scheduled, Some(step)) = downtime_origin(f, d.faults.as_ref())? else { return None };
    Some(finding(
        "ha-scheduled-failover",
        Severity::Info,
        format!(
            "the downtime ({:.0} ms) ended with this run's own {} at {:.3} s: it is scheduled, not detected",
            f.downtime_ms,
            step.label(),
            step.at_us.unwrap_or(0) as f64 / 1e6
        ),
        vec![("step", json!(step.label())), ("step_at_us", json!(step.at_us))],
        "it measures when the schedule promoted a replica plus fairbench's reaction, not how long a manager or cluster takes to notice a dead primary: compare it only with other scheduled failovers, and measure detection with a manager (Patroni, Galera, a cloud endpoint) and no promote step",
    ))
}

/// The workload beside a failover probe stalled for another span than the probe's outage.
fn views_differ(d: &ResultDocument) -> Option<Finding> {
    let v = d.outage_views().filter(|v| !v.agree())?;
    Some(finding(
        "ha-views-differ",
        Severity::Warn,
        format!(
            "the workload stalled {:.0} ms, the probe's downtime is {:.0} ms ({:+.0} ms, more than the {:.0} ms the resolutions allow)",
            v.workload_ms(),
            v.probe_ms,
            v.difference_ms(),
            v.tolerance_ms()
        ),
        vec![
            ("probe_ms", json!(v.probe_ms)),
            ("workload_longest_event_ms", json!(v.longest_event_ms)),
            ("workload_no_event_ms", json!(v.no_event_ms)),
            ("workload_errors", json!(v.errors)),
        ],
        "the probe measures one connection writing one row, reconnecting at once to the targets in turn; the workload's clients keep their connections to their one target, wait on locks, crash recovery or a cluster's eviction, and reconnect after --reconnect-timeout: quote the view that matches the claim (an application's is the workload's, through the endpoint it uses)",
    ))
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

/// One cause, one finding: when the run's server is non-durable (`durability-off`) and so are
/// probed nodes (`ha-durability-off`, the same setting on a sandbox's nodes), the two become
/// one `durability-off` that names the nodes and says where it matters (the run, and HA).
pub fn fold_durability(general: Vec<Finding>, ha: Vec<Finding>) -> Vec<Finding> {
    let mut out = general;
    let Some(run) = out.iter().position(|f| f.id == "durability-off") else {
        out.extend(ha);
        return out;
    };
    for f in ha {
        if f.id != "ha-durability-off" {
            out.push(f);
            continue;
        }
        let d = &mut out[run];
        let nodes: Vec<String> = f.evidence.keys().cloned().collect();
        d.title = format!(
            "{}; the HA probe's node(s) {} too: it matters for the run (commits cost less than durable ones) and for HA (a crash loses acknowledged commits)",
            d.title,
            nodes.join(", ")
        );
        for (node, why) in f.evidence {
            d.evidence.insert(format!("node {node}"), why);
        }
        d.advice = format!("{}; {}", d.advice, f.advice);
    }
    out
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

/// Writes a replica acknowledged, or two primaries taking writes in turns: the downtime and
/// loss of a clean failover do not apply.
fn split_brain(h: &HaRecord) -> Option<Finding> {
    let f = h.failover.as_ref()?;
    let sb = f.split_brain.as_ref().filter(|sb| !sb.on_non_primary.is_empty())?;
    let non_primary: u64 = sb.on_non_primary.iter().map(|w| w.acknowledged).sum();
    let mut parts = Vec::new();
    for w in &sb.on_non_primary {
        let role = w.role.map_or("of unknown role", |r| r.name());
        let who = if w.node.is_empty() { format!("target{}", w.target) } else { f.name_of(&w.node) };
        parts.push(format!("{} write(s) acknowledged by {who} while it was {role}", w.acknowledged));
    }
    let ends = f.verification.as_ref().map_or("no node".to_string(), |v| f.name_of(&v.server));
    Some(finding(
        "ha-split-brain",
        Severity::Critical,
        format!("split brain: {}", parts.join("; ")),
        vec![
            ("acknowledged_on_non_primary", json!(non_primary)),
            ("on_non_primary", json!(sb.on_non_primary)),
            ("overlapping", json!(sb.overlapping)),
            ("final_primary", json!(ends)),
            ("diverged", json!(f.verification.as_ref().map_or(0, |v| v.diverged))),
        ],
        "a node that is not the primary (or a second primary) accepted writes that the real primary does not have: the probe's user passes read_only (MySQL/MariaDB: SUPER, READ_ONLY ADMIN), or the cluster let two nodes take writes; measure with the application's own, unprivileged user, and fence the old primary before promoting another",
    ))
}

/// Two servers writable at once: both took the probe's writes in turns, both read as
/// primaries at the same time while it ran, or both do after it. Named, with the times and
/// the acknowledged writes each took.
fn two_primaries(h: &HaRecord) -> Option<Finding> {
    let f = h.failover.as_ref()?;
    let (title, evidence) = match f.split_brain.as_ref().and_then(|sb| sb.overlapping.first()) {
        Some(p) => (
            format!(
                "{} and {} both took writes while both were primaries, {:.3} s -> {:.3} s: {} and {} acknowledged write(s)",
                f.name_of(&p.nodes[0]),
                f.name_of(&p.nodes[1]),
                p.from_us as f64 / 1e6,
                p.to_us as f64 / 1e6,
                p.acknowledged_each[0],
                p.acknowledged_each[1]
            ),
            json!(f.split_brain.as_ref().map(|sb| &sb.overlapping)),
        ),
        None => at_once(h, f)?,
    };
    Some(finding(
        "ha-two-primaries",
        Severity::Critical,
        title,
        vec![("spans", evidence)],
        "a client pointed at either primary writes to a copy that goes its own way, and no figure of a clean failover holds: a failover must fence the old primary (read_only, stop it, or remove it from the proxy) before or as it promotes another",
    ))
}

/// Servers that read as primaries at the same time while the probe ran, or after it.
fn at_once(h: &HaRecord, f: &crate::model::ha::FailoverRecord) -> Option<(String, serde_json::Value)> {
    let end_us = (h.duration_s * 1e6) as u64;
    let roles = f.server_roles();
    let name = |n: u32| match f.servers.get(n as usize - 1) {
        Some(s) => s.name.clone(),
        None => format!("target{n}"),
    };
    let spans = crate::model::ha_servers::Timeline(&roles).several_writers(end_us);
    if let Some((from, to, servers)) = spans.first() {
        let took = |n: u32| {
            let key = f.servers.get(n as usize - 1).map_or("", |s| s.key.as_str());
            crate::model::ha_servers::acknowledged_by(&f.attempts, key, *from, *to)
        };
        let each: Vec<String> =
            servers.iter().map(|&n| format!("{} ({} acknowledged write(s))", name(n), took(n))).collect();
        let title = format!(
            "{} read as primaries at the same time from {:.3} s to {:.3} s",
            each.join(" and "),
            *from as f64 / 1e6,
            *to as f64 / 1e6
        );
        return Some((title, json!(spans)));
    }
    let writable: Vec<String> = f
        .checks
        .iter()
        .filter(|c| c.role.as_ref().is_some_and(|r| r.role.is_writer() && !r.role.shares_writes()))
        .map(|c| if c.server.is_empty() { c.node.clone() } else { f.name_of(&c.server) })
        .collect();
    (writable.len() > 1)
        .then(|| (format!("{} all read as primaries after the probe", writable.join(" and ")), json!(writable)))
}

/// The probe's own process did not run on time: it saw nothing in those spans.
fn probe_stalled(d: &ResultDocument) -> Option<Finding> {
    let f = d.ha.as_ref()?.failover.as_ref()?;
    let t = &f.timing;
    let late: Vec<String> = d
        .faults
        .iter()
        .flat_map(|r| r.late(t.threshold_ms))
        .map(|(e, ms)| format!("{} {ms:.0} ms late", e.label()))
        .collect();
    if t.stalls.is_empty() && late.is_empty() {
        return None;
    }
    let spans: Vec<String> = t
        .stalls
        .iter()
        .map(|s| format!("{:.3} s -> {:.3} s ({:.0} ms)", s.from_us as f64 / 1e6, s.to_us as f64 / 1e6, s.ms()))
        .collect();
    let mut parts = Vec::new();
    if !spans.is_empty() {
        parts.push(format!("the probe's own process stalled {}", spans.join(", ")));
    }
    if !late.is_empty() {
        parts.push(format!("fault step(s) began late: {}", late.join(", ")));
    }
    Some(finding(
        "probe-stalled",
        Severity::Warn,
        format!("{}; {} write slot(s) dropped", parts.join("; "), t.dropped_slots),
        vec![("stalls", json!(t.stalls)), ("dropped_slots", json!(t.dropped_slots)), ("late_fault_steps", json!(late))],
        "while the probe does not run it sees no outage and tries no write: an outage's start is uncertain across a stall (the report gives its bounds), and attempts cut by the stall say nothing of the database; run the probe on a host that is not overloaded, or give it a core of its own",
    ))
}

fn lost_writes(h: &HaRecord) -> Option<Finding> {
    let f = h.failover.as_ref()?;
    let acknowledged = json!(f.outcomes.get("acknowledged").copied().unwrap_or(0));
    let Some(v) = &f.verification else {
        let answered = f.checks.iter().any(|c| c.unverified.is_none());
        return Some(finding(
            "ha-unverified",
            Severity::Warn,
            match answered {
                true => "the acknowledged writes were not judged: no node that answered reads as primary after the probe",
                false => "the acknowledged writes were not looked up after the probe (no node answered)",
            },
            vec![("acknowledged", acknowledged)],
            "start the surviving primary (or promote one) and look again with `fairbench probe verify RESULT`: without the lookup, lost writes are unknown",
        ));
    };
    (v.lost > 0 || v.diverged > 0).then(|| {
        finding(
            "ha-lost-writes",
            Severity::Critical,
            format!("{} acknowledged write(s) are missing on {}, the final primary; {} diverged", v.lost, f.name_of(&v.server), v.diverged),
            vec![
                ("lost", json!(v.lost)),
                ("lost_seqs", json!(first(&v.lost_seqs))),
                ("diverged", json!(v.diverged)),
                ("diverged_seqs", json!(first(&v.diverged_seqs))),
                ("acknowledged", json!(v.acknowledged)),
            ],
            "the database said these commits succeeded and the node that ends as primary does not have them (diverged: another node has rows the primary lacks): durability off, asynchronous replication with a failover, a split brain, or rows deleted by someone else; find which in the nodes' settings before trusting this setup with data",
        )
    })
}

/// Nodes whose rows could not be read after the probe: what they hold is unknown.
fn unverified_nodes(h: &HaRecord) -> Option<Finding> {
    let f = h.failover.as_ref()?;
    f.verification.as_ref()?;
    let unverified: Vec<(String, serde_json::Value)> =
        f.checks.iter().filter_map(|c| Some((f.check_name(c), json!(c.unverified.as_ref()?)))).collect();
    if unverified.is_empty() {
        return None;
    }
    let names: Vec<&str> = unverified.iter().map(|(n, _)| n.as_str()).collect();
    Some(finding(
        "ha-unverified",
        Severity::Warn,
        format!("{} could not be read after the probe: unverified", names.join(", ")),
        unverified.iter().map(|(n, v)| (n.as_str(), v.clone())).collect(),
        "what these nodes hold is unknown (a copy that diverged would not show): start them and run `fairbench probe verify RESULT`",
    ))
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
    // A split brain says why no primary took the writes again; its finding says it.
    if f.split_brain.is_some() {
        return None;
    }
    let open = f.outages.iter().find(|o| o.to_us.is_none())?;
    Some(finding(
        "ha-not-recovered",
        Severity::Warn,
        format!("no write was acknowledged again in the last {:.1} s of the probe", open.duration_ms / 1000.0),
        vec![("from_s", json!(open.from_us as f64 / 1e6)), ("errors", json!(open.errors))],
        "the downtime is at least this long, not measured: run the probe longer than the failover takes, and give it every endpoint the primary may move to (--target, repeated)",
    ))
}

/// The first 20 sequence numbers (the result's verification lists up to 1,000).
fn first(seqs: &[u64]) -> &[u64] {
    &seqs[..seqs.len().min(20)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_non_durable_setting_is_one_finding_naming_where_it_matters() {
        let run = finding(
            "durability-off",
            Severity::Critical,
            "durability is switched off",
            vec![("sync_binlog", json!("0"))],
            "a",
        );
        let node = |n: &str| (n.to_string(), json!({"sync_binlog": "0"}));
        let nodes = [node("target1"), node("target2")];
        let ha = finding(
            "ha-durability-off",
            Severity::Critical,
            "target1, target2 allow(s) losing acknowledged commits in a crash",
            nodes.iter().map(|(n, v)| (n.as_str(), v.clone())).collect(),
            "b",
        );
        let out = fold_durability(vec![run.clone()], vec![ha.clone()]);
        assert_eq!(out.len(), 1, "{out:?}");
        assert!(out[0].title.contains("target1, target2 too") && out[0].title.contains("for HA"), "{}", out[0].title);
        assert!(out[0].evidence.contains_key("node target2"));
        // Without a workload's finding, the probe's stands alone.
        assert_eq!(fold_durability(Vec::new(), vec![ha])[0].id, "ha-durability-off");
    }
}
