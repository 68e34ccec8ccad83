//! Latency histograms (HdrHistograms with exact min, max and sum) and the confidence
//! intervals compare uses ([`interval`]). Depends on nothing else in the crate.
//!
//! Method: every latency is recorded in nanoseconds into an HdrHistogram covering 1 ns to
//! 1 hour at 3 significant digits (relative error at most 0.1%). A percentile is the
//! highest value equivalent to the bucket that holds the sample of that rank, clamped to
//! the exact minimum and maximum, which are tracked separately. Histograms from clients,
//! intervals, processes or hosts are merged by adding buckets, never by averaging.

pub mod histogram;
pub mod interval;

pub use histogram::{HistogramError, LatencyHistogram, PackedHistogram};
