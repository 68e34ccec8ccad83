//! What clients record: one latency histogram per statement kind and one per event, plus
//! errors by code, reconnects and a sample of commit latencies for scatter plots. One
//! [`Recorder`] per worker thread; the collector swaps it out every interval. Recording
//! allocates nothing except on errors.
//!
//! In an open loop every latency is measured from the event's intended start; service
//! times (from the actual start) are kept alongside, with the time events waited to start.

pub mod classes;
pub mod figures;
pub mod record;
pub mod sink;
pub mod summary;

pub use sink::{Sink, Tick};

use crate::stats::LatencyHistogram;
use crate::workload::{StatementClass, StatementInfo};
use hdrhistogram::Counter;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
/// Points per interval kept for the commit-latency scatter.
pub const SCATTER_POINTS: usize = 100;
/// An event that starts this much after its intended start is counted as late.
pub const LATE_AFTER: Duration = Duration::from_millis(1);

/// What one tick's recorders are: 32-bit bucket counts (see [`LatencyHistogram`]).
pub type TickRecorder = Recorder<u32>;

/// `C`: the histograms' bucket counter (64-bit unless said otherwise).
#[derive(Clone, Debug)]
pub struct Recorder<C: Counter = u64> {
    /// The run's statements; ids index `latencies` (and the open loop's `service`).
    statements: Arc<[StatementInfo]>,
    latencies: Vec<LatencyHistogram<C>>,
    /// Rows each statement inserted, updated or deleted, as the server reported them.
    rows_affected: Vec<u64>,
    /// Whole events (sysbench's "latency"): first statement start (open loop: intended
    /// start) to last statement end.
    pub events: LatencyHistogram<C>,
    /// The kinds of event (a file's transactions) and, when there are several, each one's
    /// latencies (with one kind, `events` is its histogram).
    transaction_names: Arc<[String]>,
    transactions: Vec<LatencyHistogram<C>>,
    /// Events of each kind that rolled back as the workload intends (counted in events).
    rollbacks: Vec<u64>,
    /// Attempts of each kind that failed and were retried (retried errors, lost connections).
    failures: Vec<u64>,
    /// Group repetitions each kind skipped (`skip_if`), in events that completed.
    skipped: Vec<u64>,
    /// Open loop only: the same without the wait before the event started.
    open: Option<OpenLoop<C>>,
    /// Errors retried, by the database's own code.
    pub errors: BTreeMap<String, u64>,
    pub reconnects: u64,
    /// Reconnect attempts that failed (each followed by a backoff).
    pub reconnect_failures: u64,
    /// Latency samples for a scatter plot: COMMITs, or events when there is no COMMIT.
    pub scatter: Reservoir,
    /// The slowest statement recorded (a stall names it).
    pub slowest: Option<Slowest>,
    /// The slowest event recorded, its latency and end (a stall's span).
    pub slowest_event: Option<(Duration, Instant)>,
}

/// One statement's execution: which, how long, when it ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Slowest {
    pub id: usize,
    pub latency: Duration,
    pub at: Instant,
}

#[derive(Clone, Debug)]
pub struct OpenLoop<C: Counter = u64> {
    pub service: Vec<LatencyHistogram<C>>,
    pub service_events: LatencyHistogram<C>,
    /// Actual start minus intended start.
    pub queue: LatencyHistogram<C>,
    pub late: u64,
    pub dropped: u64,
}

impl Recorder {
    pub fn new(statements: &[StatementInfo], transactions: &[String], open_loop: bool) -> Self {
        Self::with_counters(statements, transactions, open_loop)
    }

    /// Adds everything a tick's 32-bit recorder recorded (into totals, a report window).
    pub fn add_counts<D: Counter>(&mut self, other: &Recorder<D>) {
        self.merge(other, LatencyHistogram::add_counts);
    }

    /// All statements of one class merged (latency, or service time with `service`).
    pub fn class(&self, class: StatementClass, service: bool) -> LatencyHistogram {
        self.merged(|c| c == class, service)
    }

    /// Every statement merged.
    pub fn total(&self, service: bool) -> LatencyHistogram {
        self.merged(|_| true, service)
    }

