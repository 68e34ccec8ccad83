//! `build(record)`: the one way a result is made. A run that ends builds from its own
//! record; `recover` from a record that has no end (status `incomplete`, every figure its
//! entries hold kept).

use super::repeats::build_repeated;
use super::PhaseTotals;
use crate::collector::KeptTimeline;
use crate::model::ha_ledger::HaLine;
use crate::model::record::{Record, RecordEntry, RecordStart, RecordedPhase, RunOutcome};
use crate::model::{Criterion, ResultDocument, RunStatus, ThresholdRecord};
use crate::recorder::classes::ClassHistograms;
use crate::recorder::record::{statement_infos, CountsError};
use crate::recorder::Recorder;
use crate::runner::ClientCpu;
use std::time::Duration;

/// Why a record does not make a result.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("the record holds no measured phase: the run stopped before its first interval closed")]
    NothingMeasured,
    #[error("phase {phase}, entry {entry}: {source}")]
    Entry { phase: usize, entry: usize, source: CountsError },
    #[error(transparent)]
    Statements(#[from] CountsError),
}

/// The result of the run `record` holds.
pub fn build(record: &Record) -> Result<ResultDocument, BuildError> {
    let start = &record.start;
    if record.phases.is_empty() {
        return Err(BuildError::NothingMeasured);
    }
    let statements = statement_infos(&start.statements)?;
    let empty = Recorder::new(&statements, &start.transactions, start.open_loop);
    let mut runs = Vec::with_capacity(record.phases.len());
    let mut phase_start = start.started;
    for (i, phase) in record.phases.iter().enumerate() {
        let measured = measured(start, &empty, phase).map_err(|(entry, source)| BuildError::Entry {
            phase: i + 1,
            entry: entry + 1,
            source,
        })?;
        let outcome = match &phase.end {
            Some(end) => end.clone(),
            None => never_ended(phase_start, &phase.entries, &measured),
        };
        phase_start = outcome.ended_at;
        runs.push((outcome, measured));
    }
    let mut doc = build_repeated(&start.document, &start.percentiles, runs);
    if let Some(end) = &record.end {
        doc.conditions.dataset.tables_at_end = end.tables_at_end.clone();
        doc.checks = end.checks.clone();
        doc.faults = end.faults.clone();
        doc.conditions.run.shard = end.shard.clone();
        doc.shards = end.shards.clone();
    }
    // A probe's verdict, made at its end from its ledger read back.
    let verdict = record.ha.iter().rev().find_map(|l| match l {
        HaLine::Verdict(ha) => Some(ha),
        _ => None,
    });
    if let Some(ha) = verdict {
        doc.ha = Some((**ha).clone());
    }
    let criteria = start.thresholds.iter().filter_map(|t| Criterion::threshold(t).ok());
    doc.thresholds = criteria.map(|c| ThresholdRecord::check(&c, doc.metric(&c.metric))).collect();
    Ok(doc)
}

/// A phase's entries added up; `Err` names the entry (0-based) that does not fit.
fn measured(start: &RecordStart, empty: &Recorder, phase: &RecordedPhase) -> Result<PhaseTotals, (usize, CountsError)> {
    let mut totals = empty.clone();
    let mut entry_counts = empty.clone();
    let mut kept = KeptTimeline::new(start.kept_per_phase);
    for (i, entry) in phase.entries.iter().enumerate() {
        entry_counts.reset();
        entry_counts.add_recorded(&entry.counts).map_err(|e| (i, e))?;
        if !entry.stats.warmup {
            totals.add(&entry_counts);
        }
        kept.push(entry.stats.clone(), &ClassHistograms::of(&entry_counts));
    }
    let timeline = match start.entry_histograms {
        true => kept.finish_with_histograms(),
        false => kept.finish(),
    };
    Ok(PhaseTotals { totals, timeline })
}

/// How a phase whose end was never recorded went, as far as its entries tell: measured
/// time and client CPU from its measured entries, the end where the last entry ended.
fn never_ended(started_at: std::time::SystemTime, entries: &[RecordEntry], measured: &PhaseTotals) -> RunOutcome {
    let measured_entries = entries.iter().map(|e| &e.stats).filter(|s| !s.warmup);
    let (measured_s, cpu_s) = measured_entries.fold((0.0, 0.0), |(secs, cpu), s| {
        (secs + s.duration_s, cpu + s.client_cpu_pct.unwrap_or(0.0) / 100.0 * s.duration_s)
    });
    let end_s = entries.last().map_or(0.0, |e| e.stats.from_s + e.stats.duration_s);
    let events = measured.totals.events.count();
    RunOutcome {
        measured_s,
        status: RunStatus::Incomplete,
        failure: Some(format!(
            "the run never ended: its record holds {} ({measured_s:.1} s measured, {events} events) and no end",
            crate::model::plural(entries.len() as u64, "timeline segment")
        )),
        started_at,
        ended_at: started_at + Duration::from_secs_f64(end_s.max(0.0)),
        client: ClientCpu { cpu_s, wall_s: measured_s, ..ClientCpu::default() },
        ..RunOutcome::starting()
    }
}
