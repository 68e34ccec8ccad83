//! The audit: what in a result's conditions makes its numbers misleading. Each rule reads
//! the result document only, so `fairbench audit RESULT.json` gives the same findings later.

mod counters;
mod dataset;
mod rules;
mod stalls;
mod trend;

use crate::model::ResultDocument;
pub use crate::model::{Finding, Severity};

/// Every rule, most severe findings first.
pub fn audit(doc: &ResultDocument) -> Vec<Finding> {
    let mut findings = rules::all(doc);
    findings.sort_by(|a, b| b.severity.cmp(&a.severity).then_with(|| a.id.cmp(&b.id)));
    findings
}
