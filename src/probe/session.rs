//! A probe's session without a workload beside it: the result as known before it writes
//! (its own writes are the measured statements, one class `write`; its conditions those of
//! the node it writes to first), how its phase went, and its verdict from its ledger read
//! back ([`super::stream`]). A probe that never ended is judged the same way (`recover`).

use super::failover::FailoverOptions;
use crate::model::ha::{Attempt, FailoverRecord, HaRecord, NodeRecord, RoleChange};
use crate::model::ha_ledger::{FailoverPlan, HaLine};
use crate::model::record::{ClientCpu, Record, RecordStart, RecordedStatement, RunOutcome};
use crate::model::ProbeRequest;
use crate::model::{
    Arrival, ClientConditions, Conditions, DatasetConditions, HostFacts, LoopKind, OpenLoopRecord, ResultDocument,
    RunRecord, RunStatus, ServerConditions, SqlCommand, TargetRecord, WorkloadRecord,
};
use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

/// What a probe's result says before it writes.
pub struct ProbeStart {
    /// `failover` or `lag`.
    pub probe: &'static str,
    pub target: TargetRecord,
    pub server: ServerConditions,
    pub host: HostFacts,
    pub command_line: Vec<String>,
    /// `probe.write` (failover) or `probe.heartbeat` (lag).
    pub statement: &'static str,
    pub sql: String,
    pub rate: f64,
    pub time: Duration,
    pub started_at: SystemTime,
    /// The probe's figures as known before it writes: its nodes, no verdict.
    pub ha: HaRecord,
}

/// The record's start: the result with status `running` and no figures.
pub fn record_start(p: ProbeStart) -> RecordStart {
    let statement = p.statement.to_string();
    let run = run_record(&p);
    let conditions = Conditions {
        client: ClientConditions {
            host: p.host,
            fairbench_version: env!("CARGO_PKG_VERSION").into(),
            command_line: p.command_line,
            request: None,
        },
        server: p.server,
        dataset: DatasetConditions::default(),
        workload: workload_record(&p.ha.probe, &statement, &p.sql, p.rate),
        run,
    };
    let open_loop = OpenLoopRecord {
        rate: p.rate,
        arrival: Arrival::Fixed,
        max_backlog: 0,
        late: 0,
        dropped: 0,
        start_delay: Default::default(),
    };
    let mut document = crate::result::empty(p.target, conditions, Some(open_loop), Default::default());
    document.ha = Some(p.ha);
    RecordStart {
        schema: crate::model::record::RECORD_SCHEMA.into(),
        version: crate::model::record::RECORD_VERSION,
        started: p.started_at,
        document,
        statements: vec![RecordedStatement { name: statement.clone(), class: "write".into() }],
        transactions: vec![statement],
        open_loop: true,
        percentiles: Vec::new(),
        kept_per_phase: crate::collector::MAX_KEPT,
        entry_histograms: false,
        thresholds: Vec::new(),
    }
}

