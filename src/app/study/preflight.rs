//! Everything `study run` would fail on, checked before any sandbox starts (`study plan`
//! and `study run` alike): each cell's command line as fairbench parses it, its workload
//! resolved as its run resolves it (a built-in, or a workload file relative to the study
//! file) for its target's dialect, the claims' latency classes against what the workloads
//! record, the sandboxes' settings against their engines' own lists.

use super::{cell_request, check_command, Error};
use crate::db::url::TargetUrl;
use crate::model::Dialect;
use crate::study::check::{self, CheckError};
use crate::study::file::TargetSpec;
use crate::study::{StudyFile, StudyPlan};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// What the checks found besides refusals: the targets whose settings could not be
/// checked, and the cells whose workload changes its tables' row count (by id, with the
/// words why: `its workload inserts rows`), read off the workloads the checks compiled.
pub(super) struct Checked {
    pub unchecked: Vec<check::Unchecked>,
    pub row_changes: BTreeMap<String, String>,
}

/// Refuses the study with one line, or says what it could not check and which cells change
/// their tables.
pub(super) fn check(file: &StudyFile, plan: &StudyPlan, path: &Path) -> Result<Checked, Error> {
    let name = path.display().to_string();
    let mut classes: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut row_changes = BTreeMap::new();
    for (n, cell) in plan.cells.iter().enumerate() {
        let args = cell_request(file, cell, path, 1)?;
        check_command(file, plan, cell, path)?;
        let w = &file.workloads[cell.workload];
        let target = &file.targets[&plan.instances[cell.instance].target];
        let refused =
            |e: Error| CheckError::Workload { file: name.clone(), name: w.name.clone(), problem: e.to_string() };
        let workload = crate::app::workload_plan(&args.workload, dialect(target)).map_err(refused)?;
        args.plan(dialect(target), workload.clone()).map_err(|e| refused(e.into()))?;
        classes.entry(w.label().to_string()).or_default().extend(recorded_classes(&workload));
        if let Some(words) = workload.program().row_change() {
            row_changes.insert(crate::study::plan::cell_id(n), format!("its workload {words}"));
        }
    }
    check::claims(file, &name, &classes)?;
    Ok(Checked { unchecked: check::settings(file, &name)?, row_changes })
}

/// The latency classes a run of `workload` records: whole events, all statements, each
/// statement class it has, each statement and each kind of transaction by name.
fn recorded_classes(workload: &crate::plan::WorkloadPlan) -> Vec<String> {
    let statements = workload.statements();
    let mut out: Vec<String> = vec!["event".into(), "total".into()];
    out.extend(statements.iter().map(|s| s.class.name().to_string()));
    out.extend(statements.into_iter().map(|s| s.name));
    out.extend(workload.transactions());
    out
}

/// The SQL a target speaks: its URL's, or its sandbox engine's (MySQL when unknown: the
/// file's own checks have refused an engine fairbench does not have).
fn dialect(t: &TargetSpec) -> Dialect {
    let url = match (&t.url, &t.sandbox) {
        (Some(url), _) => Some(url.clone()),
        (None, Some(engine)) => crate::sandbox::engine(engine).ok().map(|e| e.url("127.0.0.1", 1)),
        (None, None) => None,
    };
    url.and_then(|u| TargetUrl::parse(&u, |_| None).ok()).map_or(Dialect::Mysql, |u| u.dialect)
}
