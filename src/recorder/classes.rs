//! One interval's latencies per class, kept packed: what a timeline entry holds so that
//! entries merge exactly (neighbouring intervals of a long run now; the same interval from
//! several client hosts later), by adding histograms, never by averaging percentiles.

use super::figures::compact_stats;
use super::Recorder;
use crate::model::{EncodedHistogram, IntervalStats};
use crate::stats::{HistogramError, LatencyHistogram, PackedHistogram};
use crate::workload::StatementClass;
use hdrhistogram::Counter;
use std::collections::BTreeMap;

/// A class's histogram in a result's timeline entry that cannot be rebuilt.
#[derive(Debug, thiserror::Error)]
#[error("the {class} histogram: {source}")]
pub struct ClassHistogramError {
    pub class: &'static str,
    pub source: HistogramError,
}

/// Whole events, every statement, each class, and the open loop's service time.
#[derive(Clone)]
pub struct ClassHistograms {
    event: LatencyHistogram,
    total: LatencyHistogram,
    /// Read, write, commit, other: [`StatementClass::ALL`]'s order.
    classes: [LatencyHistogram; 4],
    service: Option<LatencyHistogram>,
}

/// [`ClassHistograms`] packed (a few kilobytes at most).
#[derive(Clone, Debug)]
pub struct PackedClasses {
    event: PackedHistogram,
    total: PackedHistogram,
    classes: [PackedHistogram; 4],
    service: Option<PackedHistogram>,
}

impl ClassHistograms {
    pub fn of(r: &Recorder) -> Self {
        let service = r.open_loop().map(|_| LatencyHistogram::new());
        let mut h = ClassHistograms {
            event: LatencyHistogram::new(),
            total: LatencyHistogram::new(),
            classes: Default::default(),
            service,
        };
        h.refill(r);
        h
    }

    /// These histograms emptied and filled from `r` again: a collector keeps one set and
    /// refills it every tick instead of allocating seven histograms of ~270 KB each time.
    pub fn refill<C: Counter>(&mut self, r: &Recorder<C>) {
        self.clear();
        self.event.add_counts(&r.events);
        for (class, h) in StatementClass::ALL.into_iter().zip(&mut self.classes) {
            r.add_class_to(class, h);
            self.total.add(h);
        }
        if let (Some(mine), Some(o)) = (&mut self.service, r.open_loop()) {
            mine.add_counts(&o.service_events);
        }
    }

    /// These histograms emptied and set to `other`'s.
    pub fn copy_from(&mut self, other: &ClassHistograms) {
        self.clear();
        self.add(other);
    }

    fn clear(&mut self) {
        [&mut self.event, &mut self.total]
            .into_iter()
            .chain(&mut self.classes)
            .chain(&mut self.service)
            .for_each(LatencyHistogram::reset);
    }

    /// From whole events and each class's histograms ([`StatementClass::ALL`]'s order): the
    /// classes together make the total; no service time.
    pub fn from_classes(event: LatencyHistogram, classes: [LatencyHistogram; 4]) -> Self {
        let mut total = LatencyHistogram::new();
        classes.iter().for_each(|c| total.add(c));
        ClassHistograms { event, total, classes, service: None }
    }

    /// Whole events.
    pub fn event(&self) -> &LatencyHistogram {
        &self.event
    }

    /// Every statement, then each class by name (`total`, `read`, ...).
    pub fn by_name(&self) -> impl Iterator<Item = (&'static str, &LatencyHistogram)> {
        std::iter::once(("total", &self.total))
            .chain(StatementClass::ALL.iter().map(|c| c.name()).zip(self.classes.iter()))
    }

    pub fn add(&mut self, other: &ClassHistograms) {
        self.event.add(&other.event);
        self.total.add(&other.total);
        for (mine, theirs) in self.classes.iter_mut().zip(&other.classes) {
            mine.add(theirs);
        }
        if let (Some(mine), Some(theirs)) = (&mut self.service, &other.service) {
            mine.add(theirs);
        }
    }

    pub fn pack(&self) -> PackedClasses {
        PackedClasses {
            event: self.event.pack(),
            total: self.total.pack(),
            classes: [0, 1, 2, 3].map(|i| self.classes[i].pack()),
            service: self.service.as_ref().map(LatencyHistogram::pack),
        }
    }

    /// Sets `stats`' figures per class from these histograms, rates over its `duration_s`
    /// (and the `extra` percentiles).
    pub fn apply_to(&self, stats: &mut IntervalStats, extra: &[f64]) {
        let secs = stats.duration_s;
        let c = |h: &LatencyHistogram| compact_stats(h, secs, extra);
        let [read, write, commit, other] = &self.classes;
        (stats.event, stats.total) = (c(&self.event), c(&self.total));
        (stats.read, stats.write, stats.commit, stats.other) = (c(read), c(write), c(commit), c(other));
        stats.event_service = self.service.as_ref().map(c);
    }
}

/// The names classes go by in result files, in [`PackedClasses::encoded`]'s order.

impl ClassHistograms {
    /// From a result's encoded entry (a shard's timeline): `Err` names what is wrong.
    pub fn from_encoded(encoded: &BTreeMap<String, EncodedHistogram>) -> Result<Self, ClassHistogramError> {
        let decode = |class: &'static str| -> Result<LatencyHistogram, ClassHistogramError> {
            match encoded.get(class) {
                None => Ok(LatencyHistogram::new()),
                Some(e) => LatencyHistogram::decode(&e.histogram, e.min_ns, e.max_ns, 0)
                    .map_err(|source| ClassHistogramError { class, source }),
            }
        };
        let [event, total, read, write, commit, other] = crate::model::LATENCY_CLASSES.map(decode);
        let service = match encoded.contains_key("event_service") {
            true => Some(decode("event_service")?),
            false => None,
        };
        Ok(ClassHistograms { event: event?, total: total?, classes: [read?, write?, commit?, other?], service })
    }
}

impl PackedClasses {
    /// Each class's histogram as result files carry them, by name.
    pub fn encoded(&self) -> BTreeMap<String, EncodedHistogram> {
        let encode = |p: &PackedHistogram| {
            let (min_ns, max_ns) = p.extremes_ns();
            EncodedHistogram { histogram: p.encode(), min_ns, max_ns }
        };
        let all = [&self.event, &self.total].into_iter().chain(&self.classes);
        let mut map: BTreeMap<String, EncodedHistogram> =
            crate::model::LATENCY_CLASSES.iter().zip(all).map(|(n, p)| (n.to_string(), encode(p))).collect();
        if let Some(s) = &self.service {
            map.insert("event_service".into(), encode(s));
        }
        map
    }

    pub fn unpack(&self) -> ClassHistograms {
        ClassHistograms {
            event: self.event.unpack(),
            total: self.total.unpack(),
            classes: [0, 1, 2, 3].map(|i| self.classes[i].unpack()),
            service: self.service.as_ref().map(PackedHistogram::unpack),
        }
    }
}
