//! Assembles the result document from the plan, the conditions read from the server and
//! what the runner measured.

use super::*;
use crate::conditions::{ClientConditions, Conditions, DatasetConditions, HostFacts, ServerConditions, TableSize};
use crate::db::{TargetUrl, Transport};
use crate::plan::{LoopModel, RunPlan};
use crate::runner::{ClientCpu, RunOutcome, RunStatus};
use crate::stats::ClassStats;
use crate::workload::{StatementKind, Workload};

pub const PERCENTILE_METHOD: &str = "percentiles: HdrHistogram of nanosecond latencies, 3 significant digits (<= 0.1% relative error); a percentile is the upper bound of the bucket holding that rank, clamped to the exact min and max";

pub struct Inputs<'a> {
    pub plan: &'a RunPlan,
    pub target: &'a TargetUrl,
    pub transport: Transport,
    /// The BEGIN this target's driver sends (SQLite: BEGIN IMMEDIATE for writers).
    pub begin_sql: &'static str,
    /// Server facts read before the run (its counters are filled in here).
    pub server: ServerConditions,
    pub tables_at_start: Vec<TableSize>,
    pub tables_at_end: Vec<TableSize>,
    pub outcome: RunOutcome,
}

pub fn document(i: Inputs<'_>) -> ResultDocument {
    let Inputs { plan, target, transport, begin_sql, mut server, tables_at_start, tables_at_end, outcome } = i;
    let extra = &plan.percentiles;
    let secs = outcome.measured_s;
    let (stats, statements) = class_stats(&outcome.totals, secs, extra, false);
    let (service, service_statements) = match plan.loop_model.is_open() {
        true => {
            let (a, b) = class_stats(&outcome.totals, secs, extra, true);
            (Some(a), Some(b))
        }
        false => (None, None),
    };
    let open_loop = match (plan.loop_model, outcome.totals.open_loop()) {
        (LoopModel::Open { rate, arrival, max_backlog }, Some(o)) => Some(OpenLoopRecord {
            rate,
            arrival: format!("{arrival:?}").to_lowercase(),
            max_backlog,
            late: o.late,
            dropped: o.dropped,
            start_delay: ClassStats::of(&o.queue, secs, extra),
        }),
        _ => None,
    };
    let events = outcome.totals.events.count();
    let client_cost = client_record(&outcome.client, events, outcome.totals.total(false).count());
    let mix = plan.workload.mix(&plan.oltp);
    let new_row = plan.workload == Workload::OltpInsert && plan.oltp.auto_inc;
    let (status, failure) = match outcome.status {
        RunStatus::Completed => ("completed", None),
        RunStatus::Interrupted => ("interrupted", None),
        RunStatus::Failed(m) => ("failed", Some(m)),
    };
    let host = HostFacts::read();
    server.set_status(outcome.counters_before, outcome.counters_after);
    let dataset = DatasetConditions {
        declared_rows_per_table: plan.workload.rows_to_load(&plan.oltp),
        total_bytes: tables_at_start.iter().map(|t| t.data_bytes + t.index_bytes).sum(),
        cache: crate::conditions::cache_memory(target.dialect, &server.variables),
        server_host_memory_bytes: server.same_host_as_client.then_some(host.memory_bytes),
        tables_at_start,
        tables_at_end,
    };
    let workload = WorkloadRecord {
        name: plan.workload.name().into(),
        options: serde_json::to_value(&plan.oltp).unwrap_or_default(),
        distribution: serde_json::to_value(&plan.distribution).unwrap_or_default(),
        distribution_description: plan.distribution.describe(),
        mix_per_event: mix.iter().map(|(k, n)| (k.name().to_string(), *n)).collect(),
        statements_sql: mix
            .iter()
            .map(|(k, _)| {
                let sql = match k {
                    StatementKind::Begin => begin_sql.to_string(),
                    k => k.sql(1, target.dialect, new_row),
                };
                (k.name().to_string(), sql)
            })
            .collect(),
        statement_classes: mix.iter().map(|(k, _)| (k.name().to_string(), k.class().name().to_string())).collect(),
    };
    let run = RunRecord {
        loop_model: plan.loop_model.name().into(),
        loop_model_description: plan.loop_model.describe(),
        threads: plan.threads,
        time_limit_s: plan.stop.time.map(|t| t.as_secs_f64()),
        events_limit: plan.stop.events,
        warmup_s: plan.warmup_s,
        measured_s: secs,
        events,
        rand_seed: plan.rand_seed,
        percentile_method: PERCENTILE_METHOD.into(),
        status: status.into(),
        failure,
        started_at: rfc3339(outcome.started_at),
        ended_at: rfc3339(outcome.ended_at),
    };
    ResultDocument {
        schema: SCHEMA_NAME.into(),
        schema_version: SCHEMA_VERSION,
        fairbench_version: env!("CARGO_PKG_VERSION").into(),
        target: TargetRecord {
            url: target.redacted(),
            driver: target.dialect.name().into(),
            transport: transport.kind.name().into(),
            address: transport.address,
            tls: transport.tls.name().into(),
        },
        conditions: Conditions {
            client: ClientConditions {
                host,
                fairbench_version: env!("CARGO_PKG_VERSION").into(),
                command_line: std::env::args().map(|a| crate::db::url::redact_str(&a)).collect(),
            },
            server,
            dataset,
            workload,
            run,
        },
        stats,
        statements,
        service,
        service_statements,
        open_loop,
        client_cost,
        errors: ErrorRecord {
            total: outcome.totals.error_count(),
            by_code: outcome.totals.errors.clone(),
            reconnects: outcome.totals.reconnects,
        },
        intervals: outcome.timeline,
        audit: Vec::new(),
    }
}

/// The client's cost, and whether it limited the measurement.
fn client_record(c: &ClientCpu, events: u64, queries: u64) -> ClientRecord {
    let utilization = c.cpu_s / (c.wall_s * c.cores.max(1) as f64).max(1e-9);
    // Saturated: the machine had no CPU left for the client, or one of its event loops
    // was busy nearly all the time (its clients then wait for the loop, not the server).
    let host_busy = c.host_busy.unwrap_or(0.0);
    let warning = if utilization >= 0.9 {
        Some(format!(
            "the client used {:.0}% of all {} cores: it may have limited throughput and inflated latency",
            utilization * 100.0,
            c.cores
        ))
    } else if host_busy >= 0.9 && utilization >= 0.25 {
        Some(format!(
            "the host's CPUs were {:.0}% busy and the client itself used {:.0}% of them: it competed for CPU with what it measured",
            host_busy * 100.0,
            utilization * 100.0
        ))
    } else if c.shared_event_loops && c.busiest_worker >= 0.9 {
        Some(format!(
            "a client worker thread was busy {:.0}% of the time: the load generator, not the server, may be the bottleneck",
            c.busiest_worker * 100.0
        ))
    } else {
        None
    };
    ClientRecord {
        cpu_s: c.cpu_s,
        cpu_per_event_us: c.cpu_s * 1e6 / events.max(1) as f64,
        cpu_per_query_us: c.cpu_s * 1e6 / queries.max(1) as f64,
        cpu_utilization_pct: utilization * 100.0,
        cores: c.cores,
        worker_threads: c.worker_threads,
        busiest_worker_pct: c.busiest_worker * 100.0,
        host_cpu_busy_pct: c.host_busy.map(|b| b * 100.0),
        peak_rss_bytes: crate::runner::cpu::max_rss_bytes(),
        saturated: warning.is_some(),
        warning,
    }
}
