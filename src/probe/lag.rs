//! Replica lag: heartbeats (rows with a sequence number) inserted on the primary at a fixed
//! rate, and each replica read every `poll` for the highest sequence it holds. Replication
//! applies a primary's commits in order, so a replica that shows heartbeat n holds every
//! earlier one: each heartbeat's lag is the time from its acknowledgement on the primary to
//! the first read that showed it or a later one. One client clock times both ends; the
//! resolution is the poll interval.

use super::stream::{send, ProbeEvent};
use super::{at, count, Clock, Pacer, ProbeError};
use crate::db::{Connection, Database, DbError, Param, Value};
use crate::model::ha::{LagRecord, LagSecond, ReplicaLag};
use crate::model::ha_ledger::HaLine;
use crate::stats::LatencyHistogram;
use std::cell::Cell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Clone, Debug)]
pub struct LagOptions {
    /// Heartbeats per second.
    pub rate: f64,
    pub duration: Duration,
    pub poll: Duration,
    /// How long after the last heartbeat replicas are still read for the ones they lack.
    pub drain: Duration,
    pub timeout: Duration,
    pub run_id: i64,
    /// Where each heartbeat and each replica's rise is reported as it happens.
    pub events: super::stream::Events,
}

pub const INSERT: &str = "INSERT INTO fairbench_heartbeat (run_id, seq, client_us) VALUES (?, ?, ?)";

/// What the writer acknowledged: `acked[n - 1]` is heartbeat n's acknowledgement time (µs
/// since the probe started), `None` if its write failed.
pub struct Written {
    pub acked: Vec<Option<u64>>,
    /// Latency of each acknowledged write.
    pub latencies: LatencyHistogram,
    pub errors: BTreeMap<String, u64>,
    /// How the writer kept its schedule.
    pub pacer: Pacer,
}

impl Written {
    pub fn new(pacer: Pacer) -> Written {
        Written { acked: Vec::new(), latencies: LatencyHistogram::new(), errors: BTreeMap::new(), pacer }
    }
}

/// One replica's reads: each time the highest heartbeat it held went up, (µs, heartbeat).
#[derive(Default)]
pub struct Seen {
    pub rises: Vec<(u64, u64)>,
    pub errors: BTreeMap<String, u64>,
}

/// Creates the heartbeat table on the primary and waits until every replica has it.
pub async fn setup<D: Database>(
    primary: &D,
    replicas: &[(Arc<D>, String)],
    timeout: Duration,
) -> Result<(), ProbeError> {
    let mut conn = tokio::time::timeout(timeout, primary.connect())
        .await
        .unwrap_or_else(|_| Err(DbError::timeout("no answer")))
        .map_err(at("cannot connect to the primary"))?;
    super::ensure_table(primary, &mut conn, &super::heartbeat_table(), super::MARKER).await?;
    for (db, url) in replicas {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let reached = async { db.connect().await?.text_rows("SELECT COUNT(*) FROM fairbench_heartbeat").await };
            match tokio::time::timeout(timeout, reached).await {
                Ok(Ok(_)) => break,
                Ok(Err(e)) if Instant::now() >= deadline => {
                    return Err(ProbeError::Refused(format!(
                        "replica {url} did not receive fairbench_heartbeat within 30 s (is it replicating from the primary?): {e}"
                    )))
                }
                Err(_) if Instant::now() >= deadline => {
                    return Err(ProbeError::Refused(format!("replica {url}: no answer within {} s", timeout.as_secs())))
                }
                _ => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        }
    }
    Ok(())
}

