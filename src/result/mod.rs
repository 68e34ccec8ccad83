//! Builds the result document from the plan, the conditions read before the run, what the
//! runner reported and what the collector gathered. The document itself is [`crate::model`].

mod client_cost;
mod repeats;
pub mod scatter;
pub mod tpcc;
mod workload;

mod build;
mod finish;

pub use build::{build, BuildError};
pub use finish::{complete, Basis, Closed, Ending};

use crate::model::{
    ClientConditions, Conditions, DatasetConditions, Dialect, ErrorRecord, HostFacts, IntervalStats, LoopModel,
    OpenLoopRecord, ResultDocument, RunRecord, ServerConditions, TableSize, TargetRecord, Transport, SCHEMA_NAME,
    SCHEMA_VERSION,
};
use crate::plan::RunPlan;
use crate::recorder::summary::{class_and_statement_stats, class_stats};
use crate::recorder::Recorder;
use crate::runner::RunOutcome;
use std::collections::BTreeMap;

pub const PERCENTILE_METHOD: &str = "percentiles: HdrHistogram of nanosecond latencies, 3 significant digits (<= 0.1% relative error); a percentile is the upper bound of the bucket holding that rank, clamped to the exact min and max";

/// Where the run went and what was known before it started.
#[derive(Clone)]
pub struct Setting<'a> {
    pub plan: &'a RunPlan,
    pub dialect: Dialect,
    /// The target URL with any password replaced by `***`.
    pub redacted_url: String,
    /// Several --target: every node, the workload following the one that takes writes.
    pub nodes: Vec<String>,
    pub transport: Transport,
    /// The BEGIN this target's driver sends for a transaction that reads only, and for one
    /// that writes (SQLite: BEGIN IMMEDIATE).
    pub begin_sql: [&'static str; 2],
    /// Server facts read before the run (its counters are filled in here).
    pub server: ServerConditions,
    pub host: HostFacts,
    /// The command line, passwords redacted.
    pub command_line: Vec<String>,
    /// The request the run executes, passwords redacted.
    pub request: Option<crate::model::RunRequest>,
    pub tables_at_start: Vec<TableSize>,
    /// The memory that holds the data, by name (the driver's `data_caches`).
    pub data_caches: BTreeMap<String, u64>,
    /// Tables used that fairbench did not create.
    pub foreign_tables: Vec<String>,
    /// How statements were sent.
    pub statements: crate::model::StatementMode,
}

/// The result as known when measuring starts: the conditions and the plan, no figures
/// (status `running`). It opens the run's record; [`build`] fills the figures in.
pub fn start(setting: Setting<'_>) -> ResultDocument {
    let plan = setting.plan;
    let (statements, transactions) = (plan.workload.statements(), plan.workload.transactions());
    let totals = Recorder::new(&statements, &transactions, plan.loop_model.is_open());
    let outcome = RunOutcome::starting();
    let target = TargetRecord {
        url: setting.redacted_url.clone(),
        nodes: setting.nodes.clone(),
        driver: setting.dialect,
        transport: setting.transport.kind,
        address: setting.transport.address.clone(),
        tls: setting.transport.tls,
        statements: setting.statements,
    };
    let programs = &plan.workload.program().transactions;
    let open_loop = match plan.loop_model {
        LoopModel::Open { rate, arrival, max_backlog } => {
            Some(OpenLoopRecord { rate, arrival, max_backlog, late: 0, dropped: 0, start_delay: Default::default() })
        }
        LoopModel::Closed => None,
    };
    let conditions = conditions(setting, &outcome, 0);
    let mut doc = empty(target, conditions, open_loop, client_cost::record(&outcome.client, 0, 0, 0));
    // Which kinds of event may roll back as the workload intends: kept with the start.
    // A deferred transaction's executions are a kind of their own, named after it; the
    // transaction's own kind is the queueing, which neither rolls back nor skips.
    let program =
        |name: &str| programs.iter().find(|t| if t.deferred { t.deferred_name() == name } else { t.name == name });
    for (name, _) in totals.transactions() {
        let rollbacks = program(name).is_some_and(|t| t.may_roll_back()).then_some(0);
        let skipped = program(name).is_some_and(|t| t.may_skip()).then_some(0);
        doc.transactions.insert(name.into(), crate::model::ClassStats { rollbacks, skipped, ..Default::default() });
    }
    doc = figures(&doc, &plan.percentiles, RunOutcome::starting(), &totals, Vec::new());
    doc
}

/// What a measured phase's entries add up to: totals after warmup, and the timeline the
/// result keeps (entries merged in pairs as the run's collector did, when it had more).
struct PhaseTotals {
    pub totals: Recorder,
    pub timeline: Vec<IntervalStats>,
}

/// A document without figures: where it ran, under which conditions, nothing measured yet.
pub fn empty(
    target: TargetRecord,
    conditions: Conditions,
    open_loop: Option<OpenLoopRecord>,
    client_cost: crate::model::ClientRecord,
) -> ResultDocument {
    ResultDocument {
        schema: SCHEMA_NAME.into(),
        schema_version: SCHEMA_VERSION,
        fairbench_version: env!("CARGO_PKG_VERSION").into(),
        target,
        conditions,
        stats: BTreeMap::new(),
        statements: BTreeMap::new(),
        transactions: BTreeMap::new(),
        checks: Vec::new(),
        tallies: Vec::new(),
        service: None,
        service_statements: None,
        open_loop,
        client_cost,
        fairness: None,
        errors: Default::default(),
        intervals: Vec::new(),
        streamed: Vec::new(),
        repeats: Vec::new(),
        repeat_summary: BTreeMap::new(),
        thresholds: Vec::new(),
        tpcc: None,
        ha: None,
        faults: None,
        shards: Vec::new(),
        audit: Vec::new(),
    }
}

