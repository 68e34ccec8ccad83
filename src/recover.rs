//! `fairbench recover`: a run that never wrote its result (killed, out of memory, a lost
//! session, a power cut) left its start document (status `running`) and its record up to
//! the last entry that closed (a probe: and its ledger up to its last line). The result is built from that record as any result is
//! (`result::build`): every closed entry's figures, per statement and per class, exact;
//! status `incomplete`. What only the run's end reads (server counters after, the tables at
//! the end, peak memory, per-client fairness) stays missing.

use crate::model::{ResultDocument, RunStatus};
use crate::result::BuildError;
use crate::timeline::record::{read_record, ReadRecordError};
use crate::timeline::{describe, paths_for, record_path_for, IntervalLines};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum RecoverError {
    #[error("{0} is a finished result (status {1}): nothing to recover")]
    Finished(PathBuf, &'static str),
    #[error("{0} is missing: the run was started by a fairbench older than its record (recover with that version)")]
    NoRecord(PathBuf),
    #[error(transparent)]
    Record(#[from] ReadRecordError),
    #[error("{0}: {1}")]
    Build(PathBuf, BuildError),
    #[error("cannot read {0}: {1}")]
    Read(PathBuf, std::io::Error),
    #[error(transparent)]
    Hlog(#[from] crate::timeline::hlog::HlogError),
}

/// What recover rebuilt.
pub struct Recovered {
    pub doc: ResultDocument,
    /// The record read back.
    pub record: PathBuf,
    /// Timeline entries read back (warmup included).
    pub entries: usize,
    /// The record's last line was cut short by the stop (left out).
    pub torn: bool,
    /// Intervals in the intervals file after the record's last entry, and their seconds:
    /// their counts never reached the record, so the result leaves them out.
    pub unrecorded: (usize, f64),
    /// A probe's ledger as its record holds it (empty for a run).
    pub ledger: Vec<crate::model::ha_ledger::HaLine>,
}

/// Rebuilds the result whose start document `started` was read from `path`.
pub fn recover(started: ResultDocument, path: &Path) -> Result<Recovered, RecoverError> {
    let status = started.conditions.run.status;
    if status != RunStatus::Running {
        return Err(RecoverError::Finished(path.to_path_buf(), status.name()));
    }
    let record_path = record_path_for(path);
    if !record_path.exists() {
        return Err(RecoverError::NoRecord(record_path));
    }
    let read = read_record(&record_path)?;
    let mut doc = crate::result::build(&read.record).map_err(|e| RecoverError::Build(record_path.clone(), e))?;
    // The interval log is written when a run ends: from the record here.
    crate::timeline::hlog::write(&read.record, &paths_for(path)[1])?;
    doc.streamed = describe(path).map_err(|e| RecoverError::Read(record_path.clone(), e))?;
    let phases = &read.record.phases;
    let entries = phases.iter().map(|p| p.entries.len()).sum();
    // Where the record's entries end on the intervals file's time axis (phases back to back).
    let covered_s: f64 =
        phases.iter().filter_map(|p| p.entries.last()).map(|e| e.stats.from_s + e.stats.duration_s).sum();
    let unrecorded = after(&paths_for(path)[0], covered_s)?;
    let ledger = read.record.ha;
    Ok(Recovered { doc, record: record_path, entries, torn: read.torn, unrecorded, ledger })
}

/// Intervals in the intervals file that end after `covered_s`, and their seconds.
fn after(intervals: &Path, covered_s: f64) -> Result<(usize, f64), RecoverError> {
    let Ok(lines) = IntervalLines::open(intervals) else { return Ok((0, 0.0)) };
    let mut found = (0, 0.0);
    for line in lines {
        let line = line.map_err(|e| RecoverError::Read(intervals.to_path_buf(), e))?;
        let Ok(s) = crate::timeline::lines::parse(&line) else { continue };
        if s.from_s + s.duration_s > covered_s + 2e-6 {
            found = (found.0 + 1, found.1 + s.duration_s);
        }
    }
    Ok(found)
}
