//! The streamed timeline: written beside the result as the run goes, and flushed, so that a
//! run killed midway (kill -9, the OOM killer, a lost session) leaves everything up to its
//! last interval readable:
//!
//! - `<result>.intervals.jsonl.gz`: one line per interval, the result's `intervals[]` entry
//!   (a long run's, whose entries are wider: the event class whole and every other class's
//!   count and max, [`lines`]), in a gzip stream flushed after each line (`zcat` reads a killed run's file up to its
//!   last line, then complains of the missing end); a scatter sample bounded over the run;
//! - `<result>.record.jsonl.gz`: the run's record ([`record`]), each entry the result's
//!   timeline keeps with its histograms per statement, as it closes: what the result is built
//!   from. A run with a planned length has at most ~300 entries (each as wide as the run's
//!   length makes it); without one, entries double in width as it goes.
//! - `<result>.hlog`: the latency histograms (whole events and each statement class) of
//!   each of those entries in HdrHistogram's interval-log format (V2 + DEFLATE, base64;
//!   nanoseconds, 3 significant digits), which HdrHistogram's own tools and the
//!   `hdrhistogram` Python package read, and which several client hosts' logs merge
//!   exactly. Written from the record when the run ends, and by `recover` ([`hlog`]).
//!
//! Why this split: a day at one-second intervals is 86,400 lines; each interval's figures
//! compress to ~300 bytes, its histograms to several kilobytes. So every interval's figures
//! are streamed, and the histograms at the resolution the result keeps.

pub mod hlog;
pub mod lines;
pub mod record;

pub use lines::{IntervalLines, LineDetail};
pub use record::{read_record, record_path_for, RecordFile};

use crate::model::record::{RecordEntry, RecordLine};
use crate::model::{IntervalStats, StreamedFile};
use flate2::write::GzEncoder;
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The streamed files, open for appending. Each interval goes out in one write per file
/// (whole lines, never a part of one), straight to the OS; the interval log is written at
/// the end.
pub struct TimelineFiles {
    intervals: Option<GzEncoder<File>>,
    paths: [PathBuf; 2],
    /// The run's record: what the result is built from.
    record: RecordFile,
    /// Data reach the disk at most this often (each interval is with the OS at once).
    last_sync: Instant,
    /// `--repeat`: the repeat being measured, and where its times start (the previous
    /// repeats' end), as the result's `intervals[]` place them.
    repeat: Option<u32>,
    offset_s: f64,
    end_s: f64,
    /// Scatter points each line keeps on average, and those owed so far.
    points_per_line: f64,
    points_owed: f64,
}

/// Files reach the disk (fsync) at least this often while a run lasts.
const SYNC_EVERY: Duration = Duration::from_secs(1);

/// Scatter points the intervals file keeps over a planned run (as many as the result).
const STREAMED_POINTS: f64 = crate::model::stats::SCATTER_POINTS_PER_RUN as f64;

/// A streamed file could not be written.
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", .path.display())]
pub struct StreamError {
    pub path: PathBuf,
    pub source: std::io::Error,
}

/// `r.json` -> `r.intervals.jsonl.gz`, `r.hlog`.
pub fn paths_for(result: &Path) -> [PathBuf; 2] {
    let stem = result.with_extension("");
    let with = |ext: &str| PathBuf::from(format!("{}.{ext}", stem.display()));
    [with("intervals.jsonl.gz"), with("hlog")]
}

/// The files streamed beside the result at `result` as a result names them: name, format,
/// size and SHA-256 (read in pieces: a day's timeline is hundreds of megabytes). A file
/// that is not there is not named.
pub fn describe(result: &Path) -> std::io::Result<Vec<StreamedFile>> {
    let [intervals, hlog] = paths_for(result);
    let files = [
        (intervals, "intervals-jsonl-gz"),
        (hlog, "hdr-interval-log"),
        (record_path_for(result), "fairbench-record-jsonl-gz"),
    ];
    files
        .into_iter()
        .filter(|(path, _)| path.exists())
        .map(|(path, format)| {
            let (bytes, sha256) = digest(&path)?;
            let file = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            Ok(StreamedFile { file, format: format.into(), bytes, sha256 })
        })
        .collect()
}

