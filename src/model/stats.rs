//! Latency summaries as result files hold them (microseconds), and the per-interval timeline.

use super::is_zero;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Full statistics of one class or statement over the measured run.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct ClassStats {
    pub count: u64,
    pub min_us: f64,
    pub max_us: f64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p95_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    /// Any further percentiles asked for with `--percentiles`, keyed like `p99.99`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub percentiles_us: BTreeMap<String, f64>,
    /// count / measured seconds.
    pub qps: f64,
    /// Sum of all latencies, so means stay exact when results are merged.
    pub sum_us: f64,
    /// HdrHistogram V2+DEFLATE, base64; values in nanoseconds.
    pub histogram: String,
    /// Statements only: rows they inserted, updated or deleted, as the server reported them
    /// (MySQL counts rows changed, PostgreSQL rows matched); absent for classes and in
    /// results written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows_affected: Option<u64>,
    /// Transactions only, those that may roll back as the workload intends
    /// (`rollback_if`): how many did (they are in `count`: they completed as designed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollbacks: Option<u64>,
    /// Transactions only: attempts of this kind that failed and were retried (deadlocks,
    /// lock waits, serialization failures, lost connections; `errors.by_code` has the codes).
    /// Not in `count`: the retry that succeeded is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<u64>,
    /// Transactions only, those with a `skip_if` statement: group repetitions the completed
    /// ones skipped (TPC-C's Delivery: districts with no undelivered order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<u64>,
}

impl ClassStats {
    /// Percentile p: a fixed one, or one asked for with `--percentiles`.
    pub fn at(&self, p: f64) -> Option<f64> {
        fixed_percentile(p, [self.p50_us, self.p95_us, self.p99_us, self.p999_us, self.max_us])
            .or_else(|| self.percentiles_us.get(&percentile_key(p)).copied())
    }
}

/// `99.99` -> `p99.99`, `95` -> `p95`.
pub fn percentile_key(p: f64) -> String {
    format!("p{}", trim_float(p))
}

pub fn trim_float(p: f64) -> String {
    let s = format!("{p:.4}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Per-interval statistics (timelines): no histogram, only the numbers.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default, JsonSchema)]
pub struct CompactStats {
    pub count: u64,
    pub per_s: f64,
    pub min_us: f64,
    pub p50_us: f64,
    pub p95_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
    /// Report windows only: a `--percentile` beyond the fixed ones, keyed like `p90`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub percentiles_us: BTreeMap<String, f64>,
}

impl CompactStats {
    /// Whether these figures carry percentiles: a long run's streamed line keeps only the
    /// count and max of the classes other than the event's (read back as NaN).
    pub fn has_percentiles(&self) -> bool {
        !self.p50_us.is_nan()
    }

    /// Percentile p: a fixed one (50, 95, 99, 99.9, 100) or one this window computed.
    pub fn pick(&self, p: f64) -> Option<f64> {
        fixed_percentile(p, [self.p50_us, self.p95_us, self.p99_us, self.p999_us, self.max_us])
            .or_else(|| self.percentiles_us.get(&percentile_key(p)).copied())
    }
}

/// The value for p among (p50, p95, p99, p99.9, max), the percentiles every summary keeps.
fn fixed_percentile(p: f64, values: [f64; 5]) -> Option<f64> {
    [50.0, 95.0, 99.0, 99.9, 100.0].iter().position(|&f| f == p).map(|i| values[i])
}

/// Statistics of one timeline interval (or one --report-interval window).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct IntervalStats {
    /// Start of the interval, seconds since the run started (warmup included).
    pub from_s: f64,
    pub duration_s: f64,
    /// `--repeat`: which repeat (1-based) this second belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<u32>,
    pub warmup: bool,
    pub threads: u32,
    /// Whole events; `per_s` is TPS. Open loop: latency from the intended start.
    pub event: CompactStats,
    /// Every statement; `per_s` is QPS.
    pub total: CompactStats,
    pub read: CompactStats,
    pub write: CompactStats,
    pub commit: CompactStats,
    pub other: CompactStats,
    /// Open loop only: event service time (actual start to end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_service: Option<CompactStats>,
    /// Open loop only: events that started more than 1 ms after their intended start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late: Option<u64>,
    /// Open loop only: events dropped because the backlog was full.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped: Option<u64>,
    /// Open loop only: events due but not yet started at the interval's end (how far the
    /// clients were behind the schedule).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backlog: Option<u64>,
    pub errors: u64,
    pub reconnects: u64,
    /// Reconnect attempts that failed in this interval (results before it was recorded: 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reconnect_failures: u64,
    /// CPU used by the fairbench process in this interval, percent of one core.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cpu_pct: Option<f64>,
    /// A uniform sample (at most 100 points) of latencies for a scatter plot.
    pub scatter: Scatter,
    /// The slowest statement that ended in this interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slowest: Option<SlowestStatement>,
    /// The slowest event that ended in this interval: its span is a stall's (results before
    /// it was recorded: absent, and a stall is placed by its slowest statement).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slowest_event: Option<SlowestEvent>,
    /// The server's own figures over this interval, as its driver lists them
    /// (`conditions.server.facts.sampled`), read on a connection of fairbench's own once a
    /// second: a key ending in `/s` is a counter's rate per second between two readings,
    /// any other a gauge at the reading (history list length, checkpoint age). Absent: not
    /// sampled (an embedded database's counters, a shard that does not lead, an interval
    /// that ended before a reading did).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub server: BTreeMap<String, f64>,
    /// A shard's result (`--shard`): each class's histogram of this entry (`event`, `total`,
    /// `read`, `write`, `commit`, `other`, open loop `event_service`), so that `combine`
    /// merges the shards' timelines exactly. Absent otherwise.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub histograms: BTreeMap<String, EncodedHistogram>,
}

/// A histogram as result files carry it: HdrHistogram V2 + DEFLATE, base64, values in
/// nanoseconds, with the exact extremes the buckets round.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct EncodedHistogram {
    pub histogram: String,
    pub min_ns: u64,
    pub max_ns: u64,
}

