//! The failover writer: one INSERT per slot at a fixed rate, each with its own sequence
//! number, the client's clock, the server's clock and the session id. A failed write or a
//! lost connection drops the connection; the next slot connects again, trying the targets in
//! order, so the slot rate is the backoff. Each connection reads its node's role before its
//! first write, and a watcher reads every node's role while the writer runs ([`super::roles`]);
//! every attempt is recorded. Afterwards [`super::verdict`] reads the outages and any split
//! brain off the attempts and roles, and [`super::check`] looks the rows up on every node.

use super::roles::{self, Seen};
use super::stream::{send, ProbeEvent};
use super::{Clock, Pacer, ProbeError};
use crate::db::{Connection, Database, DbError, Param};
use crate::model::ha::{Attempt, NodeRole, Outcome, RoleChange};
use crate::model::ha_ledger::HaLine;
use crate::model::ha_node::ProbeTiming;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Clone, Debug)]
pub struct FailoverOptions {
    /// Attempts per second.
    pub rate: f64,
    pub duration: Duration,
    /// Connect, or one write, longer than this counts as failed (timed out).
    pub attempt_timeout: Duration,
    /// How often the role watcher reads each node.
    pub role_poll: Duration,
    /// How long the check after the run waits at most for the nodes to settle.
    pub settle_timeout: Duration,
    pub run_id: i64,
    /// Where each attempt and role reading is reported as it happens (the probe's record).
    pub events: super::stream::Events,
}

/// The endpoints the probe reads: the targets in `--target` order (the writer uses these),
/// then the other nodes known (a sandbox's nodes, `--node`s), which are only watched and
/// checked. With their redacted URLs.
pub struct Targets<D> {
    pub dbs: Vec<Arc<D>>,
    pub urls: Vec<String>,
    /// How many of them are `--target`s.
    pub writers: usize,
    /// Each endpoint's `host:port` as dialled (to tell a node from a proxy in front of it).
    pub dialled: Vec<String>,
}

struct Live<C> {
    target: usize,
    conn: C,
    insert: usize,
    /// The node's role, read on this connection before its first write.
    role: NodeRole,
    /// The server's own identity (through a proxy: which node answered).
    node: String,
}

/// The writer's INSERT: the server's clock and session id as the driver spells them.
pub fn insert_sql<D: Database>(db: &D) -> String {
    let clock = db.clock_sql();
    format!(
        "INSERT INTO fairbench_probe (run_id, seq, client_us, server_time, session_id) VALUES (?, ?, ?, {}, {})",
        clock.now_text, clock.session_id
    )
}

/// Creates the probe table on the first target that answers (the others get it through
/// replication, or already have it).
pub async fn setup<D: Database>(targets: &Targets<D>, timeout: Duration) -> Result<(), ProbeError> {
    let mut last = None;
    for (db, url) in targets.dbs[..targets.writers].iter().zip(&targets.urls) {
        match tokio::time::timeout(timeout, db.connect()).await {
            Ok(Ok(mut conn)) => {
                return super::ensure_table(&**db, &mut conn, &super::probe_table(), super::MARKER).await
            }
            Ok(Err(e)) => last = Some(format!("{url}: {e}")),
            Err(_) => last = Some(format!("{url}: no answer within {} s", timeout.as_secs())),
        }
    }
    Err(ProbeError::Refused(format!("no target accepts connections: {}", last.unwrap_or_default())))
}

/// Writes until `duration` has passed or `stop` says so, while the role watcher reads every
/// node and the probe watches its own timing; returns every attempt, the role changes seen,
/// how the schedule was kept and when the probe itself stalled.
pub async fn write<D: Database>(
    targets: &Targets<D>,
    opts: &FailoverOptions,
    clock: Clock,
    stop: &dyn Fn() -> bool,
) -> Written {
    let seen = Seen::reporting(opts.events.clone());
    let done = std::cell::Cell::new(false);
    let watcher_stop = || done.get() || stop();
    let threshold = super::timing::threshold(opts.rate);
    let stalls = super::timing::StallWatch::start(clock, threshold);
    let writer = async {
        let written = write_all(targets, opts, clock, &seen, stop).await;
        done.set(true);
        written
    };
    let watcher = roles::watch(&targets.dbs, &clock, opts.role_poll, opts.attempt_timeout, &seen, &watcher_stop);
    let ((attempts, pacer), ()) = tokio::join!(writer, watcher);
    let timing = super::timing::timing(stalls.finish(), &pacer, &clock, threshold);
    Written { attempts, roles: seen.into_changes(), pacer, timing }
}

