//! What a study's cell is judged on, for the claims on a result's figures (claims.rs) and on a probe's
//! (probe_claims.rs) alike.

use crate::model::study::StudyCell;
use crate::model::ResultDocument;

/// What a cell has to be judged on.
pub struct CellResult<'a> {
    /// Its completed repeats as one result (none: no run completed).
    pub doc: Option<&'a ResultDocument>,
    /// Runs that did not complete, and why: `2 of 3 runs failed: ...`.
    pub trouble: Option<String>,
    /// A probe cell's completed runs, each its own result with its repeat (a probe's
    /// figures are one per run, not merged).
    pub runs: &'a [(u32, ResultDocument)],
}

/// A cell that cannot be judged: no result, or only some of its runs.
pub fn missing(cell: &StudyCell, r: &CellResult) -> Option<String> {
    match (r.doc, &r.trouble) {
        (None, Some(why)) => Some(format!("cell {} has no completed run: {why}", cell.id)),
        (None, None) => Some(format!("cell {} has not run yet", cell.id)),
        _ => None,
    }
}
