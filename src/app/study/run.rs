//! `fairbench study run FILE`: the file checked, its lab run (src/study/lab: the runs in
//! order, resumed, sandboxes started and removed), the study concluded, saved and printed.
//! The lab measures through [`AppBench`]: the app's connections, runner and live status.

use super::{cell_line, cell_request, conclude, measurement, Error, Measurement, Place};
use crate::app::live::Job;
use crate::app::{connect_options, do_prepare, follow, say, targets, workload_plan, LoadSettings};
use crate::cli::StudyRunFlags;
use crate::db::Database;
use crate::measure::measure_run;
use crate::model::ResultDocument;
use crate::runner::signal;
use crate::study::dir;
use crate::study::lab::{self, Bench, LabOptions, Site, Study};
use crate::study::plan::Cell;
use crate::study::{StudyFile, StudyPlan};
use crate::with_database;
use std::path::Path;
use std::process::ExitCode;

pub(super) fn study_run(args: &StudyRunFlags) -> Result<ExitCode, Error> {
    let file = StudyFile::load(&args.file)?;
    let plan = StudyPlan::of(&file);
    // A URL target's note is the plan's: nothing was to be set on it.
    let checked = super::preflight::check(&file, &plan, &args.file)?;
    for note in checked.unchecked.iter().filter(|n| !matches!(n, crate::study::check::Unchecked::Url { .. })) {
        say(format_args!("study: not checked: {note}"));
    }
    let shown = plan.cells.iter().map(|cell| shown_run(&file, &plan, cell, &args.file)).collect();
    let study = Study { file: &file, plan: &plan, path: &args.file, shown, row_changes: checked.row_changes };
    let options = LabOptions {
        dir: args.out.clone().unwrap_or_else(|| dir::default_dir(&args.file)),
        again: args.again,
        retry_failed: args.retry_failed,
    };
    let mut bench = AppBench { file: &file, plan: &plan, path: &args.file, job: Job::new(0) };
    let ran = lab::run(&study, &options, &mut bench)?;
    let (interrupted, completed) = (ran.interrupted, ran.all_completed());
    let (dir, mut doc) = (&options.dir, ran.doc);
    let cells = conclude::conclude(dir, &mut doc)?;
    dir::save(dir, &doc)?;
    let page = dir.join("report.html");
    crate::model::file::write_atomic(&page, &conclude::html(dir, &doc, &cells))?;
    print!("{}", crate::report::Report::render(&crate::report::StudyText, &doc, &Default::default()));
    say(format_args!("Study saved to {}; its report: {}", dir::document_path(dir).display(), page.display()));
    Ok(match (interrupted, completed) {
        (true, _) => ExitCode::from(130),
        (false, false) => ExitCode::from(1),
        (false, true) => ExitCode::SUCCESS,
    })
}

/// A cell's run as the plan records it: the command line, its nodes named without a
/// password (a sandbox's by its engine: its settings are the cell's own).
fn shown_run(file: &StudyFile, plan: &StudyPlan, cell: &Cell, path: &Path) -> String {
    let target = &file.targets[&plan.instances[cell.instance].target];
    let nodes: Vec<String> = match (&target.url, &target.sandbox) {
        (Some(url), _) => {
            std::iter::once(url).chain(&target.replica_urls).map(|u| crate::db::redact::redact_str(u)).collect()
        }
        (None, Some(engine)) => target
            .node_names()
            .iter()
            .enumerate()
            .map(|(i, n)| if i == 0 { format!("({engine} sandbox)") } else { format!("({engine} sandbox {n})") })
            .collect(),
        (None, None) => vec![String::new()],
    };
    let place = Place { nodes: &nodes, sandbox: Some("(its sandbox)"), out: None };
    cell_line(file, plan, cell, path, 1, &place).join(" ")
}

/// The lab's bench: cells become requests (or probes) and are measured by the app's runner,
/// with the live status line over the whole study.
struct AppBench<'a> {
    file: &'a StudyFile,
    plan: &'a StudyPlan,
    path: &'a Path,
    job: Job,
}

impl Bench for AppBench<'_> {
    type Error = Error;

    fn expect_runs(&mut self, runs: u32) {
        self.job.expect_parts(runs);
    }

    /// A built-in workload's tables created and loaded afresh (fairbench's own tables
    /// only); a workload file's loaded when missing, by its run, or afresh when `fresh`.
    fn prepare(&mut self, cell: &Cell, site: &Site, fresh: bool) -> Result<(), Error> {
        let mut run = cell_request(self.file, cell, self.path, 1)?;
        run.target.targets = vec![site.nodes.first().cloned().unwrap_or_default()];
        prepare_dataset(&run, fresh)
    }

    fn measure(&mut self, cell: &Cell, repeat: u32, site: &Site, out: &Path) -> Result<ResultDocument, Error> {
        let place = Place { nodes: site.nodes, sandbox: site.sandbox, out: Some(out) };
        let measurement = measurement(self.file, self.plan, cell, self.path, repeat, &place)?;
        measure_to_file(measurement, out, &self.job)
    }

    fn say(&self, line: &str) {
        say(format_args!("{line}"));
    }

    fn warn(&self, line: &str) {
        eprintln!("{line}");
    }

    fn run_starts(&self, line: &str) {
        self.job.point(format_args!("{line}"));
    }

    fn catch_interrupts(&self) {
        signal::install();
    }

    fn interrupted(&self) -> bool {
        signal::interrupted()
    }
}

fn prepare_dataset(args: &crate::model::RunRequest, fresh: bool) -> Result<(), Error> {
    let urls = targets(&args.target)?;
    let options = connect_options(&args.target);
    with_database!(&urls[0], &options, |db| {
        db.create_if_missing()?;
        let workload = workload_plan(&args.workload, urls[0].dialect)?;
        if crate::workload::file::is_file(&args.workload.workload) && !fresh {
            return Ok(());
        }
        let plan = args.plan(db.dialect(), workload.clone())?;
        let settings = LoadSettings::for_run(&args, &plan, true);
        do_prepare(db, &workload, &settings, &urls[0])
    })
}

/// The run (or probe) measured and its result written to `out` (its record streamed
/// beside it).
fn measure_to_file(measurement: Measurement, out: &Path, job: &Job) -> Result<ResultDocument, Error> {
    let args = match measurement {
        Measurement::Probe(p) => {
            let probed = crate::app::probe::probe(&p)?;
            probed.doc.write(out)?;
            return Ok(probed.doc);
        }
        Measurement::Run(args) => args,
    };
    let urls = targets(&args.target)?;
    let options = connect_options(&args.target);
    with_database!(&urls[0], &options, |db| {
        let doc = measure_run(follow(db, &urls, &options)?, &args, &urls, true, Some(out), job)?.0.complete()?;
        doc.write(out)?;
        Ok(doc)
    })
}
