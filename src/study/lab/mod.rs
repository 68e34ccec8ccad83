//! The lab of `study run`: the study's directory opened or resumed, its runs measured in
//! plan order point by point (each point's dataset prepared first), sandboxes started when
//! first needed and removed when the study ends, every run's outcome saved as it ends (so a
//! killed study resumes from it). What a run needs from outside the study room (preparing
//! a dataset, measuring a cell, the live status, Ctrl-C) comes through [`Bench`].

mod open;
mod sandboxes;
#[cfg(test)]
mod tests;

use super::dir::{self, StudyDirError};
use super::plan::{cell_id, Cell};
use super::{StudyFile, StudyPlan};
use crate::model::study::{StudyDocument, StudyRun};
use crate::model::{ResultDocument, RunStatus};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// What the lab asks of whoever measures: the app with its connections and runner, or a
/// test's fake.
pub trait Bench {
    type Error: std::error::Error;
    /// The study has `runs` runs to do (the live status counts them).
    fn expect_runs(&mut self, runs: u32);
    /// The dataset of `cell`'s point on the first node of `site`; `fresh`: loaded afresh
    /// even when a workload file's tables are there (its repeats start from its rows).
    fn prepare(&mut self, cell: &Cell, site: &Site, fresh: bool) -> Result<(), Self::Error>;
    /// The cell's `repeat` measured at `site`, its result written to `out` (its record
    /// streamed beside it).
    fn measure(&mut self, cell: &Cell, repeat: u32, site: &Site, out: &Path) -> Result<ResultDocument, Self::Error>;
    /// A note for the person running the study.
    fn say(&self, line: &str);
    /// A note that must be seen even when notes are not.
    fn warn(&self, line: &str) {
        self.say(line)
    }
    /// A run begins: `line` said, and shown as what is being measured.
    fn run_starts(&self, line: &str) {
        self.say(line)
    }
    /// Ctrl-C stops the study between runs from here on (a run restores the default handler).
    fn catch_interrupts(&self);
    /// Whether the study was asked to stop.
    fn interrupted(&self) -> bool;
}

/// Where a cell runs: its target's nodes (the first takes the workload and holds its
/// dataset) and the sandbox its faults act on.
pub struct Site<'a> {
    pub nodes: &'a [String],
    pub sandbox: Option<&'a str>,
}

/// The study the lab runs.
pub struct Study<'a> {
    pub file: &'a StudyFile,
    pub plan: &'a StudyPlan,
    /// The study file, as the document names it.
    pub path: &'a Path,
    /// Each cell's run as the plan records it (its command line, no password).
    pub shown: Vec<String>,
    /// Cells whose workload changes its tables' row count, by id, and the words why.
    pub row_changes: BTreeMap<String, String>,
}

/// How `study run` was asked to run it.
pub struct LabOptions {
    pub dir: PathBuf,
    /// A new round of every run once the last is done.
    pub again: bool,
    /// Failed runs run again.
    pub retry_failed: bool,
}

/// The study's document as the lab left it, and whether it was interrupted.
pub struct Ran {
    pub doc: StudyDocument,
    pub interrupted: bool,
}

impl Ran {
    pub fn all_completed(&self) -> bool {
        self.doc.runs.iter().all(|r| r.status == Some(RunStatus::Completed))
    }
}

/// Every run still to do, in the plan's order; the sandboxes the study started are removed
/// before it returns.
pub fn run<B: Bench>(study: &Study, options: &LabOptions, bench: &mut B) -> Result<Ran, StudyDirError> {
    let mut doc = open::open(study, options, bench)?;
    bench.catch_interrupts();
    let mut lab = Lab {
        study,
        dir: &options.dir,
        bench,
        urls: BTreeMap::new(),
        faulted: BTreeSet::new(),
        started: vec![],
        built: BTreeMap::new(),
        ids: (0..study.plan.cells.len()).map(|n| (cell_id(n), n)).collect(),
    };
    lab.remove_leftovers();
    let outcome = lab.run_all(&mut doc);
    drop(lab); // the sandboxes go before anything else happens
    Ok(Ran { interrupted: outcome?, doc })
}

/// Why a cell's runs could not happen (its words go into the study document as the runs'
/// failure). Shared by every run of the cell's instance or point, hence counted.
#[derive(Debug, thiserror::Error)]
enum CellError<E: std::error::Error> {
    #[error("the sandbox did not start: {0}")]
    Sandbox(#[from] crate::sandbox::SandboxError),
    #[error("the sandbox has no node")]
    NoNode,
    #[error("the target has neither url nor sandbox")]
    NoTarget,
    #[error("preparing the dataset failed: {0}")]
    Prepare(E),
    #[error("{0}")]
    Run(E),
}

type Shared<T, E> = Result<T, Rc<CellError<E>>>;

struct Lab<'a, B: Bench> {
    study: &'a Study<'a>,
    dir: &'a Path,
    bench: &'a mut B,
    /// Per instance: its nodes' URLs (the primary first), or why it has none (a sandbox
    /// that did not start).
    urls: BTreeMap<usize, Shared<Vec<String>, B::Error>>,
    /// Instances a run's faults changed (a node killed, a replica promoted): started afresh
    /// before their next run.
    faulted: BTreeSet<usize>,
    /// Sandboxes this study started (removed when it ends).
    started: Vec<String>,
    /// Per instance: when this study built its sandbox (told apart from a rebuilt one).
    built: BTreeMap<usize, String>,
    /// Each cell's index in the plan, by id.
    ids: BTreeMap<String, usize>,
}

