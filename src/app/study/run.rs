//! `fairbench study run FILE`: the plan's runs in order, each a result and record in
//! DIR/runs, the study document saved after every run (so a killed study resumes from it),
//! sandboxes started once for the whole study and removed at its end.

use super::{cell_line, cell_request, conclude, history, measurement, Error, Measurement, Place};
use crate::app::live::Job;
use crate::app::run::measure_run;
use crate::app::{connect_options, do_prepare, follow, say, targets, workload_plan, LoadSettings};
use crate::cli::StudyRunFlags;
use crate::db::Database;
use crate::model::study::{StudyDocument, StudyRun, STUDY_SCHEMA_NAME, STUDY_SCHEMA_VERSION};
use crate::model::{ResultDocument, RunStatus};
use crate::runner::signal;
use crate::study::dir::{self, StudyDirError};
use crate::study::plan::{cell_id, Cell};
use crate::study::{resume, StudyFile, StudyPlan};
use crate::with_database;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::rc::Rc;

pub(super) fn study_run(args: &StudyRunFlags) -> Result<ExitCode, Error> {
    let file = StudyFile::load(&args.file)?;
    let plan = StudyPlan::of(&file);
    // A URL target's note is the plan's: nothing was to be set on it.
    let checked = super::preflight::check(&file, &plan, &args.file)?;
    for note in checked.unchecked.iter().filter(|n| !matches!(n, crate::study::check::Unchecked::Url { .. })) {
        say(format_args!("study: not checked: {note}"));
    }
    let shown = plan.cells.iter().map(|cell| shown_run(&file, &plan, cell, &args.file)).collect();
    let dir = args.out.clone().unwrap_or_else(|| default_dir(&args.file));
    if args.again && dir::load(&dir)?.is_none() {
        return Err(StudyDirError::NoStudy(dir).into());
    }
    std::fs::create_dir_all(dir.join("runs")).map_err(|e| StudyDirError::Write(dir.clone(), e))?;
    let mut doc = open(&dir, &file, &plan, shown, &args.file, args.retry_failed)?;
    if args.again {
        again(&dir, &mut doc, &args.file)?;
    }
    rerun_partial(&dir, &mut doc, &checked.row_changes)?;
    dir::save(&dir, &doc)?;
    let todo = doc.runs.iter().filter(|r| r.status.is_none()).count();
    say(format_args!("study: {} of {} runs to do in {}", todo, doc.runs.len(), dir.display()));
    signal::install();
    let mut lab = Lab {
        file: &file,
        plan: &plan,
        path: &args.file,
        dir: &dir,
        urls: BTreeMap::new(),
        faulted: Default::default(),
        started: vec![],
        built: BTreeMap::new(),
        ids: (0..plan.cells.len()).map(|n| (cell_id(n), n)).collect(),
        changes: checked.row_changes,
    };
    lab.remove_leftovers();
    let outcome = lab.run_all(&mut doc);
    drop(lab); // the sandboxes go before the report prints
    let interrupted = outcome?;
    let cells = conclude::conclude(&dir, &mut doc)?;
    dir::save(&dir, &doc)?;
    let page = dir.join("report.html");
    crate::model::file::write_atomic(&page, &conclude::html(&dir, &doc, &cells))?;
    print!("{}", crate::report::Report::render(&crate::report::StudyText, &doc, &Default::default()));
    say(format_args!("Study saved to {}; its report: {}", dir::document_path(&dir).display(), page.display()));
    let failed = doc.runs.iter().any(|r| r.status != Some(RunStatus::Completed));
    Ok(match (interrupted, failed) {
        (true, _) => ExitCode::from(130),
        (false, true) => ExitCode::from(1),
        (false, false) => ExitCode::SUCCESS,
    })
}

/// `fairbench-results/study-<the file's stem>`: the same file resumes in the same place.
fn default_dir(file: &Path) -> PathBuf {
    let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "study".into());
    PathBuf::from("fairbench-results").join(format!("study-{stem}"))
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