/// A file's size and SHA-256 (hex), read in pieces.
pub fn digest(path: &Path) -> std::io::Result<(u64, String)> {
    let mut digest = Sha256::new();
    let bytes = std::io::copy(&mut File::open(path)?, &mut digest)?;
    Ok((bytes, digest.finalize().iter().map(|b| format!("{b:02x}")).collect()))
}

impl TimelineFiles {
    /// Creates (or truncates) the files for the result at `result` (the record's start line
    /// gives the interval log its start time). A run of `intervals` planned intervals (all
    /// repeats) spreads its scatter sample over them.
    pub fn create(result: &Path, intervals: Option<u64>) -> std::io::Result<TimelineFiles> {
        let paths = paths_for(result);
        let record = RecordFile::create(&record_path_for(result))?;
        let per_line = intervals.map_or(1.0, |n| STREAMED_POINTS / n.max(1) as f64);
        // A log left by an earlier run at this path would not be this run's.
        match std::fs::remove_file(&paths[1]) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        let mut files = TimelineFiles {
            intervals: Some(GzEncoder::new(File::create(&paths[0])?, flate2::Compression::default())),
            paths,
            record,
            last_sync: Instant::now(),
            repeat: None,
            offset_s: 0.0,
            end_s: 0.0,
            points_per_line: per_line,
            points_owed: 0.0,
        };
        files.sync()?;
        Ok(files)
    }

    pub fn paths(&self) -> &[PathBuf; 2] {
        &self.paths
    }

    /// Appends a line to the run's record.
    pub fn write_record(&mut self, line: &RecordLine) -> Result<(), StreamError> {
        let path = self.record.path().to_path_buf();
        self.record.write(line).and_then(|()| self.sync_now_and_then()).map_err(|source| StreamError { path, source })
    }

    /// A timeline entry as it closes: its line in the record.
    pub fn append_entry(&mut self, entry: &RecordEntry) -> Result<(), StreamError> {
        /// An `entry` line as [`RecordLine::Entry`] writes it, by reference (no copy).
        #[derive(serde::Serialize)]
        #[serde(tag = "record", rename_all = "snake_case")]
        enum Line<'a> {
            Entry(&'a RecordEntry),
        }
        let path = self.record.path().to_path_buf();
        self.record
            .write(&Line::Entry(entry))
            .and_then(|()| self.sync_now_and_then())
            .map_err(|source| StreamError { path, source })
    }

    /// Ends the files (the gzip streams' trailers), writes the interval log from the record,
    /// and names them as the result does: name, format, size and digest.
    pub fn finish(&mut self) -> std::io::Result<Vec<StreamedFile>> {
        if let Some(gz) = self.intervals.take() {
            gz.finish()?.sync_data()?;
        }
        self.record.finish()?;
        hlog::write_from_record(self.record.path(), &self.paths[1]).map_err(std::io::Error::other)?;
        let result = self.paths[1].with_extension("json");
        describe(&result)
    }

    /// The next intervals belong to repeat `index` (1-based), which starts where the
    /// previous one ended.
    pub fn begin_repeat(&mut self, index: u32) {
        self.repeat = Some(index);
        self.offset_s = self.end_s;
    }

    /// Appends one closed interval's figures (its scatter thinned to the run's share), as
    /// much of them as `detail` says.
    pub fn append(&mut self, stats: &IntervalStats, detail: LineDetail) -> std::io::Result<()> {
        let mut stats = stats.clone();
        self.place(&mut stats);
        stats.repeat = self.repeat.or(stats.repeat);
        self.end_s = stats.from_s + stats.duration_s;
        self.points_owed += self.points_per_line;
        let keep = (self.points_owed.floor() as usize).min(stats.scatter.points.len());
        self.points_owed -= keep as f64;
        stats.scatter.points = evenly(std::mem::take(&mut stats.scatter.points), keep);
        let mut line = lines::encode(&stats, detail).map_err(std::io::Error::other)?;
        line.push(b'\n');
        let gz = self.intervals.as_mut().ok_or_else(|| std::io::Error::other("the intervals file is closed"))?;
        gz.write_all(&line)?;
        // A sync flush: every line written so far decompresses from what is in the file.
        gz.flush()?;
        self.sync_now_and_then()
    }

