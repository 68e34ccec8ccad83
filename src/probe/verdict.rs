//! What the failover writer's attempts say, read against each server's role at the moment it
//! acknowledged: the outages (between acknowledged writes *on a primary*), and the writes
//! that make a clean-failover reading untrue (split brain, two primaries). Servers are told
//! apart by the identity they report, not by the endpoint dialled: through a proxy, one
//! target reaches several servers.

use super::count;
use super::failover::FailoverOptions;
use crate::model::ha::{
    Attempt, FailoverRecord, NodeRole, NonPrimaryWrites, Outage, Outcome, OverlappingWriters, RoleChange, SplitBrain,
};
use crate::model::ha_node::{ProbeTiming, Server};
use crate::model::ha_servers::{acknowledged_by, attempt_key, by_server, reading_key, Timeline};
use std::collections::BTreeMap;

fn acked_at(a: &Attempt) -> u64 {
    a.acked_at_us()
}

/// The attempts and readings by server: each server numbered in order of appearance, the
/// role changes renumbered so that a timeline answers per server.
pub struct View {
    pub keys: Vec<String>,
    pub roles: Vec<RoleChange>,
}

impl View {
    pub fn new(attempts: &[Attempt], roles: &[RoleChange]) -> View {
        let mut keys: Vec<String> = Vec::new();
        let answered = roles.iter().filter(|c| c.role.is_some()).map(reading_key);
        for key in answered.chain(attempts.iter().filter_map(attempt_key)) {
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        let number = |key: &str| keys.iter().position(|k| k == key).map_or(0, |i| i as u32 + 1);
        let roles = by_server(roles, &number);
        View { keys, roles }
    }

    /// The attempt's server number (0: it reached none).
    pub fn server(&self, a: &Attempt) -> u32 {
        attempt_key(a).and_then(|k| self.keys.iter().position(|x| *x == k)).map_or(0, |i| i as u32 + 1)
    }

    pub fn key(&self, server: u32) -> String {
        self.keys.get(server as usize - 1).cloned().unwrap_or_default()
    }

    fn timeline(&self) -> Timeline<'_> {
        Timeline(&self.roles)
    }

    /// The servers with their reported addresses as names (the caller names the ones it knows).
    fn servers(&self, roles: &[RoleChange]) -> Vec<Server> {
        let address =
            |key: &str| roles.iter().find(|c| c.node == key && !c.address.is_empty()).map(|c| c.address.clone());
        let server = |key: &String| {
            let address = address(key).unwrap_or_else(|| key.clone());
            Server { key: key.clone(), name: address.clone(), address, direct: None }
        };
        self.keys.iter().map(server).collect()
    }
}

/// The failover record of `attempts` and the role changes seen (without the lookup of rows).
pub fn record(
    mut attempts: Vec<Attempt>,
    roles: Vec<RoleChange>,
    opts: &FailoverOptions,
    end_us: u64,
    timing: ProbeTiming,
) -> FailoverRecord {
    for a in attempts.iter_mut() {
        a.probe_stalled = timing.stalls.iter().any(|s| s.overlaps(a.at_us, acked_at(a)));
    }
    let mut outcomes = BTreeMap::new();
    for a in &attempts {
        count(&mut outcomes, a.outcome.name().to_string());
    }
    let view = View::new(&attempts, &roles);
    let on_primary = |a: &Attempt| on_primary(&view, a);
    let outages = outages(&attempts, &on_primary, &timing, end_us);
    let downtime_ms = outages.iter().map(|o| o.duration_ms).fold(0.0, f64::max);
    let split_brain = split_brain(&attempts, &view);
    FailoverRecord {
        rate: opts.rate,
        attempt_timeout_s: opts.attempt_timeout.as_secs_f64(),
        run_id: opts.run_id,
        attempts,
        outcomes,
        outages,
        downtime_ms,
        servers: view.servers(&roles),
        roles,
        role_poll_ms: opts.role_poll.as_secs_f64() * 1000.0,
        split_brain,
        verification: None,
        checks: Vec::new(),
        timing,
        settle_timeout_s: opts.settle_timeout.as_secs_f64(),
    }
}

