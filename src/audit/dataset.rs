//! Findings about the data a run drew from.

use super::{Finding, Severity};
use crate::model::ResultDocument;
use serde_json::json;

/// Tables holding more rows than the run drew ids from: the result's dataset is not the
/// one measured (typically `run` without the `--table-size` the tables were prepared with).
pub fn partial_table(d: &ResultDocument) -> Vec<Finding> {
    let Some(t) = &d.conditions.dataset.touched else { return vec![] };
    if t.partial_tables.is_empty() {
        return vec![];
    }
    let percent = t.share() * 100.0;
    vec![Finding {
        id: "partial-table".into(),
        severity: Severity::Warn,
        title: format!(
            "the run drew from {} of the {} rows present{} ({percent:.0}%): it measured a smaller dataset than the tables hold",
            t.drawn_rows,
            t.rows_present,
            if t.rows_exact { "" } else { " (estimated)" },
        ),
        evidence: [
            ("drawn_rows".to_string(), json!(t.drawn_rows)),
            ("rows_present".to_string(), json!(t.rows_present)),
            ("rows_exact".to_string(), json!(t.rows_exact)),
            ("drawn_from_bytes".to_string(), json!(t.bytes)),
            ("dataset_bytes".to_string(), json!(d.conditions.dataset.total_bytes)),
            ("tables".to_string(), json!(t.partial_tables)),
        ]
        .into_iter()
        .collect(),
        advice: "run with the size the tables were prepared with (--table-size, or the workload file's --set), or prepare them again at the size you mean to measure; the cache-fit judgement above is about the part drawn from".into(),
    }]
}
