//! The run's record on disk (`<result>.record.jsonl.gz`, [`crate::model::record`]): one JSON
//! value per line in a gzip stream flushed after each line, so a killed run's record reads
//! back up to its last whole line.

use super::IntervalLines;
use crate::model::record::{Record, RecordError, RecordLine};
use flate2::write::GzEncoder;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// `r.json` -> `r.record.jsonl.gz`.
pub fn record_path_for(result: &Path) -> PathBuf {
    PathBuf::from(format!("{}.record.jsonl.gz", result.with_extension("").display()))
}

/// A record being written.
pub struct RecordFile {
    gz: Option<GzEncoder<File>>,
    path: PathBuf,
}

impl RecordFile {
    pub fn create(path: &Path) -> std::io::Result<RecordFile> {
        let gz = GzEncoder::new(File::create(path)?, flate2::Compression::default());
        Ok(RecordFile { gz: Some(gz), path: path.to_path_buf() })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends a line, whole, and flushes it to the OS (a sync flush: it decompresses from
    /// what is in the file).
    pub fn write(&mut self, line: &impl serde::Serialize) -> std::io::Result<()> {
        let mut bytes = serde_json::to_vec(line).map_err(std::io::Error::other)?;
        bytes.push(b'\n');
        let gz = self.gz.as_mut().ok_or_else(|| std::io::Error::other("the record is closed"))?;
        gz.write_all(&bytes)?;
        gz.flush()
    }

    /// Data to the disk.
    pub fn sync(&self) -> std::io::Result<()> {
        match &self.gz {
            Some(gz) => gz.get_ref().sync_data(),
            None => Ok(()),
        }
    }

    /// Ends the gzip stream.
    pub fn finish(&mut self) -> std::io::Result<()> {
        match self.gz.take() {
            Some(gz) => gz.finish()?.sync_data(),
            None => Ok(()),
        }
    }
}

/// A record read back.
pub struct ReadRecord {
    pub record: Record,
    /// Lines read.
    pub lines: usize,
    /// The last line was cut short by the stop (left out).
    pub torn: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum ReadRecordError {
    #[error("cannot read {0}: {1}")]
    Read(PathBuf, std::io::Error),
    #[error("{0}, line {1}: {2}")]
    Corrupt(PathBuf, usize, serde_json::Error),
    #[error("{0} is not a run's record: {1}")]
    NotARecord(PathBuf, RecordError),
}

/// Reads the record at `path` up to its last whole line.
pub fn read_record(path: &Path) -> Result<ReadRecord, ReadRecordError> {
    let mut lines = IntervalLines::open(path).map_err(|e| ReadRecordError::Read(path.to_path_buf(), e))?;
    let (record, count) = parse_lines(lines.by_ref(), path)?;
    Ok(ReadRecord { record, lines: count, torn: lines.torn })
}

/// `memory`'s record with the entries streamed to the record at `path` (a run's collector
/// keeps none of those in memory, so that a week-long run stays flat): each phase's
/// streamed entries, then those `memory` holds (after a write error stopped the stream).
/// The start and the ends are `memory`'s.
pub fn with_streamed_entries(mut memory: Record, path: &Path) -> Result<Record, ReadRecordError> {
    let streamed = read_record(path)?.record;
    for (mine, on_disk) in memory.phases.iter_mut().zip(streamed.phases) {
        let after_an_error = std::mem::replace(&mut mine.entries, on_disk.entries);
        mine.entries.extend(after_an_error);
    }
    Ok(memory)
}

/// A record from its file's bytes (`name` says where they came from: a log).
pub fn parse_record(bytes: &[u8], name: &Path) -> Result<Record, ReadRecordError> {
    use std::io::BufRead;
    let lines = std::io::BufReader::new(flate2::read::MultiGzDecoder::new(bytes)).lines();
    Ok(parse_lines(lines, name)?.0)
}

/// A record from its lines, and how many there were.
fn parse_lines(
    lines: impl Iterator<Item = std::io::Result<String>>,
    name: &Path,
) -> Result<(Record, usize), ReadRecordError> {
    let mut parsed: Vec<RecordLine> = Vec::new();
    for (n, line) in lines.enumerate() {
        let line = line.map_err(|e| ReadRecordError::Read(name.to_path_buf(), e))?;
        parsed.push(serde_json::from_str(&line).map_err(|e| ReadRecordError::Corrupt(name.to_path_buf(), n + 1, e))?);
    }
    let count = parsed.len();
    let record = Record::from_lines(parsed).map_err(|e| ReadRecordError::NotARecord(name.to_path_buf(), e))?;
    Ok((record, count))
}

/// Writes `record` whole to `path`.
pub fn write_record(record: &Record, path: &Path) -> std::io::Result<()> {
    let mut file = RecordFile::create(path)?;
    for line in record.lines() {
        file.write(&line)?;
    }
    file.finish()
}
