//! `fairbench recover`: a run that never wrote its result (killed, out of memory, a lost
//! session, a power cut) left the document written when measuring started (its conditions,
//! status `running`) and its streamed timeline. This rebuilds the result from them: every
//! interval that closed, totals from the interval log's histograms (exact: added, not
//! averaged), status `incomplete`. Per-statement figures, the open loop's service times,
//! the server's counters after the run and the tables at its end were never written, and
//! stay missing.

use crate::collector::{kept, KeptTimeline, MAX_KEPT};
use crate::model::{IntervalStats, ResultDocument, RunStatus};
use crate::recorder::classes::ClassHistograms;
use crate::recorder::summary::class_stats;
use crate::stats::LatencyHistogram;
use crate::timeline::{describe, paths_for, IntervalLines};
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
    #[error("{0}, line {1}: {2}")]
    CorruptHistogram(PathBuf, usize, crate::stats::HistogramError),
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
    /// Intervals after the interval log's last entry, and their seconds: in the intervals
    /// file, but their histograms were never written, so the result leaves them out.
    pub unlogged: (usize, f64),
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
    let (intervals, torn, unlogged) = (back.intervals, back.torn, (back.unlogged, back.unlogged_s));
    let mut doc = fill(started, back);
    doc.streamed = describe(&paths).map_err(|e| RecoverError::Read(paths[0].clone(), e))?;
    Ok(Recovered { doc, intervals, torn, unlogged })
}

/// What the streamed files hold: the kept timeline and the measured totals.
struct ReadBack {
    kept: KeptTimeline,
    /// Measured (after warmup) intervals' histograms, added.
    totals: Option<ClassHistograms>,
    intervals: usize,
    torn: bool,
    /// Intervals after the interval log's last entry (their histograms never written).
    unlogged: usize,
    unlogged_s: f64,
    measured_s: f64,
    /// Where the last interval read ended, seconds since the log's start.
    end_s: f64,
    start: Option<SystemTime>,
    errors: u64,
    reconnects: u64,
    reconnect_failures: u64,
    cpu_s: f64,
}

/// Reads both files in step, one logged entry (and the intervals it covers) at a time:
/// memory stays that of the kept timeline.
fn read_back(paths: &[PathBuf; 2]) -> Result<ReadBack, RecoverError> {
    let mut log = LogReader::open(&paths[1])?;
    let read_error = |e| RecoverError::Read(paths[0].clone(), e);
    let mut lines = IntervalLines::open(&paths[0]).map_err(read_error)?;
    let mut back = ReadBack {
        kept: KeptTimeline::new(MAX_KEPT),
        totals: None,
        intervals: 0,
        torn: false,
        unlogged: 0,
        unlogged_s: 0.0,
        measured_s: 0.0,
        end_s: 0.0,
        start: log.start,
        errors: 0,
        reconnects: 0,
        reconnect_failures: 0,
        cpu_s: 0.0,
    };
    let mut group: Vec<IntervalStats> = Vec::new();
    let mut entry = log.entry()?;
    for (n, line) in lines.by_ref().enumerate() {
        let stats: IntervalStats = serde_json::from_str(&line.map_err(read_error)?)
            .map_err(|e| RecoverError::Corrupt(paths[0].clone(), n + 1, e.to_string()))?;
        let Some(logged) = &entry else {
            back.unlogged += 1;
            back.unlogged_s += stats.duration_s;
            continue;
        };
        let end = stats.from_s + stats.duration_s;
        group.push(stats);
        // The entry ends with this interval (the log's times are to the microsecond).
        if end >= logged.end_s - 2e-6 {
            let h = logged.histograms(&group)?;
            back.add(&group, h);
            group.clear();
            entry = log.entry()?;
        }
    }
    back.unlogged += group.len();
    back.unlogged_s += group.iter().map(|s| s.duration_s).sum::<f64>();
    back.torn = log.torn || lines.torn;
    Ok(back)
}