    fn merged(&self, pick: impl Fn(StatementClass) -> bool, service: bool) -> LatencyHistogram {
        let mut h = LatencyHistogram::new();
        let histograms = match (service, &self.open) {
            (true, Some(o)) => o.service.as_slice(),
            (true, None) => &[],
            (false, _) => self.latencies.as_slice(),
        };
        for (info, s) in self.statements.iter().zip(histograms) {
            if pick(info.class) {
                h.add(s);
            }
        }
        h
    }
}

impl<C: Counter> Recorder<C> {
    /// Empty, with bucket counters `C` ([`Recorder::new`]: 64-bit).
    pub fn with_counters(statements: &[StatementInfo], transactions: &[String], open_loop: bool) -> Self {
        let of_commits = statements.iter().any(|s| s.class == StatementClass::Commit);
        let kinds = if transactions.len() > 1 { transactions.len() } else { 0 };
        Recorder {
            statements: statements.into(),
            latencies: statements.iter().map(|_| LatencyHistogram::empty()).collect(),
            rows_affected: vec![0; statements.len()],
            events: LatencyHistogram::empty(),
            transaction_names: transactions.into(),
            transactions: (0..kinds).map(|_| LatencyHistogram::empty()).collect(),
            rollbacks: vec![0; transactions.len().max(1)],
            failures: vec![0; transactions.len().max(1)],
            skipped: vec![0; transactions.len().max(1)],
            open: open_loop.then(|| OpenLoop {
                service: statements.iter().map(|_| LatencyHistogram::empty()).collect(),
                service_events: LatencyHistogram::empty(),
                queue: LatencyHistogram::empty(),
                late: 0,
                dropped: 0,
            }),
            errors: BTreeMap::new(),
            reconnects: 0,
            reconnect_failures: 0,
            scatter: Reservoir::new(of_commits),
            slowest: None,
            slowest_event: None,
        }
    }

    /// Statement `id` took `service`; `waited` is how late its event started (zero in a
    /// closed loop).
    #[inline]
    pub fn statement(&mut self, id: usize, service: Duration, waited: Duration, at: Instant) {
        debug_assert!(id < self.latencies.len(), "statement {id} was not declared by the workload");
        let Some(h) = self.latencies.get_mut(id) else { return };
        let latency = service + waited;
        h.record(latency);
        if let Some(o) = &mut self.open {
            o.service[id].record(service);
        }
        if self.statements[id].class == StatementClass::Commit {
            self.scatter.offer(at, latency);
        }
        if self.slowest.is_none_or(|s| latency > s.latency) {
            self.slowest = Some(Slowest { id, latency, at });
        }
    }

    /// The slowest statement's name, latency and end.
    pub fn slowest_statement(&self) -> Option<(&str, Duration, Instant)> {
        self.slowest.map(|s| (self.statements[s.id].name.as_str(), s.latency, s.at))
    }

    /// Statement `id` inserted, updated or deleted `rows` rows.
    #[inline]
    pub fn rows_affected_by(&mut self, id: usize, rows: u64) {
        if let Some(n) = self.rows_affected.get_mut(id) {
            *n += rows;
        }
    }

    /// An event of kind `tx` ended: `latency` from its (intended) start, `service` from
    /// its actual start.
    #[inline]
    pub fn event(&mut self, tx: usize, latency: Duration, service: Duration, at: Instant) {
        self.events.record(latency);
        if self.slowest_event.is_none_or(|(slowest, _)| latency > slowest) {
            self.slowest_event = Some((latency, at));
        }
        if let Some(h) = self.transactions.get_mut(tx) {
            h.record(latency);
        }
        if let Some(o) = &mut self.open {
            o.service_events.record(service);
        }
        if !self.scatter.of_commits {
            self.scatter.offer(at, latency);
        }
    }

    /// A deferred transaction's execution by the deferred worker ended, `latency` after it
    /// was queued; recorded as kind `kind` only (the event was its queueing).
    pub fn deferred(&mut self, kind: usize, latency: Duration) {
        if let Some(h) = self.transactions.get_mut(kind) {
            h.record(latency);
        }
    }

