//! A run session in named phases: planned, its dataset checked (bench prepares it),
//! announced, measured phase by phase through the collector while its record streams, and
//! its record closed with what the run left.

use super::dataset::{check_before_run, check_dataset, BeforeRun};
use super::faults::FaultReader;
use super::{Failure, Observer};
use crate::collector::{Collector, Progress};
use crate::db::{Connection as _, Database, TargetUrl};
use crate::model::record::{Record, RecordLine, RecordStart, RunEnd};
use crate::model::RunRequest;
use crate::model::{ResultFileError, RunStatus, ServerConditions, StatementMode};
use crate::plan::RunPlan;
use crate::runner::{self, RunError};
use crate::timeline::TimelineFiles;
use crate::{conditions, result};
use std::path::PathBuf;
use std::sync::Arc;

/// One side of a run measured phase by phase: `ab` alternates two of them.
pub trait Phases<E> {
    /// The run's plan.
    fn plan(&self) -> &RunPlan;
    /// One more measured phase (after its warmup); false when it did not complete.
    fn measure_next(&mut self) -> Result<bool, E>;
    /// What the phases measured, as a closed record (its result not yet completed), and where it goes.
    fn finish(self: Box<Self>) -> Result<(result::Closed, PathBuf), E>;
}

/// A run planned, its dataset checked (bench prepares it) and announced, measured phase by
/// phase.
pub struct Session<'o, D: Database, O: Observer> {
    db: Arc<D>,
    /// What the run was asked to do, as the result keeps it.
    request: RunRequest,
    plan: RunPlan,
    thresholds: Vec<crate::model::Criterion>,
    out_path: PathBuf,
    before: BeforeRun,
    data_caches: std::collections::BTreeMap<String, u64>,
    progress: Box<dyn Progress + Send>,
    observer: &'o O,
    /// The streamed timeline beside the result, from the first measured phase on.
    timeline: Option<TimelineFiles>,
    /// `--metrics-listen`: serves until the session ends.
    _metrics_server: Option<crate::metrics::MetricsServer>,
    /// What the run has streamed so far (also on disk beside the result, unless `--out` is
    /// a device): the result is built from it.
    record: Option<Record>,
    /// The streamed files' first write error.
    stream_error: Option<String>,
    /// Some entries are in the record on disk only (the collector keeps none it streamed).
    entries_on_disk: bool,
    /// `--shard I/N`: where this shard meets the others.
    shard: Option<crate::shard::ShardRun<D>>,
    dialect: crate::model::Dialect,
    redacted_url: String,
    /// Several --target: every node's URL (connections go to the one taking writes).
    nodes: Vec<String>,
    /// `--fault`: performed during the (one) measured phase, then what it did.
    faults: Option<crate::sandbox::fault::Schedule>,
    performed: Option<crate::model::fault::FaultRecord>,
    statements: StatementMode,
}

impl<'o, D: Database, O: Observer> Session<'o, D, O> {
    pub fn open(
        db: Arc<D>,
        args: &RunRequest,
        targets: &[TargetUrl],
        bench: bool,
        out: Option<&std::path::Path>,
        observer: &'o O,
    ) -> Result<Self, O::Error> {
        let target = &targets[0];
        let workload = super::workload_plan::<O::Error>(&args.workload, target.dialect)?;
        let mut plan = args.plan(db.dialect(), workload)?;
        if args.rate == Some(0.0) {
            observer.say(format_args!("note: --rate 0 is sysbench's \"no rate limit\": a closed loop"));
        }
        let thresholds = args.thresholds()?;
        runner::limits::check_clients(db.blocking(), plan.threads).map_err(RunError::Limits)?;
        // Before any load: a result that cannot be written is found now, not after the run.
        let out_path = out.map(|p| p.to_path_buf()).unwrap_or_else(|| super::default_out(plan.workload.name()));
        super::check_out(&out_path, &plan)?;
        let faults = super::faults::for_run::<O::Error>(&args.faults, &plan, target)?;
        if bench {
            db.create_if_missing()?;
        }
        let mut shard = super::shard::join::<D, O::Error>(db.clone(), &mut plan, args)?;
        let before = match &mut shard {
            None => check_dataset(db.clone(), args, &plan, target, (bench, observer))?,
            Some(shard) => super::shard::dataset_checked(shard, bench, || {
                check_dataset(db.clone(), args, &plan, target, (bench, observer))
            })?,
        };
        check_before_run::<D, O::Error>(&*db, &plan, target)?;
        plan.server_figures = before.server.facts.as_ref().map(|f| f.sampled.clone()).unwrap_or_default();
        // The OS page cache holds data only on the server's own host: known when that is this one.
        let os_available = before.server.same_host_as_client.then(conditions::host::available_memory_bytes).flatten();
        let data_caches = db.data_caches(&before.server.variables, os_available);
        observer.say(format_args!("{}", announcement(&plan, &before.server, &db.transport(), args.target.ps)));
        let (metrics, metrics_server) = serve_metrics::<O>(args, &plan, target, observer)?;
        let progress = observer.progress(args, &plan, metrics);
        // Kept as run: its seed the one drawn, its URLs without passwords.
        let mut request = args.redacted(crate::db::redact::redact_str);
        request.workload.rand_seed = plan.rand_seed;
        request.bench = bench;
        Ok(Session {
            request,
            shard,
            _metrics_server: metrics_server,
            record: None,
            stream_error: None,
            entries_on_disk: false,
            db,
            plan,
            thresholds,
            out_path,
            before,
            data_caches,
            progress,
            observer,
            timeline: None,
            dialect: target.dialect,
            redacted_url: target.redacted(),
            faults,
            performed: None,
            nodes: match targets.len() {
                1 => Vec::new(),
                _ => targets.iter().map(TargetUrl::redacted).collect(),
            },
            statements: if args.target.ps { StatementMode::Prepared } else { StatementMode::Text },
        })
    }
}