/// An acknowledged write on a server that read as a primary when it acknowledged.
/// The role read after it decides when the one before said "not a primary" (a promotion
/// between the two readings).
fn on_primary(view: &View, a: &Attempt) -> bool {
    a.outcome == Outcome::Acknowledged && role_at_ack(view, a).is_some_and(|r| r.is_writer())
}

fn role_at_ack(view: &View, a: &Attempt) -> Option<NodeRole> {
    let before = view.timeline().known_role(view.server(a), acked_at(a)).or(a.role);
    match (before, a.role_after) {
        (Some(b), Some(after)) if !b.is_writer() => Some(after),
        _ => before,
    }
}

/// Each span without a write acknowledged on a primary that holds at least one attempt that
/// was not: from the last such acknowledgement before it (or the probe's start) to the first
/// after it (or the end). A write a replica acknowledged does not end an outage; an attempt
/// the probe's own stall cut says nothing of the database and neither opens nor ends one.
pub fn outages(
    attempts: &[Attempt],
    on_primary: &dyn Fn(&Attempt) -> bool,
    timing: &ProbeTiming,
    end_us: u64,
) -> Vec<Outage> {
    let mut out = Vec::new();
    let mut last_ack: (u64, u32, Option<String>) = (0, 0, None);
    let mut open: Option<Outage> = None;
    for a in attempts {
        if on_primary(a) {
            let acked_at = acked_at(a);
            if let Some(mut o) = open.take() {
                o.to_us = Some(acked_at);
                o.duration_ms = (acked_at - o.from_us) as f64 / 1000.0;
                o.target_after = Some(a.target);
                o.node_after = a.node.clone();
                out.push(o);
            }
            last_ack = (acked_at, a.target, a.node.clone());
            continue;
        }
        if a.probe_stalled && a.outcome != Outcome::Acknowledged {
            continue;
        }
        let o = open.get_or_insert_with(|| opening(&last_ack, a.at_us, timing));
        let key = match (&a.code, a.outcome) {
            (Some(code), _) => format!("{} {code}", a.outcome.name()),
            (None, Outcome::Acknowledged) => "acknowledged by a node that was not the primary".to_string(),
            (None, _) => a.outcome.name().to_string(),
        };
        count(&mut o.errors, key);
    }
    if let Some(mut o) = open {
        o.duration_ms = end_us.saturating_sub(o.from_us) as f64 / 1000.0;
        out.push(o);
    }
    out
}

/// An outage opened by an attempt at `at_us`: from the last acknowledgement, or from the end
/// of the probe's own stall between the two (it saw nothing then).
fn opening(last_ack: &(u64, u32, Option<String>), at_us: u64, timing: &ProbeTiming) -> Outage {
    let stalled_until =
        timing.stalls.iter().filter(|s| s.overlaps(last_ack.0, at_us)).map(|s| s.to_us.min(at_us)).max();
    let from_us = stalled_until.map_or(last_ack.0, |t| t.max(last_ack.0));
    Outage {
        from_us,
        earliest_from_us: (from_us > last_ack.0).then_some(last_ack.0),
        to_us: None,
        duration_ms: 0.0,
        errors: BTreeMap::new(),
        target_before: last_ack.1,
        target_after: None,
        node_before: last_ack.2.clone(),
        node_after: None,
    }
}

/// Writes acknowledged by a server that was not the primary, and servers that took writes
/// in turns while both read as primaries. None: neither happened.
pub fn split_brain(attempts: &[Attempt], view: &View) -> Option<SplitBrain> {
    let acked = attempts.iter().filter(|a| a.outcome == Outcome::Acknowledged);
    let mut on_non_primary: BTreeMap<u32, NonPrimaryWrites> = BTreeMap::new();
    for a in acked.clone().filter(|a| !on_primary(view, a)) {
        let w = on_non_primary.entry(view.server(a)).or_insert(NonPrimaryWrites {
            target: a.target,
            node: a.node.clone().unwrap_or_default(),
            role: role_at_ack(view, a),
            acknowledged: 0,
            first_us: acked_at(a),
            last_us: 0,
        });
        w.acknowledged += 1;
        w.last_us = acked_at(a);
    }
    let mut overlapping = overlapping(acked.filter(|a| on_primary(view, a)), view);
    for p in overlapping.iter_mut() {
        let took = |key: &str| acknowledged_by(attempts, key, p.from_us, p.to_us);
        p.acknowledged_each = [took(&p.nodes[0]), took(&p.nodes[1])];
    }
    (!on_non_primary.is_empty() || !overlapping.is_empty())
        .then(|| SplitBrain { on_non_primary: on_non_primary.into_values().collect(), overlapping })
}

