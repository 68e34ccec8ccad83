//! What a study keeps of each run's history: the server it ran on, the rows it started
//! from and its throughput, read from its result. (Which cells change their tables' row
//! count, and so rerun a round from its first repeat, the pre-flight checks read.)

use crate::model::study::{StartRows, StudyRun};
use crate::model::{Metric, ResultDocument, TransportKind};

/// The run's server, rows at start and tps from its result; `built` (when this study
/// built the run's sandbox) goes with the server's own identity, so that a sandbox rebuilt
/// with the same port and server id still reads as another server.
pub fn note_result(run: &mut StudyRun, d: &ResultDocument, built: Option<&str>) {
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