/// `--metrics-listen`: the live metrics and the server that serves them while the run lasts.
type Metrics = (Option<Arc<crate::metrics::LiveMetrics>>, Option<crate::metrics::MetricsServer>);

fn serve_metrics<O: Observer>(
    args: &RunRequest,
    plan: &RunPlan,
    target: &TargetUrl,
    observer: &O,
) -> Result<Metrics, O::Error> {
    let Some(addr) = &args.metrics_listen else { return Ok((None, None)) };
    // Shards share their key: Prometheus adds their figures up by run.
    let labels = crate::metrics::RunLabels {
        run: plan.shard.as_ref().map_or_else(|| crate::model::rfc3339(std::time::SystemTime::now()), |s| s.key.clone()),
        workload: plan.workload.name().to_string(),
        target: target.redacted(),
        shard: plan.shard.as_ref().map_or(String::new(), |s| format!("{}/{}", s.index, s.count)),
    };
    let metrics = Arc::new(crate::metrics::LiveMetrics::new(&labels, plan.threads, plan.loop_model.is_open()));
    let server = crate::metrics::MetricsServer::start(addr, metrics.clone())?;
    observer.say(format_args!("metrics: http://{}/metrics (OpenMetrics, while the run lasts)", server.address()));
    Ok((Some(metrics), Some(server)))
}

impl<D: Database, O: Observer> Session<'_, D, O> {
    /// Where the run went and what was known before it.
    fn setting(&self) -> result::Setting<'_> {
        result::Setting {
            plan: &self.plan,
            dialect: self.dialect,
            redacted_url: self.redacted_url.clone(),
            nodes: self.nodes.clone(),
            transport: self.db.transport(),
            begin_sql: [self.db.begin_sql(false), self.db.begin_sql(true)],
            server: self.before.server.clone(),
            host: conditions::host::read(),
            command_line: crate::db::redact::redact_args(std::env::args()),
            request: Some(self.request.clone()),
            tables_at_start: self.before.tables.clone(),
            data_caches: self.data_caches.clone(),
            foreign_tables: self.before.foreign.clone(),
            statements: self.statements,
        }
    }

    /// The record's start: the result as known when measuring starts (status `running`,
    /// the conditions, no figures) and what building the result needs beyond it.
    fn record_start(&self) -> RecordStart {
        let plan = &self.plan;
        RecordStart {
            schema: crate::model::record::RECORD_SCHEMA.into(),
            version: crate::model::record::RECORD_VERSION,
            started: std::time::SystemTime::now(),
            document: result::start(self.setting()),
            statements: crate::recorder::record::recorded_statements(&plan.workload.statements()),
            transactions: plan.workload.transactions(),
            open_loop: plan.loop_model.is_open(),
            percentiles: plan.percentiles.clone(),
            kept_per_phase: crate::collector::MAX_KEPT / plan.repeats.max(1) as usize,
            entry_histograms: plan.shard.is_some(),
            thresholds: self.thresholds.iter().map(|t| t.text.clone()).collect(),
        }
    }

    /// The record begins: in memory, and on disk (unless `--out` is a device) beside the
    /// start document, which stands in place of the result until the run ends: a run killed
    /// before it wrote its result leaves both, and `recover` builds the result from the record.
    fn begin_record(&mut self) -> Result<(), O::Error> {
        let start = self.record_start();
        // A device or pipe (--out /dev/null) gets no files beside it.
        let device = std::fs::metadata(&self.out_path).is_ok_and(|m| !m.is_file());
        if !device {
            let planned = self.plan.planned_ticks().map(|t| t * self.plan.repeats.max(1) as u64);
            let write_error = |source| ResultFileError::Write { path: self.out_path.clone(), source };
            let mut files = TimelineFiles::create(&self.out_path, planned).map_err(write_error)?;
            let line = RecordLine::Start(Box::new(start.clone()));
            files.write_record(&line).map_err(|e| write_error(e.source))?;
            result::complete(result::Basis::Start(&start), result::Ending::default())?.write(&self.out_path)?;
            self.timeline = Some(files);
        }
        self.record = Some(Record::new(start));
        Ok(())
    }

    /// A line to the record, in memory and streamed.
    fn record_line(&mut self, line: RecordLine) {
        if let Some(files) = &mut self.timeline {
            if let Err(e) = files.write_record(&line) {
                self.stream_error.get_or_insert(e.to_string());
            }
        }
        if let Some(record) = &mut self.record {
            // Lines in the order a record takes them: refusal is a bug.
            record.push(line).expect("record lines in order");
        }
    }
}

