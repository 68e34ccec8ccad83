//! prepare and cleanup: the commands that create, load and drop fairbench's tables, and
//! the loading a run or a sweep does before it measures.

use super::{own_tables, quiet, say, shard, Error};
use crate::cli::CleanupArgs;
use crate::db::{Database, TargetUrl};
use crate::measure::hints;
use crate::model::PrepareRequest;
use crate::plan::WorkloadPlan;
use crate::prepare::{self, PrepareError, PreparePlan};
use crate::workload;
use std::process::ExitCode;
use std::sync::Arc;

/// How prepare loads, whatever the workload.
pub(super) struct LoadSettings {
    pub(super) threads: u32,
    pub(super) seed: u64,
    pub(super) distribution: crate::random::DistributionSpec,
    pub(super) overwrite: bool,
    /// Load through the driver's bulk path (else sysbench's INSERTs).
    pub(super) bulk: bool,
}

/// Whether prepare loads through the driver's bulk path: not when asked for INSERTs, nor
/// with --ps off (proxies and poolers may not pass COPY or LOCAL INFILE).
pub(super) fn bulk(args: &PrepareRequest) -> bool {
    !args.insert_only && args.target.ps
}

impl LoadSettings {
    /// As a run loads its dataset: its prepare threads (else its clients), seed and
    /// distribution; `overwrite` replaces fairbench's own tables.
    pub(super) fn for_run(
        args: &crate::model::RunRequest,
        plan: &crate::plan::RunPlan,
        overwrite: bool,
    ) -> LoadSettings {
        LoadSettings {
            threads: args.prepare_threads.unwrap_or(plan.threads).max(1),
            seed: plan.rand_seed,
            distribution: plan.distribution.clone(),
            overwrite,
            bulk: args.target.ps,
        }
    }

    /// What prepare creates and loads for `workload`, with these settings.
    pub(super) fn tables(&self, workload: &WorkloadPlan) -> prepare::Tables {
        match workload {
            WorkloadPlan::Sysbench { workload, oltp, .. } => prepare::Tables::Sbtest(PreparePlan {
                workload: *workload,
                oltp: oltp.clone(),
                distribution: self.distribution.clone(),
                threads: self.threads,
                seed: self.seed,
                overwrite: self.overwrite,
                bulk: self.bulk,
            }),
            WorkloadPlan::File(f) => prepare::Tables::File(
                Arc::new(f.program.clone()),
                prepare::tables::LoadOptions {
                    threads: self.threads,
                    seed: self.seed,
                    distribution: self.distribution.clone(),
                    overwrite: self.overwrite,
                    bulk: self.bulk,
                },
            ),
        }
    }
}

pub(super) fn prepare_cmd<D: Database>(
    db: Arc<D>,
    args: &PrepareRequest,
    target: &TargetUrl,
) -> Result<ExitCode, Error> {
    let workload = super::workload_plan(&args.workload, target.dialect)?;
    if let Some(o) = workload.oltp() {
        o.validate()?;
    }
    let settings = LoadSettings {
        threads: args.threads.max(1),
        seed: args.workload.seed(),
        distribution: args.workload.distribution()?,
        overwrite: args.overwrite,
        bulk: bulk(args),
    };
    db.create_if_missing()?;
    if args.shard.shard.is_some() {
        shard::prepare(db, args, &workload, settings)?;
    } else {
        do_prepare(db, &workload, &settings, target)?;
    }
    Ok(ExitCode::SUCCESS)
}

pub(super) fn do_prepare<D: Database>(
    db: Arc<D>,
    workload: &WorkloadPlan,
    settings: &LoadSettings,
    target: &TargetUrl,
) -> Result<(), Error> {
    let transport = db.transport();
    let tables = workload.table_names();
    let mut meter = LoadMeter::new();
    let mut announced = false;
    let mut progress = |done, total| {
        // Announced once the tables are checked, so a refusal stays a single line.
        if !announced {
            announced = true;
            meter.suspend(|| {
                say(format_args!(
                    "Preparing {} ({}) for {} on {} ({transport})",
                    crate::model::plural(tables.len() as u64, "table"),
                    tables.join(", "),
                    workload.name(),
                    target.redacted(),
                ));
                if let WorkloadPlan::Sysbench { workload, oltp, .. } = workload {
                    if workload.rows_to_load(oltp) == 0 && oltp.table_size > 0 {
                        say(format_args!(
                            "note: {} with --auto-inc=off prepares EMPTY tables, as sysbench does",
                            workload.name()
                        ));
                    }
                }
            });
        }
        meter.update(done, total);
    };
    let outcome = match settings.tables(workload) {
        prepare::Tables::Sbtest(plan) => prepare::prepare(db.clone(), &plan, &mut progress),
        prepare::Tables::File(program, opts) => prepare::tables::prepare(db.clone(), &program, &opts, &mut progress),
    };
    meter.finish();
    // A table already there: the two commands that go on from here, as they would be typed.
    let outcome = outcome.map_err(|e| match e {
        PrepareError::Exists { table } => PrepareError::Refused(format!(
            "table {table} already exists in {}: drop fairbench's tables with `{}`, or rebuild them with `{}`",
            target.redacted(),
            hints::cleanup(workload, target),
            hints::prepare(workload, target, true)
        )),
        e => e,
    })?;
    say(format_args!(
        "Prepared {}, {} rows in {:.1} s ({:.0} rows/s, {})",
        crate::model::plural(outcome.tables as u64, "table"),
        outcome.rows,
        outcome.seconds,
        outcome.rows as f64 / outcome.seconds.max(1e-9),
        crate::model::plural(outcome.loaders as u64, "loader")
    ));
    if let WorkloadPlan::File(f) = workload {
        prepared_checks(&*db, &f.program.prepare_checks)?;
    }
    Ok(())
}

