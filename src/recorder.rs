//! What clients record: one latency histogram per statement kind and one per event, plus
//! errors by code and reconnects. One [`Recorder`] per worker thread; the collector swaps
//! it out every interval. Recording allocates nothing except on errors.

use crate::stats::LatencyHistogram;
use crate::workload::{StatementClass, StatementKind};
use std::collections::BTreeMap;
use std::time::Duration;

const NO_SLOT: u8 = u8::MAX;

#[derive(Clone, Debug)]
pub struct Recorder {
    /// Index into `statements` per [`StatementKind`], or NO_SLOT when the workload never sends it.
    slot: [u8; StatementKind::COUNT],
    statements: Vec<(StatementKind, LatencyHistogram)>,
    /// Whole events (sysbench's "latency"): from the first statement to the last.
    pub events: LatencyHistogram,
    /// Errors retried, by the database's own code.
    pub errors: BTreeMap<String, u64>,
    pub reconnects: u64,
}

impl Recorder {
    pub fn new(kinds: &[StatementKind]) -> Self {
        let mut slot = [NO_SLOT; StatementKind::COUNT];
        for (i, k) in kinds.iter().enumerate() {
            slot[*k as usize] = i as u8;
        }
        Recorder {
            slot,
            statements: kinds
                .iter()
                .map(|&k| (k, LatencyHistogram::new()))
                .collect(),
            events: LatencyHistogram::new(),
            errors: BTreeMap::new(),
            reconnects: 0,
        }
    }

    #[inline]
    pub fn statement(&mut self, kind: StatementKind, latency: Duration) {
        let slot = self.slot[kind as usize];
        debug_assert!(slot != NO_SLOT, "{kind:?} was not declared by the workload");
        if let Some((_, h)) = self.statements.get_mut(slot as usize) {
            h.record(latency);
        }
    }

    #[inline]
    pub fn event(&mut self, latency: Duration) {
        self.events.record(latency);
    }

    pub fn error(&mut self, code: &str) {
        match self.errors.get_mut(code) {
            Some(n) => *n += 1,
            None => {
                self.errors.insert(code.to_string(), 1);
            }
        }
    }

    pub fn add(&mut self, other: &Recorder) {
        for ((_, mine), (_, theirs)) in self.statements.iter_mut().zip(&other.statements) {
            mine.add(theirs);
        }
        self.events.add(&other.events);
        for (code, n) in &other.errors {
            *self.errors.entry(code.clone()).or_default() += n;
        }
        self.reconnects += other.reconnects;
    }

    pub fn reset(&mut self) {
        for (_, h) in &mut self.statements {
            h.reset();
        }
        self.events.reset();
        self.errors.clear();
        self.reconnects = 0;
    }

    pub fn statements(&self) -> impl Iterator<Item = (StatementKind, &LatencyHistogram)> {
        self.statements.iter().map(|(k, h)| (*k, h))
    }

    /// All statements of one class merged.
    pub fn class(&self, class: StatementClass) -> LatencyHistogram {
        let mut h = LatencyHistogram::new();
        for (k, s) in &self.statements {
            if k.class() == class {
                h.add(s);
            }
        }
        h
    }

    /// Every statement merged.
    pub fn total(&self) -> LatencyHistogram {
        let mut h = LatencyHistogram::new();
        for (_, s) in &self.statements {
            h.add(s);
        }
        h
    }

    pub fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_merge_their_statements() {
        let mut r = Recorder::new(&[
            StatementKind::Begin,
            StatementKind::PointSelect,
            StatementKind::SumRange,
            StatementKind::Commit,
        ]);
        r.statement(StatementKind::PointSelect, Duration::from_micros(10));
        r.statement(StatementKind::SumRange, Duration::from_micros(30));
        r.statement(StatementKind::Commit, Duration::from_micros(50));
        assert_eq!(r.class(StatementClass::Read).count(), 2);
        assert_eq!(r.class(StatementClass::Commit).count(), 1);
        assert_eq!(r.class(StatementClass::Write).count(), 0);
        assert_eq!(r.total().count(), 3);
        let mut other = r.clone();
        other.error("1213");
        r.add(&other);
        assert_eq!(r.total().count(), 6);
        assert_eq!(r.errors.get("1213"), Some(&1));
    }
}
