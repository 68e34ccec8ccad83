//! The record of a run: what it streams as it happens, and the only thing a result is
//! built from (`result::build`). One JSON value per line, gzip, beside the result as
//! `<result>.record.jsonl.gz` (docs/record.md):
//!
//! - `start`: the document as known when measuring starts (conditions, plan, seed; status
//!   `running`) and what building needs beyond it (statements, percentiles, ...);
//! - `entry`: one timeline entry as it closes (one or more intervals, the resolution the
//!   result keeps): its figures and every count it holds, with exact histograms per
//!   statement (and the open loop's service times and start delays), per kind of event,
//!   errors by code, reconnects, affected rows;
//! - `phase_end`: how a measured phase ended (status, server counters before and after,
//!   client CPU, per-client totals);
//! - `end`: what is read after the last phase (tables at the end, checks, faults, the
//!   shard's record, thresholds);
//! - `ha`: a probe's ledger ([`super::ha_ledger`]): its attempts, role readings, heartbeats
//!   and, at its end, its verdict; interleaved with its entries.
//!
//! A run that was killed leaves a record without its ends: `recover` builds from it what it
//! holds (status `incomplete`, per-statement figures kept).

use super::fault::FaultRecord;
use super::ha_ledger::HaLine;
use super::shard::{ShardRecord, ShardRow};
use super::{CheckRecord, IntervalStats, ResultDocument, RunStatus, TableSize, WarmupEnd};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::SystemTime;

pub const RECORD_SCHEMA: &str = "fairbench.record";
/// Bumped whenever a field changes meaning or disappears (additions keep the version).
pub const RECORD_VERSION: u32 = 1;

/// One line of a record.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "record", rename_all = "snake_case")]
pub enum RecordLine {
    Start(Box<RecordStart>),
    Entry(Box<RecordEntry>),
    PhaseEnd(Box<RunOutcome>),
    End(Box<RunEnd>),
    Ha(Box<HaLine>),
}

/// A record read back (or kept while the run goes): its lines in their places.
#[derive(Clone, Debug)]
pub struct Record {
    pub start: RecordStart,
    /// Each measured phase (one, or one per repeat), in order.
    pub phases: Vec<RecordedPhase>,
    pub end: Option<RunEnd>,
    /// A probe's `ha` lines, in order (none for a run).
    pub ha: Vec<HaLine>,
}

/// One measured phase: its entries, and how it ended (none: the run never said).
#[derive(Clone, Debug, Default)]
pub struct RecordedPhase {
    pub entries: Vec<RecordEntry>,
    pub end: Option<RunOutcome>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RecordStart {
    pub schema: String,
    pub version: u32,
    /// When the record began (interval times count from each phase's start).
    pub started: SystemTime,
    /// The result as known before measuring: status `running`, no figures.
    pub document: ResultDocument,
    /// The workload's statements in the order entries list them.
    pub statements: Vec<RecordedStatement>,
    /// The kinds of event (a workload file's transactions), in entries' order.
    pub transactions: Vec<String>,
    pub open_loop: bool,
    /// `--percentile` values beyond the fixed ones.
    pub percentiles: Vec<f64>,
    /// Timeline entries each phase's result keeps at most.
    pub kept_per_phase: usize,
    /// Entries carry their class histograms in the result (a shard's, for `combine`).
    pub entry_histograms: bool,
    /// `--threshold`s as given: judged on the result built.
    pub thresholds: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecordedStatement {
    pub name: String,
    /// `read`, `write`, `commit` or `other`.
    pub class: String,
}

/// One timeline entry as it closed.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RecordEntry {
    /// Its figures (times since its phase started).
    pub stats: IntervalStats,
    pub counts: RecordedCounts,
}

/// Everything recorded over an entry, exactly: histograms are added, never averaged.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RecordedCounts {
    /// Per statement (the start's order): latencies; empty ones `null`.
    pub statements: Vec<Option<ExactHistogram>>,
    /// Open loop: per statement, service times (from the actual start).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub service: Vec<Option<ExactHistogram>>,
    pub rows_affected: Vec<u64>,
    pub events: Option<ExactHistogram>,
    /// Per kind of event, when there are several.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transactions: Vec<Option<ExactHistogram>>,
    pub rollbacks: Vec<u64>,
    pub failures: Vec<u64>,
    /// Per kind of event, group repetitions skipped (`skip_if`); empty when none were.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_loop: Option<RecordedOpenLoop>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub errors: BTreeMap<String, u64>,
    pub reconnects: u64,
    pub reconnect_failures: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RecordedOpenLoop {
    pub service_events: Option<ExactHistogram>,
    /// Actual start minus intended start.
    pub queue: Option<ExactHistogram>,
    pub late: u64,
    pub dropped: u64,
}

/// A histogram with what its buckets round: the exact extremes and sum (nanoseconds).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExactHistogram {
    /// HdrHistogram V2 + DEFLATE, base64, nanoseconds.
    pub histogram: String,
    pub min_ns: u64,
    pub max_ns: u64,
    /// Saturates at 2^64 ns (584 years of latency in one entry).
    pub sum_ns: u64,
}

