//! `--metrics-listen ADDR:PORT`: the run's figures as OpenMetrics text (what Prometheus
//! scrapes) while it lasts, fed once per timeline interval from what the collector already
//! computed. Counters count from the run's start, warmup included (labelled by phase).
//! Latency twice: as a histogram per class (`fairbench_latency_seconds`, classic buckets
//! filled from each interval's HdrHistogram, so Prometheus adds shards and runs up and
//! computes its own quantiles), and as gauges of the last interval's exact percentiles
//! (as the result reports them: fixed buckets round percentiles). Every metric carries the
//! run's labels (run, workload, target, shard), and `fairbench_run_info` describes the run.

use crate::model::{CompactStats, IntervalStats};
use crate::recorder::classes::ClassHistograms;
use crate::stats::LatencyHistogram;
use prometheus_client::encoding::{EncodeLabelSet, EncodeMetric, MetricEncoder};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::info::Info;
use prometheus_client::metrics::{MetricType, TypedMetric};
use prometheus_client::registry::Registry;
use std::borrow::Cow;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

/// What every metric of a run is labelled with, so that several runs or a run's shards
/// scraped by one Prometheus stay apart, and add up where they should.
#[derive(Clone, Debug, Default)]
pub struct RunLabels {
    /// The shards' key (`--shard-key`, the same on every shard), or the run's start (UTC).
    pub run: String,
    pub workload: String,
    /// The target, password redacted.
    pub target: String,
    /// `I/N` for a shard, else empty.
    pub shard: String,
}

/// What `fairbench_run_info` says of the run.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RunInfo {
    version: String,
    loop_model: String,
    clients: String,
}

/// Bucket bounds of the latency histograms, seconds: 50 us to 50 s in steps of 2, 2.5, 2.
const BOUNDS_S: [f64; 19] = [
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
    25.0, 50.0,
];

/// A latency histogram in Prometheus's classic buckets, filled from HdrHistograms (each
/// value counted in the bucket its HdrHistogram bucket falls in: within 0.1%).
#[derive(Debug, Default)]
struct Buckets {
    inner: Mutex<BucketCounts>,
}

#[derive(Debug, Default)]
struct BucketCounts {
    sum_s: f64,
    count: u64,
    /// One per bound, then +Inf.
    counts: Vec<u64>,
}

impl Buckets {
    fn add(&self, h: &LatencyHistogram) {
        let mut b = crate::lock(&self.inner);
        if b.counts.is_empty() {
            b.counts = vec![0; BOUNDS_S.len() + 1];
        }
        for (ns, n) in h.buckets() {
            let s = ns as f64 / 1e9;
            let i = BOUNDS_S.iter().position(|bound| s <= *bound).unwrap_or(BOUNDS_S.len());
            b.counts[i] += n;
        }
        b.count += h.count();
        b.sum_s += h.sum_ns() as f64 / 1e9;
    }
}

impl TypedMetric for Buckets {
    const TYPE: MetricType = MetricType::Histogram;
}

