//! What a study keeps of each run's history: which cells change their tables' row count
//! (resumed by running their round again from its first repeat), and per run the server
//! it ran on, the rows it started from and its throughput, read from its result.

use super::{run_args, Error};
use crate::model::study::{StartRows, StudyRun};
use crate::model::{Dialect, Metric, ResultDocument};
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
        // Inserts and deletes are the same in every dialect: the first the workload
        // compiles for says.
        let change = Dialect::ALL
            .iter()
            .find_map(|&d| crate::app::workload_plan(&args.workload, d).ok())
            .and_then(|w| w.program().row_change());
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

/// The server as it identifies itself: MySQL's `server_uuid`, MariaDB's `server_id` with
/// the host and port it reports; PostgreSQL its port and data directory (when this user
/// may read it) at the address dialled; SQLite its file.
fn server_identity(d: &ResultDocument) -> Option<String> {
    let vars = &d.conditions.server.variables;
    match d.target.driver {
        Dialect::Mysql if vars.is_empty() => None,
        Dialect::Mysql => {
            let (key, address) = crate::db::facts::mysql::identity(vars);
            Some(if key.contains(&address) { key } else { format!("{key} at {address}") })
        }
        Dialect::Postgres => {
            let port = vars.get("port")?.split_whitespace().next()?.to_string();
            let dir = vars.get("data_directory").map(|d| format!(", data_directory {d}")).unwrap_or_default();
            Some(format!("port {port} at {}{dir}", d.target.address))
        }
        Dialect::Sqlite => Some(format!("file {}", d.target.address)),
    }
}
