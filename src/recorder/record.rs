//! A recorder as the run's record holds it ([`RecordedCounts`]), and back: exact, every
//! histogram with its extremes and sum.

use super::{OpenLoop, Recorder};
use crate::model::record::{ExactHistogram, RecordedCounts, RecordedOpenLoop, RecordedStatement};
use crate::stats::{HistogramError, LatencyHistogram};
use crate::workload::{StatementClass, StatementInfo};

/// Why recorded counts do not fit the record's statements.
#[derive(Debug, thiserror::Error)]
pub enum CountsError {
    #[error("{what}: {source}")]
    Histogram { what: String, source: HistogramError },
    #[error("{what}: {found} recorded where the record's start declares {declared}")]
    Shape { what: &'static str, found: usize, declared: usize },
    #[error("statement {0:?} has no class {1:?}")]
    UnknownClass(String, String),
}

fn exact(h: &LatencyHistogram) -> Option<ExactHistogram> {
    (h.count() > 0).then(|| ExactHistogram {
        histogram: h.encode(),
        min_ns: h.min_ns(),
        max_ns: h.max_ns(),
        sum_ns: h.sum_ns().min(u64::MAX as u128) as u64,
    })
}

fn histogram(e: &Option<ExactHistogram>, what: impl FnOnce() -> String) -> Result<LatencyHistogram, CountsError> {
    match e {
        None => Ok(LatencyHistogram::new()),
        Some(e) => LatencyHistogram::decode(&e.histogram, e.min_ns, e.max_ns, e.sum_ns as u128)
            .map_err(|source| CountsError::Histogram { what: what(), source }),
    }
}

/// The statements as the record's start lists them.
pub fn recorded_statements(statements: &[StatementInfo]) -> Vec<RecordedStatement> {
    statements.iter().map(|s| RecordedStatement { name: s.name.clone(), class: s.class.name().into() }).collect()
}

/// The statements a record's start lists.
pub fn statement_infos(recorded: &[RecordedStatement]) -> Result<Vec<StatementInfo>, CountsError> {
    recorded
        .iter()
        .map(|s| {
            let class = StatementClass::ALL.into_iter().find(|c| c.name() == s.class);
            let class = class.ok_or_else(|| CountsError::UnknownClass(s.name.clone(), s.class.clone()))?;
            Ok(StatementInfo { name: s.name.clone(), class })
        })
        .collect()
}

impl Recorder {
    /// A recorder like `other` (the same statements and kinds of event), empty.
    pub fn like<C: hdrhistogram::Counter>(other: &Recorder<C>) -> Recorder {
        Recorder::new(&other.statements, &other.transaction_names, other.open.is_some())
    }

    /// Everything recorded, as the record holds it (scatter and slowest statement are the
    /// entry's figures, not counts).
    pub fn counts(&self) -> RecordedCounts {
        RecordedCounts {
            statements: self.latencies.iter().map(exact).collect(),
            service: self.open.as_ref().map_or_else(Vec::new, |o| o.service.iter().map(exact).collect()),
            rows_affected: self.rows_affected.clone(),
            events: exact(&self.events),
            transactions: self.transactions.iter().map(exact).collect(),
            rollbacks: self.rollbacks.clone(),
            failures: self.failures.clone(),
            skipped: if self.skipped.iter().any(|&n| n > 0) { self.skipped.clone() } else { Vec::new() },
            open_loop: self.open.as_ref().map(|o| RecordedOpenLoop {
                service_events: exact(&o.service_events),
                queue: exact(&o.queue),
                late: o.late,
                dropped: o.dropped,
            }),
            errors: self.errors.clone(),
            reconnects: self.reconnects,
            reconnect_failures: self.reconnect_failures,
        }
    }

    /// Adds recorded counts (whose lists follow this recorder's statements and kinds).
    pub fn add_recorded(&mut self, c: &RecordedCounts) -> Result<(), CountsError> {
        let shape = |what, found: usize, declared: usize| match found == declared {
            true => Ok(()),
            false => Err(CountsError::Shape { what, found, declared }),
        };
        shape("statements", c.statements.len(), self.latencies.len())?;
        shape("rows affected", c.rows_affected.len(), self.rows_affected.len())?;
        shape("kinds of event", c.transactions.len(), self.transactions.len())?;
        shape("rollbacks", c.rollbacks.len(), self.rollbacks.len())?;
        shape("failures", c.failures.len(), self.failures.len())?;
        // Recorded only when something was skipped (and not before skips were recorded).
        if !c.skipped.is_empty() {
            shape("skipped", c.skipped.len(), self.skipped.len())?;
        }
        let name = |i: usize| self.statements[i].name.clone();
        for (i, e) in c.statements.iter().enumerate() {
            let h = histogram(e, || name(i))?;
            self.latencies[i].add(&h);
        }
        self.events.add(&histogram(&c.events, || "events".into())?);
        for (i, e) in c.transactions.iter().enumerate() {
            let h = histogram(e, || self.transaction_names[i].clone())?;
            self.transactions[i].add(&h);
        }
        self.add_open_loop(c)?;
        for (mine, theirs) in self.rows_affected.iter_mut().zip(&c.rows_affected) {
            *mine += theirs;
        }
        for (mine, theirs) in self.rollbacks.iter_mut().zip(&c.rollbacks) {
            *mine += theirs;
        }
        for (mine, theirs) in self.failures.iter_mut().zip(&c.failures) {
            *mine += theirs;
        }
        for (mine, theirs) in self.skipped.iter_mut().zip(&c.skipped) {
            *mine += theirs;
        }
        for (code, n) in &c.errors {
            *self.errors.entry(code.clone()).or_default() += n;
        }
        self.reconnects += c.reconnects;
        self.reconnect_failures += c.reconnect_failures;
        Ok(())
    }