/// What the writer and the watchers leave.
pub struct Written {
    pub attempts: Vec<Attempt>,
    pub roles: Vec<RoleChange>,
    pub pacer: Pacer,
    pub timing: ProbeTiming,
}

async fn write_all<D: Database>(
    targets: &Targets<D>,
    opts: &FailoverOptions,
    clock: Clock,
    seen: &Seen,
    stop: &dyn Fn() -> bool,
) -> (Vec<Attempt>, Pacer) {
    let mut pacer = Pacer::new(opts.rate, clock.start + opts.duration);
    let mut live: Option<Live<D::Conn>> = None;
    let mut attempts: Vec<Attempt> = Vec::new();
    let mut seq = 0u64;
    while pacer.wait(stop).await {
        seq += 1;
        let started = Instant::now();
        let mut attempt = match live.take() {
            Some(l) => write_one::<D>(opts, &clock, l, seq, &mut live).await,
            None => match connect_any(targets, opts.attempt_timeout, &clock, seen).await {
                Ok(l) => write_one::<D>(opts, &clock, l, seq, &mut live).await,
                Err(e) => failed(Outcome::NotConnected, 0, &e),
            },
        };
        if attempt.outcome == Outcome::Acknowledged {
            pacer.acknowledged();
        }
        let error = (attempt.outcome != Outcome::Acknowledged).then(|| attempt.outcome.name().to_string());
        send(&opts.events, ProbeEvent::Write(pacer.done(started, error)));
        attempt.seq = seq;
        attempt.at_us = clock.us(started);
        attempt.took_us = started.elapsed().as_micros() as u64;
        let acked_at = attempt.at_us + attempt.took_us;
        if let Some(l) =
            live.as_mut().filter(|l| attempt.outcome == Outcome::Acknowledged && !writer(seen, l, acked_at))
        {
            attempt.role_after = read_again(l, opts, &clock, seen).await;
        }
        // The message once per run of the same code: an outage repeats it every slot.
        if attempt.code.is_some() && attempts.last().is_some_and(|p| p.code == attempt.code) {
            attempt.message = None;
        }
        send(&opts.events, ProbeEvent::Line(HaLine::Attempt(attempt.clone())));
        attempts.push(attempt);
    }
    (attempts, pacer)
}

/// Whether the node `l` writes to read as a primary when it acknowledged at `at_us`, both on
/// the writer's connection and in every reading recorded so far. Either can hold an
/// in-between state of a promotion: a role is read in more than one statement (MariaDB:
/// its variables, then its source), so a reading overlapping the promote's steps can say
/// "no source, read_only=ON", and overlapping readings cannot be ordered by their starts.
fn writer<C>(seen: &Seen, l: &Live<C>, at_us: u64) -> bool {
    let recorded = seen.known_role(l.target as u32 + 1, at_us).unwrap_or(l.role);
    l.role.is_writer() && recorded.is_writer()
}

/// A node that read as not a primary (on this connection or in the readings so far)
/// acknowledged a write: its role read again on the same connection, after the write, tells
/// a promotion between the readings (now a primary) from a write taken by a replica (still
/// one). Only then, so the writer's pace is otherwise untouched.
async fn read_again<C: Connection>(
    l: &mut Live<C>,
    opts: &FailoverOptions,
    clock: &Clock,
    seen: &Seen,
) -> Option<NodeRole> {
    let began_us = clock.elapsed_us();
    let role = tokio::time::timeout(opts.attempt_timeout, l.conn.node_role()).await.ok()?.ok()?;
    seen.note(l.target as u32 + 1, began_us, Ok(&role));
    l.role = role.role;
    Some(role.role)
}

