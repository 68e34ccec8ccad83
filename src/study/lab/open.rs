//! The study's directory opened: the document it holds when it plans the same cells (each
//! run's state settled against its result file), else a new one; a new round added
//! (`--again`); the rounds that must run again from their first repeat cleared.

use super::{Bench, LabOptions, Study};
use crate::model::study::{StudyDocument, StudyRun, STUDY_SCHEMA_NAME, STUDY_SCHEMA_VERSION};
use crate::model::{ResultDocument, RunStatus};
use crate::study::dir::{self, StudyDirError};
use crate::study::plan::cell_id;
use crate::study::resume;
use std::collections::BTreeMap;
use std::path::Path;

/// The document the runs go into, saved, with what is left to do said.
pub(super) fn open<B: Bench>(study: &Study, options: &LabOptions, bench: &B) -> Result<StudyDocument, StudyDirError> {
    let dir = &options.dir;
    if options.again && dir::load(dir)?.is_none() {
        return Err(StudyDirError::NoStudy(dir.clone()));
    }
    std::fs::create_dir_all(dir.join("runs")).map_err(|e| StudyDirError::Write(dir.clone(), e))?;
    let mut doc = document(study, dir, options.retry_failed)?;
    if options.again {
        again(dir, &mut doc, study.path, bench)?;
    }
    rerun_partial(dir, &mut doc, &study.row_changes, bench)?;
    dir::save(dir, &doc)?;
    let todo = doc.runs.iter().filter(|r| r.status.is_none()).count();
    bench.say(&format!("study: {} of {} runs to do in {}", todo, doc.runs.len(), dir.display()));
    Ok(doc)
}

/// The study's document: the one in `dir` when it plans the same cells (its runs' states
/// checked against their files), else a new one. A file whose cells changed is refused.
fn document(study: &Study, dir: &Path, retry_failed: bool) -> Result<StudyDocument, StudyDirError> {
    let (file, plan) = (study.file, study.plan);
    let record = plan.record(file, study.shown.clone());
    let mut doc = match dir::load(dir)? {
        Some(old) => {
            let changes = resume::changes(&old.plan, &record);
            if !changes.is_empty() {
                let (dir, file) = (dir.to_path_buf(), study.path.display().to_string());
                return Err(StudyDirError::Changed { dir, file, changes: changes.join("; ") });
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
    doc.file = study.path.display().to_string();
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
fn again<B: Bench>(dir: &Path, doc: &mut StudyDocument, path: &Path, bench: &B) -> Result<(), StudyDirError> {
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
    bench.say(&format!("study: round {} added: every cell's repeats once more, from repeat {}", round + 1, last + 1));
    Ok(())
}

/// Rounds of cells that change their rows and ran in part: their runs cleared, to run
/// again from the round's first repeat (the document records each, the report says it).
fn rerun_partial<B: Bench>(
    dir: &Path,
    doc: &mut StudyDocument,
    changes: &BTreeMap<String, String>,
    bench: &B,
) -> Result<(), StudyDirError> {
    let files: BTreeMap<(String, u32), String> =
        doc.runs.iter().map(|r| ((r.cell.clone(), r.repeat), r.file.clone())).collect();
    for rerun in resume::rerun_partial(&mut doc.runs, |cell| changes.get(cell).cloned()) {
        for repeat in &rerun.cleared {
            dir::clear_run(dir, &files[&(rerun.cell.clone(), *repeat)])?;
        }
        bench.say(&format!("study: {} round {}: {}", rerun.cell, rerun.round, rerun.describe()));
        doc.reruns.push(rerun);
    }
    Ok(())
}
