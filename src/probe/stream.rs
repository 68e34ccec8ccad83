//! A probe's record, streamed as it runs (the same file kind and writer as a run's:
//! [`crate::timeline`]): its start (the result as known before it writes, status
//! `running`), a timeline entry each second of its own writes (one statement, class
//! `write`, open loop at its rate), and its ledger ([`HaLine`]) line by line as the probe
//! thread reports it, each flushed at once, so a probe killed with SIGKILL leaves every
//! acknowledged write it had seen. Its result is `result::build` of this record.

use super::ProbeError;
use crate::model::ha_ledger::HaLine;
use crate::model::record::{Record, RecordEntry, RecordLine, RecordStart, RunEnd, RunOutcome};
use crate::model::StreamedFile;
use crate::recorder::classes::ClassHistograms;
use crate::recorder::Recorder;
use crate::timeline::{LineDetail, TimelineFiles};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

/// What the probe thread reports as it goes.
#[derive(Debug)]
pub enum ProbeEvent {
    Write(WriteDone),
    Line(HaLine),
}

/// One write of the probe's own, done.
#[derive(Clone, Debug)]
pub struct WriteDone {
    /// When it ended.
    pub at: Instant,
    /// From its actual start.
    pub service: Duration,
    /// How late its slot started.
    pub waited: Duration,
    /// Slots skipped just before it.
    pub dropped_before: u64,
    /// Why it was not acknowledged (an outcome or an error code); none: acknowledged.
    pub error: Option<String>,
}

/// Where a probe thread's events go (none: nowhere, a probe beside a workload).
pub type Events = Option<Sender<ProbeEvent>>;

pub fn send(events: &Events, event: ProbeEvent) {
    if let Some(tx) = events {
        // The receiver gone (the main thread failed): the probe's own figures still stand.
        let _ = tx.send(event);
    }
}

/// Entries close this often.
const ENTRY: Duration = Duration::from_secs(1);

/// The record of a probe, in memory and (unless the result goes to a device) on disk.
pub struct Streamer {
    files: Option<TimelineFiles>,
    record: Record,
    entry: Recorder,
    start: Instant,
    entry_from: Instant,
    error: Option<String>,
}

impl Streamer {
    /// Writes the start document at `out` (in place of the result until the probe ends) and
    /// the record's start beside it; entries count from `start`.
    pub fn begin(out: &Path, record_start: RecordStart, start: Instant) -> Result<Streamer, ProbeError> {
        let statements =
            crate::recorder::record::statement_infos(&record_start.statements).map_err(ProbeError::Statement)?;
        let entry = Recorder::new(&statements, &record_start.transactions, record_start.open_loop);
        let write_error = |source| ProbeError::Files { path: out.to_path_buf(), source };
        let device = std::fs::metadata(out).is_ok_and(|m| !m.is_file());
        let files = match device {
            true => None,
            false => {
                let mut files = TimelineFiles::create(out, None).map_err(write_error)?;
                let line = RecordLine::Start(Box::new(record_start.clone()));
                files.write_record(&line).map_err(|e| write_error(e.source))?;
                let doc = crate::result::complete(
                    crate::result::Basis::Start(&record_start),
                    crate::result::Ending::default(),
                )?;
                doc.write(out).map_err(ProbeError::StartDocument)?;
                Some(files)
            }
        };
        let record = Record::new(record_start);
        Ok(Streamer { files, record, entry, start, entry_from: start, error: None })
    }

    /// The record's file, when there is one.
    pub fn record_path(&self) -> Option<PathBuf> {
        let files = self.files.as_ref()?;
        Some(crate::timeline::record_path_for(&files.paths()[1].with_extension("json")))
    }

    /// Takes the probe thread's events until it is `done` (or its senders are gone), closing
    /// an entry each second.
    pub fn follow(&mut self, events: &Receiver<ProbeEvent>, done: &dyn Fn() -> bool) {
        loop {
            let due = self.entry_from + ENTRY;
            let wait = due.saturating_duration_since(Instant::now()).min(Duration::from_millis(100));
            match events.recv_timeout(wait) {
                Ok(event) => self.take(event),
                Err(RecvTimeoutError::Timeout) if done() => break,
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            if Instant::now() >= due {
                self.close_entry(due);
            }
        }
        while let Ok(event) = events.try_recv() {
            self.take(event);
        }
    }

    fn take(&mut self, event: ProbeEvent) {
        match event {
            ProbeEvent::Line(line) => self.line(line),
            ProbeEvent::Write(w) => {
                let r = &mut self.entry;
                r.started(w.waited, w.dropped_before);
                match &w.error {
                    None => {
                        r.statement(0, w.service, w.waited, w.at);
                        r.event(0, w.service + w.waited, w.service, w.at);
                    }
                    Some(code) => r.failed(0, code),
                }
            }
        }
    }

    /// A ledger line, to the record at once.
    pub fn line(&mut self, line: HaLine) {
        self.write(RecordLine::Ha(Box::new(line)));
    }

    fn write(&mut self, line: RecordLine) {
        if let Some(files) = &mut self.files {
            if let Err(e) = files.write_record(&line) {
                self.error.get_or_insert(e.to_string());
            }
        }
        // Lines in the order a record takes them: refusal is a bug.
        self.record.push(line).expect("record lines in order");
    }

    /// The entry open since `entry_from`, closed at `until` (a second's entry: streamed).
    fn close_entry(&mut self, until: Instant) {
        let from_s = self.entry_from.saturating_duration_since(self.start).as_secs_f64();
        let secs = until.saturating_duration_since(self.entry_from).as_secs_f64();
        let h = ClassHistograms::of(&self.entry);
        let mut stats = crate::recorder::summary::interval_stats(&self.entry, &h, self.start, from_s, secs, false, &[]);
        stats.threads = 1;
        let entry = RecordEntry { stats, counts: self.entry.counts() };
        if let Some(files) = &mut self.files {
            let written = files.append(&entry.stats, LineDetail::Whole).map_err(|e| e.to_string());
            let written = written.and_then(|()| files.append_entry(&entry).map_err(|e| e.to_string()));
            if let Err(e) = written {
                self.error.get_or_insert(e);
            }
        }
        self.record.push(RecordLine::Entry(Box::new(entry))).expect("record lines in order");
        self.entry.reset();
        self.entry_from = until;
    }

    /// The probe stopped writing at `end`: its last entry closed and how it went recorded.
    pub fn end_phase(&mut self, end: Instant, outcome: RunOutcome) {
        if end > self.entry_from || self.record.phases.is_empty() {
            self.close_entry(end.max(self.entry_from));
        }
        self.write(RecordLine::PhaseEnd(Box::new(outcome)));
    }

    /// The record as the verdict reads it: read back from its file (what a killed probe
    /// would have left), or the one in memory when there is no file.
    pub fn read_back(&self) -> Result<Record, ProbeError> {
        match self.record_path() {
            Some(path) if self.error.is_none() => Ok(crate::timeline::read_record(&path)?.record),
            _ => Ok(self.record.clone()),
        }
    }

    /// The record ended: the files closed and named; the first write error, if any.
    pub fn finish(mut self, end: RunEnd) -> (Record, Vec<StreamedFile>, Option<String>) {
        self.write(RecordLine::End(Box::new(end)));
        let streamed = match self.files.as_mut().map(TimelineFiles::finish) {
            Some(Ok(files)) => files,
            Some(Err(e)) => {
                self.error.get_or_insert(e.to_string());
                Vec::new()
            }
            None => Vec::new(),
        };
        (self.record, streamed, self.error)
    }
}
