//! `--metrics-listen ADDR:PORT`: the run's figures as OpenMetrics text (what Prometheus
//! scrapes) while it lasts, fed once per timeline interval from what the collector already
//! computed. Counters count from the run's start, warmup included (labelled by phase).
//! Latency is exposed as gauges of the last interval's exact percentiles (HdrHistogram,
//! as the result reports them) rather than as a Prometheus histogram: fixed buckets would
//! round the percentiles, and native histograms need the protobuf exposition.

use crate::model::{CompactStats, IntervalStats};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Phase {
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
    events: Family<Phase, Counter>,
    statements: Family<Class, Counter>,
    errors: Counter,
    reconnects: Counter,
    intervals: Counter,
    clients: Gauge,
    backlog: Gauge,
    late: Counter,
    latency: Family<Quantile, Gauge<f64, AtomicU64>>,
    /// A scrape sees whole intervals: never one half taken in.
    consistent: Mutex<()>,
}

impl LiveMetrics {
    /// The figures of a run of `clients` connections; the open loop's only with `open_loop`.
    pub fn new(clients: u32, open_loop: bool) -> LiveMetrics {
        let mut m = LiveMetrics {
            registry: Registry::with_prefix("fairbench"),
            events: Family::default(),
            statements: Family::default(),
            errors: Counter::default(),
            reconnects: Counter::default(),
            intervals: Counter::default(),
            clients: Gauge::default(),
            backlog: Gauge::default(),
            late: Counter::default(),
            latency: Family::default(),
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
        m.clients.set(clients as i64);
        m
    }

    /// Takes in one closed interval.
    pub fn interval(&self, s: &IntervalStats) {
        let _whole = crate::lock(&self.consistent);
        let phase = if s.warmup { "warmup" } else { "measured" };
        self.events.get_or_create(&Phase { phase }).inc_by(s.event.count);
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

/// The HTTP endpoint: `GET /metrics` (any path) answers the text; stops when dropped.
pub struct MetricsServer {
    server: Arc<tiny_http::Server>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl MetricsServer {
    /// Listens on `addr` (only where told) and serves `metrics` until dropped.
    pub fn start(addr: &str, metrics: Arc<LiveMetrics>) -> Result<MetricsServer, String> {
        let server =
            tiny_http::Server::http(addr).map_err(|e| format!("--metrics-listen {addr}: cannot listen: {e}"))?;
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
            .map_err(|e| format!("--metrics-listen: cannot start its thread: {e}"))?;
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

    #[test]
    fn counters_add_up_by_phase_and_class() {
        let m = LiveMetrics::new(4, false);
        let mut s = IntervalStats { warmup: true, ..Default::default() };
        s.event.count = 10;
        s.read.count = 140;
        m.interval(&s);
        s.warmup = false;
        s.event.p99_us = 2500.0;
        s.event.p95_us = 3665.919;
        m.interval(&s);
        let text = m.text();
        assert!(text.contains("fairbench_events_total{phase=\"warmup\"} 10"), "{text}");
        assert!(text.contains("fairbench_events_total{phase=\"measured\"} 10"), "{text}");
        assert!(text.contains("fairbench_statements_total{class=\"read\"} 280"), "{text}");
        assert!(text.contains("fairbench_intervals_total 2"), "{text}");
        assert!(text.contains("fairbench_clients 4"), "{text}");
        assert!(
            text.contains("fairbench_last_interval_latency_seconds{class=\"event\",quantile=\"0.99\"} 0.0025"),
            "{text}"
        );
        // Exactly the nanoseconds, without binary noise.
        assert!(text.contains("quantile=\"0.95\"} 0.003665919\n"), "{text}");
        assert!(text.ends_with("# EOF\n"), "{text}");
        assert!(!text.contains("open_loop"), "a closed loop has no backlog: {text}");
        assert!(LiveMetrics::new(4, true).text().contains("fairbench_open_loop_backlog 0"));
    }
}
