//! After a failover probe: this run's rows looked up on every server, each read directly
//! where a direct way is known (a node's own URL, not a proxy's), once the nodes have
//! settled; each server's role read, the server that ends as primary named, and what each
//! server lacks (lost) or holds that the final primary does not (diverged). A node that
//! cannot be read is unverified, never counted as fine. Servers are told apart by the
//! identity they report: a proxy and the node it reached are one server.

use super::failover::Targets;
use crate::db::{Connection, Database, DbError};
use crate::model::ha::{Attempt, FailoverRecord, NodeCheck, Outcome, RoleReading, Verification};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// At most this many sequence numbers are listed per figure (the counts count all).
const LISTED: usize = 1000;
/// Between two reads of a node that is settling.
const SETTLE_POLL: Duration = Duration::from_millis(250);

/// One endpoint read after the run: the server that answered, its rows, and how long it
/// took to settle (None: not within the deadline).
struct Read {
    role: RoleReading,
    rows: BTreeSet<u64>,
    settled_ms: Option<f64>,
}

/// This run's rows on the node; a node without the probe's table holds none of them (a
/// split brain can create it on one node only).
async fn rows<C: Connection>(conn: &mut C, run_id: i64) -> Result<BTreeSet<u64>, DbError> {
    let rows = match conn.text_rows(&format!("SELECT seq FROM fairbench_probe WHERE run_id = {run_id}")).await {
        Err(e) if e.no_such_table() => return Ok(BTreeSet::new()),
        rows => rows?,
    };
    Ok(rows.iter().filter_map(|r| r.first()?.as_deref()?.parse().ok()).collect())
}

/// The node's rows once it has settled: nothing it received is left to apply (where its
/// driver can tell) and two reads in a row agree; or, at `deadline`, as they are then.
async fn settled<D: Database>(db: &D, run_id: i64, deadline: Instant) -> Result<Read, DbError> {
    let start = Instant::now();
    let mut conn = db.connect().await?;
    let mut previous: Option<BTreeSet<u64>> = None;
    loop {
        let pending = conn.replay_pending().await?;
        let now = rows(&mut conn, run_id).await?;
        let stable = previous.as_ref() == Some(&now) && pending != Some(true);
        if stable || Instant::now() >= deadline {
            let role = conn.node_role().await?;
            let settled_ms = stable.then(|| start.elapsed().as_secs_f64() * 1000.0);
            return Ok(Read { role, rows: now, settled_ms });
        }
        previous = Some(now);
        tokio::time::sleep(SETTLE_POLL).await;
    }
}

fn check(target: u32, url: &str) -> NodeCheck {
    NodeCheck {
        target,
        node: url.to_string(),
        server: String::new(),
        through: None,
        role: None,
        unverified: None,
        present: 0,
        missing: 0,
        missing_seqs: Vec::new(),
        unacknowledged_present: 0,
        unacknowledged_present_seqs: Vec::new(),
        diverged: 0,
        diverged_seqs: Vec::new(),
        settled_ms: None,
    }
}

