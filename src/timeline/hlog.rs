//! The interval log (`<result>.hlog`), written from the run's record when the run ends and
//! by `recover`: its class histograms are sums of the per-statement histograms each record
//! entry holds, so the log is derived from the record rather than streamed beside it. The
//! bytes in the end are the same; during the run one stream is written and synced, not two,
//! and the log always equals what the result was built from.

use super::record::{read_record, ReadRecordError};
use crate::model::record::Record;
use crate::model::IntervalStats;
use crate::recorder::classes::ClassHistograms;
use crate::recorder::record::{statement_infos, CountsError};
use crate::recorder::Recorder;
use crate::stats::LatencyHistogram;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

#[derive(Debug, thiserror::Error)]
pub enum HlogError {
    #[error(transparent)]
    Record(#[from] ReadRecordError),
    #[error("{0}: {1}")]
    Counts(PathBuf, CountsError),
    #[error("cannot write {0}: {1}")]
    Write(PathBuf, std::io::Error),
}

/// Writes `hlog` from the record file at `record` (a torn last line left out).
pub fn write_from_record(record: &Path, hlog: &Path) -> Result<(), HlogError> {
    let read = read_record(record)?;
    write(&read.record, hlog).map_err(|e| match e {
        HlogError::Counts(_, c) => HlogError::Counts(record.to_path_buf(), c),
        other => other,
    })
}

/// Writes `hlog` from `record`, read back.
pub fn write(record: &Record, hlog: &Path) -> Result<(), HlogError> {
    let text = log_text(record).map_err(|e| HlogError::Counts(hlog.to_path_buf(), e))?;
    let write = || -> std::io::Result<()> {
        let mut file = std::fs::File::create(hlog)?;
        file.write_all(text.as_bytes())?;
        file.sync_data()
    };
    write().map_err(|e| HlogError::Write(hlog.to_path_buf(), e))
}

/// The log: its header, then each entry's classes (phases, that is repeats, back to back).
fn log_text(record: &Record) -> Result<String, CountsError> {
    let start = &record.start;
    let mut log = header(start.started);
    let statements = statement_infos(&start.statements)?;
    let mut counts = Recorder::new(&statements, &start.transactions, start.open_loop);
    let mut offset_s = 0.0;
    for phase in &record.phases {
        for entry in &phase.entries {
            counts.reset();
            counts.add_recorded(&entry.counts)?;
            let h = ClassHistograms::of(&counts);
            let at = IntervalStats { from_s: entry.stats.from_s + offset_s, ..entry.stats.clone() };
            log += &histogram_line("event", h.event(), &at);
            for (tag, class) in h.by_name().skip(1) {
                log += &histogram_line(tag, class, &at);
            }
        }
        offset_s += phase.entries.last().map_or(0.0, |e| e.stats.from_s + e.stats.duration_s);
    }
    Ok(log)
}

fn header(started: std::time::SystemTime) -> String {
    let since_epoch = started.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs_f64();
    format!(
        "#[Histogram log format version 1.3]\n#[fairbench {} latencies in nanoseconds]\n\
         #[StartTime: {since_epoch:.3} (seconds since epoch), {}]\n\
         \"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n",
        env!("CARGO_PKG_VERSION"),
        crate::model::rfc3339(started)
    )
}

/// `Tag=event,12.000000,1.001000,3.145,HISTF...`: start and length in seconds (to the
/// microsecond, so that entries and the intervals file's lines match exactly), the max in
/// milliseconds (the format's customary unit for its max column); nothing for an empty one.
fn histogram_line(tag: &str, h: &LatencyHistogram, s: &IntervalStats) -> String {
    if h.count() == 0 {
        return String::new();
    }
    format!("Tag={tag},{:.6},{:.6},{:.3},{}\n", s.from_s, s.duration_s, h.max_ns() as f64 / 1e6, h.encode())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::record::{RecordEntry, RecordStart, RecordedPhase};

    fn entry(from_s: f64, duration_s: f64, event_ns: u64) -> RecordEntry {
        let mut r = Recorder::new(&[], &[], false);
        r.events.record_ns(event_ns);
        RecordEntry { stats: IntervalStats { from_s, duration_s, ..Default::default() }, counts: r.counts() }
    }

    #[test]
    fn each_entry_logs_its_classes_and_repeats_follow_one_another() {
        let mut record = Record::new(RecordStart::for_tests(8));
        let phase = |entries| RecordedPhase { entries, end: None };
        record.phases.push(phase(vec![entry(3.0, 3.0, 2_000_000)]));
        record.phases.push(phase(vec![entry(0.0, 2.0, 5_000_000)]));
        let log = log_text(&record).unwrap();
        assert!(log.starts_with("#[Histogram log format version 1.3]\n"), "{log}");
        assert!(log.contains("#[StartTime: 0.000 (seconds since epoch), 1970-01-01T00:00:00"), "{log}");
        let lines: Vec<&str> = log.lines().filter(|l| l.starts_with("Tag=")).collect();
        assert_eq!(lines.len(), 2, "an empty class is left out: {log}");
        assert!(lines[0].starts_with("Tag=event,3.000000,3.000000,2.00"), "{}", lines[0]);
        // The second repeat starts where the first ended (6 s).
        assert!(lines[1].starts_with("Tag=event,6.000000,2.000000,5.00"), "{}", lines[1]);
        let h = LatencyHistogram::decode(lines[1].rsplit(',').next().unwrap(), 0, u64::MAX, 0).unwrap();
        assert_eq!(h.count(), 1);
    }
}