/// The study's document: the one in `dir` when it plans the same cells (its runs' states
/// checked against their files), else a new one. A file whose cells changed is refused.
fn open(
    dir: &Path,
    file: &StudyFile,
    plan: &StudyPlan,
    shown: Vec<String>,
    path: &Path,
    retry_failed: bool,
) -> Result<StudyDocument, Error> {
    let record = plan.record(file, shown);
    let mut doc = match dir::load(dir)? {
        Some(old) => {
            let changes = resume::changes(&old.plan, &record);
            if !changes.is_empty() {
                let (dir, file) = (dir.to_path_buf(), path.display().to_string());
                return Err(StudyDirError::Changed { dir, file, changes: changes.join("; ") }.into());
            }
            old
        }
        None => StudyDocument {
            schema: STUDY_SCHEMA_NAME.into(),
            schema_version: STUDY_SCHEMA_VERSION,
            fairbench_version: env!("CARGO_PKG_VERSION").into(),
            title: String::new(),
            question: None,
            seed: None,
            file: String::new(),
            runs: plan
                .runs
                .iter()
                .map(|&(c, repeat)| StudyRun::planned(cell_id(c), repeat, 1, dir::run_file(&cell_id(c), repeat)))
                .collect(),
            reruns: vec![],
            plan: record,
            cells: vec![],
            prices: BTreeMap::new(),
            declared: vec![],
            claims: vec![],
            conditions: vec![],
            cliffs: vec![],
            noise: vec![],
        },
    };
    doc.schema_version = STUDY_SCHEMA_VERSION; // what it holds from here on is this version's
    doc.title = file.study.title.clone();
    doc.question = file.study.question.clone();
    doc.file = path.display().to_string();
    doc.declared = file.claims.iter().map(|c| c.definition()).collect();
    doc.prices = file.prices.clone();
    doc.seed = file.seed.as_ref().map(|s| s.record());
    for run in &mut doc.runs {
        settle(dir, run, retry_failed)?;
    }
    Ok(doc)
}

/// A run's state from its result file: completed or failed runs are kept (failed ones run
/// again with --retry-failed); anything else (killed, interrupted, never started) is
/// cleared to run again from nothing.
fn settle(dir: &Path, run: &mut StudyRun, retry_failed: bool) -> Result<(), StudyDirError> {
    let on_disk = ResultDocument::read(&dir.join(&run.file)).ok();
    let status = on_disk.as_ref().map(|d| d.conditions.run.status);
    let failed_without_result = on_disk.is_none() && run.status == Some(RunStatus::Failed);
    match status {
        Some(RunStatus::Completed) => (run.status, run.failure) = (Some(RunStatus::Completed), None),
        Some(RunStatus::Failed) if !retry_failed => {
            let failure = on_disk.and_then(|d| d.conditions.run.failure.clone());
            (run.status, run.failure) = (Some(RunStatus::Failed), failure);
        }
        None if failed_without_result && !retry_failed => {}
        _ => {
            dir::clear_run(dir, &run.file)?;
            *run = StudyRun::planned(run.cell.clone(), run.repeat, run.round, run.file.clone());
        }
    }
    Ok(())
}

/// A new round of every planned run, numbered on from the last repeat; refused while the
/// last round has runs to do (a resume without --again finishes it).
fn again(dir: &Path, doc: &mut StudyDocument, path: &Path) -> Result<(), StudyDirError> {
    let round = doc.runs.iter().map(|r| r.round).max().unwrap_or(1);
    let todo = doc.runs.iter().filter(|r| r.status.is_none()).count();
    if todo > 0 {
        let (dir, file) = (dir.to_path_buf(), path.display().to_string());
        return Err(StudyDirError::Unfinished { dir, file, round, todo });
    }
    let last = doc.runs.iter().map(|r| r.repeat).max().unwrap_or(0);
    let first_round: Vec<(String, u32)> =
        doc.runs.iter().filter(|r| r.round == 1).map(|r| (r.cell.clone(), r.repeat)).collect();
    for (cell, repeat) in first_round {
        let repeat = repeat + last;
        let file = dir::run_file(&cell, repeat);
        doc.runs.push(StudyRun::planned(cell, repeat, round + 1, file));
    }
    say(format_args!("study: round {} added: every cell's repeats once more, from repeat {}", round + 1, last + 1));
    Ok(())
}