fn unverified(target: u32, url: &str, why: String) -> NodeCheck {
    NodeCheck { unverified: Some(why), ..check(target, url) }
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
        server: role.as_ref().map(|r| r.node.clone()).unwrap_or_default(),
        role,
        present: present.len() as u64,
        missing: missing.len() as u64,
        missing_seqs: missing.into_iter().take(LISTED).collect(),
        unacknowledged_present: unacked.len() as u64,
        unacknowledged_present_seqs: unacked.into_iter().take(LISTED).collect(),
        ..check(target, url)
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
    let last_acked = attempts.iter().rev().find(|a| a.outcome == Outcome::Acknowledged);
    let acked_last = |c: &NodeCheck| {
        last_acked.is_some_and(|a| match &a.node {
            Some(n) if !c.server.is_empty() => *n == c.server,
            _ => a.target == c.target,
        })
    };
    let (final_primary, why) = match primaries.as_slice() {
        [] => return None,
        [only] => (*only, "the only node that reads as primary after the run".to_string()),
        several => {
            let chosen = several.iter().find(|c| acked_last(c)).unwrap_or(&several[0]);
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
        server: final_primary.server.clone(),
        // Only an endpoint was read: no node's rows were looked at directly.
        through: final_primary
            .through
            .clone()
            .filter(|_| checks.iter().all(|c| c.through.is_some() || c.unverified.is_some())),
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

/// What the lookup after the run found.
pub struct Checked {
    pub checks: Vec<NodeCheck>,
    pub verification: Option<Verification>,
    /// The final primary's rows (to settle the indeterminate writes).
    final_rows: Option<BTreeSet<u64>>,
}

/// Every endpoint read once settled (at most `settle` from now), each server kept once (read
/// directly when a direct way is known), the verdict on the final primary.
pub async fn all<D: Database>(
    targets: &Targets<D>,
    attempts: &[Attempt],
    run_id: i64,
    timeout: Duration,
    settle: Duration,
) -> Checked {
    let deadline = Instant::now() + settle;
    let reads = targets.dbs.iter().map(|db| tokio::time::timeout(settle + timeout, settled(&**db, run_id, deadline)));
    let reads = futures_util::future::join_all(reads).await;
    let mut by_server: BTreeMap<String, (usize, Read, bool)> = BTreeMap::new();
    let mut checks = Vec::new();
    for (i, read) in reads.into_iter().enumerate() {
        let (target, url) = (i as u32 + 1, &targets.urls[i]);
        let read = match read {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => {
                checks.push(unverified(target, url, e.to_string()));
                continue;
            }
            Err(_) => {
                let why = format!("no answer within {:.1} s", (settle + timeout).as_secs_f64());
                checks.push(unverified(target, url, why));
                continue;
            }
        };
        let is_direct = super::servers::reaches_itself(i, targets.writers, &targets.dialled, &read.role.address);
        let key = crate::model::ha_servers::server_key(&read.role.node, target);
        match by_server.get(&key) {
            Some((_, _, true)) => {}
            Some(_) if !is_direct => {}
            _ => {
                by_server.insert(key, (i, read, is_direct));
            }
        }
    }
    let mut present = BTreeMap::new();
    for (i, read, is_direct) in by_server.into_values() {
        let (target, url) = (i as u32 + 1, &targets.urls[i]);
        let mut c = node(target, url, Some(read.role), attempts, &read.rows);
        c.settled_ms = read.settled_ms;
        c.through = (!is_direct).then(|| url.clone());
        checks.push(c);
        present.insert(target, read.rows);
    }
    checks.sort_by_key(|c| c.target);
    let verification = verdict(&checks, attempts, &present);
    let final_rows = verification.as_ref().and_then(|v| present.get(&v.target).cloned());
    for c in checks.iter_mut().filter(|c| c.unverified.is_none()) {
        let (Some(own), Some(rows)) = (&final_rows, present.get(&c.target)) else { continue };
        let diverged: Vec<u64> = rows.difference(own).copied().collect();
        c.diverged = diverged.len() as u64;
        c.diverged_seqs = diverged.into_iter().take(LISTED).collect();
    }
    Checked { checks, verification, final_rows }
}

/// The lookup's findings into the record: the checks, the verdict, and each indeterminate
/// write settled by whether the final primary holds its row.
pub fn apply(record: &mut FailoverRecord, checked: Checked) {
    record.checks = checked.checks;
    record.verification = checked.verification;
    for a in record.attempts.iter_mut().filter(|a| a.outcome == Outcome::Unknown) {
        a.settled = checked.final_rows.as_ref().map(|rows| rows.contains(&a.seq));
    }
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
            settled: None,
            probe_stalled: false,
        }
    }

    fn role(r: NodeRole) -> Option<RoleReading> {
        Some(RoleReading::anonymous(r, ""))
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