/// Writes heartbeats and reads every replica until `duration` has passed (or `stop`), then
/// reads on until each replica shows the last acknowledged heartbeat or `drain` passes.
pub async fn run<D: Database>(
    primary: Arc<D>,
    replicas: Vec<Arc<D>>,
    opts: &LagOptions,
    clock: Clock,
    stop: Rc<dyn Fn() -> bool>,
) -> (Written, Vec<Seen>) {
    // The last acknowledged heartbeat, once the writer is done.
    let final_seq: Rc<Cell<Option<(u64, Instant)>>> = Rc::new(Cell::new(None));
    let readers: Vec<_> = replicas
        .into_iter()
        .enumerate()
        .map(|(i, db)| {
            let (opts, final_seq) = (opts.clone(), final_seq.clone());
            tokio::task::spawn_local(async move { read(&*db, (i as u32 + 1, &opts), clock, &final_seq).await })
        })
        .collect();
    let written = write(&*primary, opts, clock, &*stop).await;
    let last = written.acked.iter().rposition(Option::is_some).map_or(0, |i| i as u64 + 1);
    final_seq.set(Some((last, Instant::now())));
    let mut seen = Vec::new();
    for r in readers {
        seen.push(r.await.unwrap_or_default());
    }
    (written, seen)
}

async fn write<D: Database>(db: &D, opts: &LagOptions, clock: Clock, stop: &dyn Fn() -> bool) -> Written {
    let sql = INSERT;
    let mut out = Written::new(Pacer::new(opts.rate, clock.start + opts.duration));
    let mut conn: Option<(D::Conn, usize)> = None;
    while out.pacer.wait(stop).await {
        let seq = out.acked.len() as i64 + 1;
        let sent = Instant::now();
        let attempt = async {
            let (mut c, stmt) = match conn.take() {
                Some(live) => live,
                None => {
                    let mut c = db.connect().await?;
                    let stmt = c.prepare(sql).await?;
                    (c, stmt)
                }
            };
            c.execute(stmt, &[Param::Int(opts.run_id), Param::Int(seq), Param::Int(clock.elapsed_us() as i64)]).await?;
            Ok::<_, DbError>((c, stmt))
        };
        let error = match tokio::time::timeout(opts.timeout, attempt).await {
            Ok(Ok(live)) => {
                conn = Some(live);
                out.latencies.record(sent.elapsed());
                out.pacer.acknowledged();
                out.acked.push(Some(clock.elapsed_us()));
                None
            }
            Ok(Err(e)) => Some(e.code.to_string()),
            Err(_) => Some("timeout".to_string()),
        };
        if let Some(code) = &error {
            count(&mut out.errors, code.clone());
            out.acked.push(None);
        }
        send(&opts.events, ProbeEvent::Write(out.pacer.done(sent, error)));
        let acked_us = out.acked.last().copied().flatten();
        send(&opts.events, ProbeEvent::Line(HaLine::Heartbeat { seq: seq as u64, acked_us }));
    }
    out
}

async fn read<D: Database>(
    db: &D,
    (replica, opts): (u32, &LagOptions),
    clock: Clock,
    final_seq: &Cell<Option<(u64, Instant)>>,
) -> Seen {
    let sql = format!("SELECT MAX(seq) FROM fairbench_heartbeat WHERE run_id = {}", opts.run_id);
    let mut out = Seen::default();
    let mut conn: Option<(D::Conn, usize)> = None;
    let mut row = Vec::new();
    let mut highest = 0u64;
    let mut next = Instant::now();
    loop {
        if let Some((last, ended)) = final_seq.get() {
            if highest >= last || ended.elapsed() >= opts.drain {
                return out;
            }
        }
        tokio::time::sleep_until(next.into()).await;
        next += opts.poll;
        let attempt = async {
            let (mut c, stmt) = match conn.take() {
                Some(live) => live,
                None => {
                    let mut c = db.connect().await?;
                    let stmt = c.prepare(&sql).await?;
                    (c, stmt)
                }
            };
            c.execute_row(stmt, &[], &mut row).await?;
            Ok::<_, DbError>((c, stmt))
        };
        match tokio::time::timeout(opts.timeout, attempt).await {
            Ok(Ok(live)) => {
                conn = Some(live);
                let now = clock.elapsed_us();
                if let Some(Value::Int(n)) = row.first() {
                    if *n as u64 > highest {
                        highest = *n as u64;
                        out.rises.push((now, highest));
                        let line = HaLine::Shown { replica, at_us: now, seq: highest };
                        send(&opts.events, ProbeEvent::Line(line));
                    }
                }
            }
            Ok(Err(e)) => count(&mut out.errors, e.code.to_string()),
            Err(_) => count(&mut out.errors, "timeout".into()),
        }
    }
}