/// What a measured phase adds to the start: its figures from `totals` (measured, after
/// warmup), its kept `timeline` and how it went.
fn figures(
    start: &ResultDocument,
    extra: &[f64],
    outcome: RunOutcome,
    totals: &Recorder,
    timeline: Vec<IntervalStats>,
) -> ResultDocument {
    let mut doc = start.clone();
    let secs = outcome.measured_s;
    let (stats, statements) = class_and_statement_stats(totals, secs, extra, false);
    (doc.stats, doc.statements) = (stats, statements);
    (doc.service, doc.service_statements) = match totals.open_loop() {
        Some(_) => {
            let (a, b) = class_and_statement_stats(totals, secs, extra, true);
            (Some(a), Some(b))
        }
        None => (None, None),
    };
    if let (Some(record), Some(o)) = (&mut doc.open_loop, totals.open_loop()) {
        (record.late, record.dropped) = (o.late, o.dropped);
        record.start_delay = class_stats(&o.queue, secs, extra);
    }
    doc.transactions = totals
        .transactions()
        .zip(totals.rollbacks().zip(totals.failures()).zip(totals.skips()))
        .map(|((name, h), ((rolled_back, failed), skipped))| {
            let started = start.transactions.get(name);
            let may_roll_back = started.is_some_and(|t| t.rollbacks.is_some());
            let may_skip = started.is_some_and(|t| t.skipped.is_some());
            let stats = crate::model::ClassStats {
                rollbacks: may_roll_back.then_some(rolled_back),
                errors: Some(failed),
                skipped: may_skip.then_some(skipped),
                ..class_stats(h, secs, extra)
            };
            (name.to_string(), stats)
        })
        .collect();
    let events = totals.events.count();
    doc.client_cost = client_cost::record(&outcome.client, events, totals.total(false).count(), outcome.peak_rss_bytes);
    doc.fairness = client_cost::fairness(&outcome.per_client);
    doc.errors = error_record(totals);
    doc.intervals = scatter::bounded(timeline);
    let c = &mut doc.conditions;
    c.server.set_status(outcome.counters_before.clone(), outcome.counters_after.clone());
    let defers = c.workload.transactions.values().any(|t| t.deferred);
    let run = &mut c.run;
    run.measured_s = outcome.measured_s;
    run.events = events;
    run.status = outcome.status;
    run.failure = outcome.failure.clone();
    run.warmup_end = outcome.warmup_end.clone();
    run.deferred_left = defers.then_some(outcome.deferred_left);
    run.transports = outcome.transports.clone();
    run.started_at = crate::model::rfc3339(outcome.started_at);
    run.ended_at = crate::model::rfc3339(outcome.ended_at);
    doc.tallies = outcome.tallies.clone();
    doc.tpcc = tpcc::figures(&doc);
    doc
}

fn conditions(s: Setting<'_>, outcome: &RunOutcome, events: u64) -> Conditions {
    let Setting {
        plan,
        begin_sql,
        mut server,
        host,
        command_line,
        request,
        tables_at_start,
        foreign_tables,
        data_caches,
        ..
    } = s;
    server.set_status(outcome.counters_before.clone(), outcome.counters_after.clone());
    let declared_rows = plan.workload.declared_rows_by_table();
    let dataset = DatasetConditions {
        declared_rows_per_table: plan.workload.declared_rows(),
        declared_rows: declared_rows.clone(),
        total_bytes: tables_at_start.iter().map(|t| t.data_bytes + t.index_bytes).sum(),
        touched: crate::model::TouchedData::of(plan.workload.declared_rows(), &declared_rows, &tables_at_start),
        cache: data_caches,
        server_host_memory_bytes: server.same_host_as_client.then_some(host.memory_bytes),
        tables_at_start,
        tables_at_end: Vec::new(),
        foreign_tables,
    };
    Conditions {
        client: ClientConditions { host, fairbench_version: env!("CARGO_PKG_VERSION").into(), command_line, request },
        server,
        dataset,
        workload: workload::record(plan, begin_sql),
        run: run_record(plan, outcome, events),
    }
}

fn error_record(totals: &crate::recorder::Recorder) -> ErrorRecord {
    ErrorRecord {
        total: totals.error_count(),
        by_code: totals.errors.clone(),
        reconnects: totals.reconnects,
        reconnect_failures: totals.reconnect_failures,
    }
}

fn run_record(plan: &RunPlan, outcome: &RunOutcome, events: u64) -> RunRecord {
    RunRecord {
        loop_model: plan.loop_model.kind(),
        loop_model_description: plan.loop_model.describe(),
        threads: plan.threads,
        time_limit_s: plan.stop.time.map(|t| t.as_secs_f64()),
        events_limit: plan.stop.events,
        warmup_s: plan.warmup_s,
        measured_s: outcome.measured_s,
        events,
        rand_seed: plan.rand_seed,
        percentile_method: PERCENTILE_METHOD.into(),
        status: outcome.status,
        failure: outcome.failure.clone(),
        reconnect: Some(plan.reconnect.clone()),
        warmup_end: outcome.warmup_end.clone(),
        repeats: (plan.repeats > 1).then_some(plan.repeats),
        cost_per_hour: plan.cost_per_hour,
        started_at: crate::model::rfc3339(outcome.started_at),
        ended_at: crate::model::rfc3339(outcome.ended_at),
        deferred_left: None,
        transports: outcome.transports.clone(),
        shard: None,
    }
}
