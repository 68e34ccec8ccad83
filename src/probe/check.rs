//! After a failover probe: this run's rows looked up on every node, each node's role read,
//! the node that ends as primary named, and what it lacks (lost) or others hold that it does
//! not (diverged). A node that cannot be read is unverified, never counted as fine.

use super::failover::Targets;
use crate::db::{Connection, Database, DbError};
use crate::model::ha::{Attempt, NodeCheck, Outcome, RoleReading, Verification};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// At most this many sequence numbers are listed per figure (the counts count all).
const LISTED: usize = 1000;

async fn rows<D: Database>(db: &D, run_id: i64) -> Result<(RoleReading, BTreeSet<u64>), DbError> {
    let mut conn = db.connect().await?;
    let role = conn.node_role().await?;
    let rows = conn.text_rows(&format!("SELECT seq FROM fairbench_probe WHERE run_id = {run_id}")).await?;
    Ok((role, rows.iter().filter_map(|r| r.first()?.as_deref()?.parse().ok()).collect()))
}

fn unverified(target: u32, url: &str, why: String) -> NodeCheck {
    NodeCheck {
        target,
        node: url.to_string(),
        role: None,
        unverified: Some(why),
        present: 0,
        missing: 0,
        missing_seqs: Vec::new(),
        unacknowledged_present: 0,
        unacknowledged_present_seqs: Vec::new(),
    }
}

/// What `present` (the node's rows) says about the attempts.
pub fn node(
    target: u32,
    url: &str,
    role: Option<RoleReading>,
    attempts: &[Attempt],
    present: &BTreeSet<u64>,
) -> NodeCheck {
    let acked = |a: &&Attempt| a.outcome == Outcome::Acknowledged;
    let missing: Vec<u64> = attempts.iter().filter(acked).map(|a| a.seq).filter(|s| !present.contains(s)).collect();
    let unacked: Vec<u64> =
        attempts.iter().filter(|a| !acked(a)).map(|a| a.seq).filter(|s| present.contains(s)).collect();
    NodeCheck {
        target,
        node: url.to_string(),
        role,
        unverified: None,
        present: present.len() as u64,
        missing: missing.len() as u64,
        missing_seqs: missing.into_iter().take(LISTED).collect(),
        unacknowledged_present: unacked.len() as u64,
        unacknowledged_present_seqs: unacked.into_iter().take(LISTED).collect(),
    }
}

/// The verdict on the node that ends as primary: the only node that reads as one, or, when
/// several do, the one that acknowledged last. None when no readable node is a primary.
/// `present` holds each readable node's rows, by target.
pub fn verdict(
    checks: &[NodeCheck],
    attempts: &[Attempt],
    present: &BTreeMap<u32, BTreeSet<u64>>,
) -> Option<Verification> {
    let primaries: Vec<&NodeCheck> =
        checks.iter().filter(|c| c.role.as_ref().is_some_and(|r| r.role.is_writer())).collect();
    let last_acked = attempts.iter().rev().find(|a| a.outcome == Outcome::Acknowledged).map(|a| a.target);
    let (final_primary, why) = match primaries.as_slice() {
        [] => return None,
        [only] => (*only, "the only node that reads as primary after the run".to_string()),
        several => {
            let chosen = several.iter().find(|c| Some(c.target) == last_acked).unwrap_or(&several[0]);
            let members = several.iter().all(|c| c.role.as_ref().is_some_and(|r| r.role.shares_writes()));
            let why = match members {
                true => format!("{} members of a multi-primary cluster take writes; judged on the one that acknowledged last, the others must hold the same rows", several.len()),
                false => format!("{} nodes read as primary after the run; this one acknowledged last", several.len()),
            };
            (*chosen, why)
        }
    };
    let own = present.get(&final_primary.target).cloned().unwrap_or_default();
    let elsewhere: BTreeSet<u64> =
        present.iter().filter(|(t, _)| **t != final_primary.target).flat_map(|(_, s)| s.iter().copied()).collect();
    let diverged: Vec<u64> = elsewhere.difference(&own).copied().collect();
    let of = |o: Outcome| attempts.iter().filter(move |a| a.outcome == o).map(|a| a.seq);
    Some(Verification {
        node: final_primary.node.clone(),
        target: final_primary.target,
        why,
        at: crate::model::rfc3339(std::time::SystemTime::now()),
        acknowledged: of(Outcome::Acknowledged).count() as u64,
        lost: final_primary.missing,
        lost_seqs: final_primary.missing_seqs.clone(),
        unacknowledged_present: of(Outcome::Unknown).filter(|s| own.contains(s)).count() as u64,
        unacknowledged_present_seqs: of(Outcome::Unknown).filter(|s| own.contains(s)).take(LISTED).collect(),
        failed_present: of(Outcome::Failed).filter(|s| own.contains(s)).count() as u64,
        diverged: diverged.len() as u64,
        diverged_seqs: diverged.into_iter().take(LISTED).collect(),
    })
}

