//! [`LatencyHistogram`]: an HdrHistogram plus exact min, max and sum.

use base64::Engine;
use hdrhistogram::errors::AdditionError;
use hdrhistogram::serialization::{DeserializeError, Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::{Counter, Histogram};
use std::time::Duration;

/// Why an encoded histogram (from a result or an interval log) cannot be rebuilt.
#[derive(Debug, thiserror::Error)]
pub enum HistogramError {
    #[error("histogram is not base64: {0}")]
    NotBase64(#[from] base64::DecodeError),
    #[error("histogram cannot be decoded: {0:?}")]
    Undecodable(DeserializeError),
    #[error("histogram has other bounds: {0:?}")]
    OtherBounds(AdditionError),
    #[error("histogram's min {min_ns} ns is above its max {max_ns} ns")]
    MinAboveMax { min_ns: u64, max_ns: u64 },
}

/// Highest trackable latency: one hour, in nanoseconds. Longer samples are recorded as one
/// hour (the exact max still shows the real value).
pub const HIGHEST_NS: u64 = 3_600_000_000_000;
/// Significant digits kept: 3 (at most 0.1% relative error).
pub const SIGNIFICANT_DIGITS: u8 = 3;

/// `C`: the bucket counter. 64-bit for whatever accumulates (a run's totals, a report
/// window); 32-bit for one tick's recorders, which hold a second or so of samples (2^32 in
/// one bucket would take billions of statements a second) in half the memory.
#[derive(Clone, Debug)]
pub struct LatencyHistogram<C: Counter = u64> {
    hist: Histogram<C>,
    min_ns: u64,
    max_ns: u64,
    sum_ns: u128,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    pub fn new() -> Self {
        Self::empty()
    }

    /// Adds every sample of a histogram with another counter (a tick's 32-bit one; exact: the
    /// same buckets, each count added to the bucket of the same values).
    pub fn add_counts<D: Counter>(&mut self, other: &LatencyHistogram<D>) {
        if other.count() == 0 {
            return;
        }
        for v in other.hist.iter_recorded() {
            // Grows the buckets to fit, as record_ns does.
            if self.hist.record_n(v.value_iterated_to(), v.count_at_value().as_u64()).is_err() {
                self.hist.saturating_record_n(v.value_iterated_to(), v.count_at_value().as_u64());
            }
        }
        self.add_extremes(other);
    }
}

impl<C: Counter> LatencyHistogram<C> {
    /// Empty, and small: its buckets grow to the largest latency recorded (up to
    /// [`HIGHEST_NS`]), so a run whose statements take under a millisecond keeps ~40 KiB per
    /// histogram, not the ~270 KiB a one-hour range costs. Bucket boundaries do not depend
    /// on the size or the counter, so adding histograms of different sizes stays exact.
    pub fn empty() -> Self {
        let mut hist = Histogram::new_with_bounds(1, 2, SIGNIFICANT_DIGITS).expect("valid bounds");
        hist.auto(true);
        LatencyHistogram { hist, min_ns: u64::MAX, max_ns: 0, sum_ns: 0 }
    }

    #[inline]
    pub fn record(&mut self, d: Duration) {
        self.record_ns(d.as_nanos().min(u64::MAX as u128) as u64);
    }

    #[inline]
    pub fn record_ns(&mut self, ns: u64) {
        let ns = ns.max(1);
        // Grows the buckets to fit (a saturating record would clamp to the current size).
        if self.hist.record(ns.min(HIGHEST_NS)).is_err() {
            self.hist.saturating_record(ns.min(HIGHEST_NS));
        }
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
        self.sum_ns += ns as u128;
    }

    /// Adds every sample of `other` (exact: bucket counts are summed).
    pub fn add(&mut self, other: &LatencyHistogram<C>) {
        if other.count() == 0 {
            return;
        }
        self.hist.add(&other.hist).expect("same bucket layout, resizing allowed");
        self.add_extremes(other);
    }

    fn add_extremes<D: Counter>(&mut self, other: &LatencyHistogram<D>) {
        self.min_ns = self.min_ns.min(other.min_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
        self.sum_ns += other.sum_ns;
    }

    pub fn reset(&mut self) {
        self.hist.reset();
        self.min_ns = u64::MAX;
        self.max_ns = 0;
        self.sum_ns = 0;
    }

    pub fn count(&self) -> u64 {
        self.hist.len()
    }

    pub fn min_ns(&self) -> u64 {
        if self.count() == 0 {
            0
        } else {
            self.min_ns
        }
    }

    pub fn max_ns(&self) -> u64 {
        self.max_ns
    }

    pub fn mean_ns(&self) -> f64 {
        if self.count() == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.count() as f64
        }
    }

    pub fn sum_ns(&self) -> u128 {
        self.sum_ns
    }

    /// Percentile `p` (0..=100), clamped to the exact [min, max]: unlike sysbench's
    /// histogram (#486), a percentile never falls outside the observed range.
    pub fn percentile_ns(&self, p: f64) -> u64 {
        if self.count() == 0 {
            return 0;
        }
        let v = self.hist.value_at_quantile((p / 100.0).clamp(0.0, 1.0));
        v.clamp(self.min_ns, self.max_ns)
    }

    /// Every recorded bucket as (a value in it, nanoseconds, clamped to the exact min and
    /// max; count), lowest first.
    pub fn buckets(&self) -> Vec<(u64, u64)> {
        self.hist
            .iter_recorded()
            .map(|v| {
                let value = self.hist.median_equivalent(v.value_iterated_to()).clamp(self.min_ns, self.max_ns);
                (value, v.count_at_value().as_u64())
            })
            .collect()
    }
}

impl LatencyHistogram {
    /// V2 + DEFLATE encoding (HdrHistogram's interchange format), base64: mergeable later.
    pub fn encode(&self) -> String {
        let mut buf = Vec::new();
        V2DeflateSerializer::new().serialize(&self.hist, &mut buf).expect("in-memory serialization");
        base64::engine::general_purpose::STANDARD.encode(buf)
    }

    /// Rebuilds a histogram from an interval log's entry (no sum recorded there): the sum,
    /// and so the mean, is estimated from the buckets (within their 0.1%).
    pub fn decode_estimating_sum(encoded: &str, min_ns: u64, max_ns: u64) -> Result<Self, HistogramError> {
        let mut h = Self::decode(encoded, min_ns, max_ns, 0)?;
        h.sum_ns = h.buckets().iter().map(|&(v, n)| v as u128 * n as u128).sum();
        Ok(h)
    }

    /// The histogram held compactly (V2 + DEFLATE bytes and the exact extremes): a few
    /// hundred bytes where the live histogram takes hundreds of kilobytes, for keeping many.
    pub fn pack(&self) -> PackedHistogram {
        let mut bytes = Vec::new();
        V2DeflateSerializer::new().serialize(&self.hist, &mut bytes).expect("in-memory serialization");
        PackedHistogram {
            bytes: bytes.into_boxed_slice(),
            min_ns: self.min_ns,
            max_ns: self.max_ns,
            sum_ns: self.sum_ns,
        }
    }

    /// Rebuilds a histogram from [`encode`](Self::encode)'s output and the exact extremes.
    pub fn decode(encoded: &str, min_ns: u64, max_ns: u64, sum_ns: u128) -> Result<Self, HistogramError> {
        let bytes = base64::engine::general_purpose::STANDARD.decode(encoded)?;
        let decoded: Histogram<u64> =
            Deserializer::new().deserialize(&mut bytes.as_slice()).map_err(HistogramError::Undecodable)?;
        let mut h = LatencyHistogram::new();
        h.hist.add(&decoded).map_err(HistogramError::OtherBounds)?;
        if h.count() > 0 {
            // From a file: a min above the max would make every percentile's clamp panic.
            if min_ns > max_ns {
                return Err(HistogramError::MinAboveMax { min_ns, max_ns });
            }
            h.min_ns = min_ns;
            h.max_ns = max_ns;
            h.sum_ns = sum_ns;
        }
        Ok(h)
    }
}

/// A [`LatencyHistogram`] packed by [`LatencyHistogram::pack`].
#[derive(Clone, Debug)]
pub struct PackedHistogram {
    bytes: Box<[u8]>,
    min_ns: u64,
    max_ns: u64,
    sum_ns: u128,
}

impl PackedHistogram {
    pub fn unpack(&self) -> LatencyHistogram {
        let decoded: Histogram<u64> =
            Deserializer::new().deserialize(&mut &self.bytes[..]).expect("packed by this process");
        let mut h = LatencyHistogram::new();
        h.hist.add(&decoded).expect("same bucket layout, resizing allowed");
        h.min_ns = self.min_ns;
        h.max_ns = self.max_ns;
        h.sum_ns = self.sum_ns;
        h
    }

    /// As [`LatencyHistogram::encode`] gives it: base64 of the V2 + DEFLATE bytes.
    pub fn encode(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(&self.bytes)
    }

    /// The exact extremes (0 and 0 when empty).
    pub fn extremes_ns(&self) -> (u64, u64) {
        if self.max_ns == 0 {
            (0, 0)
        } else {
            (self.min_ns, self.max_ns)
        }
    }

    /// Bytes held.
    pub fn size(&self) -> usize {
        self.bytes.len() + std::mem::size_of::<Self>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_of_another_width_add_to_the_same_buckets() {
        let (mut narrow, mut wide) = (LatencyHistogram::<u32>::empty(), LatencyHistogram::new());
        for (ns, times) in
            [(1, 3), (999, 1), (1_000, 7), (12_345, 2), (1_000_000, 5), (264_010_468, 1), (HIGHEST_NS, 1)]
        {
            for _ in 0..times {
                narrow.record_ns(ns);
                wide.record_ns(ns);
            }
        }
        // Into an empty histogram and into one already grown: both the same as a 64-bit add.
        for seed in [None, Some(HIGHEST_NS / 2)] {
            let (mut from_narrow, mut from_wide) = (LatencyHistogram::new(), LatencyHistogram::new());
            if let Some(ns) = seed {
                from_narrow.record_ns(ns);
                from_wide.record_ns(ns);
            }
            from_narrow.add_counts(&narrow);
            from_wide.add(&wide);
            assert_eq!(from_narrow.buckets(), from_wide.buckets());
            assert_eq!(from_narrow.count(), from_wide.count());
            let extremes = |h: &LatencyHistogram| (h.min_ns(), h.max_ns(), h.sum_ns(), h.percentile_ns(99.0));
            assert_eq!(extremes(&from_narrow), extremes(&from_wide));
        }
        assert_eq!(narrow.buckets(), wide.buckets());
    }

    #[test]
    fn packed_histograms_unpack_to_the_same_samples() {
        let mut h = LatencyHistogram::new();
        for i in 1..=10_000u64 {
            h.record_ns(i * 997);
        }
        let packed = h.pack();
        assert!(packed.size() < 30_000, "{} bytes", packed.size());
        let back = packed.unpack();
        assert_eq!(
            (back.count(), back.min_ns(), back.max_ns(), back.sum_ns()),
            (h.count(), h.min_ns(), h.max_ns(), h.sum_ns())
        );
        for p in [50.0, 99.0, 99.9] {
            assert_eq!(back.percentile_ns(p), h.percentile_ns(p));
        }
    }

    #[test]
    fn a_decoded_min_above_its_max_is_refused() {
        let mut h = LatencyHistogram::new();
        h.record_ns(5_000);
        let e = LatencyHistogram::decode(&h.encode(), 9_000, 4_000, 5_000).err().unwrap().to_string();
        assert!(e.contains("min 9000 ns is above its max 4000 ns"), "{e}");
    }

    #[test]
    fn percentiles_stay_within_min_and_max() {
        let mut h = LatencyHistogram::new();
        for ns in [1_234_567u64, 1_234_999, 1_235_001] {
            h.record_ns(ns);
        }
        assert_eq!(h.percentile_ns(100.0), 1_235_001);
        assert!(h.percentile_ns(0.0) >= 1_234_567);
        assert!(h.percentile_ns(50.0) <= h.max_ns());
    }

    #[test]
    fn precision_is_three_significant_digits() {
        let mut h = LatencyHistogram::new();
        for i in 1..=10_000u64 {
            h.record_ns(i * 1_000);
        }
        let p99 = h.percentile_ns(99.0) as f64;
        assert!((p99 - 9_900_000.0).abs() / 9_900_000.0 <= 0.001, "{p99}");
    }

    #[test]
    fn merge_equals_recording_everything_in_one() {
        let (mut a, mut b, mut all) = (LatencyHistogram::new(), LatencyHistogram::new(), LatencyHistogram::new());
        for i in 0..50_000u64 {
            let ns = (i * 7919) % 10_000_000 + 1;
            if i % 3 == 0 {
                a.record_ns(ns)
            } else {
                b.record_ns(ns)
            }
            all.record_ns(ns);
        }
        a.add(&b);
        for p in [50.0, 90.0, 99.0, 99.9, 100.0] {
            assert_eq!(a.percentile_ns(p), all.percentile_ns(p));
        }
        assert_eq!(
            (a.count(), a.min_ns(), a.max_ns(), a.sum_ns()),
            (all.count(), all.min_ns(), all.max_ns(), all.sum_ns())
        );
    }

    #[test]
    fn encode_decode_round_trip() {
        let mut h = LatencyHistogram::new();
        for i in 1..1000u64 {
            h.record_ns(i * 1500);
        }
        let back = LatencyHistogram::decode(&h.encode(), h.min_ns(), h.max_ns(), h.sum_ns()).unwrap();
        assert_eq!(back.count(), h.count());
        assert_eq!(back.percentile_ns(99.0), h.percentile_ns(99.0));
    }
}