impl EncodeMetric for Buckets {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        let b = crate::lock(&self.inner);
        let bounds = BOUNDS_S.iter().copied().chain([f64::INFINITY]);
        let counts = b.counts.iter().copied().chain(std::iter::repeat(0));
        let buckets: Vec<(f64, u64)> = bounds.zip(counts).collect();
        encoder.encode_histogram::<prometheus_client::encoding::NoLabelSet>(b.sum_s, b.count, &buckets, None)
    }

    fn metric_type(&self) -> MetricType {
        Self::TYPE
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PhaseLabel {
    phase: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Class {
    class: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Quantile {
    class: &'static str,
    quantile: &'static str,
}

/// The figures a scrape reads; updated by the collector's thread, read by the server's.
pub struct LiveMetrics {
    registry: Registry,
    events: Family<PhaseLabel, Counter>,
    statements: Family<Class, Counter>,
    errors: Counter,
    reconnects: Counter,
    intervals: Counter,
    clients: Gauge,
    backlog: Gauge,
    late: Counter,
    latency: Family<Quantile, Gauge<f64, AtomicU64>>,
    histograms: Family<Class, Buckets>,
    /// A scrape sees whole intervals: never one half taken in.
    consistent: Mutex<()>,
}

impl LiveMetrics {
    /// The figures of a run of `clients` connections; the open loop's only with `open_loop`.
    pub fn new(labels: &RunLabels, clients: u32, open_loop: bool) -> LiveMetrics {
        let constant = [("run", &labels.run), ("workload", &labels.workload), ("target", &labels.target)]
            .into_iter()
            .chain((!labels.shard.is_empty()).then_some(("shard", &labels.shard)))
            .map(|(k, v)| (Cow::Borrowed(k), Cow::Owned(v.clone())));
        let mut m = LiveMetrics {
            registry: Registry::with_prefix_and_labels("fairbench", constant),
            events: Family::default(),
            statements: Family::default(),
            errors: Counter::default(),
            reconnects: Counter::default(),
            intervals: Counter::default(),
            clients: Gauge::default(),
            backlog: Gauge::default(),
            late: Counter::default(),
            latency: Family::default(),
            histograms: Family::default(),
            consistent: Mutex::new(()),
        };
        let r = &mut m.registry;
        r.register("events", "Whole events (transactions) ended, by phase (warmup, measured)", m.events.clone());
        r.register("statements", "Statements ended, by class (read, write, commit, other)", m.statements.clone());
        r.register("errors", "Errors retried (deadlocks, lock waits, serialization failures)", m.errors.clone());
        r.register("reconnects", "Connections re-established after a loss", m.reconnects.clone());
        r.register("intervals", "Timeline intervals closed so far (the result's intervals[])", m.intervals.clone());
        r.register("clients", "Client connections of the run (--threads)", m.clients.clone());
        if open_loop {
            r.register("open_loop_backlog", "Events due and not started at the last interval's end", m.backlog.clone());
            r.register("open_loop_late", "Events started more than 1 ms after their intended start", m.late.clone());
        }
        r.register(
            "last_interval_latency_seconds",
            "The last interval's latency percentiles, by class (event: whole events)",
            m.latency.clone(),
        );
        r.register(
            "latency_seconds",
            "Latency by class (event: whole events), every interval's, warmup included; buckets from HdrHistogram (within 0.1%)",
            m.histograms.clone(),
        );
        let info = RunInfo {
            version: env!("CARGO_PKG_VERSION").into(),
            loop_model: if open_loop { "open" } else { "closed" }.into(),
            clients: clients.to_string(),
        };
        r.register("run", "The run these metrics are of", Info::new(info));
        m.clients.set(clients as i64);
        m
    }

    /// Takes in one closed interval: its figures and its histograms per class.
    pub fn interval(&self, s: &IntervalStats, h: &ClassHistograms) {
        let _whole = crate::lock(&self.consistent);
        self.histograms.get_or_create(&Class { class: "event" }).add(h.event());
        for (class, histogram) in h.by_name().filter(|(c, _)| *c != "total") {
            self.histograms.get_or_create(&Class { class }).add(histogram);
        }
        let phase = if s.warmup { "warmup" } else { "measured" };
        self.events.get_or_create(&PhaseLabel { phase }).inc_by(s.event.count);
        let classes = [("read", &s.read), ("write", &s.write), ("commit", &s.commit), ("other", &s.other)];
        for (class, stats) in classes {
            self.statements.get_or_create(&Class { class }).inc_by(stats.count);
        }
        self.errors.inc_by(s.errors);
        self.reconnects.inc_by(s.reconnects);
        self.intervals.inc();
        self.backlog.set(s.backlog.unwrap_or(0) as i64);
        self.late.inc_by(s.late.unwrap_or(0));
        for (class, stats) in [("event", &s.event), ("commit", &s.commit)] {
            self.quantiles(class, stats);
        }
    }

    fn quantiles(&self, class: &'static str, s: &CompactStats) {
        if s.count == 0 {
            return;
        }
        for (quantile, us) in [("0.5", s.p50_us), ("0.95", s.p95_us), ("0.99", s.p99_us), ("0.999", s.p999_us)] {
            // Whole nanoseconds over 1e9: the shortest decimal prints (0.003665919, not
            // the binary noise of microseconds over 1e6).
            let seconds = (us * 1000.0).round() / 1e9;
            self.latency.get_or_create(&Quantile { class, quantile }).set(seconds);
        }
    }

    /// The OpenMetrics text of the figures now.
    pub fn text(&self) -> String {
        let _whole = crate::lock(&self.consistent);
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry).expect("writing to a String");
        out
    }
}

/// Why the metrics endpoint could not start.
#[derive(Debug, thiserror::Error)]
pub enum MetricsError {
    #[error("--metrics-listen {addr}: cannot listen: {why}")]
    Listen { addr: String, why: String },
    #[error("--metrics-listen: cannot start its thread: {0}")]
    Thread(std::io::Error),
}

/// The HTTP endpoint: `GET /metrics` (any path) answers the text; stops when dropped.
pub struct MetricsServer {
    server: Arc<tiny_http::Server>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl MetricsServer {
    /// Listens on `addr` (only where told) and serves `metrics` until dropped.
    pub fn start(addr: &str, metrics: Arc<LiveMetrics>) -> Result<MetricsServer, MetricsError> {
        let server = tiny_http::Server::http(addr)
            .map_err(|e| MetricsError::Listen { addr: addr.to_string(), why: e.to_string() })?;
        let server = Arc::new(server);
        let serving = server.clone();
        let thread = std::thread::Builder::new()
            .name("fairbench-metrics".into())
            .spawn(move || {
                for request in serving.incoming_requests() {
                    let header = tiny_http::Header::from_bytes(
                        &b"Content-Type"[..],
                        &b"application/openmetrics-text; version=1.0.0; charset=utf-8"[..],
                    )
                    .expect("a valid header");
                    let _ = request.respond(tiny_http::Response::from_string(metrics.text()).with_header(header));
                }
            })
            .map_err(MetricsError::Thread)?;
        Ok(MetricsServer { server, thread: Some(thread) })
    }

    /// The address it listens on (the port the system chose for port 0).
    pub fn address(&self) -> String {
        self.server.server_addr().to_string()
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels() -> RunLabels {
        RunLabels {
            run: "r1".into(),
            workload: "oltp_point_select".into(),
            target: "sqlite://x.db".into(),
            shard: "".into(),
        }
    }

    fn no_histograms() -> ClassHistograms {
        ClassHistograms::from_classes(LatencyHistogram::new(), Default::default())
    }

    #[test]
    fn counters_add_up_by_phase_and_class() {
        let m = LiveMetrics::new(&labels(), 4, false);
        let mut s = IntervalStats { warmup: true, ..Default::default() };
        s.event.count = 10;
        s.read.count = 140;
        m.interval(&s, &no_histograms());
        s.warmup = false;
        s.event.p99_us = 2500.0;
        s.event.p95_us = 3665.919;
        m.interval(&s, &no_histograms());
        let text = m.text();
        let run = "run=\"r1\",workload=\"oltp_point_select\",target=\"sqlite://x.db\"";
        assert!(text.contains(&format!("fairbench_events_total{{{run},phase=\"warmup\"}} 10")), "{text}");
        assert!(text.contains(&format!("fairbench_events_total{{{run},phase=\"measured\"}} 10")), "{text}");
        assert!(text.contains(&format!("fairbench_statements_total{{{run},class=\"read\"}} 280")), "{text}");
        assert!(text.contains(&format!("fairbench_intervals_total{{{run}}} 2")), "{text}");
        assert!(text.contains(&format!("fairbench_clients{{{run}}} 4")), "{text}");
        let p99 = format!("fairbench_last_interval_latency_seconds{{{run},class=\"event\",quantile=\"0.99\"}} 0.0025");
        assert!(text.contains(&p99), "{text}");
        // Exactly the nanoseconds, without binary noise.
        assert!(text.contains("quantile=\"0.95\"} 0.003665919\n"), "{text}");
        assert!(text.ends_with("# EOF\n"), "{text}");
        assert!(!text.contains("open_loop"), "a closed loop has no backlog: {text}");
        assert!(LiveMetrics::new(&labels(), 4, true).text().contains("fairbench_open_loop_backlog{"));
    }

    /// Each class's histogram counts every latency of every interval, in the bucket its
    /// value falls in, with the exact sum.
    #[test]
    fn histograms_add_every_interval_up() {
        let m = LiveMetrics::new(&RunLabels { shard: "1/3".into(), ..labels() }, 2, false);
        let mut event = LatencyHistogram::new();
        for us in [80, 90, 400, 2_000, 30_000_000] {
            event.record(std::time::Duration::from_micros(us));
        }
        let h = ClassHistograms::from_classes(event, Default::default());
        m.interval(&IntervalStats::default(), &h);
        m.interval(&IntervalStats::default(), &h);
        let text = m.text();
        let of = |suffix: &str| {
            let name = format!("fairbench_latency_seconds_{suffix}");
            text.lines().find(|l| l.starts_with(&name) && l.contains("class=\"event\"")).unwrap().to_string()
        };
        assert!(of("count").ends_with(" 10"), "{text}");
        assert!(of("sum").ends_with(" 60.00514"), "{}", of("sum"));
        let bucket = |le: &str| {
            let want = format!("le=\"{le}\"");
            let line = text.lines().find(|l| l.contains("class=\"event\"") && l.contains(&want)).unwrap();
            line.rsplit(' ').next().unwrap().parse::<u64>().unwrap()
        };
        assert_eq!(
            (bucket("0.0001"), bucket("0.0005"), bucket("0.0025"), bucket("25.0"), bucket("+Inf")),
            (4, 6, 8, 8, 10)
        );
        assert!(text.contains("shard=\"1/3\""), "{text}");
        let info = text.lines().find(|l| l.starts_with("fairbench_run_info{")).expect("an info metric");
        assert!(
            info.contains("version=\"") && info.contains("loop_model=\"closed\"") && info.ends_with(" 1"),
            "{info}"
        );
    }
}