/// Every node looked up: the checks, and the verdict on the final primary.
pub async fn all<D: Database>(
    targets: &Targets<D>,
    attempts: &[Attempt],
    run_id: i64,
    timeout: Duration,
) -> (Vec<NodeCheck>, Option<Verification>) {
    let mut checks = Vec::new();
    let mut present = BTreeMap::new();
    for (i, (db, url)) in targets.dbs.iter().zip(&targets.urls).enumerate() {
        let target = i as u32 + 1;
        match tokio::time::timeout(timeout, rows(&**db, run_id)).await {
            Ok(Ok((role, rows))) => {
                checks.push(node(target, url, Some(role), attempts, &rows));
                present.insert(target, rows);
            }
            Ok(Err(e)) => checks.push(unverified(target, url, e.to_string())),
            Err(_) => checks.push(unverified(target, url, format!("no answer within {:.1} s", timeout.as_secs_f64()))),
        }
    }
    let verdict = verdict(&checks, attempts, &present);
    (checks, verdict)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ha::NodeRole;

    fn a(seq: u64, outcome: Outcome, target: u32) -> Attempt {
        Attempt {
            seq,
            at_us: seq * 1000,
            took_us: 100,
            outcome,
            target,
            code: None,
            message: None,
            role: None,
            node: None,
            role_after: None,
        }
    }

    fn role(r: NodeRole) -> Option<RoleReading> {
        Some(RoleReading { role: r, evidence: String::new(), node: String::new() })
    }

    #[test]
    fn lost_and_diverged_are_judged_on_the_node_that_ends_as_primary() {
        use Outcome::*;
        let attempts =
            [a(1, Acknowledged, 1), a(2, Acknowledged, 1), a(3, Unknown, 1), a(4, Acknowledged, 2), a(5, Failed, 2)];
        let p1 = BTreeSet::from([1, 3]);
        let p2 = BTreeSet::from([1, 2, 4, 5]);
        let checks = vec![
            node(1, "n1", role(NodeRole::Primary), &attempts, &p1),
            node(2, "n2", role(NodeRole::Replica), &attempts, &p2),
        ];
        assert_eq!((checks[0].present, checks[0].missing, checks[0].missing_seqs.clone()), (2, 2, vec![2, 4]));
        assert_eq!(checks[0].unacknowledged_present_seqs, vec![3]);
        assert_eq!(checks[1].unacknowledged_present_seqs, vec![5]);
        let present = BTreeMap::from([(1, p1), (2, p2)]);
        let v = verdict(&checks, &attempts, &present).unwrap();
        assert_eq!((v.target, v.lost, v.lost_seqs.clone()), (1, 2, vec![2, 4]));
        assert_eq!((v.diverged, v.diverged_seqs.clone()), (3, vec![2, 4, 5]));
        assert_eq!((v.unacknowledged_present, v.failed_present), (1, 0));
        assert!(v.why.starts_with("the only node"), "{}", v.why);
        // No node reads as primary: no verdict, whatever the rows.
        let replicas = vec![
            node(1, "n1", role(NodeRole::ReadOnly), &attempts, &BTreeSet::new()),
            unverified(2, "n2", "down".into()),
        ];
        assert!(verdict(&replicas, &attempts, &BTreeMap::new()).is_none());
    }
}
