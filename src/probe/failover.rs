//! The failover writer: one INSERT per slot at a fixed rate, each with its own sequence
//! number, the client's clock, the server's clock and the session id. A failed write or a
//! lost connection drops the connection; the next slot connects again, trying the targets in
//! order, so the slot rate is the backoff. Every attempt is recorded; afterwards the outages
//! are read off the attempts, and the acknowledged writes looked up on the surviving primary.

use super::{at, count, Clock, Pacer, ProbeError};
use crate::db::{Connection, Database, DbError, Param};
use crate::model::ha::{Attempt, FailoverRecord, Outage, Outcome, Verification};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Clone, Debug)]
pub struct FailoverOptions {
    /// Attempts per second.
    pub rate: f64,
    pub duration: Duration,
    /// Connect, or one write, longer than this counts as failed (timed out).
    pub attempt_timeout: Duration,
    pub run_id: i64,
}

/// The targets in `--target` order, with their redacted URLs.
pub struct Targets<D> {
    pub dbs: Vec<Arc<D>>,
    pub urls: Vec<String>,
}

struct Live<C> {
    target: usize,
    conn: C,
    insert: usize,
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
    for (db, url) in targets.dbs.iter().zip(&targets.urls) {
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

/// Writes until `duration` has passed or `stop` says so; returns every attempt and how the
/// schedule was kept.
pub async fn write<D: Database>(
    targets: &Targets<D>,
    opts: &FailoverOptions,
    clock: Clock,
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
            None => match connect_any(targets, opts.attempt_timeout).await {
                Ok(l) => write_one::<D>(opts, &clock, l, seq, &mut live).await,
                Err(e) => failed(Outcome::NotConnected, 0, &e),
            },
        };
        if attempt.outcome == Outcome::Acknowledged {
            pacer.acknowledged();
        }
        attempt.seq = seq;
        attempt.at_us = clock.us(started);
        attempt.took_us = started.elapsed().as_micros() as u64;
        // The message once per run of the same code: an outage repeats it every slot.
        if attempt.code.is_some() && attempts.last().is_some_and(|p| p.code == attempt.code) {
            attempt.message = None;
        }
        attempts.push(attempt);
    }
    (attempts, pacer)
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
    match tokio::time::timeout(opts.attempt_timeout, l.conn.execute(l.insert, &params)).await {
        Ok(Ok(_)) => {
            *keep = Some(l);
            Attempt { seq, at_us: 0, took_us: 0, outcome: Outcome::Acknowledged, target, code: None, message: None }
        }
        // The commit may have happened: only the server's own answer says it did not.
        Ok(Err(e)) if e.connection_lost => failed(Outcome::Unknown, target, &e),
        Ok(Err(e)) => failed(Outcome::Failed, target, &e),
        Err(_) => failed(
            Outcome::Unknown,
            target,
            &DbError::timeout(format!("no answer within {:.1} s", opts.attempt_timeout.as_secs_f64())),
        ),
    }
}

fn failed(outcome: Outcome, target: u32, e: &DbError) -> Attempt {
    Attempt {
        seq: 0,
        at_us: 0,
        took_us: 0,
        outcome,
        target,
        code: Some(e.code.to_string()),
        message: Some(e.to_string()),
    }
}

/// The first target, in order, that connects and prepares the INSERT in time.
async fn connect_any<D: Database>(targets: &Targets<D>, timeout: Duration) -> Result<Live<D::Conn>, DbError> {
    let mut last = DbError::lost("no target");
    for (i, db) in targets.dbs.iter().enumerate() {
        let sql = insert_sql(&**db);
        let attempt = async {
            let mut conn = db.connect().await?;
            let insert = conn.prepare(&sql).await?;
            Ok::<_, DbError>(Live { target: i, conn, insert })
        };
        match tokio::time::timeout(timeout, attempt).await {
            Ok(Ok(l)) => return Ok(l),
            Ok(Err(e)) => last = e,
            Err(_) => last = DbError::timeout(format!("connect: no answer within {:.1} s", timeout.as_secs_f64())),
        }
    }
    Err(last)
}

/// The failover record of `attempts` (without its verification).
pub fn record(attempts: Vec<Attempt>, opts: &FailoverOptions, end_us: u64) -> FailoverRecord {
    let mut outcomes = BTreeMap::new();
    for a in &attempts {
        count(&mut outcomes, a.outcome.name().to_string());
    }
    let outages = outages(&attempts, end_us);
    let downtime_ms = outages.iter().map(|o| o.duration_ms).fold(0.0, f64::max);
    FailoverRecord {
        rate: opts.rate,
        attempt_timeout_s: opts.attempt_timeout.as_secs_f64(),
        run_id: opts.run_id,
        attempts,
        outcomes,
        outages,
        downtime_ms,
        verification: None,
    }
}