/// Each acknowledged heartbeat's lag on one replica: (acknowledged at µs, lag µs), or `None`
/// for the lag of one never seen.
pub fn lags(written: &Written, seen: &Seen) -> Vec<(u64, Option<u64>)> {
    let mut rises = seen.rises.iter().peekable();
    let mut out = Vec::new();
    for (i, acked) in written.acked.iter().enumerate() {
        let Some(acked) = *acked else { continue };
        let seq = i as u64 + 1;
        while rises.peek().is_some_and(|(_, highest)| *highest < seq) {
            rises.next();
        }
        out.push((acked, rises.peek().map(|(at, _)| at.saturating_sub(acked))));
    }
    out
}

/// One replica's record from its lags.
pub fn replica_record(node: String, lags: &[(u64, Option<u64>)], seen: &Seen, opts: &LagOptions) -> ReplicaLag {
    let mut all = LatencyHistogram::new();
    let mut seconds: BTreeMap<u64, (LatencyHistogram, u64)> = BTreeMap::new();
    for (acked, lag) in lags {
        let second = seconds.entry(acked / 1_000_000).or_insert_with(|| (LatencyHistogram::new(), 0));
        match lag {
            Some(us) => {
                all.record_ns(us * 1000);
                second.0.record_ns(us * 1000);
            }
            None => second.1 += 1,
        }
    }
    let ms = |ns: u64| ns as f64 / 1e6;
    let timeline = seconds
        .into_iter()
        .map(|(second, (h, unseen))| LagSecond {
            second,
            heartbeats: h.count() + unseen,
            p50_ms: if h.count() > 0 { ms(h.percentile_ns(50.0)) } else { 0.0 },
            max_ms: if h.count() > 0 { ms(h.max_ns()) } else { 0.0 },
            unseen,
        })
        .collect();
    ReplicaLag {
        node,
        lag: crate::recorder::summary::class_stats(&all, opts.duration.as_secs_f64(), &[]),
        unseen: lags.iter().filter(|(_, l)| l.is_none()).count() as u64,
        drain_s: opts.drain.as_secs_f64(),
        read_errors: seen.errors.clone(),
        timeline,
    }
}

/// The whole record.
pub fn record(written: &Written, replicas: Vec<ReplicaLag>, opts: &LagOptions) -> LagRecord {
    LagRecord {
        rate: opts.rate,
        poll_ms: opts.poll.as_secs_f64() * 1000.0,
        run_id: opts.run_id,
        heartbeats_written: written.acked.iter().filter(|a| a.is_some()).count() as u64,
        write_errors: written.errors.clone(),
        replicas,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heartbeat_is_visible_at_the_first_read_that_shows_it_or_a_later_one() {
        let mut written = Written::new(Pacer::new(1.0, Instant::now()));
        written.acked = vec![Some(1_000), None, Some(3_000), Some(4_000), Some(9_000)];
        // Read at 2.5 ms: holds 1; at 7 ms: holds 4 (2 and 3 came together).
        let seen = Seen { rises: vec![(2_500, 1), (7_000, 4)], ..Default::default() };
        let l = lags(&written, &seen);
        assert_eq!(l, vec![(1_000, Some(1_500)), (3_000, Some(4_000)), (4_000, Some(3_000)), (9_000, None)]);
        let opts = LagOptions {
            rate: 1000.0,
            duration: Duration::from_secs(1),
            poll: Duration::from_millis(1),
            drain: Duration::from_secs(1),
            timeout: Duration::from_secs(1),
            run_id: 1,
            events: None,
        };
        let r = replica_record("replica1".into(), &l, &seen, &opts);
        assert_eq!((r.lag.count, r.unseen), (3, 1));
        assert_eq!(r.timeline.len(), 1);
        assert_eq!((r.timeline[0].heartbeats, r.timeline[0].unseen), (4, 1));
        assert!((r.lag.max_us - 4_000.0).abs() < 10.0, "{}", r.lag.max_us);
    }
}