/// A statement's execution named by the interval it ended in.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct SlowestStatement {
    pub statement: String,
    pub latency_us: f64,
    /// When it ended, seconds since the run started (warmup included).
    pub ended_s: f64,
}

/// An event's execution named by the interval it ended in: it began `latency_us` before
/// `ended_s` (from its intended start in an open loop).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct SlowestEvent {
    pub latency_us: f64,
    /// When it ended, seconds since the run started (warmup included).
    pub ended_s: f64,
}

impl IntervalStats {
    /// A class's numbers by name: `event`, `total`, `read`, `write`, `commit` or `other`.
    pub fn class(&self, name: &str) -> Option<&CompactStats> {
        match name {
            "event" => Some(&self.event),
            "total" => Some(&self.total),
            "read" => Some(&self.read),
            "write" => Some(&self.write),
            "commit" => Some(&self.commit),
            "other" => Some(&self.other),
            _ => None,
        }
    }

    pub fn class_mut(&mut self, name: &str) -> Option<&mut CompactStats> {
        match name {
            "event" => Some(&mut self.event),
            "total" => Some(&mut self.total),
            "read" => Some(&mut self.read),
            "write" => Some(&mut self.write),
            "commit" => Some(&mut self.commit),
            "other" => Some(&mut self.other),
            _ => None,
        }
    }
}

/// What a scatter samples.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ScatterOf {
    /// COMMIT latencies.
    #[default]
    Commit,
    /// Whole-event latencies (workloads without COMMIT).
    Event,
}

/// Scatter points a whole run keeps, in its result and in its streamed intervals file.
pub const SCATTER_POINTS_PER_RUN: usize = 10_000;

/// Sampled (time, latency) points: COMMIT latencies, or event latencies when the workload
/// has no COMMIT.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default, JsonSchema)]
pub struct Scatter {
    pub of: ScatterOf,
    /// How many latencies the sample was drawn from.
    pub seen: u64,
    /// `[seconds since the run started, latency in microseconds]`, in time order.
    pub points: Vec<[f64; 2]>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timeline(width: f64, rates: &[f64]) -> Vec<IntervalStats> {
        let entry = |i: usize, per_s: f64| IntervalStats {
            from_s: i as f64 * width,
            duration_s: width,
            event: CompactStats { per_s, ..CompactStats::default() },
            ..IntervalStats::default()
        };
        rates.iter().enumerate().map(|(i, r)| entry(i, *r)).collect()
    }

