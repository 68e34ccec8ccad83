//! The result document of a probe that ran without a workload beside it: its own writes are
//! the measured statements (one class, `write`), its conditions those of the node it wrote
//! to first, its figures in `ha`. With a workload (`--with`) the workload's document carries
//! `ha` instead.

use crate::model::ha::HaRecord;
use crate::model::{
    Arrival, ClassStats, ClientConditions, Conditions, DatasetConditions, ErrorRecord, HostFacts, LoopKind,
    OpenLoopRecord, ResultDocument, RunRecord, RunStatus, ServerConditions, SqlCommand, TargetRecord, WorkloadRecord,
    SCHEMA_NAME, SCHEMA_VERSION,
};
use crate::recorder::summary::class_stats;
use crate::runner::ClientCpu;
use crate::stats::LatencyHistogram;
use std::collections::BTreeMap;

/// What a probe's own writes were and how they went.
pub struct ProbeRun {
    pub target: TargetRecord,
    pub server: ServerConditions,
    pub host: HostFacts,
    pub command_line: Vec<String>,
    /// `probe.write` (failover) or `probe.heartbeat` (lag).
    pub statement: &'static str,
    pub sql: String,
    pub rate: f64,
    /// Latency of each acknowledged write from its slot's time, and from its actual start
    /// (service time).
    pub latencies: LatencyHistogram,
    pub service: LatencyHistogram,
    /// Writes that did not succeed, by outcome and code.
    pub errors: BTreeMap<String, u64>,
    pub measured_s: f64,
    pub status: RunStatus,
    pub failure: Option<String>,
    pub started_at: std::time::SystemTime,
    pub ended_at: std::time::SystemTime,
    pub cpu: ClientCpu,
    /// Slots that started more than 1 ms late, slots skipped while an attempt hung, and how
    /// late each slot started.
    pub late: u64,
    pub skipped: u64,
    pub start_delays: LatencyHistogram,
}

pub fn document(p: ProbeRun, ha: HaRecord) -> ResultDocument {
    let secs = p.measured_s;
    let writes = class_stats(&p.latencies, secs, &[]);
    let service = class_stats(&p.service, secs, &[]);
    let empty = class_stats(&LatencyHistogram::new(), secs, &[]);
    let failed: u64 = p.errors.values().sum();
    let classes = |w: &ClassStats| -> BTreeMap<String, ClassStats> {
        ["total", "write", "event", "read", "commit", "other"]
            .into_iter()
            .map(|k| (k.to_string(), if matches!(k, "read" | "commit" | "other") { empty.clone() } else { w.clone() }))
            .collect()
    };
    let stats = classes(&writes);
    let transaction = ClassStats { errors: Some(failed), ..writes.clone() };
    let events = writes.count;
    let client_cost = super::client_cost::record(&p.cpu, events, events, crate::runner::cpu::max_rss_bytes());
    let run = run_record(&p, events);
    let conditions = Conditions {
        client: ClientConditions {
            host: p.host,
            fairbench_version: env!("CARGO_PKG_VERSION").into(),
            command_line: p.command_line,
        },
        server: p.server,
        dataset: DatasetConditions::default(),
        workload: workload_record(&ha.probe, p.statement, &p.sql, p.rate),
        run,
    };
    ResultDocument {
        schema: SCHEMA_NAME.into(),
        schema_version: SCHEMA_VERSION,
        fairbench_version: env!("CARGO_PKG_VERSION").into(),
        target: p.target,
        conditions,
        stats,
        statements: BTreeMap::from([(p.statement.to_string(), writes.clone())]),
        transactions: BTreeMap::from([(p.statement.to_string(), transaction)]),
        checks: Vec::new(),
        tallies: Vec::new(),
        service: Some(classes(&service)),
        service_statements: Some(BTreeMap::from([(p.statement.to_string(), service.clone())])),
        open_loop: Some(OpenLoopRecord {
            rate: p.rate,
            arrival: Arrival::Fixed,
            max_backlog: 0,
            late: p.late,
            dropped: p.skipped,
            start_delay: class_stats(&p.start_delays, secs, &[]),
        }),
        client_cost,
        fairness: None,
        errors: ErrorRecord { total: failed, by_code: p.errors, reconnects: 0, reconnect_failures: 0 },
        intervals: Vec::new(),
        streamed: Vec::new(),
        repeats: Vec::new(),
        repeat_summary: BTreeMap::new(),
        thresholds: Vec::new(),
        tpcc: None,
        shards: Vec::new(),
        ha: Some(ha),
        faults: None,
        audit: Vec::new(),
    }
}

/// The run as a probe makes it: one client writing at a fixed rate, on schedule.
fn run_record(p: &ProbeRun, events: u64) -> RunRecord {
    RunRecord {
        loop_model: LoopKind::Open,
        loop_model_description: format!(
            "fixed rate: one write every {:.1} ms from one client, on schedule; a slot missed while an attempt hung is skipped, not caught up",
            1000.0 / p.rate
        ),
        threads: 1,
        time_limit_s: Some(p.measured_s),
        events_limit: None,
        warmup_s: 0,
        measured_s: p.measured_s,
        events,
        rand_seed: 0,
        percentile_method: super::PERCENTILE_METHOD.into(),
        status: p.status,
        failure: p.failure.clone(),
        reconnect: None,
        warmup_end: None,
        repeats: None,
        cost_per_hour: None,
        started_at: crate::model::rfc3339(p.started_at),
        ended_at: crate::model::rfc3339(p.ended_at),
        deferred_left: None,
        transports: Vec::new(),
        shard: None,
    }
}

fn workload_record(probe: &str, statement: &str, sql: &str, rate: f64) -> WorkloadRecord {
    WorkloadRecord {
        name: format!("probe {probe}"),
        options: serde_json::json!({ "rate": rate }),
        distribution: serde_json::Value::Null,
        distribution_description: "none: sequence numbers 1, 2, 3... in order".into(),
        mix_per_event: BTreeMap::from([(statement.to_string(), 1)]),
        statements_sql: BTreeMap::from([(statement.to_string(), sql.to_string())]),
        statement_classes: BTreeMap::from([(statement.to_string(), "write".to_string())]),
        statement_commands: BTreeMap::from([(statement.to_string(), SqlCommand::Insert)]),
        transactions: BTreeMap::new(),
        file: None,
        follows: None,
    }
}