/// The file's checks of the initial population, right after loading: each printed; any
/// that fails fails prepare.
pub(super) fn prepared_checks<D: Database>(db: &D, checks: &[crate::workload::program::Check]) -> Result<(), Error> {
    let results = crate::runner::checks::run(db, checks, std::time::Duration::from_secs(600));
    for c in &results {
        let verdict = if c.passed { "passed" } else { "FAILED" };
        say(format_args!("check {}: {verdict} ({})", c.name, c.detail()));
    }
    match results.iter().filter(|c| !c.passed).count() {
        0 => Ok(()),
        n => Err(PrepareError::Refused(format!(
            "{} of the initial population failed: the loaded data is not what the file declares",
            crate::model::plural(n as u64, "check")
        ))
        .into()),
    }
}

/// Prepare's progress: a bar as wide as the terminal with whole-number rates and the phase;
/// piped (CI logs), a plain line at least every 10 s; nothing with --quiet.
pub(super) struct LoadMeter {
    bar: Option<indicatif::ProgressBar>,
    start: std::time::Instant,
    last_line: std::time::Instant,
    /// The plain line has said that loading is over.
    loaded_said: bool,
}

impl LoadMeter {
    /// Every 10 s at most when not on a terminal.
    const EVERY: std::time::Duration = std::time::Duration::from_secs(10);

    pub(super) fn new() -> Self {
        use std::io::IsTerminal;
        let now = std::time::Instant::now();
        let bar = (!quiet() && std::io::stderr().is_terminal()).then(|| {
            let bar = indicatif::ProgressBar::new(0);
            bar.set_style(
                indicatif::ProgressStyle::with_template("{wide_bar} {human_pos}/{human_len} rows {msg}")
                    .expect("valid template"),
            );
            bar
        });
        LoadMeter { bar, start: now, last_line: now, loaded_said: false }
    }

    pub(super) fn suspend(&self, f: impl FnOnce()) {
        match &self.bar {
            Some(bar) => bar.suspend(f),
            None => f(),
        }
    }

    /// After every row is in, the loaders build secondary indexes and analyze the tables.
    pub(super) fn update(&mut self, done: u64, total: u64) {
        let secs = self.start.elapsed().as_secs_f64().max(1e-9);
        let loaded = total > 0 && done >= total;
        let phase = if loaded { "building indexes, analyzing" } else { "loading" };
        let rate = done as f64 / secs;
        match &self.bar {
            Some(bar) => {
                bar.set_length(total);
                bar.set_position(done);
                bar.set_message(format!("{} rows/s, {phase}", crate::report::thousands(rate)));
            }
            None if !quiet() && (self.last_line.elapsed() >= Self::EVERY || loaded && !self.loaded_said) => {
                self.last_line = std::time::Instant::now();
                self.loaded_said |= loaded;
                let pct = if total > 0 { done as f64 * 100.0 / total as f64 } else { 100.0 };
                eprintln!(
                    "prepare: {}/{} rows ({pct:.0}%), {} rows/s, {phase}, {:.0} s",
                    crate::report::thousands(done as f64),
                    crate::report::thousands(total as f64),
                    crate::report::thousands(rate),
                    secs
                );
            }
            None => {}
        }
    }

    pub(super) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

pub(super) fn cleanup_cmd<D: Database>(db: Arc<D>, args: &CleanupArgs, target: &TargetUrl) -> Result<ExitCode, Error> {
    let out = match args.workload.as_deref().filter(|w| workload::file::is_file(w)) {
        Some(path) => {
            let f = workload::file::load(std::path::Path::new(path), target.dialect, &[])?;
            prepare::tables::cleanup(db.clone(), &f.program)?
        }
        None => prepare::cleanup(db.clone(), args.tables)?,
    };
    let own = own_tables::cleanup_all(db.clone())?;
    for t in out.dropped.iter().chain(&own.dropped) {
        say(format_args!("Dropped table {t}"));
    }
    if out.dropped.is_empty() && own.dropped.is_empty() {
        say(format_args!("No table created by fairbench to drop"));
    }
    for t in &out.foreign {
        eprintln!("warning: left {t} alone: fairbench did not create it");
    }
    for (t, why) in &own.in_use {
        eprintln!("note: left {t}: {why}");
    }
    if let Some(note) = db.compact_if_empty()? {
        say(format_args!("{note}"));
    }
    Ok(ExitCode::SUCCESS)
}