    #[test]
    fn a_rate_spread_names_what_each_rate_was_taken_over() {
        let seconds = RateSpread::of(&timeline(1.0, &[100.0, 120.0, 80.0])).unwrap();
        assert_eq!(
            (seconds.unit(), seconds.units(), seconds.span()),
            ("second".into(), "seconds".into(), "3 s".into())
        );
        // --report-interval 0.01 over 3 s: entries of 0.54 s, not seconds.
        let fractions = RateSpread::of(&timeline(0.54, &[100.0, 120.0, 80.0, 90.0])).unwrap();
        assert_eq!((fractions.entries, fractions.entry_s), (4, 0.54));
        assert_eq!(fractions.unit(), "0.54 s entry");
        assert_eq!(fractions.units(), "0.54 s entries");
        assert_eq!(fractions.span(), "4 entries (2.16 s)");
        // A day's merged entries.
        let merged = RateSpread::of(&timeline(289.0, &[100.0, 120.0])).unwrap();
        assert_eq!((merged.unit(), merged.span()), ("289 s entry".into(), "2 entries (578 s)".into()));
    }

    #[test]
    fn keys() {
        assert_eq!(percentile_key(99.99), "p99.99");
        assert_eq!(percentile_key(95.0), "p95");
    }
}

/// The full measured seconds of a timeline: warmup and the last, partial interval of a run
/// (a few milliseconds, whose rate would skew any comparison) left out. A second that a late
/// tick before it made a little shorter still counts: under load ticks run late, and
/// dropping those seconds would thin the timeline exactly when the client is busy.
pub fn measured_seconds(intervals: &[IntervalStats]) -> impl Iterator<Item = &IntervalStats> {
    full_intervals(intervals).filter(|i| !i.warmup)
}

/// The timeline's full entries: at least half as long as the typical one (the median), so
/// that a run's or repeat's short last entry is left out whatever the entries' length (one
/// second; a fraction of one with a short --report-interval; several once a long run's
/// timeline has merged them).
pub fn full_intervals(intervals: &[IntervalStats]) -> impl Iterator<Item = &IntervalStats> {
    let typical = typical_length(intervals.iter()).unwrap_or(1.0);
    intervals.iter().filter(move |i| i.duration_s >= typical / 2.0)
}

/// The median length of `intervals`, seconds; `None` when there are none.
fn typical_length<'a>(intervals: impl Iterator<Item = &'a IntervalStats>) -> Option<f64> {
    let mut lengths: Vec<f64> = intervals.map(|i| i.duration_s).collect();
    lengths.sort_by(f64::total_cmp);
    lengths.get(lengths.len() / 2).copied()
}

/// How steady the event rate was over the measured phase: one rate per full measured
/// timeline entry (warmup and the last, partial entry left out). An entry is a second,
/// a fraction of one (`--report-interval 0.01`) or several once a long run's result merges
/// them: `entry_s` says which, so that what is printed names its unit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateSpread {
    /// Full measured entries.
    pub entries: usize,
    /// The typical entry's length (the median), seconds.
    pub entry_s: f64,
    pub min: f64,
    pub mean: f64,
    pub max: f64,
    /// Sample standard deviation over the mean; 0 when the mean is 0.
    pub cv: f64,
}

impl RateSpread {
    /// From a run's timeline; `None` with fewer than 2 full measured entries.
    pub fn of(intervals: &[IntervalStats]) -> Option<RateSpread> {
        let full: Vec<&IntervalStats> = measured_seconds(intervals).collect();
        if full.len() < 2 {
            return None;
        }
        let entry_s = typical_length(full.iter().copied())?;
        let s = super::repeat::Spread::of(full.iter().map(|i| i.event.per_s).collect())?;
        Some(RateSpread { entries: s.values.len(), entry_s, min: s.min, mean: s.mean, max: s.max, cv: s.cv })
    }

    /// The entries are seconds (to the rounding of late ticks).
    pub fn per_second(&self) -> bool {
        (self.entry_s - 1.0).abs() < 0.05
    }

    /// What one rate was taken over: "second", or "0.54 s entry".
    pub fn unit(&self) -> String {
        match self.per_second() {
            true => "second".into(),
            false => format!("{} s entry", short_seconds(self.entry_s)),
        }
    }

    /// The same, plural: "seconds", or "0.54 s entries".
    pub fn units(&self) -> String {
        match self.per_second() {
            true => "seconds".into(),
            false => format!("{} s entries", short_seconds(self.entry_s)),
        }
    }

    /// The whole span the rates cover: "160 s", or "296 entries (160 s)".
    pub fn span(&self) -> String {
        let total = self.entries as f64 * self.entry_s;
        match self.per_second() {
            true => format!("{} s", self.entries),
            false => format!("{} entries ({} s)", self.entries, short_seconds(total)),
        }
    }
}

/// Seconds as a short number: whole from 10 s up, else to the hundredth ("0.54", "2.5").
fn short_seconds(s: f64) -> String {
    match s >= 10.0 {
        true => format!("{s:.0}"),
        false => trim_float((s * 100.0).round() / 100.0),
    }
}