/// Rounds of cells that change their rows and ran in part: their runs cleared, to run
/// again from the round's first repeat (the document records each, the report says it).
fn rerun_partial(dir: &Path, doc: &mut StudyDocument, changes: &BTreeMap<String, String>) -> Result<(), Error> {
    let files: BTreeMap<(String, u32), String> =
        doc.runs.iter().map(|r| ((r.cell.clone(), r.repeat), r.file.clone())).collect();
    for rerun in resume::rerun_partial(&mut doc.runs, |cell| changes.get(cell).cloned()) {
        for repeat in &rerun.cleared {
            dir::clear_run(dir, &files[&(rerun.cell.clone(), *repeat)])?;
        }
        say(format_args!("study: {} round {}: {}", rerun.cell, rerun.round, rerun.describe()));
        doc.reruns.push(rerun);
    }
    Ok(())
}

/// Why a cell's runs could not happen (its words go into the study document as the runs'
/// failure). Shared by every run of the cell's instance or point, hence counted.
#[derive(Debug, thiserror::Error)]
enum CellError {
    #[error("the sandbox did not start: {0}")]
    Sandbox(#[from] crate::sandbox::SandboxError),
    #[error("the sandbox has no node")]
    NoNode,
    #[error("the target has neither url nor sandbox")]
    NoTarget,
    #[error("preparing the dataset failed: {0}")]
    Prepare(Error),
    #[error(transparent)]
    Run(Error),
}

type Shared<T> = Result<T, Rc<CellError>>;

/// Where the runs happen: the targets' URLs (sandboxes started when first needed).
struct Lab<'a> {
    file: &'a StudyFile,
    plan: &'a StudyPlan,
    path: &'a Path,
    dir: &'a Path,
    /// Per instance: its nodes' URLs (the primary first), or why it has none (a sandbox
    /// that did not start).
    urls: BTreeMap<usize, Shared<Vec<String>>>,
    /// Instances a run's faults changed (a node killed, a replica promoted): started afresh
    /// before their next run.
    faulted: std::collections::BTreeSet<usize>,
    /// Sandboxes this study started (removed when it ends).
    started: Vec<String>,
    /// Per instance: when this study built its sandbox (told apart from a rebuilt one).
    built: BTreeMap<usize, String>,
    /// Each cell's index in the plan, by id.
    ids: BTreeMap<String, usize>,
    /// Cells whose workload changes its tables' row count, and the words why.
    changes: BTreeMap<String, String>,
}

impl Drop for Lab<'_> {
    fn drop(&mut self) {
        self.started.drain(..).for_each(|name| remove_sandbox(&name));
    }
}

fn remove_sandbox(name: &str) {
    if let Err(e) = crate::sandbox::down(name, &mut |line| say(format_args!("study: {line}"))) {
        eprintln!("warning: sandbox {name} was not removed: {e}");
    }
}

impl<'a> Lab<'a> {
    /// Every run still to do, point by point; true when interrupted.
    fn run_all(&mut self, doc: &mut StudyDocument) -> Result<bool, Error> {
        let job = Job::new(0);
        let todo = doc.runs.iter().filter(|r| r.status.is_none()).count() as u32;
        job.expect_parts(todo);
        let mut k = 0;
        while k < doc.runs.len() {
            // A point: the consecutive runs of one workload at one point of the matrix (in
            // one round).
            let first = self.cell(&doc.runs[k]);
            let end = (k..doc.runs.len())
                .find(|&j| {
                    let c = self.cell(&doc.runs[j]);
                    c.workload != first.workload || c.point != first.point || doc.runs[j].round != doc.runs[k].round
                })
                .unwrap_or(doc.runs.len());
            if self.run_point(doc, k..end, &job)? {
                return Ok(true);
            }
            k = end;
        }
        Ok(false)
    }