/// The run as a probe makes it: one client writing at a fixed rate, on schedule; running.
fn run_record(p: &ProbeStart) -> RunRecord {
    RunRecord {
        loop_model: LoopKind::Open,
        loop_model_description: format!(
            "fixed rate: one write every {:.1} ms from one client, on schedule; a slot missed while an attempt hung is skipped, not caught up",
            1000.0 / p.rate
        ),
        threads: 1,
        time_limit_s: Some(p.time.as_secs_f64()),
        events_limit: None,
        warmup_s: 0,
        measured_s: 0.0,
        events: 0,
        rand_seed: 0,
        percentile_method: crate::result::PERCENTILE_METHOD.into(),
        status: RunStatus::Running,
        failure: None,
        reconnect: None,
        warmup_end: None,
        repeats: None,
        cost_per_hour: None,
        started_at: crate::model::rfc3339(p.started_at),
        ended_at: crate::model::rfc3339(p.started_at),
        deferred_left: None,
        shard: None,
        transports: Vec::new(),
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

/// How the probe's writing went: `measured_s` from its time zero to its end.
pub fn outcome(started_at: SystemTime, measured_s: f64, interrupted: bool) -> RunOutcome {
    RunOutcome {
        measured_s,
        status: if interrupted { RunStatus::Interrupted } else { RunStatus::Completed },
        started_at,
        ended_at: SystemTime::now(),
        client: ClientCpu {
            cpu_s: crate::runner::cpu::process().as_secs_f64(),
            wall_s: measured_s,
            cores: crate::cpu_count(),
            worker_threads: 1,
            busiest_worker: 0.0,
            shared_event_loops: true,
            host_busy: None,
        },
        peak_rss_bytes: crate::runner::cpu::max_rss_bytes(),
        ..RunOutcome::starting()
    }
}

/// The probe's figures as known before it writes.
/// The probe's figures before it writes: its nodes and its request (URLs without passwords),
/// whose `--with` text names the load beside it.
pub fn ha_record(probe: &str, started_at: SystemTime, nodes: Vec<NodeRecord>, request: ProbeRequest) -> HaRecord {
    let request = request.redacted(crate::db::redact::redact_str);
    HaRecord {
        probe: probe.into(),
        started_at: crate::model::rfc3339(started_at),
        duration_s: 0.0,
        load: request.common().and_then(|c| c.with_text.clone()),
        nodes,
        request: Some(request),
        failover: None,
        lag: None,
    }
}

/// The ledger line that opens a failover probe's ledger.
pub fn failover_plan(o: &FailoverOptions) -> HaLine {
    HaLine::Failover(FailoverPlan {
        rate: o.rate,
        attempt_timeout_s: o.attempt_timeout.as_secs_f64(),
        role_poll_ms: o.role_poll.as_secs_f64() * 1000.0,
        settle_timeout_s: o.settle_timeout.as_secs_f64(),
        run_id: o.run_id,
    })
}

/// A failover probe's ledger as its record holds it: its options, every attempt and role
/// reading (in time order). None: the record holds no failover probe.
pub struct Ledger {
    pub options: FailoverOptions,
    pub attempts: Vec<Attempt>,
    pub roles: Vec<RoleChange>,
}

impl Ledger {
    pub fn of(record: &Record) -> Option<Ledger> {
        Ledger::from_lines(&record.ha)
    }

    pub fn from_lines(lines: &[HaLine]) -> Option<Ledger> {
        let plan = lines.iter().find_map(|l| match l {
            HaLine::Failover(p) => Some(p),
            _ => None,
        })?;
        let options = FailoverOptions {
            rate: plan.rate,
            duration: Duration::ZERO,
            attempt_timeout: Duration::from_secs_f64(plan.attempt_timeout_s),
            role_poll: Duration::from_secs_f64(plan.role_poll_ms / 1000.0),
            settle_timeout: Duration::from_secs_f64(plan.settle_timeout_s),
            run_id: plan.run_id,
            events: None,
        };
        let mut ledger = Ledger { options, attempts: Vec::new(), roles: Vec::new() };
        for line in lines {
            match line {
                HaLine::Attempt(a) => ledger.attempts.push(a.clone()),
                HaLine::Role(r) => ledger.roles.push(r.clone()),
                _ => {}
            }
        }
        ledger.roles.sort_by_key(|c| c.at_us);
        Some(ledger)
    }

    /// The verdict on these attempts (outages, split brain), before the rows are looked up;
    /// `end_us`: when the probe stopped (a killed one: its last attempt's end).
    pub fn verdict(self, end_us: Option<u64>, timing: crate::model::ha_node::ProbeTiming) -> FailoverRecord {
        let last = self.attempts.last().map_or(0, |a| a.at_us + a.took_us);
        super::verdict::record(self.attempts, self.roles, &self.options, end_us.unwrap_or(last), timing)
    }
}

/// The ledger line that opens a lag probe's ledger.
pub fn lag_plan(o: &super::lag::LagOptions) -> HaLine {
    HaLine::Lag(crate::model::ha_ledger::LagPlan {
        rate: o.rate,
        poll_ms: o.poll.as_secs_f64() * 1000.0,
        drain_s: o.drain.as_secs_f64(),
        run_id: o.run_id,
    })
}

/// What is read before a probe without a workload starts: the node it writes to first, as
/// its result's target and server conditions (one that does not answer: said so).
pub struct Before {
    pub target: TargetRecord,
    pub server: ServerConditions,
}

pub fn before<D: crate::db::Database>(db: &D, url: &crate::db::TargetUrl) -> Before {
    use crate::db::Connection as _;
    let server = crate::local_runtime()
        .block_on(async {
            let mut conn = db.connect().await?;
            let info = conn.server_info().await?;
            crate::conditions::server(db, &mut conn, info).await
        })
        .unwrap_or_else(|e| ServerConditions {
            replication_role: format!("unknown: unreachable when the probe started ({e})"),
            ..Default::default()
        });
    let transport = db.transport();
    let target = TargetRecord {
        url: url.redacted(),
        driver: db.dialect(),
        transport: transport.kind,
        address: transport.address.clone(),
        tls: transport.tls,
        statements: crate::model::StatementMode::Prepared,
        nodes: Vec::new(),
    };
    Before { target, server }
}

/// A probe's result built from its record: the document, the files streamed beside it, and
/// their first write error.
pub type Built = (ResultDocument, Vec<crate::model::StreamedFile>, Option<String>);

/// A probe's record being made: where its events come from, and the sender the probe
/// thread takes.
pub struct Recording {
    pub streamer: super::stream::Streamer,
    pub path: std::path::PathBuf,
    pub events: std::sync::mpsc::Receiver<super::stream::ProbeEvent>,
    pub sender: super::stream::Events,
}

impl Recording {
    /// The record begins at `path` (its start document written there).
    pub fn begin(
        path: std::path::PathBuf,
        start: ProbeStart,
        clock: super::Clock,
    ) -> Result<Recording, super::ProbeError> {
        let streamer = super::stream::Streamer::begin(&path, record_start(start), clock.start)?;
        let (tx, events) = std::sync::mpsc::channel();
        Ok(Recording { streamer, path, events, sender: Some(tx) })
    }

    /// The probe stopped at `end`: its phase ends, `verdict` judges the record read back, and
    /// the result is `result::build` of the record (not yet finished); the streamed files,
    /// and their first write error, if any.
    pub fn finish(
        mut self,
        (clock, end): (super::Clock, std::time::Instant),
        faults: Option<crate::model::fault::FaultRecord>,
        verdict: impl FnOnce(&Record) -> Result<HaRecord, super::ProbeError>,
    ) -> Result<Built, super::ProbeError> {
        let measured_s = clock.us(end) as f64 / 1e6;
        let outcome = outcome(clock.started_at, measured_s, crate::runner::signal::interrupted());
        self.streamer.end_phase(end, outcome);
        let ha = verdict(&self.streamer.read_back()?)?;
        self.streamer.line(HaLine::Verdict(Box::new(ha)));
        let end = crate::model::record::RunEnd { faults, ..Default::default() };
        let (record, streamed, error) = self.streamer.finish(end);
        Ok((crate::result::build(&record)?, streamed, error))
    }
}

/// Every node as it describes itself when the probe starts (one that does not answer: said so).
pub async fn describe_all<D: crate::db::Database>(
    dbs: &[std::sync::Arc<D>],
    names: &[String],
    urls: &[String],
    timeout: Duration,
) -> Vec<crate::model::ha::NodeRecord> {
    let mut out = Vec::new();
    for ((db, name), url) in dbs.iter().zip(names).zip(urls) {
        out.push(super::describe(&**db, name, url.clone(), timeout.max(Duration::from_secs(5))).await);
    }
    out
}
