//! Which node is the primary, read from the nodes themselves: on each writer connection before
//! its first write, and by a watcher that reads every node every `poll` while the probe runs.
//! The changes form a timeline that answers "what was this node when it acknowledged that
//! write", to the watcher's resolution. A reading is stamped when its read began: a read
//! that began before a promotion and returned after it holds the old role, and stamped at
//! its return it would follow, and overrule, a newer reading that says primary.

use super::Clock;
use crate::db::{Connection, Database, DbError};
use crate::model::ha::{NodeRole, RoleChange, RoleReading};
use crate::model::ha_servers::Timeline;
use std::cell::RefCell;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Why a node's role was not read: its error, or no answer in time.
#[derive(Debug, thiserror::Error)]
pub enum Unread {
    #[error(transparent)]
    Failed(#[from] DbError),
    #[error("no answer within {:.1} s", .0.as_secs_f64())]
    NoAnswer(Duration),
}

/// Role changes as they are seen, from the writer and the watcher (one thread, no locks),
/// each reported as it is recorded.
#[derive(Default)]
pub struct Seen(RefCell<Vec<RoleChange>>, super::stream::Events);

impl Seen {
    pub fn reporting(events: super::stream::Events) -> Seen {
        Seen(RefCell::default(), events)
    }

    /// Records `reading` of `target` (1-based), whose read began at `began_us`, when it differs
    /// from the last one recorded. A reading that began before the last recorded one of the
    /// same node is older news and is dropped.
    pub fn note(&self, target: u32, began_us: u64, reading: Result<&RoleReading, &Unread>) {
        let mut all = self.0.borrow_mut();
        let (role, evidence, node, address) = match reading {
            Ok(r) => (Some(r.role), r.evidence.clone(), r.node.clone(), r.address.clone()),
            Err(why) => (None, why.to_string(), String::new(), String::new()),
        };
        // Through a proxy the same role from another server is a change too.
        let last = all.iter().rev().find(|c| c.target == target);
        if last.is_some_and(|c| (c.role == role && c.node == node) || c.at_us > began_us) {
            return;
        }
        let change = RoleChange { at_us: began_us, target, role, evidence, node, address };
        let line = crate::model::ha_ledger::HaLine::Role(change.clone());
        super::stream::send(&self.1, super::stream::ProbeEvent::Line(line));
        all.push(change);
    }

    /// The role `target` was last read in at or before `at_us` (readings without an answer
    /// skipped), as the verdict will read it: each node's changes are kept in order.
    pub fn known_role(&self, target: u32, at_us: u64) -> Option<NodeRole> {
        Timeline(&self.0.borrow()).known_role(target, at_us)
    }

    pub fn into_changes(self) -> Vec<RoleChange> {
        let mut all = self.0.into_inner();
        all.sort_by_key(|c| c.at_us);
        all
    }
}

/// Reads every node's role every `poll` until `stop` says so, each node on a connection of
/// its own (a node that hangs delays only its own readings).
pub async fn watch<D: Database>(
    dbs: &[Arc<D>],
    clock: &Clock,
    poll: Duration,
    timeout: Duration,
    seen: &Seen,
    stop: &dyn Fn() -> bool,
) {
    let watchers =
        dbs.iter().enumerate().map(|(i, db)| watch_one(&**db, i as u32 + 1, clock, poll, timeout, seen, stop));
    futures_util::future::join_all(watchers).await;
}

async fn watch_one<D: Database>(
    db: &D,
    target: u32,
    clock: &Clock,
    poll: Duration,
    timeout: Duration,
    seen: &Seen,
    stop: &dyn Fn() -> bool,
) {
    let mut conn: Option<D::Conn> = None;
    let mut next = Instant::now();
    while !stop() {
        let began_us = clock.elapsed_us();
        let reading = tokio::time::timeout(timeout, read(db, &mut conn)).await;
        let reading = match reading {
            Ok(Ok(r)) => Ok(r),
            Ok(Err(e)) => Err(Unread::Failed(e)),
            Err(_) => Err(Unread::NoAnswer(timeout)),
        };
        if reading.is_err() {
            conn = None;
        }
        seen.note(target, began_us, reading.as_ref());
        next += poll;
        if !super::sleep_until(next.max(Instant::now()), stop).await {
            break;
        }
    }
}

async fn read<D: Database>(db: &D, conn: &mut Option<D::Conn>) -> Result<RoleReading, DbError> {
    if conn.is_none() {
        *conn = Some(db.connect().await?);
    }
    conn.as_mut().expect("connected above").node_role().await
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub(in crate::probe) fn reading(role: NodeRole) -> RoleReading {
        RoleReading::anonymous(role, "")
    }

    #[test]
    fn only_changes_are_kept_and_an_unanswered_reading_hides_no_known_role() {
        let seen = Seen::default();
        seen.note(1, 0, Ok(&reading(NodeRole::Primary)));
        seen.note(2, 5, Ok(&reading(NodeRole::Replica)));
        seen.note(1, 10, Ok(&reading(NodeRole::Primary)));
        seen.note(1, 20, Err(&Unread::Failed(DbError::lost("refused"))));
        seen.note(2, 30, Ok(&reading(NodeRole::Primary)));
        seen.note(1, 40, Ok(&reading(NodeRole::Primary)));
        let changes = seen.into_changes();
        assert_eq!(changes.len(), 5, "{changes:?}");
        let t = Timeline(&changes);
        assert_eq!(t.known_role(1, 25), Some(NodeRole::Primary));
        assert!(!t.writer_at(1, 25), "no answer: not taking writes");
        assert_eq!(t.known_role(2, 29), Some(NodeRole::Replica));
        assert!(t.writer_at(2, 30));
        assert_eq!(t.several_writers(100), vec![(40, 100, vec![1, 2])]);
    }

    /// The race CI met on a promote: the watcher's read of the replica began before the
    /// promotion and returned after the writer's own connection had read it as the primary.
    #[test]
    fn a_read_that_began_before_a_newer_recorded_one_does_not_overrule_it() {
        let seen = Seen::default();
        seen.note(2, 8_900_000, Ok(&reading(NodeRole::Replica)));
        seen.note(2, 9_005_000, Ok(&reading(NodeRole::Primary)));
        seen.note(2, 8_990_000, Ok(&reading(NodeRole::Replica)));
        let changes = seen.into_changes();
        let t = Timeline(&changes);
        assert_eq!(changes.len(), 2, "{changes:?}");
        assert_eq!(t.known_role(2, 9_010_000), Some(NodeRole::Primary));
        assert_eq!(t.known_role(2, 9_000_000), Some(NodeRole::Replica));
    }
}