    /// The plan's cell a run belongs to.
    fn cell(&self, run: &StudyRun) -> &'a Cell {
        &self.plan.cells[self.ids[&run.cell]]
    }

    /// One point's runs still to do, after preparing its dataset on each of its targets.
    fn run_point(&mut self, doc: &mut StudyDocument, runs: std::ops::Range<usize>, job: &Job) -> Result<bool, Error> {
        let todo: Vec<usize> = runs.filter(|&k| doc.runs[k].status.is_none()).collect();
        let mut ready: BTreeMap<usize, Shared<()>> = BTreeMap::new();
        for &k in &todo {
            if signal::interrupted() {
                return Ok(true);
            }
            let cell = self.cell(&doc.runs[k]);
            if self.faulted.remove(&cell.instance) {
                self.restart(cell.instance);
                ready.remove(&cell.instance);
            }
            if !ready.contains_key(&cell.instance) {
                let prepared = self.prepare(cell, self.changes.contains_key(&doc.runs[k].cell));
                ready.insert(cell.instance, prepared);
            }
            if signal::interrupted() {
                return Ok(true);
            }
            let total = doc.runs.len();
            let run = &mut doc.runs[k];
            job.point(format_args!("study: run {} of {}: {} repeat {}", k + 1, total, self.name(cell), run.repeat));
            let status = match &ready[&cell.instance] {
                Err(why) => {
                    run.failure = Some(why.to_string());
                    RunStatus::Failed
                }
                Ok(()) => self.measure(cell, run, job),
            };
            run.status = Some(status);
            say(format_args!("study: {} repeat {}: {}", self.name(cell), run.repeat, outcome_line(run)));
            dir::save(self.dir, doc)?;
            signal::install(); // the run restored the default handler: a Ctrl-C between runs stops the study
            if status == RunStatus::Interrupted {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// `template (set.x=0) oltp_read_write threads=8`.
    fn name(&self, cell: &Cell) -> String {
        self.plan.label(self.file, cell).join(" ").trim_end().to_string()
    }

    /// The instance's nodes: a URL target's own, or its sandbox's, started on first use.
    fn nodes(&mut self, instance: usize) -> Shared<Vec<String>> {
        if let Some(known) = self.urls.get(&instance) {
            return known.clone();
        }
        let i = &self.plan.instances[instance];
        let t = &self.file.targets[&i.target];
        let nodes = match (&t.url, &t.sandbox) {
            (Some(url), _) => Ok(std::iter::once(url).chain(&t.replica_urls).cloned().collect()),
            (None, Some(engine)) => self.start_sandbox(instance, engine),
            (None, None) => Err(CellError::NoTarget),
        }
        .map_err(Rc::new);
        self.urls.insert(instance, nodes.clone());
        nodes
    }

    /// A sandbox a run's faults changed, removed, to be started afresh when next needed.
    fn restart(&mut self, instance: usize) {
        let name = sandbox_name(self.dir, instance);
        say(format_args!("study: removing sandbox {name}: the last run's faults changed it; it starts afresh"));
        remove_sandbox(&name);
        self.started.retain(|n| *n != name);
        self.urls.remove(&instance);
    }

    /// Sandboxes a killed run of this study left (named after its directory): removed, so
    /// that each is started afresh when needed and none outlives the study.
    fn remove_leftovers(&self) {
        for instance in (0..self.plan.instances.len()).filter(|&i| self.plan.instances[i].sandbox) {
            let name = sandbox_name(self.dir, instance);
            if crate::sandbox::ls(Some(&name)).is_ok_and(|nodes| !nodes.is_empty()) {
                say(format_args!("study: removing sandbox {name}, left by a study that did not end"));
                remove_sandbox(&name);
            }
        }
    }

    fn start_sandbox(&mut self, instance: usize, engine: &str) -> Result<Vec<String>, CellError> {
        let name = sandbox_name(self.dir, instance);
        let mut note = |line: String| say(format_args!("study: {line}"));
        let spec = &self.file.targets[&self.plan.instances[instance].target];
        let opts = crate::sandbox::UpOptions {
            name: name.clone(),
            engine: engine.to_string(),
            manager: spec.manager.clone(),
            replicas: spec.replica_count(),
            settings: self.plan.settings(self.file, instance),
            port: None,
            proxy: false,
            keep_failed: false,
        };
        let nodes = crate::sandbox::up(&opts, &mut note).inspect_err(|_| {
            let target = &self.plan.instances[instance].target;
            say(format_args!("study: target {target}'s sandbox did not start: its runs are recorded as failed; the other targets' runs go on, each kept on its own (`study run --retry-failed` runs these again)"));
        })?;
        self.started.push(name);
        self.built.insert(instance, crate::model::rfc3339(std::time::SystemTime::now()));
        match nodes.is_empty() {
            true => Err(CellError::NoNode),
            false => Ok(nodes.into_iter().map(|n| n.url).collect()),
        }
    }

    /// The cell's run (its `repeat`) on its first node, as `run` takes it.
    fn args(&mut self, cell: &Cell, repeat: u32) -> Shared<crate::model::RunRequest> {
        let nodes = self.nodes(cell.instance)?;
        let mut run = cell_request(self.file, cell, self.path, repeat).map_err(|e| Rc::new(CellError::Run(e)))?;
        run.target.targets = vec![nodes[0].clone()];
        Ok(run)
    }

    /// The cell's measurement for its `repeat`, with its nodes, sandbox and result file.
    fn measurement(&mut self, cell: &Cell, repeat: u32, out: &Path) -> Shared<Measurement> {
        let nodes = self.nodes(cell.instance)?;
        let sandbox = self.plan.instances[cell.instance].sandbox.then(|| sandbox_name(self.dir, cell.instance));
        let place = Place { nodes: &nodes, sandbox: sandbox.as_deref(), out: Some(out) };
        measurement(self.file, self.plan, cell, self.path, repeat, &place).map_err(|e| Rc::new(CellError::Run(e)))
    }

    /// The point's dataset on the cell's target: a built-in workload's tables created and
    /// loaded afresh (fairbench's own tables only); a workload file's loaded when missing,
    /// by its run, or afresh when it changes its row count (`fresh`: its repeats start
    /// from the rows it declares).
    fn prepare(&mut self, cell: &Cell, fresh: bool) -> Shared<()> {
        let args = self.args(cell, 1)?;
        say(format_args!("study: preparing {}", self.name(cell)));
        prepare_dataset(&args, fresh).map_err(|e| Rc::new(CellError::Prepare(e)))
    }

    /// One run: its status, its failure noted on `run`.
    fn measure(&mut self, cell: &Cell, run: &mut StudyRun, job: &Job) -> RunStatus {
        let out = self.dir.join(&run.file);
        let measured = self
            .measurement(cell, run.repeat, &out)
            .and_then(|m| measure_to_file(m, &out, job).map_err(|e| Rc::new(CellError::Run(e))));
        // A sandbox that started may have been changed by the run's faults, whatever the
        // run's outcome; one that never started has nothing to rebuild.
        let target = &self.plan.instances[cell.instance].target;
        let started = self.urls.get(&cell.instance).is_some_and(|nodes| nodes.is_ok());
        if started && self.file.workloads[cell.workload].faults.contains_key(target) {
            self.faulted.insert(cell.instance);
        }
        match measured {
            Ok(doc) => {
                run.failure = doc.conditions.run.failure.clone();
                let built = self.built.get(&cell.instance).filter(|_| self.plan.instances[cell.instance].sandbox);
                history::note_result(run, &doc, built.map(String::as_str));
                doc.conditions.run.status
            }
            Err(why) => {
                run.failure = Some(why.to_string());
                RunStatus::Failed
            }
        }
    }
}

/// A sandbox's name from the study's directory (so a resumed study finds its own) and the
/// instance: `study-1a2b3c4d-2`.
fn sandbox_name(dir: &Path, instance: usize) -> String {
    let full = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let hash = full
        .display()
        .to_string()
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3));
    format!("study-{:08x}-{instance}", hash as u32)
}

fn outcome_line(run: &StudyRun) -> String {
    let status = run.status.map_or("not run", |s| s.name());
    match &run.failure {
        Some(why) => format!("{status}: {why}"),
        None => status.to_string(),
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
        let (doc, _) = measure_run(follow(db, &urls, &options)?, &args, &urls, true, Some(out), job)?;
        doc.write(out)?;
        Ok(doc)
    })
}