/// Each span without an acknowledged write that holds at least one attempt that was not
/// acknowledged: from the last acknowledgement before it (or the probe's start) to the first
/// after it (or the end).
pub fn outages(attempts: &[Attempt], end_us: u64) -> Vec<Outage> {
    let mut out = Vec::new();
    let mut last_ack: (u64, u32) = (0, 0);
    let mut open: Option<Outage> = None;
    for a in attempts {
        if a.outcome == Outcome::Acknowledged {
            let acked_at = a.at_us + a.took_us;
            if let Some(mut o) = open.take() {
                o.to_us = Some(acked_at);
                o.duration_ms = (acked_at - o.from_us) as f64 / 1000.0;
                o.target_after = Some(a.target);
                out.push(o);
            }
            last_ack = (acked_at, a.target);
            continue;
        }
        let o = open.get_or_insert_with(|| Outage {
            from_us: last_ack.0,
            to_us: None,
            duration_ms: 0.0,
            errors: BTreeMap::new(),
            target_before: last_ack.1,
            target_after: None,
        });
        let key = match &a.code {
            Some(code) => format!("{} {code}", a.outcome.name()),
            None => a.outcome.name().to_string(),
        };
        count(&mut o.errors, key);
    }
    if let Some(mut o) = open {
        o.duration_ms = end_us.saturating_sub(o.from_us) as f64 / 1000.0;
        out.push(o);
    }
    out
}

/// The node to verify on: the target acknowledged last (the surviving primary), else the first.
pub fn surviving_target(attempts: &[Attempt]) -> usize {
    attempts.iter().rev().find(|a| a.outcome == Outcome::Acknowledged).map_or(0, |a| a.target as usize - 1)
}

/// Looks up this run's rows on `db`: which acknowledged writes are missing, which writes of
/// unknown or failed outcome are present.
pub async fn verify<D: Database>(
    db: &D,
    node: &str,
    attempts: &[Attempt],
    run_id: i64,
) -> Result<Verification, ProbeError> {
    let mut conn = db.connect().await.map_err(at(format!("cannot verify on {node}")))?;
    let rows = conn
        .text_rows(&format!("SELECT seq FROM fairbench_probe WHERE run_id = {run_id}"))
        .await
        .map_err(at(format!("cannot read the probe's rows on {node}")))?;
    let present: BTreeSet<u64> = rows.iter().filter_map(|r| r.first()?.as_deref()?.parse().ok()).collect();
    Ok(compare(node, attempts, &present))
}

/// What `present` says about each attempt.
pub fn compare(node: &str, attempts: &[Attempt], present: &BTreeSet<u64>) -> Verification {
    let of = |o: Outcome| attempts.iter().filter(move |a| a.outcome == o).map(|a| a.seq);
    let lost: Vec<u64> = of(Outcome::Acknowledged).filter(|s| !present.contains(s)).collect();
    let unknown_present: Vec<u64> = of(Outcome::Unknown).filter(|s| present.contains(s)).collect();
    Verification {
        node: node.to_string(),
        at: crate::model::rfc3339(std::time::SystemTime::now()),
        acknowledged: of(Outcome::Acknowledged).count() as u64,
        lost: lost.len() as u64,
        lost_seqs: lost.into_iter().take(1000).collect(),
        unacknowledged_present: unknown_present.len() as u64,
        unacknowledged_present_seqs: unknown_present.into_iter().take(1000).collect(),
        failed_present: of(Outcome::Failed).filter(|s| present.contains(s)).count() as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(seq: u64, at_ms: u64, outcome: Outcome, target: u32) -> Attempt {
        let code = (outcome != Outcome::Acknowledged).then(|| "2013".to_string());
        Attempt { seq, at_us: at_ms * 1000, took_us: 1000, outcome, target, code, message: None }
    }

    #[test]
    fn an_outage_runs_from_the_last_acknowledgement_to_the_next() {
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
        let o = outages(&attempts, 900_000);
        assert_eq!(o.len(), 2);
        assert_eq!((o[0].from_us, o[0].to_us, o[0].duration_ms), (1000, Some(401_000), 400.0));
        assert_eq!((o[0].target_before, o[0].target_after), (1, Some(2)));
        assert_eq!(o[0].errors.get("unknown 2013"), Some(&1));
        assert_eq!(o[0].errors.values().sum::<u64>(), 3);
        // Never acknowledged again: open to the end.
        assert_eq!((o[1].from_us, o[1].to_us, o[1].duration_ms), (501_000, None, 399.0));
        let r = record(attempts.to_vec(), &opts(), 900_000);
        assert_eq!(r.downtime_ms, 400.0);
        assert_eq!(r.outcomes.get("acknowledged"), Some(&3));
        assert_eq!(surviving_target(&attempts), 1);
    }

    fn opts() -> FailoverOptions {
        FailoverOptions {
            rate: 10.0,
            duration: Duration::from_secs(1),
            attempt_timeout: Duration::from_secs(1),
            run_id: 7,
        }
    }

    #[test]
    fn lost_and_unacknowledged_writes_are_found_by_sequence() {
        use Outcome::*;
        let attempts = [a(1, 0, Acknowledged, 1), a(2, 1, Acknowledged, 1), a(3, 2, Unknown, 1), a(4, 3, Failed, 1)];
        let v = compare("n", &attempts, &BTreeSet::from([1, 3]));
        assert_eq!((v.acknowledged, v.lost, v.lost_seqs.clone()), (2, 1, vec![2]));
        assert_eq!((v.unacknowledged_present, v.unacknowledged_present_seqs.clone()), (1, vec![3]));
        assert_eq!(v.failed_present, 0);
        let v = compare("n", &attempts, &BTreeSet::from([1, 2, 4]));
        assert_eq!((v.lost, v.unacknowledged_present, v.failed_present), (0, 0, 1));
    }
}