impl<'a, B: Bench> Lab<'a, B> {
    /// Every run still to do, point by point; true when interrupted.
    fn run_all(&mut self, doc: &mut StudyDocument) -> Result<bool, StudyDirError> {
        let todo = doc.runs.iter().filter(|r| r.status.is_none()).count() as u32;
        self.bench.expect_runs(todo);
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
            if self.run_point(doc, k..end)? {
                return Ok(true);
            }
            k = end;
        }
        Ok(false)
    }

    /// The plan's cell a run belongs to.
    fn cell(&self, run: &StudyRun) -> &'a Cell {
        &self.study.plan.cells[self.ids[&run.cell]]
    }

    /// One point's runs still to do, after preparing its dataset on each of its targets.
    fn run_point(&mut self, doc: &mut StudyDocument, runs: std::ops::Range<usize>) -> Result<bool, StudyDirError> {
        let todo: Vec<usize> = runs.filter(|&k| doc.runs[k].status.is_none()).collect();
        let mut ready: BTreeMap<usize, Shared<(), B::Error>> = BTreeMap::new();
        for &k in &todo {
            if self.bench.interrupted() {
                return Ok(true);
            }
            let cell = self.cell(&doc.runs[k]);
            if self.faulted.remove(&cell.instance) {
                self.restart(cell.instance);
                ready.remove(&cell.instance);
            }
            if let std::collections::btree_map::Entry::Vacant(slot) = ready.entry(cell.instance) {
                slot.insert(self.prepare(cell, self.study.row_changes.contains_key(&doc.runs[k].cell)));
            }
            if self.bench.interrupted() {
                return Ok(true);
            }
            let total = doc.runs.len();
            let run = &mut doc.runs[k];
            self.bench.run_starts(&format!(
                "study: run {} of {}: {} repeat {}",
                k + 1,
                total,
                self.name(cell),
                run.repeat
            ));
            let status = match &ready[&cell.instance] {
                Err(why) => {
                    run.failure = Some(why.to_string());
                    RunStatus::Failed
                }
                Ok(()) => self.measure(cell, run),
            };
            run.status = Some(status);
            self.bench.say(&format!("study: {} repeat {}: {}", self.name(cell), run.repeat, outcome_line(run)));
            dir::save(self.dir, doc)?;
            self.bench.catch_interrupts();
            if status == RunStatus::Interrupted {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// `template (set.x=0) oltp_read_write threads=8`.
    fn name(&self, cell: &Cell) -> String {
        self.study.plan.label(self.study.file, cell).join(" ").trim_end().to_string()
    }

    /// The point's dataset on the cell's target (see [`Bench::prepare`]).
    fn prepare(&mut self, cell: &Cell, fresh: bool) -> Shared<(), B::Error> {
        let nodes = self.nodes(cell.instance)?;
        self.bench.say(&format!("study: preparing {}", self.name(cell)));
        let sandbox = self.sandbox(cell.instance);
        let site = Site { nodes: &nodes, sandbox: sandbox.as_deref() };
        self.bench.prepare(cell, &site, fresh).map_err(|e| Rc::new(CellError::Prepare(e)))
    }

    /// One run: its status, its failure and history noted on `run`.
    fn measure(&mut self, cell: &Cell, run: &mut StudyRun) -> RunStatus {
        let out = self.dir.join(&run.file);
        let sandbox = self.sandbox(cell.instance);
        let measured = self.nodes(cell.instance).and_then(|nodes| {
            let site = Site { nodes: &nodes, sandbox: sandbox.as_deref() };
            self.bench.measure(cell, run.repeat, &site, &out).map_err(|e| Rc::new(CellError::Run(e)))
        });
        // A sandbox that started may have been changed by the run's faults, whatever the
        // run's outcome; one that never started has nothing to rebuild.
        let instance = &self.study.plan.instances[cell.instance];
        let started = self.urls.get(&cell.instance).is_some_and(|nodes| nodes.is_ok());
        if started && self.study.file.workloads[cell.workload].faults.contains_key(&instance.target) {
            self.faulted.insert(cell.instance);
        }
        match measured {
            Ok(doc) => {
                run.failure = doc.conditions.run.failure.clone();
                let built = self.built.get(&cell.instance).filter(|_| instance.sandbox);
                super::history::note_result(run, &doc, built.map(String::as_str));
                doc.conditions.run.status
            }
            Err(why) => {
                run.failure = Some(why.to_string());
                RunStatus::Failed
            }
        }
    }
}

/// `completed`, or `failed: why`.
fn outcome_line(run: &StudyRun) -> String {
    let status = run.status.map_or("not run", |s| s.name());
    match &run.failure {
        Some(why) => format!("{status}: {why}"),
        None => status.to_string(),
    }
}
