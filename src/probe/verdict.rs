//! What the failover writer's attempts say, read against each node's role at the moment it
//! acknowledged: the outages (between acknowledged writes *on a primary*), and the writes
//! that make a clean-failover reading untrue (split brain).

use super::count;
use super::failover::FailoverOptions;
use crate::model::ha::{
    Attempt, FailoverRecord, NonPrimaryWrites, Outage, Outcome, OverlappingWriters, RoleChange, SplitBrain, Timeline,
};
use std::collections::BTreeMap;

/// When the attempt's write was acknowledged, microseconds since the probe started.
fn acked_at(a: &Attempt) -> u64 {
    a.at_us + a.took_us
}

/// The failover record of `attempts` and the role changes seen (without the lookup of rows).
pub fn record(attempts: Vec<Attempt>, roles: Vec<RoleChange>, opts: &FailoverOptions, end_us: u64) -> FailoverRecord {
    let mut outcomes = BTreeMap::new();
    for a in &attempts {
        count(&mut outcomes, a.outcome.name().to_string());
    }
    let timeline = Timeline(&roles);
    let on_primary = |a: &Attempt| on_primary(&timeline, a);
    let outages = outages(&attempts, &on_primary, end_us);
    let downtime_ms = outages.iter().map(|o| o.duration_ms).fold(0.0, f64::max);
    let split_brain = split_brain(&attempts, &timeline);
    FailoverRecord {
        rate: opts.rate,
        attempt_timeout_s: opts.attempt_timeout.as_secs_f64(),
        run_id: opts.run_id,
        attempts,
        outcomes,
        outages,
        downtime_ms,
        roles,
        role_poll_ms: opts.role_poll.as_secs_f64() * 1000.0,
        split_brain,
        verification: None,
        checks: Vec::new(),
    }
}

/// An acknowledged write on a node that read as a primary when it acknowledged.
/// The role read after it decides when the one before said "not a primary" (a promotion
/// between the two readings).
fn on_primary(timeline: &Timeline, a: &Attempt) -> bool {
    a.outcome == Outcome::Acknowledged && role_at_ack(timeline, a).is_some_and(|r| r.is_writer())
}

fn role_at_ack(timeline: &Timeline, a: &Attempt) -> Option<crate::model::ha::NodeRole> {
    let before = timeline.known_role(a.target, acked_at(a)).or(a.role);
    match (before, a.role_after) {
        (Some(b), Some(after)) if !b.is_writer() => Some(after),
        _ => before,
    }
}

