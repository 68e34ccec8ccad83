//! The result document: one versioned JSON file per run, documented in docs/result-schema.md.
//! Reports, audits and comparisons read this, never the runner's internals.

pub mod build;

use crate::recorder::Recorder;
use crate::stats::{ClassStats, CompactStats};
use crate::workload::StatementClass;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Bumped whenever a field changes meaning or disappears (additions keep the version).
pub const SCHEMA_VERSION: u32 = 2;
pub const SCHEMA_NAME: &str = "fairbench.result";

/// The top-level document.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ResultDocument {
    pub schema: String,
    pub schema_version: u32,
    pub fairbench_version: String,
    pub target: TargetRecord,
    /// Everything the numbers depend on: client host, server, dataset, workload, run.
    pub conditions: crate::conditions::Conditions,
    /// Keys `total`, `read`, `write`, `commit`, `other` (statements) and `event`
    /// (whole events: sysbench's "latency"). Open loop: latency from each event's intended
    /// start (a statement's latency includes the time its event waited to start).
    pub stats: BTreeMap<String, ClassStats>,
    /// Per statement kind (sysbench's names: `point_selects`, ...).
    pub statements: BTreeMap<String, ClassStats>,
    /// Open loop only: the same keys as `stats`, service time (actual start to end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<BTreeMap<String, ClassStats>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_statements: Option<BTreeMap<String, ClassStats>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_loop: Option<OpenLoopRecord>,
    /// The load generator's own CPU and memory.
    pub client_cost: ClientRecord,
    pub errors: ErrorRecord,
    /// One entry per second of the run, warmup included (flagged).
    pub intervals: Vec<IntervalStats>,
    /// What the audit found when the result was written (`fairbench audit` recomputes).
    #[serde(default)]
    pub audit: Vec<crate::audit::Finding>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TargetRecord {
    /// The URL with the password replaced by `***`.
    pub url: String,
    pub driver: String,
    /// `tcp`, `socket` or `embedded`.
    pub transport: String,
    pub address: String,
    /// `off`, `require` or `verify`.
    pub tls: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WorkloadRecord {
    pub name: String,
    pub options: serde_json::Value,
    pub distribution: serde_json::Value,
    /// Human description of the distribution (`uniform`, `special (...)`).
    pub distribution_description: String,
    /// Statements per event, by kind, as the workload sends them.
    pub mix_per_event: BTreeMap<String, u64>,
    /// SQL text of each statement kind (table 1, `?` placeholders).
    pub statements_sql: BTreeMap<String, String>,
    /// fairbench's classification of each statement kind.
    pub statement_classes: BTreeMap<String, String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunRecord {
    /// `closed` (and, later, `open`), with its description.
    pub loop_model: String,
    pub loop_model_description: String,
    pub threads: u32,
    pub time_limit_s: Option<f64>,
    pub events_limit: Option<u64>,
    pub warmup_s: u32,
    pub measured_s: f64,
    pub events: u64,
    pub rand_seed: u64,
    pub percentile_method: String,
    /// `completed`, `interrupted` or `failed`.
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// RFC 3339 UTC.
    pub started_at: String,
    pub ended_at: String,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ErrorRecord {
    pub total: u64,
    /// Retried errors by the database's own code (MySQL errno, SQLSTATE, SQLite code).
    pub by_code: BTreeMap<String, u64>,
    pub reconnects: u64,
}

/// Statistics of one timeline interval (or one --report-interval window).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct IntervalStats {
    /// Start of the interval, seconds since the run started (warmup included).
    pub from_s: f64,
    pub duration_s: f64,
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
    pub errors: u64,
    pub reconnects: u64,
    /// CPU used by the fairbench process in this interval, percent of one core.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cpu_pct: Option<f64>,
    /// A uniform sample (at most 100 points) of latencies for a scatter plot.
    pub scatter: Scatter,
}

/// Sampled (time, latency) points: COMMIT latencies, or event latencies when the workload
/// has no COMMIT.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct Scatter {
    /// `commit` or `event`.
    pub of: String,
    /// How many latencies the sample was drawn from.
    pub seen: u64,
    /// `[seconds since the run started, latency in microseconds]`, in time order.
    pub points: Vec<[f64; 2]>,
}

impl IntervalStats {
    pub fn of(r: &Recorder, start: std::time::Instant, from_s: f64, secs: f64, threads: u32, warmup: bool) -> Self {
        let c = |class| CompactStats::of(&r.class(class, false), secs);
        let open = r.open_loop();
        IntervalStats {
            from_s,
            duration_s: secs,
            warmup,
            threads,
            event: CompactStats::of(&r.events, secs),
            total: CompactStats::of(&r.total(false), secs),
            read: c(StatementClass::Read),
            write: c(StatementClass::Write),
            commit: c(StatementClass::Commit),
            other: c(StatementClass::Other),
            event_service: open.map(|o| CompactStats::of(&o.service_events, secs)),
            late: open.map(|o| o.late),
            dropped: open.map(|o| o.dropped),
            errors: r.error_count(),
            reconnects: r.reconnects,
            client_cpu_pct: None,
            scatter: Scatter {
                of: if r.scatter.of_commits { "commit" } else { "event" }.into(),
                seen: r.scatter.seen,
                points: r
                    .scatter
                    .points
                    .iter()
                    .map(|(at, lat)| {
                        [at.saturating_duration_since(start).as_secs_f64(), lat.as_nanos() as f64 / 1000.0]
                    })
                    .collect(),
            },
        }
    }
}

/// The `stats` (or, with `service`, the open loop's `service`) and `statements` sections.
pub fn class_stats(
    totals: &Recorder,
    secs: f64,
    extra: &[f64],
    service: bool,
) -> (BTreeMap<String, ClassStats>, BTreeMap<String, ClassStats>) {
    let mut stats = BTreeMap::new();
    stats.insert("total".to_string(), ClassStats::of(&totals.total(service), secs, extra));
    for class in StatementClass::ALL {
        stats.insert(class.name().to_string(), ClassStats::of(&totals.class(class, service), secs, extra));
    }
    let events = match (service, totals.open_loop()) {
        (true, Some(o)) => &o.service_events,
        _ => &totals.events,
    };
    stats.insert("event".to_string(), ClassStats::of(events, secs, extra));
    let statements = if service {
        totals.service_statements().map(|(k, h)| (k.name().to_string(), ClassStats::of(h, secs, extra))).collect()
    } else {
        totals.statements().map(|(k, h)| (k.name().to_string(), ClassStats::of(h, secs, extra))).collect()
    };
    (stats, statements)
}

/// Open-loop facts of a run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OpenLoopRecord {
    /// Target events per second over all clients.
    pub rate: f64,
    /// `fixed` or `poisson`.
    pub arrival: String,
    pub max_backlog: u64,
    /// Events that started more than 1 ms after their intended start.
    pub late: u64,
    /// Events never sent because the backlog was full.
    pub dropped: u64,
    /// Actual start minus intended start, over all measured events.
    pub start_delay: ClassStats,
}