impl ReadBack {
    /// One kept entry: the intervals it covers and its histograms.
    fn add(&mut self, intervals: &[IntervalStats], histograms: ClassHistograms) {
        let Some(stats) = kept::merged(intervals, &histograms) else { return };
        self.intervals += intervals.len();
        self.end_s = stats.from_s + stats.duration_s;
        if !stats.warmup {
            self.measured_s += stats.duration_s;
            self.errors += stats.errors;
            self.reconnects += stats.reconnects;
            self.reconnect_failures += stats.reconnect_failures;
            self.cpu_s += intervals.iter().map(|s| s.client_cpu_pct.unwrap_or(0.0) / 100.0 * s.duration_s).sum::<f64>();
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
    doc.errors.reconnect_failures = back.reconnect_failures;
    let cost = &mut doc.client_cost;
    cost.cpu_s = back.cpu_s;
    cost.cpu_per_event_us = (events > 0).then(|| back.cpu_s * 1e6 / events as f64);
    cost.cpu_per_query_us = (queries > 0).then(|| back.cpu_s * 1e6 / queries as f64);
    let run = &mut doc.conditions.run;
    run.status = RunStatus::Incomplete;
    run.measured_s = secs;
    run.events = events;
    let unlogged = match back.unlogged {
        0 => String::new(),
        n => format!(
            "; the last {} ({:.1} s) left out: the interval log never received their histograms",
            crate::model::plural(n as u64, "interval"),
            back.unlogged_s
        ),
    };
    run.failure = Some(format!(
        "the run never ended; rebuilt by `fairbench recover` from {} of its streamed timeline{}{unlogged}",
        crate::model::plural(back.intervals as u64, "interval"),
        if back.torn { " (a line cut short by the stop left out)" } else { "" }
    ));
    if let Some(start) = back.start {
        run.ended_at = crate::model::rfc3339(start + Duration::from_secs_f64(back.end_s.max(0.0)));
    }
    doc
}

/// Reads the interval log one entry (a line per class, the same start) at a time.
struct LogReader {
    path: PathBuf,
    lines: std::iter::Peekable<std::iter::Enumerate<std::io::Lines<std::io::BufReader<std::fs::File>>>>,
    /// The log's `#[StartTime: ...]`: interval times count from it.
    start: Option<SystemTime>,
    /// The last line was cut short (the writer stopped in it).
    torn: bool,
}

/// One logged entry: where it ends and its classes' encoded histograms.
struct Logged {
    path: PathBuf,
    line: usize,
    end_s: f64,
    encoded: Vec<(String, String)>,
}

impl LogReader {
    fn open(path: &Path) -> Result<LogReader, RecoverError> {
        let file = std::fs::File::open(path).map_err(|e| RecoverError::Read(path.to_path_buf(), e))?;
        let mut reader = LogReader {
            path: path.to_path_buf(),
            lines: std::io::BufReader::new(file).lines().enumerate().peekable(),
            start: None,
            torn: false,
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

    /// The next entry, or `None` when the log ends (a last entry cut short by the stop
    /// included: the interval log is written after the intervals it covers).
    fn entry(&mut self) -> Result<Option<Logged>, RecoverError> {
        let mut entry: Option<(String, Logged)> = None;
        while let Some((n, line)) = self.lines.next_if(|(_, l)| l.as_ref().is_ok_and(|l| l.starts_with("Tag="))) {
            let line = line.map_err(|e| RecoverError::Read(self.path.clone(), e))?;
            let fields: Vec<&str> = line.splitn(5, ',').collect();
            let [tag, start, length, _max, encoded] = fields[..] else {
                self.torn = self.lines.peek().is_none();
                return if self.torn { Ok(None) } else { Err(self.corrupt(n, "fewer than 5 fields")) };
            };
            let (Ok(from), Ok(len)) = (start.parse::<f64>(), length.parse::<f64>()) else {
                return Err(self.corrupt(n, "start or length is not a number"));
            };
            let tag = tag.trim_start_matches("Tag=").to_string();
            let (key, logged) = entry.get_or_insert_with(|| {
                let logged = Logged { path: self.path.clone(), line: n + 1, end_s: from + len, encoded: Vec::new() };
                (start.to_string(), logged)
            });
            logged.encoded.push((tag, encoded.to_string()));
            let same_start = |l: &String| l.split(',').nth(1) == Some(key.as_str());
            if self.lines.peek().and_then(|(_, l)| l.as_ref().ok()).is_none_or(|l| !same_start(l)) {
                break;
            }
        }
        // A last line cut inside its histogram leaves the entry incomplete: not used.
        if self.lines.peek().is_none() {
            if let Some((_, logged)) = &entry {
                if logged.encoded.iter().any(|(_, e)| crate::stats::LatencyHistogram::decode(e, 0, 0, 0).is_err()) {
                    self.torn = true;
                    return Ok(None);
                }
            }
        }
        Ok(entry.map(|(_, logged)| logged))
    }

    fn corrupt(&self, line: usize, why: &str) -> RecoverError {
        RecoverError::Corrupt(self.path.clone(), line + 1, why.into())
    }
}

impl Logged {
    /// The histograms of the entry covering `intervals`, each class bounded by the exact
    /// minimum and maximum the intervals recorded.
    fn histograms(&self, intervals: &[IntervalStats]) -> Result<ClassHistograms, RecoverError> {
        let mut event = LatencyHistogram::new();
        let mut parts: [LatencyHistogram; 4] = Default::default();
        for (tag, encoded) in &self.encoded {
            let k = ["event", "read", "write", "commit", "other"]
                .iter()
                .position(|t| t == tag)
                .ok_or_else(|| RecoverError::Corrupt(self.path.clone(), self.line, format!("unknown tag {tag:.20}")))?;
            let figures = |s: &IntervalStats| [&s.event, &s.read, &s.write, &s.commit, &s.other][k].clone();
            let recorded: Vec<_> = intervals.iter().map(figures).filter(|f| f.count > 0).collect();
            let ns = |us: f64| (us * 1000.0).round() as u64;
            let min = recorded.iter().map(|f| ns(f.min_us)).min().unwrap_or(0);
            let max = recorded.iter().map(|f| ns(f.max_us)).max().unwrap_or(0);
            let h = LatencyHistogram::decode_estimating_sum(encoded, min, max)
                .map_err(|e| RecoverError::CorruptHistogram(self.path.clone(), self.line, e))?;
            match k {
                0 => event = h,
                _ => parts[k - 1] = h,
            }
        }
        Ok(ClassHistograms::from_classes(event, parts))
    }
}