impl<D: Database, O: Observer> Phases<O::Error> for Session<'_, D, O> {
    fn plan(&self) -> &RunPlan {
        &self.plan
    }

    fn measure_next(&mut self) -> Result<bool, O::Error> {
        if self.record.is_none() {
            self.begin_record()?;
        }
        let phase = self.record.as_ref().map_or(0, |r| r.phases.len()) as u32 + 1;
        // After a write error, later phases are kept in memory (the record may end torn).
        let mut stream = self.timeline.as_mut().filter(|_| self.stream_error.is_none());
        if let Some(files) = stream.as_deref_mut().filter(|_| self.plan.repeats > 1) {
            files.begin_repeat(phase);
        }
        self.observer.part_starts(self.plan.warmup_s, self.plan.stop.time);
        let rendezvous: &mut dyn runner::Rendezvous = match &mut self.shard {
            Some(shard) => shard,
            None => &mut runner::Alone,
        };
        let faults = self.faults.take();
        let warn = |line: std::fmt::Arguments<'_>| self.observer.warn(line);
        let progress = &mut *self.progress;
        let measured =
            measure::<D, O::Error>(self.db.clone(), &self.plan, progress, stream, rendezvous, (faults, &warn));
        self.observer.part_ends();
        let (outcome, collected, performed) = measured?;
        self.performed = self.performed.take().or(performed);
        let completed = outcome.status == RunStatus::Completed;
        if let Some(e) = collected.stream_error {
            self.stream_error.get_or_insert(e);
        }
        self.entries_on_disk |= collected.streamed > 0;
        // The entries are streamed as they close; in memory they join the record here.
        if let Some(record) = &mut self.record {
            record.phases.push(crate::model::record::RecordedPhase { entries: collected.entries, end: None });
        }
        self.record_line(RecordLine::PhaseEnd(Box::new(outcome)));
        Ok(completed)
    }

    fn finish(self: Box<Self>) -> Result<(result::Closed, PathBuf), O::Error> {
        let mut s = *self;
        let end = s.read_end();
        s.record_line(RecordLine::End(Box::new(end)));
        if let Some(e) = &s.stream_error {
            s.observer
                .warn(format_args!("the streamed files stopped at a write error ({e}); the result has every entry"));
        }
        let streamed = match s.timeline.as_mut().map(TimelineFiles::finish) {
            Some(Ok(files)) => files,
            Some(Err(e)) => {
                s.observer.warn(format_args!("the streamed files could not be read back to name them ({e})"));
                Vec::new()
            }
            None => Vec::new(),
        };
        let mut record = s.record.take().ok_or(result::BuildError::NothingMeasured)?;
        if s.entries_on_disk {
            let path = crate::timeline::record_path_for(&s.out_path);
            record = crate::timeline::record::with_streamed_entries(record, &path)?;
        }
        Ok((result::Closed { record, streamed }, s.out_path))
    }
}