    /// Repeats are placed back to back.
    fn place(&self, stats: &mut IntervalStats) {
        stats.from_s += self.offset_s;
        stats.scatter.points.iter_mut().for_each(|p| p[0] += self.offset_s);
    }

    fn sync_now_and_then(&mut self) -> std::io::Result<()> {
        if self.last_sync.elapsed() >= SYNC_EVERY {
            self.sync()?;
        }
        Ok(())
    }

    fn sync(&mut self) -> std::io::Result<()> {
        if let Some(gz) = &self.intervals {
            gz.get_ref().sync_data()?;
        }
        self.record.sync()?;
        self.last_sync = Instant::now();
        Ok(())
    }
}

/// `keep` of `points`, evenly spread (all when there are no more).
fn evenly(points: Vec<[f64; 2]>, keep: usize) -> Vec<[f64; 2]> {
    let n = points.len();
    if keep >= n {
        return points;
    }
    let slot = |i: usize| i * keep / n;
    points.into_iter().enumerate().filter(|(i, _)| slot(i + 1) > slot(*i)).map(|(_, p)| p).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_beside_the_result() {
        let [i, h] = paths_for(Path::new("out/r.json"));
        assert_eq!((i.to_str().unwrap(), h.to_str().unwrap()), ("out/r.intervals.jsonl.gz", "out/r.hlog"));
    }

    #[test]
    fn each_interval_is_readable_when_appended_and_after_a_cut() {
        let dir = tempfile::tempdir().unwrap();
        let result = dir.path().join("r.json");
        let mut files = TimelineFiles::create(&result, None).unwrap();
        let start = crate::model::record::RecordStart::for_tests(8);
        files.write_record(&RecordLine::Start(Box::new(start))).unwrap();
        for n in 0..3 {
            let stats = IntervalStats { from_s: 3.0 + n as f64, duration_s: 1.0, ..Default::default() };
            files.append(&stats, LineDetail::Whole).unwrap();
        }
        // Read while the writer is still open (as after a kill): every line so far.
        let read = |path: &Path| {
            let mut lines = IntervalLines::open(path).unwrap();
            let back: Vec<IntervalStats> = lines.by_ref().map(|l| serde_json::from_str(&l.unwrap()).unwrap()).collect();
            (back.iter().map(|s| s.from_s).collect::<Vec<_>>(), lines.torn)
        };
        assert_eq!(read(&files.paths()[0]), (vec![3.0, 4.0, 5.0], false), "no end yet, no line cut");
        // A cut anywhere in the last line's block leaves the lines before it.
        let bytes = std::fs::read(&files.paths()[0]).unwrap();
        let cut = dir.path().join("cut.intervals.jsonl.gz");
        for by in [6, 10, 14] {
            std::fs::write(&cut, &bytes[..bytes.len() - by]).unwrap();
            assert_eq!(read(&cut).0, vec![3.0, 4.0], "cut by {by} bytes");
        }
        // Finished: a whole gzip file.
        files.finish().unwrap();
        assert_eq!(read(&files.paths()[0]), (vec![3.0, 4.0, 5.0], false));
    }

    #[test]
    fn the_scatter_sample_is_spread_over_the_planned_run() {
        let dir = tempfile::tempdir().unwrap();
        let mut files = TimelineFiles::create(&dir.path().join("r.json"), Some(40_000)).unwrap();
        let start = crate::model::record::RecordStart::for_tests(8);
        files.write_record(&RecordLine::Start(Box::new(start))).unwrap();
        let mut kept = 0;
        for n in 0..40_000 {
            let mut stats = IntervalStats { from_s: n as f64, duration_s: 1.0, ..Default::default() };
            stats.scatter.points = (0..100).map(|k| [n as f64 + k as f64 / 100.0, 1.0]).collect();
            files.append(&stats, LineDetail::Whole).unwrap();
        }
        files.finish().unwrap();
        for line in IntervalLines::open(&files.paths()[0]).unwrap() {
            let s: IntervalStats = serde_json::from_str(&line.unwrap()).unwrap();
            kept += s.scatter.points.len();
        }
        assert_eq!(kept, 10_000);
    }
}