/// How a measured phase went (the measurements themselves are the entries).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunOutcome {
    /// Measured seconds (after warmup).
    pub measured_s: f64,
    pub status: RunStatus,
    /// Why the run failed, when it did.
    pub failure: Option<String>,
    pub started_at: SystemTime,
    pub ended_at: SystemTime,
    /// Server counters just before the first event and just after the last.
    pub counters_before: BTreeMap<String, i64>,
    pub counters_after: BTreeMap<String, i64>,
    /// The workload file's tallies at the same two moments.
    #[serde(default)]
    pub tallies: Vec<crate::model::TallyRecord>,
    pub client: ClientCpu,
    /// Peak resident memory of the process, bytes.
    pub peak_rss_bytes: u64,
    /// Every client's measured events and busy time, in no particular order.
    pub per_client: Vec<ClientTotals>,
    /// How the warmup ended (none: no warmup, or the run stopped during it).
    pub warmup_end: Option<WarmupEnd>,
    /// Deferred transactions still queued when the run ended: never executed.
    #[serde(default)]
    pub deferred_left: u64,
    /// Each connection's transport as the server reported it, counted by kind.
    #[serde(default)]
    pub transports: Vec<crate::model::TransportSeen>,
}

impl RunOutcome {
    /// A run that is starting: status `running`, nothing measured yet.
    pub fn starting() -> Self {
        let now = SystemTime::now();
        RunOutcome {
            measured_s: 0.0,
            status: RunStatus::Running,
            failure: None,
            started_at: now,
            ended_at: now,
            counters_before: BTreeMap::new(),
            counters_after: BTreeMap::new(),
            tallies: Vec::new(),
            client: ClientCpu::default(),
            peak_rss_bytes: 0,
            per_client: Vec::new(),
            warmup_end: None,
            deferred_left: 0,
            transports: Vec::new(),
        }
    }
}

/// The client's own CPU use over the measured phase (from the OS).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ClientCpu {
    /// User + system CPU seconds of the whole fairbench process.
    pub cpu_s: f64,
    pub wall_s: f64,
    pub cores: u32,
    /// Threads that ran clients.
    pub worker_threads: u32,
    /// CPU seconds of the busiest worker thread / wall seconds (1.0 = always busy).
    pub busiest_worker: f64,
    /// Whether workers are event loops shared by many clients (async drivers); for
    /// embedded databases the worker thread also runs the database itself.
    pub shared_event_loops: bool,
    /// Fraction of all the host's CPU time that was busy (any process), when readable.
    pub host_busy: Option<f64>,
}

/// One client's share of the measured phase (sysbench's "threads fairness").
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientTotals {
    pub events: u64,
    /// Sum of the client's event latencies, seconds.
    pub busy_s: f64,
}

/// What is read after the last measured phase.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RunEnd {
    pub tables_at_end: Vec<TableSize>,
    pub checks: Vec<CheckRecord>,
    pub faults: Option<FaultRecord>,
    pub shard: Option<ShardRecord>,
    /// A combined run's shards, a row each (`combine`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shards: Vec<ShardRow>,
}

/// Why lines do not make a record.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("it does not begin with the record's start")]
    NoStart,
    #[error("it is a {0:?} record, version {1}: this fairbench reads {RECORD_SCHEMA:?} version {RECORD_VERSION}")]
    OtherSchema(String, u32),
    #[error("a second start")]
    SecondStart,
    #[error("lines after its end")]
    AfterEnd,
}

impl Record {
    /// A record that begins with `start`.
    pub fn new(start: RecordStart) -> Self {
        Record { start, phases: Vec::new(), end: None, ha: Vec::new() }
    }

    /// Separate runs of one command line (a study's repeats of a cell) as one record of
    /// repeated phases: the first run's start, every run's phases in order, the last end.
    /// None when there is no run, or the runs recorded different statements.
    pub fn of_repeats(runs: Vec<Record>) -> Option<Record> {
        let mut runs = runs.into_iter();
        let mut all = runs.next()?;
        for run in runs {
            if run.start.statements != all.start.statements || run.start.transactions != all.start.transactions {
                return None;
            }
            all.phases.extend(run.phases);
            all.end = run.end.or(all.end);
        }
        Some(all)
    }

