//! The intervals file's lines: how each is written and read back.
//!
//! A line is the interval's figures as the result's `intervals[]` entry holds them, while the
//! result keeps every interval as an entry of its own (a run planned at most 300 intervals,
//! a probe). A longer run's result merges intervals into wider entries; its lines then keep
//! the event class whole and, of every other class, what throughput and spikes need: its
//! count and max. That halves a second's line (~360 -> ~230 B compressed on MariaDB), which
//! is what a week at 1 s intervals can afford; each class's percentiles stay in the result's
//! entries, the record and the interval log, at the entries' width.

use crate::model::{IntervalStats, LATENCY_CLASSES};
use serde_json::{Map, Value};
use std::fs::File;
use std::io::BufRead;
use std::path::Path;

/// How much of an interval's figures its line keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineDetail {
    /// Everything: the result's entry for this interval is the interval itself.
    Whole,
    /// The event class whole; every other class's count and max.
    Peaks,
}

/// The classes a [`LineDetail::Peaks`] line keeps only the count and max of.
fn peak_classes() -> impl Iterator<Item = &'static str> {
    LATENCY_CLASSES.into_iter().filter(|&c| c != "event")
}

/// One line's JSON (without its newline).
pub fn encode(stats: &IntervalStats, detail: LineDetail) -> serde_json::Result<Vec<u8>> {
    if detail == LineDetail::Whole {
        return serde_json::to_vec(stats);
    }
    let mut line = serde_json::to_value(stats)?;
    if let Value::Object(fields) = &mut line {
        for class in peak_classes() {
            let s = stats.class(class).expect("a latency class");
            fields.insert(class.into(), serde_json::json!({ "count": s.count, "max_us": s.max_us }));
        }
    }
    serde_json::to_vec(&line)
}

/// A line read back. A class of a [`LineDetail::Peaks`] line has its count, its rate (count
/// over the interval) and its max; its min and percentiles are NaN, which the CSV export
/// writes as empty cells and the charts as gaps ([`crate::model::CompactStats::has_percentiles`]).
pub fn parse(line: &str) -> serde_json::Result<IntervalStats> {
    let mut value: Value = serde_json::from_str(line)?;
    let mut peaks = Vec::new();
    if let Value::Object(fields) = &mut value {
        for class in peak_classes() {
            if let Some(Value::Object(s)) = fields.get_mut(class) {
                if !s.contains_key("p50_us") {
                    peaks.push(class);
                    fill_as_whole(s);
                }
            }
        }
    }
    let mut stats: IntervalStats = serde_json::from_value(value)?;
    for class in peaks {
        let duration_s = stats.duration_s;
        let s = stats.class_mut(class).expect("a latency class");
        s.per_s = if duration_s > 0.0 { s.count as f64 / duration_s } else { 0.0 };
        for v in [&mut s.min_us, &mut s.p50_us, &mut s.p95_us, &mut s.p99_us, &mut s.p999_us] {
            *v = f64::NAN;
        }
    }
    Ok(stats)
}

/// The fields a whole class has and a peak lacks, as zeros (replaced by NaN once parsed).
fn fill_as_whole(s: &mut Map<String, Value>) {
    for key in ["per_s", "min_us", "p50_us", "p95_us", "p99_us", "p999_us"] {
        s.entry(key).or_insert(Value::from(0.0));
    }
}

/// The lines of an intervals file as they come (`.gz` or plain), up to the last whole one:
/// a file whose writer was killed may end in a line or a compressed block cut short, which
/// ends the reading ([`IntervalLines::torn`] then tells).
pub struct IntervalLines {
    reader: Box<dyn BufRead>,
    /// The last line was cut short (the writer stopped in it).
    pub torn: bool,
    ended: bool,
}

impl IntervalLines {
    pub fn open(path: &Path) -> std::io::Result<IntervalLines> {
        let file = File::open(path)?;
        let reader: Box<dyn BufRead> = if path.extension().is_some_and(|e| e == "gz") {
            Box::new(std::io::BufReader::new(flate2::read::MultiGzDecoder::new(file)))
        } else {
            Box::new(std::io::BufReader::new(file))
        };
        Ok(IntervalLines { reader, torn: false, ended: false })
    }
}

impl Iterator for IntervalLines {
    type Item = std::io::Result<String>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.torn || self.ended {
            return None;
        }
        let mut line = String::new();
        match self.reader.read_line(&mut line) {
            Ok(0) => None,
            Ok(_) if line.ends_with('\n') => {
                line.pop();
                Some(Ok(line))
            }
            // Without its newline: the last line, cut short.
            Ok(_) => {
                self.torn = true;
                None
            }
            // The compressed stream without its end (a killed writer): a cut line only when
            // part of one came out.
            Err(e) if matches!(e.kind(), std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::InvalidInput) => {
                self.torn = !line.is_empty();
                self.ended = true;
                None
            }
            Err(e) => Some(Err(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::CompactStats;

    fn second() -> IntervalStats {
        let class = |count: u64, max_us: f64| CompactStats {
            count,
            per_s: count as f64 / 0.5,
            max_us,
            p50_us: 7.0,
            ..Default::default()
        };
        IntervalStats {
            from_s: 3.0,
            duration_s: 0.5,
            event: class(10, 900.0),
            total: class(40, 800.0),
            read: class(20, 300.0),
            write: class(10, 800.0),
            commit: class(10, 700.0),
            other: CompactStats::default(),
            errors: 2,
            ..Default::default()
        }
    }

    #[test]
    fn a_whole_line_reads_back_as_written() {
        let line = encode(&second(), LineDetail::Whole).unwrap();
        assert_eq!(parse(std::str::from_utf8(&line).unwrap()).unwrap(), second());
    }

    #[test]
    fn a_peaks_line_keeps_the_event_whole_and_each_class_count_and_max() {
        let line = String::from_utf8(encode(&second(), LineDetail::Peaks).unwrap()).unwrap();
        assert!(line.contains(r#""read":{"count":20,"max_us":300.0}"#), "{line}");
        let back = parse(&line).unwrap();
        assert_eq!(back.event, second().event);
        assert!(back.event.has_percentiles());
        assert_eq!((back.read.count, back.read.per_s, back.read.max_us), (20, 40.0, 300.0));
        assert!(!back.read.has_percentiles() && back.read.min_us.is_nan() && back.read.p999_us.is_nan());
        assert_eq!((back.from_s, back.errors), (3.0, 2));
        let shorter = encode(&second(), LineDetail::Whole).unwrap().len() - line.len();
        assert!(shorter > 200, "{shorter} bytes shorter");
    }
}
