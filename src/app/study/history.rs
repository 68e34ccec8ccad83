//! What a study keeps of each run's history: which cells change their tables' row count
//! (resumed by running their round again from its first repeat), and per run the server
//! it ran on, the rows it started from and its throughput, read from its result.

use super::{run_args, Error};
use crate::model::study::{StartRows, StudyRun};
use crate::model::{Metric, ResultDocument, TransportKind};
use crate::study::plan::cell_id;
use crate::study::{StudyFile, StudyPlan};
use std::collections::BTreeMap;
use std::path::Path;

/// Cells whose workload changes its tables' row count, by id, with the words why
/// (`its workload inserts rows`).
pub(super) fn row_changes(file: &StudyFile, plan: &StudyPlan, path: &Path) -> Result<BTreeMap<String, String>, Error> {
    let mut out = BTreeMap::new();
    for (n, cell) in plan.cells.iter().enumerate() {
        let args = run_args(file, cell, path, 1, &[])?;
        let target = &file.targets[&plan.instances[cell.instance].target];
        let dialect = super::preflight::dialect(target);
        let change = crate::app::workload_plan(&args.workload, dialect).ok().and_then(|w| w.program().row_change());
        if let Some(words) = change {
            out.insert(cell_id(n), format!("its workload {words}"));
        }
    }
    Ok(out)
}

/// The run's server, rows at start and tps from its result; `built` (when this study
/// built the run's sandbox) goes with the server's own identity, so that a sandbox rebuilt
/// with the same port and server id still reads as another server.
pub(super) fn note_result(run: &mut StudyRun, d: &ResultDocument, built: Option<&str>) {
    run.server = server_identity(d).map(|id| match built {
        Some(at) => format!("{id}, sandbox built {at}"),
        None => id,
    });
    let tables = &d.conditions.dataset.tables_at_start;
    run.rows_at_start = (!tables.is_empty())
        .then(|| StartRows { rows: tables.iter().map(|t| t.rows).sum(), exact: tables.iter().all(|t| t.rows_exact) });
    run.tps = d.metric(&Metric::Tps);
}

/// The server as its result says it identified itself; an embedded database is its file.
/// A result written before identities were recorded names none (never the address dialled).
fn server_identity(d: &ResultDocument) -> Option<String> {
    match d.target.transport {
        TransportKind::Embedded => Some(format!("file {}", d.target.address)),
        _ => d.conditions.server.identity.clone(),
    }
}
