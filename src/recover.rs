//! `fairbench recover`: a run that never wrote its result (killed, out of memory, a lost
//! session, a power cut) left the document written when measuring started (its conditions,
//! status `running`) and its streamed timeline. This rebuilds the result from them: every
//! interval that closed, totals from the interval log's histograms (exact: added, not
//! averaged), status `incomplete`. Per-statement figures, the open loop's service times,
//! the server's counters after the run and the tables at its end were never written, and
//! stay missing.

use crate::collector::{KeptTimeline, MAX_KEPT};
use crate::model::{IntervalStats, ResultDocument, RunStatus};
use crate::recorder::classes::ClassHistograms;
use crate::recorder::summary::class_stats;
use crate::stats::LatencyHistogram;
use crate::timeline::{describe, paths_for};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

#[derive(Debug, thiserror::Error)]
pub enum RecoverError {
    #[error("{0} is a finished result (status {1}): nothing to recover")]
    Finished(PathBuf, &'static str),
    #[error("cannot read {0}: {1}")]
    Read(PathBuf, std::io::Error),
    #[error("{0}, line {1}: {2}")]
    Corrupt(PathBuf, usize, String),
    #[error("{0} holds no closed interval: the run stopped before its first second ended")]
    Empty(PathBuf),
}

/// What recover rebuilt.
pub struct Recovered {
    pub doc: ResultDocument,
    /// Intervals read back (warmup included).
    pub intervals: usize,
    /// Lines at the end of the files that were cut short (a write the stop interrupted).
    pub torn: bool,
}

/// Rebuilds the result whose start document `started` was read from `path`.
pub fn recover(started: ResultDocument, path: &Path) -> Result<Recovered, RecoverError> {
    let status = started.conditions.run.status;
    if status != RunStatus::Running {
        return Err(RecoverError::Finished(path.to_path_buf(), status.name()));
    }
    let paths = paths_for(path);
    let back = read_back(&paths)?;
    if back.intervals == 0 {
        return Err(RecoverError::Empty(paths[0].clone()));
    }
    let (intervals, torn) = (back.intervals, back.torn);
    let mut doc = fill(started, back);
    doc.streamed = describe(&paths).map_err(|e| RecoverError::Read(paths[0].clone(), e))?;
    Ok(Recovered { doc, intervals, torn })
}

/// What the streamed files hold: the kept timeline and the measured totals.
struct ReadBack {
    kept: KeptTimeline,
    /// Measured (after warmup) intervals' histograms, added.
    totals: Option<ClassHistograms>,
    intervals: usize,
    torn: bool,
    measured_s: f64,
    /// Where the last interval read ended, seconds since the log's start.
    end_s: f64,
    start: Option<SystemTime>,
    errors: u64,
    reconnects: u64,
    cpu_s: f64,
}

/// Reads both files in step, one interval at a time (memory stays that of the kept timeline).
fn read_back(paths: &[PathBuf; 2]) -> Result<ReadBack, RecoverError> {
    let mut log = LogReader::open(&paths[1])?;
    let file = std::fs::File::open(&paths[0]).map_err(|e| RecoverError::Read(paths[0].clone(), e))?;
    let mut back = ReadBack {
        kept: KeptTimeline::new(MAX_KEPT),
        totals: None,
        intervals: 0,
        torn: false,
        measured_s: 0.0,
        end_s: 0.0,
        start: None,
        errors: 0,
        reconnects: 0,
        cpu_s: 0.0,
    };
    for (n, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| RecoverError::Read(paths[0].clone(), e))?;
        let stats: IntervalStats = match serde_json::from_str(&line) {
            Ok(s) => s,
            // A line cut short can only be the last one written.
            Err(_) if !line.ends_with('}') => {
                back.torn = true;
                break;
            }
            Err(e) => return Err(RecoverError::Corrupt(paths[0].clone(), n + 1, e.to_string())),
        };
        let Some(histograms) = log.interval(&stats)? else {
            back.torn = true; // its histograms never reached the log
            break;
        };
        back.add(stats, histograms);
    }
    back.start = log.start;
    Ok(back)
}

impl ReadBack {
    fn add(&mut self, stats: IntervalStats, histograms: ClassHistograms) {
        self.intervals += 1;
        self.end_s = stats.from_s + stats.duration_s;
        if !stats.warmup {
            self.measured_s += stats.duration_s;
            self.errors += stats.errors;
            self.reconnects += stats.reconnects;
            self.cpu_s += stats.client_cpu_pct.unwrap_or(0.0) / 100.0 * stats.duration_s;
            match &mut self.totals {
                Some(t) => t.add(&histograms),
                None => self.totals = Some(histograms.clone()),
            }
        }
        self.kept.push(stats, &histograms);
    }
}