/// A write acknowledged on server X after another server Y took writes since X's previous
/// one, while Y still reads as a primary: the two took writes in overlapping time. A
/// failback (Y demoted or gone before X writes again) is not one.
fn overlapping<'a>(acked: impl Iterator<Item = &'a Attempt>, view: &View) -> Vec<OverlappingWriters> {
    let timeline = view.timeline();
    let mut last: BTreeMap<u32, (u64, u32)> = BTreeMap::new();
    let mut pairs: BTreeMap<[u32; 2], OverlappingWriters> = BTreeMap::new();
    for a in acked {
        let (t, server) = (acked_at(a), view.server(a));
        if let Some(&(previous, _)) = last.get(&server) {
            for (&other, &(other_at, other_target)) in last.iter().filter(|(&n, _)| n != server) {
                if other_at > previous && timeline.writer_at(other, t) && !timeline.members_at(server, other, t) {
                    let key = [server.min(other), server.max(other)];
                    let targets = [a.target.min(other_target), a.target.max(other_target)];
                    let p = pairs.entry(key).or_insert(OverlappingWriters {
                        targets,
                        nodes: [view.key(key[0]), view.key(key[1])],
                        acknowledged: 0,
                        acknowledged_each: [0, 0],
                        from_us: other_at,
                        to_us: t,
                    });
                    p.acknowledged += 1;
                    p.to_us = t;
                }
            }
        }
        last.insert(server, (t, a.target));
    }
    pairs.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ha::NodeRole;
    use std::time::Duration;

    fn a(seq: u64, at_ms: u64, outcome: Outcome, target: u32) -> Attempt {
        let code = (outcome != Outcome::Acknowledged).then(|| "2013".to_string());
        Attempt {
            seq,
            at_us: at_ms * 1000,
            took_us: 1000,
            outcome,
            target,
            code,
            message: None,
            role: None,
            node: (target > 0).then(|| format!("target{target}")),
            role_after: None,
            settled: None,
            probe_stalled: false,
        }
    }

    fn change(at_ms: u64, target: u32, role: Option<NodeRole>) -> RoleChange {
        let node = if role.is_some() { format!("target{target}") } else { String::new() };
        RoleChange { at_us: at_ms * 1000, target, role, evidence: String::new(), node, address: String::new() }
    }

    fn opts() -> FailoverOptions {
        FailoverOptions {
            rate: 10.0,
            duration: Duration::from_secs(1),
            attempt_timeout: Duration::from_secs(1),
            role_poll: Duration::from_millis(100),
            settle_timeout: Duration::from_secs(1),
            run_id: 7,
            events: None,
        }
    }

    #[test]
    fn an_outage_runs_from_the_last_acknowledgement_on_a_primary_to_the_next() {
        use Outcome::*;
        let attempts = [
            a(1, 0, Acknowledged, 1),
            a(2, 100, Unknown, 1),
            a(3, 200, NotConnected, 0),
            a(4, 300, Failed, 2),
            a(5, 400, Acknowledged, 2),
            a(6, 500, Acknowledged, 2),
            a(7, 600, NotConnected, 0),
        ];
        let roles = vec![
            change(0, 1, Some(NodeRole::Primary)),
            change(0, 2, Some(NodeRole::Replica)),
            change(350, 2, Some(NodeRole::Primary)),
        ];
        let r = record(attempts.to_vec(), roles, &opts(), 900_000, ProbeTiming::default());
        let o = &r.outages;
        assert_eq!(o.len(), 2);
        assert_eq!((o[0].from_us, o[0].to_us, o[0].duration_ms), (1000, Some(401_000), 400.0));
        assert_eq!((o[0].target_before, o[0].target_after), (1, Some(2)));
        assert_eq!(o[0].errors.get("indeterminate 2013"), Some(&1));
        assert_eq!(o[0].errors.values().sum::<u64>(), 3);
        // Never acknowledged again: open to the end.
        assert_eq!((o[1].from_us, o[1].to_us, o[1].duration_ms), (501_000, None, 399.0));
        assert_eq!(r.downtime_ms, 400.0);
        assert_eq!(r.outcomes.get("acknowledged"), Some(&3));
        assert!(r.split_brain.is_none(), "the writer moved to a promoted node: {:?}", r.split_brain);
    }

    #[test]
    fn writes_a_replica_acknowledged_are_split_brain_and_end_no_outage() {
        use Outcome::*;
        let attempts = [
            a(1, 0, Acknowledged, 1),
            a(2, 100, NotConnected, 0),
            a(3, 200, Acknowledged, 2),
            a(4, 300, Acknowledged, 2),
            a(5, 400, Acknowledged, 1),
        ];
        let roles = vec![
            change(0, 1, Some(NodeRole::Primary)),
            change(0, 2, Some(NodeRole::Replica)),
            change(150, 1, None),
            change(390, 1, Some(NodeRole::Primary)),
        ];
        let r = record(attempts.to_vec(), roles, &opts(), 900_000, ProbeTiming::default());
        assert_eq!(r.outages.len(), 1);
        let o = &r.outages[0];
        assert_eq!((o.from_us, o.to_us, o.target_after), (1000, Some(401_000), Some(1)));
        assert_eq!(o.errors.get("acknowledged by a node that was not the primary"), Some(&2));
        let sb = r.split_brain.expect("split brain");
        assert_eq!(sb.on_non_primary.len(), 1);
        let w = &sb.on_non_primary[0];
        assert_eq!(
            (w.target, w.role, w.acknowledged, w.first_us, w.last_us),
            (2, Some(NodeRole::Replica), 2, 201_000, 301_000)
        );
        assert!(sb.overlapping.is_empty());
    }

    #[test]
    fn a_promotion_between_the_reading_and_the_write_is_no_split_brain() {
        use Outcome::*;
        let mut promoted = a(2, 200, Acknowledged, 1);
        promoted.role_after = Some(NodeRole::Primary);
        let mut replica = a(3, 300, Acknowledged, 2);
        replica.role_after = Some(NodeRole::Replica);
        let roles = vec![change(0, 1, Some(NodeRole::Replica)), change(0, 2, Some(NodeRole::Replica))];
        let r = record(vec![a(1, 100, Failed, 1), promoted, replica], roles, &opts(), 400_000, ProbeTiming::default());
        let sb = r.split_brain.expect("the replica's write");
        assert_eq!((sb.on_non_primary.len(), sb.on_non_primary[0].target), (1, 2), "{sb:?}");
        assert_eq!(r.outages[0].target_after, Some(1), "the promoted node's write ends the outage");
    }

    #[test]
    fn two_primaries_taking_writes_in_turns_overlap_and_a_failback_does_not() {
        use Outcome::*;
        let attempts = [a(1, 0, Acknowledged, 1), a(2, 100, Acknowledged, 2), a(3, 200, Acknowledged, 1)];
        let both = vec![change(0, 1, Some(NodeRole::Primary)), change(0, 2, Some(NodeRole::Primary))];
        let r = record(attempts.to_vec(), both.clone(), &opts(), 300_000, ProbeTiming::default());
        let sb = r.split_brain.expect("two primaries");
        assert_eq!(sb.overlapping.len(), 1);
        assert_eq!((sb.overlapping[0].targets, sb.overlapping[0].acknowledged), ([1, 2], 1));
        // Node 2 demoted before node 1 writes again: a failback, not a split brain.
        let mut demoted = both;
        demoted.push(change(150, 2, Some(NodeRole::ReadOnly)));
        let r = record(attempts.to_vec(), demoted, &opts(), 300_000, ProbeTiming::default());
        assert!(r.split_brain.is_none(), "{:?}", r.split_brain);
    }
}