/// One INSERT on a live connection; keeps the connection in `keep` only if it succeeded.
async fn write_one<D: Database>(
    opts: &FailoverOptions,
    clock: &Clock,
    mut l: Live<D::Conn>,
    seq: u64,
    keep: &mut Option<Live<D::Conn>>,
) -> Attempt {
    let client_us = clock.elapsed_us() as i64;
    let params = [Param::Int(opts.run_id), Param::Int(seq as i64), Param::Int(client_us)];
    let target = l.target as u32 + 1;
    let (role, node) = (Some(l.role), Some(l.node.clone()).filter(|n| !n.is_empty()));
    let started = Instant::now();
    let mut attempt = match tokio::time::timeout(opts.attempt_timeout, l.conn.execute(l.insert, &params)).await {
        Ok(Ok(_)) if started.elapsed() > opts.attempt_timeout => {
            // The answer came, but after the attempt's time: cut there, as a client would.
            let late = format!("answered after {:.3} s, past --attempt-timeout", started.elapsed().as_secs_f64());
            failed(Outcome::Unknown, target, &DbError::timeout(late))
        }
        Ok(Ok(_)) => {
            *keep = Some(l);
            attempt(Outcome::Acknowledged, target)
        }
        // The commit may have happened: only the server's own answer says it did not.
        Ok(Err(e)) if e.connection_lost => failed(Outcome::Unknown, target, &e),
        Ok(Err(e)) => failed(Outcome::Failed, target, &e),
        Err(_) => failed(
            Outcome::Unknown,
            target,
            &DbError::timeout(format!("no answer within {:.1} s", opts.attempt_timeout.as_secs_f64())),
        ),
    };
    (attempt.role, attempt.node) = (role, node);
    attempt
}

fn attempt(outcome: Outcome, target: u32) -> Attempt {
    Attempt {
        seq: 0,
        at_us: 0,
        took_us: 0,
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

fn failed(outcome: Outcome, target: u32, e: &DbError) -> Attempt {
    Attempt { code: Some(e.code.to_string()), message: Some(e.to_string()), ..attempt(outcome, target) }
}

/// The first target, in order, that connects, says it takes writes and prepares the INSERT
/// in time, as a client given several hosts and asking for a writable one would (libpq's
/// `target_session_attrs=read-write`); when none says so, the first that connected at all: a
/// node is then written to whatever its role, and the role read here decides what its
/// acknowledgements mean (a replica that takes them is a split brain).
async fn connect_any<D: Database>(
    targets: &Targets<D>,
    timeout: Duration,
    clock: &Clock,
    seen: &Seen,
) -> Result<Live<D::Conn>, DbError> {
    let mut last = DbError::lost("no target");
    let mut fallback = None;
    for (i, db) in targets.dbs[..targets.writers].iter().enumerate() {
        let sql = insert_sql(&**db);
        let attempt = async {
            let mut conn = db.connect().await?;
            let began_us = clock.elapsed_us();
            let role = conn.node_role().await?;
            seen.note(i as u32 + 1, began_us, Ok(&role));
            let insert = conn.prepare(&sql).await?;
            Ok::<_, DbError>(Live { target: i, conn, insert, role: role.role, node: role.node })
        };
        match tokio::time::timeout(timeout, attempt).await {
            Ok(Ok(l)) if l.role.is_writer() => return Ok(l),
            Ok(Ok(l)) => fallback = fallback.or(Some(l)),
            Ok(Err(e)) => last = e,
            Err(_) => last = DbError::timeout(format!("connect: no answer within {:.1} s", timeout.as_secs_f64())),
        }
    }
    fallback.ok_or(last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::roles::tests::reading;

    fn live(role: NodeRole) -> Live<()> {
        Live { target: 1, conn: (), insert: 0, role, node: String::new() }
    }

    /// The second race CI met on a promote: the writer's connection read node 2 as the
    /// primary, and a watcher read that overlapped it caught the promote's "no source,
    /// read_only=ON" step and, beginning later, was recorded after it. The write it then
    /// acknowledged is read again rather than judged on either reading alone.
    #[test]
    fn an_acknowledgement_is_checked_again_when_any_reading_says_not_a_primary() {
        let seen = Seen::default();
        seen.note(2, 1_000, Ok(&reading(NodeRole::Replica)));
        seen.note(2, 3_003_000, Ok(&reading(NodeRole::Primary)));
        seen.note(2, 3_004_000, Ok(&reading(NodeRole::ReadOnly)));
        assert!(!writer(&seen, &live(NodeRole::Primary), 3_007_000), "the later reading says read-only");
        assert!(writer(&seen, &live(NodeRole::Primary), 3_003_500), "before it, both say primary");
        assert!(!writer(&seen, &live(NodeRole::Replica), 3_003_500), "the connection's own reading says replica");
        seen.note(2, 3_008_000, Ok(&reading(NodeRole::Primary)));
        assert!(writer(&seen, &live(NodeRole::Primary), 3_054_000), "read again: the primary");
    }
}