    fn add_open_loop(&mut self, c: &RecordedCounts) -> Result<(), CountsError> {
        let (Some(mine), Some(theirs)) = (&mut self.open, &c.open_loop) else { return Ok(()) };
        let OpenLoop { service, service_events, queue, late, dropped } = mine;
        if c.service.len() != service.len() {
            return Err(CountsError::Shape { what: "service times", found: c.service.len(), declared: service.len() });
        }
        for (i, e) in c.service.iter().enumerate() {
            service[i].add(&histogram(e, || format!("{} service time", self.statements[i].name))?);
        }
        service_events.add(&histogram(&theirs.service_events, || "event service time".into())?);
        queue.add(&histogram(&theirs.queue, || "start delay".into())?);
        *late += theirs.late;
        *dropped += theirs.dropped;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn counts_round_trip_exactly() {
        let statements = [
            StatementInfo { name: "point_select".into(), class: StatementClass::Read },
            StatementInfo { name: "commit".into(), class: StatementClass::Commit },
        ];
        let kinds = ["a".to_string(), "b".to_string()];
        let mut r = Recorder::new(&statements, &kinds, true);
        let now = Instant::now();
        for i in 1..500u64 {
            r.started(Duration::from_micros(i * 7), 0);
            r.statement(0, Duration::from_micros(i), Duration::from_micros(3), now);
            r.statement(1, Duration::from_micros(2 * i + 1), Duration::ZERO, now);
            r.event((i % 2) as usize, Duration::from_micros(3 * i), Duration::from_micros(3 * i - 1), now);
        }
        r.rows_affected_by(1, 4);
        r.failed(1, "1213");
        r.rolled_back(0);
        r.skipped(1, 3);
        // A deferred execution: kind b only, no event.
        r.deferred(1, Duration::from_millis(40));
        r.reconnects = 2;
        let counts = r.counts();
        let line = serde_json::to_string(&counts).unwrap();
        let back: RecordedCounts = serde_json::from_str(&line).unwrap();
        let mut rebuilt = Recorder::like(&r);
        rebuilt.add_recorded(&back).unwrap();
        // The same samples in the same buckets (an encoding also names the histogram's
        // current size, which may differ).
        let same = |a: &LatencyHistogram, b: &LatencyHistogram| {
            assert_eq!(a.buckets(), b.buckets());
            assert_eq!((a.min_ns(), a.max_ns(), a.sum_ns()), (b.min_ns(), b.max_ns(), b.sum_ns()));
        };
        for ((_, a), (_, b)) in r.statements().zip(rebuilt.statements()) {
            same(a, b);
        }
        for ((_, a), (_, b)) in r.service_statements().zip(rebuilt.service_statements()) {
            same(a, b);
        }
        for ((_, a), (_, b)) in r.transactions().zip(rebuilt.transactions()) {
            same(a, b);
        }
        assert_eq!(rebuilt.skips().collect::<Vec<_>>(), [0, 3]);
        assert_eq!(r.events.count(), 499, "a deferred execution is no event");
        assert_eq!(r.transactions().map(|(_, h)| h.count()).collect::<Vec<_>>(), [249, 250 + 1]);
        let (o, p) = (r.open_loop().unwrap(), rebuilt.open_loop().unwrap());
        same(&o.queue, &p.queue);
        same(&o.service_events, &p.service_events);
        assert_eq!((o.late, o.dropped), (p.late, p.dropped));
        let strip = |mut c: RecordedCounts| {
            c.statements.clear();
            c.service.clear();
            c.transactions.clear();
            c.events = None;
            c.open_loop = None;
            c
        };
        assert_eq!(strip(rebuilt.counts()), strip(counts));
        // Counts of another shape are refused, naming what differs.
        let mut other = Recorder::new(&statements[..1], &kinds, true);
        let e = other.add_recorded(&back).unwrap_err().to_string();
        assert_eq!(e, "statements: 2 recorded where the record's start declares 1");
    }
}