impl<D: Database, O: Observer> Session<'_, D, O> {
    /// What is read after the last phase: the dataset (a server that went away leaves it
    /// unknown), the workload's checks, the faults performed, the shard's record.
    fn read_end(&mut self) -> RunEnd {
        let (db, plan) = (self.db.clone(), &self.plan);
        let phases = self.record.as_ref().map_or(&[][..], |r| &r.phases[..]);
        let failed = phases.iter().filter_map(|p| p.end.as_ref()).any(|o| o.status == RunStatus::Failed);
        let limit = if failed { runner::AFTER_FAILURE_TIMEOUT } else { plan.admin_timeout };
        let (table_names, declared) = (plan.workload.table_names(), plan.workload.declared_rows());
        // Shards: the dataset's end is read once for the run, by shard 0.
        let reads_tables = plan.shard.as_ref().is_none_or(|p| p.leads());
        let tables_at_end = match reads_tables {
            true => runner::bounded(&crate::local_runtime(), limit, async {
                let mut conn = db.connect().await?;
                conn.table_sizes(&table_names, declared).await
            })
            .unwrap_or_default(),
            false => Vec::new(),
        };
        RunEnd {
            tables_at_end,
            checks: runner::checks::run(&*db, &plan.workload.program().checks, limit),
            faults: self.performed.take(),
            shard: self.shard.take().map(crate::shard::ShardRun::finish),
            shards: Vec::new(),
        }
    }
}

/// One measured phase (after its warmup) through a fresh collector, whose intervals and
/// windows `progress` reads on a thread of its own.
fn measure<D: Database, E: Failure>(
    db: Arc<D>,
    plan: &RunPlan,
    progress: &mut (dyn Progress + Send),
    stream: Option<&mut TimelineFiles>,
    rendezvous: &mut dyn runner::Rendezvous,
    (faults, warn): (Option<crate::sandbox::fault::Schedule>, &(dyn Fn(std::fmt::Arguments<'_>) + Sync)),
) -> Result<Measured, E> {
    let statements = plan.workload.statements();
    let transactions = plan.workload.transactions();
    let (publish, published) = std::sync::mpsc::channel();
    let mut collector =
        Collector::new(&statements, &transactions, plan.loop_model.is_open(), plan.threads, plan.report_interval)
            .window_percentiles(&plan.percentiles)
            .keep_at_most(crate::collector::MAX_KEPT / plan.repeats.max(1) as usize, plan.planned_ticks())
            .publish_to(publish, progress.wants_seconds());
    if let Some(files) = stream {
        collector = collector.stream_to(files);
    }
    let mut reader = FaultReader::new(progress, faults, warn);
    std::thread::scope(|scope| {
        let reading = std::thread::Builder::new()
            .name("fairbench-progress".into())
            .spawn_scoped(scope, move || {
                crate::collector::published::read(published, &mut reader);
                reader.finish()
            })
            .map_err(RunError::Thread)?;
        let outcome = runner::run_with(db, plan, &mut collector, rendezvous);
        // The collector's end publishes the last window, then the reader has read all.
        let collected = collector.finish();
        let performed = reading.join().unwrap_or(None);
        Ok((outcome?, collected, performed))
    })
}

/// What one measured phase leaves: the runner's outcome, what the collector gathered, the
/// faults performed.
type Measured = (runner::RunOutcome, crate::collector::Collected, Option<crate::model::fault::FaultRecord>);

/// The line that says what is about to be measured.
fn announcement(plan: &RunPlan, server: &ServerConditions, transport: &crate::model::Transport, ps: bool) -> String {
    let stop = match (plan.stop.time, plan.stop.events) {
        (Some(t), Some(e)) => format!("{} s or {e} events", t.as_secs()),
        (Some(t), None) => format!("{} s", t.as_secs()),
        (None, Some(e)) => format!("{e} events"),
        (None, None) => "until Ctrl-C".into(),
    };
    // A shard runs its part of the run's clients: say which part of how many.
    let clients = match &plan.shard {
        Some(s) => format!("shard {} of {}, {} of {} clients", s.index, s.count, s.threads, s.total_threads),
        None => crate::model::plural(plan.threads as u64, "client"),
    };
    format!(
        "fairbench {}: {} on {} {} via {transport}{}; {clients}, {stop}{}; distribution {}",
        env!("CARGO_PKG_VERSION"),
        plan.workload.name(),
        server.product,
        server.version,
        if ps { "" } else { ", plain-text queries (--ps=off)" },
        if plan.repeats > 1 { format!(", {} repeats", plan.repeats) } else { String::new() },
        plan.distribution.describe()
    )
}
