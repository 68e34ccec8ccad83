//! The streamed timeline: each closed interval appended to two files beside the result as
//! the run goes, and flushed, so that a run killed midway (kill -9, the OOM killer, a lost
//! session) leaves every interval up to its last one readable:
//!
//! - `<result>.intervals.jsonl`: one line per interval, the result's `intervals[]` entry;
//! - `<result>.hlog`: each interval's latency histograms (whole events and each statement
//!   class) in HdrHistogram's interval-log format (V2 + DEFLATE, base64; nanoseconds),
//!   which HdrHistogram's own tools and the `hdrhistogram` Python package read, and which
//!   several client hosts' logs merge exactly.

use crate::model::{IntervalStats, StreamedFile};
use crate::recorder::classes::ClassHistograms;
use crate::stats::LatencyHistogram;
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The two files, open for appending. Each interval goes out in one write per file (whole
/// lines, never a part of one), straight to the OS.
pub struct TimelineFiles {
    intervals: File,
    hlog: File,
    paths: [PathBuf; 2],
    /// Data reach the disk at most this often (each interval is with the OS at once).
    last_sync: Instant,
    /// `--repeat`: the repeat being measured, and where its times start (the previous
    /// repeats' end), as the result's `intervals[]` place them.
    repeat: Option<u32>,
    offset_s: f64,
    end_s: f64,
}

/// Files reach the disk (fsync) at least this often while a run lasts.
const SYNC_EVERY: Duration = Duration::from_secs(1);

/// `r.json` -> `r.intervals.jsonl`, `r.hlog`.
pub fn paths_for(result: &Path) -> [PathBuf; 2] {
    let stem = result.with_extension("");
    let with = |ext: &str| PathBuf::from(format!("{}.{ext}", stem.display()));
    [with("intervals.jsonl"), with("hlog")]
}

/// The files at `paths` ([`paths_for`]'s) as a result names them: name, format, size and
/// SHA-256 (read in pieces: a day's timeline is hundreds of megabytes).
pub fn describe(paths: &[PathBuf; 2]) -> std::io::Result<Vec<StreamedFile>> {
    let formats = ["intervals-jsonl", "hdr-interval-log"];
    paths
        .iter()
        .zip(formats)
        .map(|(path, format)| {
            let (bytes, sha256) = digest(path)?;
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
    /// Creates (or truncates) the files for the result at `result`; the log's start time is
    /// `started` (the run's start: interval times count from it, warmup included).
    pub fn create(result: &Path, started: SystemTime) -> std::io::Result<TimelineFiles> {
        let paths = paths_for(result);
        let mut files = TimelineFiles {
            intervals: File::create(&paths[0])?,
            hlog: File::create(&paths[1])?,
            paths,
            last_sync: Instant::now(),
            repeat: None,
            offset_s: 0.0,
            end_s: 0.0,
        };
        let since_epoch = started.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs_f64();
        let header = format!(
            "#[Histogram log format version 1.3]\n#[fairbench {} latencies in nanoseconds]\n\
             #[StartTime: {since_epoch:.3} (seconds since epoch), {}]\n\
             \"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n",
            env!("CARGO_PKG_VERSION"),
            crate::model::rfc3339(started)
        );
        files.hlog.write_all(header.as_bytes())?;
        files.sync()?;
        Ok(files)
    }

    pub fn paths(&self) -> &[PathBuf; 2] {
        &self.paths
    }

    /// The files as the result names them: name, format, size and digest, as they are now.
    pub fn describe(&mut self) -> std::io::Result<Vec<StreamedFile>> {
        self.sync()?;
        describe(&self.paths)
    }

    /// The next intervals belong to repeat `index` (1-based), which starts where the
    /// previous one ended.
    pub fn begin_repeat(&mut self, index: u32) {
        self.repeat = Some(index);
        self.offset_s = self.end_s;
    }

    /// Appends one closed interval: its figures, and its histograms per class (classes
    /// without any left out).
    pub fn append(&mut self, stats: &IntervalStats, h: &ClassHistograms) -> std::io::Result<()> {
        let mut stats = stats.clone();
        stats.from_s += self.offset_s;
        stats.scatter.points.iter_mut().for_each(|p| p[0] += self.offset_s);
        stats.repeat = self.repeat.or(stats.repeat);
        self.end_s = stats.from_s + stats.duration_s;
        let mut line = serde_json::to_vec(&stats).map_err(std::io::Error::other)?;
        line.push(b'\n');
        self.intervals.write_all(&line)?;
        let mut log = histogram_line("event", h.event(), &stats);
        // Each class by name (the total, their sum, is not logged).
        for (tag, class) in h.by_name().skip(1) {
            log += &histogram_line(tag, class, &stats);
        }
        self.hlog.write_all(log.as_bytes())?;
        if self.last_sync.elapsed() >= SYNC_EVERY {
            self.sync()?;
        }
        Ok(())
    }

    fn sync(&mut self) -> std::io::Result<()> {
        self.intervals.sync_data()?;
        self.hlog.sync_data()?;
        self.last_sync = Instant::now();
        Ok(())
    }
}

/// `Tag=event,12.000,1.001,3.145,HISTF...`: start and length in seconds, the max in
/// milliseconds (the format's customary unit for its max column); nothing for an empty one.
fn histogram_line(tag: &str, h: &LatencyHistogram, s: &IntervalStats) -> String {
    if h.count() == 0 {
        return String::new();
    }
    format!("Tag={tag},{:.3},{:.3},{:.3},{}\n", s.from_s, s.duration_s, h.max_ns() as f64 / 1e6, h.encode())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_beside_the_result() {
        let [i, h] = paths_for(Path::new("out/r.json"));
        assert_eq!((i.to_str().unwrap(), h.to_str().unwrap()), ("out/r.intervals.jsonl", "out/r.hlog"));
    }

    #[test]
    fn each_interval_is_on_disk_when_appended() {
        let dir = tempfile::tempdir().unwrap();
        let result = dir.path().join("r.json");
        let mut files = TimelineFiles::create(&result, SystemTime::now()).unwrap();
        let mut r = crate::recorder::Recorder::new(&[], &[], false);
        r.events.record_ns(2_000_000);
        let stats = IntervalStats { from_s: 3.0, duration_s: 1.0, ..Default::default() };
        files.append(&stats, &ClassHistograms::of(&r)).unwrap();
        // Read while the writer is still open (as after a kill): complete lines only.
        let lines = std::fs::read_to_string(&files.paths()[0]).unwrap();
        let back: IntervalStats = serde_json::from_str(lines.lines().next().unwrap()).unwrap();
        assert_eq!(back.from_s, 3.0);
        let log = std::fs::read_to_string(&files.paths()[1]).unwrap();
        let line = log.lines().find(|l| l.starts_with("Tag=event,")).unwrap();
        let encoded = line.rsplit(',').next().unwrap();
        let h = LatencyHistogram::decode(encoded, 0, u64::MAX, 0).unwrap();
        assert_eq!(h.count(), 1);
        assert!(line.starts_with("Tag=event,3.000,1.000,2.00"), "{line}");
        assert!(!log.contains("Tag=read,"), "an empty class is left out");
    }
}