    /// An event of kind `tx` that completed skipped `n` group repetitions (`skip_if`).
    pub fn skipped(&mut self, tx: usize, n: u64) {
        if let Some(k) = self.skipped.get_mut(tx) {
            *k += n;
        }
    }

    /// Each kind of event's skipped repetitions, in the order of [`Recorder::transactions`].
    pub fn skips(&self) -> impl Iterator<Item = u64> + '_ {
        self.skipped.iter().copied()
    }

    /// Open loop: an event started `waited` after its intended start.
    #[inline]
    pub fn started(&mut self, waited: Duration, dropped_before: u64) {
        if let Some(o) = &mut self.open {
            o.queue.record(waited);
            if waited > LATE_AFTER {
                o.late += 1;
            }
            o.dropped += dropped_before;
        }
    }

    pub fn error(&mut self, code: &str) {
        match self.errors.get_mut(code) {
            Some(n) => *n += 1,
            None => {
                self.errors.insert(code.to_string(), 1);
            }
        }
    }

    /// Adds everything `other` recorded.
    pub fn add(&mut self, other: &Recorder<C>) {
        self.merge(other, LatencyHistogram::add);
    }

    fn merge<D: Counter>(&mut self, other: &Recorder<D>, add: impl Fn(&mut LatencyHistogram<C>, &LatencyHistogram<D>)) {
        for (mine, theirs) in self.latencies.iter_mut().zip(&other.latencies) {
            add(mine, theirs);
        }
        for (mine, theirs) in self.rows_affected.iter_mut().zip(&other.rows_affected) {
            *mine += theirs;
        }
        add(&mut self.events, &other.events);
        for (mine, theirs) in self.transactions.iter_mut().zip(&other.transactions) {
            add(mine, theirs);
        }
        for (mine, theirs) in self.rollbacks.iter_mut().zip(&other.rollbacks) {
            *mine += theirs;
        }
        for (mine, theirs) in self.failures.iter_mut().zip(&other.failures) {
            *mine += theirs;
        }
        for (mine, theirs) in self.skipped.iter_mut().zip(&other.skipped) {
            *mine += theirs;
        }
        if let (Some(mine), Some(theirs)) = (&mut self.open, &other.open) {
            for (m, t) in mine.service.iter_mut().zip(&theirs.service) {
                add(m, t);
            }
            add(&mut mine.service_events, &theirs.service_events);
            add(&mut mine.queue, &theirs.queue);
            mine.late += theirs.late;
            mine.dropped += theirs.dropped;
        }
        for (code, n) in &other.errors {
            *self.errors.entry(code.clone()).or_default() += n;
        }
        self.reconnects += other.reconnects;
        self.reconnect_failures += other.reconnect_failures;
        self.scatter.merge(&other.scatter);
        if let Some(theirs) = other.slowest.filter(|t| self.slowest.is_none_or(|s| t.latency > s.latency)) {
            self.slowest = Some(theirs);
        }
        if let Some(theirs) = other.slowest_event.filter(|t| self.slowest_event.is_none_or(|s| t.0 > s.0)) {
            self.slowest_event = Some(theirs);
        }
    }

    pub fn reset(&mut self) {
        self.latencies.iter_mut().for_each(LatencyHistogram::reset);
        self.rows_affected.iter_mut().for_each(|n| *n = 0);
        self.events.reset();
        self.transactions.iter_mut().for_each(LatencyHistogram::reset);
        self.rollbacks.iter_mut().for_each(|n| *n = 0);
        self.failures.iter_mut().for_each(|n| *n = 0);
        self.skipped.iter_mut().for_each(|n| *n = 0);
        if let Some(o) = &mut self.open {
            o.service.iter_mut().for_each(LatencyHistogram::reset);
            o.service_events.reset();
            o.queue.reset();
            o.late = 0;
            o.dropped = 0;
        }
        self.errors.clear();
        self.reconnects = 0;
        self.reconnect_failures = 0;
        self.scatter.clear();
        self.slowest = None;
        self.slowest_event = None;
    }

    /// Each statement's name and latencies, in id order.
    pub fn statements(&self) -> impl Iterator<Item = (&str, &LatencyHistogram<C>)> {
        self.statements.iter().map(|s| s.name.as_str()).zip(&self.latencies)
    }

    /// Each statement's affected rows, in id order.
    pub fn rows_affected(&self) -> impl Iterator<Item = u64> + '_ {
        self.rows_affected.iter().copied()
    }

    /// An event of kind `tx` rolled back as the workload intends.
    pub fn rolled_back(&mut self, tx: usize) {
        if let Some(n) = self.rollbacks.get_mut(tx) {
            *n += 1;
        }
    }

    /// An attempt at an event of kind `tx` failed with `code` and is retried.
    pub fn failed(&mut self, tx: usize, code: &str) {
        self.error(code);
        if let Some(n) = self.failures.get_mut(tx) {
            *n += 1;
        }
    }

    /// Each kind of event's failed attempts, in the order of [`Recorder::transactions`].
    pub fn failures(&self) -> impl Iterator<Item = u64> + '_ {
        self.failures.iter().copied()
    }

    /// Each kind of event's intended rollbacks, in the order of [`Recorder::transactions`].
    pub fn rollbacks(&self) -> impl Iterator<Item = u64> + '_ {
        self.rollbacks.iter().copied()
    }

    /// Each kind of event's name and latencies.
    pub fn transactions(&self) -> impl Iterator<Item = (&str, &LatencyHistogram<C>)> {
        let histograms =
            if self.transactions.is_empty() { std::slice::from_ref(&self.events) } else { &self.transactions };
        self.transaction_names.iter().map(String::as_str).zip(histograms)
    }

    pub fn open_loop(&self) -> Option<&OpenLoop<C>> {
        self.open.as_ref()
    }

    /// Service times per statement (open loop only).
    pub fn service_statements(&self) -> impl Iterator<Item = (&str, &LatencyHistogram<C>)> {
        let service = self.open.as_ref().map(|o| o.service.as_slice()).unwrap_or(&[]);
        self.statements.iter().map(|s| s.name.as_str()).zip(service)
    }

    /// Adds every statement of `class` into `into` (a histogram reused, not a new one).
    pub fn add_class_to(&self, class: StatementClass, into: &mut LatencyHistogram) {
        for (info, s) in self.statements.iter().zip(&self.latencies) {
            if info.class == class {
                into.add_counts(s);
            }
        }
    }

    pub fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }
}