    /// Lines in the order they were written (the first is the start).
    pub fn from_lines(lines: impl IntoIterator<Item = RecordLine>) -> Result<Record, RecordError> {
        let mut lines = lines.into_iter();
        let Some(RecordLine::Start(start)) = lines.next() else { return Err(RecordError::NoStart) };
        if start.schema != RECORD_SCHEMA || start.version != RECORD_VERSION {
            return Err(RecordError::OtherSchema(start.schema, start.version));
        }
        let mut record = Record::new(*start);
        for line in lines {
            record.push(line)?;
        }
        Ok(record)
    }

    /// Adds the next line.
    pub fn push(&mut self, line: RecordLine) -> Result<(), RecordError> {
        if self.end.is_some() {
            return Err(RecordError::AfterEnd);
        }
        match line {
            RecordLine::Start(_) => return Err(RecordError::SecondStart),
            RecordLine::Entry(e) => self.open_phase().entries.push(*e),
            RecordLine::PhaseEnd(o) => {
                self.open_phase().end = Some(*o);
            }
            RecordLine::End(e) => self.end = Some(*e),
            RecordLine::Ha(h) => self.ha.push(*h),
        }
        Ok(())
    }

    /// The lines that make this record, in the order they are written.
    pub fn lines(&self) -> Vec<RecordLine> {
        let mut lines = vec![RecordLine::Start(Box::new(self.start.clone()))];
        for phase in &self.phases {
            lines.extend(phase.entries.iter().map(|e| RecordLine::Entry(Box::new(e.clone()))));
            lines.extend(phase.end.iter().map(|o| RecordLine::PhaseEnd(Box::new(o.clone()))));
        }
        lines.extend(self.ha.iter().map(|h| RecordLine::Ha(Box::new(h.clone()))));
        lines.extend(self.end.iter().map(|e| RecordLine::End(Box::new(e.clone()))));
        lines
    }

    /// The phase lines go to: the last one unless it has ended (each `--repeat` is a phase).
    fn open_phase(&mut self) -> &mut RecordedPhase {
        if self.phases.last().is_none_or(|p| p.end.is_some()) {
            self.phases.push(RecordedPhase::default());
        }
        self.phases.last_mut().expect("just pushed")
    }
}

#[cfg(test)]
impl RecordStart {
    /// A start with no statements, carrying any result document whole.
    pub(crate) fn for_tests(kept_per_phase: usize) -> RecordStart {
        RecordStart {
            schema: RECORD_SCHEMA.into(),
            version: RECORD_VERSION,
            started: SystemTime::UNIX_EPOCH,
            document: serde_json::from_str(include_str!("../audit/testdata/mariadb_loopback.json")).unwrap(),
            statements: Vec::new(),
            transactions: Vec::new(),
            open_loop: false,
            percentiles: Vec::new(),
            kept_per_phase,
            entry_histograms: false,
            thresholds: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(from_s: f64) -> RecordLine {
        let stats = IntervalStats { from_s, duration_s: 1.0, ..Default::default() };
        RecordLine::Entry(Box::new(RecordEntry { stats, counts: RecordedCounts::default() }))
    }

    #[test]
    fn a_run_killed_in_its_second_repeat_reads_as_one_ended_phase_and_one_open() {
        let start = RecordStart::for_tests(150);
        let lines = vec![
            RecordLine::Start(Box::new(start)),
            entry(0.0),
            entry(1.0),
            RecordLine::PhaseEnd(Box::new(RunOutcome::starting())),
            entry(0.0),
        ];
        let record = Record::from_lines(lines.clone()).unwrap();
        assert_eq!(record.phases.len(), 2);
        assert_eq!((record.phases[0].entries.len(), record.phases[0].end.is_some()), (2, true));
        assert_eq!((record.phases[1].entries.len(), record.phases[1].end.is_some()), (1, false));
        assert!(record.end.is_none());
        // Written back, the same lines in the same order.
        let kinds = |l: &[RecordLine]| l.iter().map(|l| std::mem::discriminant(l)).collect::<Vec<_>>();
        assert_eq!(kinds(&record.lines()), kinds(&lines));
        // Out of order: refused.
        let mut bad = record.clone();
        bad.push(RecordLine::End(Box::default())).unwrap();
        assert!(matches!(bad.push(entry(5.0)), Err(RecordError::AfterEnd)));
        assert!(matches!(Record::from_lines(vec![entry(0.0)]), Err(RecordError::NoStart)));
    }
}