/// Each span without a write acknowledged on a primary that holds at least one attempt that
/// was not: from the last such acknowledgement before it (or the probe's start) to the first
/// after it (or the end). A write a replica acknowledged does not end an outage.
pub fn outages(attempts: &[Attempt], on_primary: &dyn Fn(&Attempt) -> bool, end_us: u64) -> Vec<Outage> {
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
        let o = open.get_or_insert_with(|| Outage {
            from_us: last_ack.0,
            to_us: None,
            duration_ms: 0.0,
            errors: BTreeMap::new(),
            target_before: last_ack.1,
            target_after: None,
            node_before: last_ack.2.clone(),
            node_after: None,
        });
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

/// Writes acknowledged by a node that was not the primary, and nodes that took writes in
/// turns while both read as primaries. None: neither happened.
pub fn split_brain(attempts: &[Attempt], timeline: &Timeline) -> Option<SplitBrain> {
    let acked = attempts.iter().filter(|a| a.outcome == Outcome::Acknowledged);
    let mut on_non_primary: BTreeMap<u32, NonPrimaryWrites> = BTreeMap::new();
    for a in acked.clone().filter(|a| !on_primary(timeline, a)) {
        let w = on_non_primary.entry(a.target).or_insert(NonPrimaryWrites {
            target: a.target,
            role: role_at_ack(timeline, a),
            acknowledged: 0,
            first_us: acked_at(a),
            last_us: 0,
        });
        w.acknowledged += 1;
        w.last_us = acked_at(a);
    }
    let overlapping = overlapping(acked.filter(|a| on_primary(timeline, a)), timeline);
    (!on_non_primary.is_empty() || !overlapping.is_empty())
        .then(|| SplitBrain { on_non_primary: on_non_primary.into_values().collect(), overlapping })
}

/// A write acknowledged on X after another node Y took writes since X's previous one, while
/// Y still reads as a primary: the two took writes in overlapping time. A failback (Y demoted
/// or gone before X writes again) is not one.
fn overlapping<'a>(acked: impl Iterator<Item = &'a Attempt>, timeline: &Timeline) -> Vec<OverlappingWriters> {
    let mut last: BTreeMap<u32, u64> = BTreeMap::new();
    let mut pairs: BTreeMap<[u32; 2], OverlappingWriters> = BTreeMap::new();
    for a in acked {
        let t = acked_at(a);
        if let Some(&previous) = last.get(&a.target) {
            for (&other, &other_at) in last.iter().filter(|(&n, _)| n != a.target) {
                if other_at > previous && timeline.writer_at(other, t) && !timeline.members_at(a.target, other, t) {
                    let key = [a.target.min(other), a.target.max(other)];
                    let p = pairs.entry(key).or_insert(OverlappingWriters {
                        targets: key,
                        acknowledged: 0,
                        from_us: other_at,
                        to_us: t,
                    });
                    p.acknowledged += 1;
                    p.to_us = t;
                }
            }
        }
        last.insert(a.target, t);
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
            node: None,
            role_after: None,
        }
    }

    fn change(at_ms: u64, target: u32, role: Option<NodeRole>) -> RoleChange {
        RoleChange { at_us: at_ms * 1000, target, role, evidence: String::new() }
    }

    fn opts() -> FailoverOptions {
        FailoverOptions {
            rate: 10.0,
            duration: Duration::from_secs(1),
            attempt_timeout: Duration::from_secs(1),
            role_poll: Duration::from_millis(100),
            run_id: 7,
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
        let r = record(attempts.to_vec(), roles, &opts(), 900_000);
        let o = &r.outages;
        assert_eq!(o.len(), 2);
        assert_eq!((o[0].from_us, o[0].to_us, o[0].duration_ms), (1000, Some(401_000), 400.0));
        assert_eq!((o[0].target_before, o[0].target_after), (1, Some(2)));
        assert_eq!(o[0].errors.get("unknown 2013"), Some(&1));
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
        let r = record(attempts.to_vec(), roles, &opts(), 900_000);
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
        let r = record(vec![a(1, 100, Failed, 1), promoted, replica], roles, &opts(), 400_000);
        let sb = r.split_brain.expect("the replica's write");
        assert_eq!((sb.on_non_primary.len(), sb.on_non_primary[0].target), (1, 2), "{sb:?}");
        assert_eq!(r.outages[0].target_after, Some(1), "the promoted node's write ends the outage");
    }

    #[test]
    fn two_primaries_taking_writes_in_turns_overlap_and_a_failback_does_not() {
        use Outcome::*;
        let attempts = [a(1, 0, Acknowledged, 1), a(2, 100, Acknowledged, 2), a(3, 200, Acknowledged, 1)];
        let both = vec![change(0, 1, Some(NodeRole::Primary)), change(0, 2, Some(NodeRole::Primary))];
        let r = record(attempts.to_vec(), both.clone(), &opts(), 300_000);
        let sb = r.split_brain.expect("two primaries");
        assert_eq!(sb.overlapping.len(), 1);
        assert_eq!((sb.overlapping[0].targets, sb.overlapping[0].acknowledged), ([1, 2], 1));
        // Node 2 demoted before node 1 writes again: a failback, not a split brain.
        let mut demoted = both;
        demoted.push(change(150, 2, Some(NodeRole::ReadOnly)));
        let r = record(attempts.to_vec(), demoted, &opts(), 300_000);
        assert!(r.split_brain.is_none(), "{:?}", r.split_brain);
    }
}