/// The start document with what was read back: figures, timeline, status `incomplete`.
fn fill(mut doc: ResultDocument, back: ReadBack) -> ResultDocument {
    let secs = back.measured_s;
    if let Some(t) = &back.totals {
        doc.stats.insert("event".into(), class_stats(t.event(), secs, &[]));
        for (name, h) in t.by_name() {
            doc.stats.insert(name.into(), class_stats(h, secs, &[]));
        }
    }
    let events = back.totals.as_ref().map_or(0, |t| t.event().count());
    let queries = back.totals.as_ref().and_then(|t| t.by_name().next()).map_or(0, |(_, h)| h.count());
    // Never written: what a run records only at its end.
    doc.statements.clear();
    doc.transactions.clear();
    doc.service = None;
    doc.service_statements = None;
    doc.intervals = crate::result::scatter::bounded(back.kept.finish());
    doc.errors.total = back.errors;
    doc.errors.reconnects = back.reconnects;
    let cost = &mut doc.client_cost;
    cost.cpu_s = back.cpu_s;
    cost.cpu_per_event_us = (events > 0).then(|| back.cpu_s * 1e6 / events as f64);
    cost.cpu_per_query_us = (queries > 0).then(|| back.cpu_s * 1e6 / queries as f64);
    let run = &mut doc.conditions.run;
    run.status = RunStatus::Incomplete;
    run.measured_s = secs;
    run.events = events;
    run.failure = Some(format!(
        "the run never ended; rebuilt by `fairbench recover` from {} of its streamed timeline{}",
        crate::model::plural(back.intervals as u64, "interval"),
        if back.torn { " (the last, cut short, left out)" } else { "" }
    ));
    if let Some(start) = back.start {
        run.ended_at = crate::model::rfc3339(start + Duration::from_secs_f64(back.end_s.max(0.0)));
    }
    doc
}

/// Reads the interval log in step with the intervals file.
struct LogReader {
    path: PathBuf,
    lines: std::iter::Peekable<std::iter::Enumerate<std::io::Lines<std::io::BufReader<std::fs::File>>>>,
    /// The log's `#[StartTime: ...]`: interval times count from it.
    start: Option<SystemTime>,
}

impl LogReader {
    fn open(path: &Path) -> Result<LogReader, RecoverError> {
        let file = std::fs::File::open(path).map_err(|e| RecoverError::Read(path.to_path_buf(), e))?;
        let mut reader = LogReader {
            path: path.to_path_buf(),
            lines: std::io::BufReader::new(file).lines().enumerate().peekable(),
            start: None,
        };
        // The header: comments and the column names.
        while let Some((_, Ok(line))) = reader.lines.peek() {
            if !(line.starts_with('#') || line.starts_with('"')) {
                break;
            }
            if let Some(secs) = line.strip_prefix("#[StartTime: ").and_then(|r| r.split(' ').next()) {
                reader.start = secs.parse::<f64>().ok().map(|s| UNIX_EPOCH + Duration::from_secs_f64(s.max(0.0)));
            }
            reader.lines.next();
        }
        Ok(reader)
    }

    /// The histograms of the interval `stats` (one line per class that recorded anything),
    /// or `None` when the log ends before them.
    fn interval(&mut self, stats: &IntervalStats) -> Result<Option<ClassHistograms>, RecoverError> {
        let start = format!("{:.3}", stats.from_s);
        let classes =
            [("read", &stats.read), ("write", &stats.write), ("commit", &stats.commit), ("other", &stats.other)];
        let mut event = LatencyHistogram::new();
        let mut parts: [LatencyHistogram; 4] = Default::default();
        let wanted = std::iter::once(("event", &stats.event)).chain(classes.iter().copied());
        for (k, (tag, figures)) in wanted.enumerate() {
            if figures.count == 0 {
                continue;
            }
            let Some((n, line)) = self.lines.next() else { return Ok(None) };
            let line = line.map_err(|e| RecoverError::Read(self.path.clone(), e))?;
            let corrupt = |why: String| RecoverError::Corrupt(self.path.clone(), n + 1, why);
            let mut fields = line.splitn(5, ',');
            let (got_tag, got_start, encoded) = (fields.next(), fields.next(), fields.nth(2));
            let Some(encoded) = encoded else {
                return Ok(None); // cut short: the last line written
            };
            if got_tag != Some(&format!("Tag={tag}")[..]) || got_start != Some(&start[..]) {
                return Err(corrupt(format!(
                    "expected Tag={tag} at {start} s (the intervals file's next), found {line:.40}"
                )));
            }
            let ns = |us: f64| (us * 1000.0).round() as u64;
            let h = match LatencyHistogram::decode_estimating_sum(encoded, ns(figures.min_us), ns(figures.max_us)) {
                Ok(h) => h,
                Err(_) if self.lines.peek().is_none() => return Ok(None),
                Err(e) => return Err(corrupt(e)),
            };
            if k == 0 {
                event = h;
            } else {
                parts[k - 1] = h;
            }
        }
        Ok(Some(ClassHistograms::from_classes(event, parts)))
    }
}