/// The load generator's own cost (issue: a heavy client steals CPU from the server).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ClientRecord {
    pub cpu_s: f64,
    pub cpu_per_event_us: f64,
    pub cpu_per_query_us: f64,
    /// Process CPU over measured wall time, percent of all cores.
    pub cpu_utilization_pct: f64,
    pub cores: u32,
    pub worker_threads: u32,
    /// Busiest worker thread's CPU over wall time, percent of one core.
    pub busiest_worker_pct: f64,
    /// The whole host's CPU busy time over the measured phase (all processes), percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_cpu_busy_pct: Option<f64>,
    pub peak_rss_bytes: u64,
    pub saturated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

impl ResultDocument {
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("result serializes")
    }

    /// Writes atomically (temp file + rename), so a crash never leaves half a file. A path
    /// that exists and is not a regular file (/dev/null, a pipe) is written in place: a
    /// rename would replace the device.
    pub fn write(&self, path: &std::path::Path) -> Result<(), String> {
        if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
            return std::fs::write(path, self.to_json()).map_err(|e| format!("cannot write {}: {e}", path.display()));
        }
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, self.to_json()).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
        std::fs::rename(&tmp, path).map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    pub fn read(path: &std::path::Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let doc: ResultDocument =
            serde_json::from_str(&text).map_err(|e| format!("{} is not a fairbench result: {e}", path.display()))?;
        if doc.schema != SCHEMA_NAME || doc.schema_version > SCHEMA_VERSION {
            return Err(format!(
                "{} has schema {} version {}; this fairbench reads {SCHEMA_NAME} up to version {SCHEMA_VERSION}",
                path.display(),
                doc.schema,
                doc.schema_version
            ));
        }
        Ok(doc)
    }
}

/// Seconds since the epoch to RFC 3339 UTC (`2026-11-22T01:02:03.456Z`).
pub fn rfc3339(t: std::time::SystemTime) -> String {
    let d = t.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_known_dates() {
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(1_795_000_000_123);
        assert_eq!(rfc3339(t), "2026-11-18T11:06:40.123Z");
        assert_eq!(rfc3339(std::time::UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
    }
}