/// A uniform sample of at most [`SCATTER_POINTS`] (time, latency) points (reservoir
/// sampling, Vitter's algorithm R); merged samples stay uniform over everything seen.
#[derive(Clone, Debug)]
pub struct Reservoir {
    /// COMMIT latencies when true, event latencies otherwise.
    pub of_commits: bool,
    pub points: Vec<(Instant, Duration)>,
    pub seen: u64,
    state: u64,
}

impl Reservoir {
    fn new(of_commits: bool) -> Self {
        Reservoir { of_commits, points: Vec::with_capacity(SCATTER_POINTS), seen: 0, state: 0x9E37_79B9_7F4A_7C15 }
    }

    fn next(&mut self) -> u64 {
        // xorshift64*: cheap and good enough to pick sample slots.
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        self.state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    #[inline]
    fn offer(&mut self, at: Instant, latency: Duration) {
        self.seen += 1;
        if self.points.len() < SCATTER_POINTS {
            self.points.push((at, latency));
        } else {
            let j = self.next() % self.seen;
            if (j as usize) < SCATTER_POINTS {
                self.points[j as usize] = (at, latency);
            }
        }
    }

    /// Keeps a uniform sample of both: each point stands for seen/len events of its side.
    fn merge(&mut self, other: &Reservoir) {
        if other.seen == 0 {
            return;
        }
        if self.seen == 0 {
            self.points.clone_from(&other.points);
            self.seen = other.seen;
            return;
        }
        let (w_self, w_other) =
            (self.seen as f64 / self.points.len() as f64, other.seen as f64 / other.points.len() as f64);
        let mut keyed: Vec<(f64, (Instant, Duration))> = Vec::with_capacity(self.points.len() + other.points.len());
        let mine = std::mem::take(&mut self.points);
        for p in mine {
            let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
            keyed.push((u.powf(1.0 / w_self), p)); // Efraimidis-Spirakis weighted keys
        }
        for p in &other.points {
            let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
            keyed.push((u.powf(1.0 / w_other), *p));
        }
        keyed.sort_by(|a, b| b.0.total_cmp(&a.0));
        self.points = keyed.into_iter().take(SCATTER_POINTS).map(|(_, p)| p).collect();
        self.points.sort_by_key(|p| p.0);
        self.seen += other.seen;
    }

    fn clear(&mut self) {
        self.points.clear();
        self.seen = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::builtin::contract::StatementKind::{self, *};

    fn statements(kinds: &[StatementKind]) -> Vec<StatementInfo> {
        kinds.iter().map(|k| StatementInfo { name: k.name().into(), class: k.class() }).collect()
    }

    #[test]
    fn classes_merge_their_statements() {
        let now = Instant::now();
        let mut r = Recorder::new(&statements(&[Begin, PointSelect, SumRange, Commit]), &["t".into()], false);
        r.statement(1, Duration::from_micros(10), Duration::ZERO, now);
        r.statement(2, Duration::from_micros(30), Duration::ZERO, now);
        r.statement(3, Duration::from_micros(50), Duration::ZERO, now);
        assert_eq!(r.class(StatementClass::Read, false).count(), 2);
        assert_eq!(r.class(StatementClass::Commit, false).count(), 1);
        assert_eq!(r.class(StatementClass::Write, false).count(), 0);
        assert_eq!(r.total(false).count(), 3);
        assert_eq!(r.scatter.points.len(), 1);
        let mut other = r.clone();
        other.error("1213");
        r.add(&other);
        assert_eq!(r.total(false).count(), 6);
        assert_eq!(r.errors.get("1213"), Some(&1));
    }

    #[test]
    fn open_loop_keeps_service_time_apart() {
        let now = Instant::now();
        let mut r = Recorder::new(&statements(&[PointSelect]), &["t".into()], true);
        r.started(Duration::from_millis(5), 3);
        r.statement(0, Duration::from_micros(100), Duration::from_millis(5), now);
        r.event(0, Duration::from_micros(5100), Duration::from_micros(100), now);
        assert_eq!(r.total(false).max_ns(), 5_100_000);
        assert_eq!(r.total(true).max_ns(), 100_000);
        let o = r.open_loop().unwrap();
        assert_eq!((o.late, o.dropped), (1, 3));
    }

    /// The slowest event and its end survive a merge of clients and go with a reset.
    #[test]
    fn the_slowest_event_is_kept_with_its_end() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut a = Recorder::new(&statements(&[PointSelect]), &["t".into()], false);
        let mut b = a.clone();
        a.event(0, Duration::from_millis(900), Duration::ZERO, at(950));
        a.event(0, Duration::from_millis(5), Duration::ZERO, at(990));
        b.event(0, Duration::from_millis(40), Duration::ZERO, at(980));
        b.add(&a);
        assert_eq!(b.slowest_event, Some((Duration::from_millis(900), at(950))));
        b.reset();
        assert_eq!(b.slowest_event, None);
    }

    #[test]
    fn scatter_stays_bounded_and_covers_both_sides() {
        let t0 = Instant::now();
        let mut a = Recorder::new(&statements(&[PointSelect]), &["a".into(), "b".into()], false);
        let mut b = a.clone();
        for i in 0..10_000u64 {
            a.event(0, Duration::from_micros(10), Duration::ZERO, t0 + Duration::from_micros(i));
            b.event(1, Duration::from_micros(99), Duration::ZERO, t0 + Duration::from_micros(i));
        }
        a.add(&b);
        let kinds: Vec<(&str, u64)> = a.transactions().map(|(n, h)| (n, h.count())).collect();
        assert_eq!(kinds, [("a", 10_000), ("b", 10_000)]);
        assert_eq!(a.scatter.points.len(), SCATTER_POINTS);
        assert_eq!(a.scatter.seen, 20_000);
        let slow = a.scatter.points.iter().filter(|p| p.1 == Duration::from_micros(99)).count();
        assert!((25..=75).contains(&slow), "{slow}");
    }
}
