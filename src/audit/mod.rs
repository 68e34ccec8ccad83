//! The audit: what in a result's conditions makes its numbers misleading. Each rule reads
//! the result document only, so `fairbench audit RESULT.json` gives the same findings later.

mod rules;

use crate::model::ResultDocument;
pub use crate::model::{Finding, Severity};
use std::fmt::Write;

/// Every rule, most severe findings first.
pub fn audit(doc: &ResultDocument) -> Vec<Finding> {
    let mut findings = rules::all(doc);
    findings.sort_by(|a, b| b.severity.cmp(&a.severity).then_with(|| a.id.cmp(&b.id)));
    findings
}

/// The findings as the terminal shows them.
pub fn render(findings: &[Finding]) -> String {
    let mut o = String::new();
    if findings.is_empty() {
        let _ = writeln!(o, "Audit: nothing found.");
        return o;
    }
    let count = |s| findings.iter().filter(|f| f.severity == s).count();
    let _ = writeln!(
        o,
        "Audit: {} critical, {} warn, {} info",
        count(Severity::Critical),
        count(Severity::Warn),
        count(Severity::Info)
    );
    for f in findings {
        let evidence: Vec<String> = f
            .evidence
            .iter()
            .map(|(k, v)| match v {
                serde_json::Value::String(s) => format!("{k}={s}"),
                v => format!("{k}={v}"),
            })
            .collect();
        let _ = writeln!(o, "  [{}] {}: {}", f.severity.name(), f.id, f.title);
        let _ = writeln!(o, "      evidence: {}", evidence.join(", "));
        let _ = writeln!(o, "      advice: {}", f.advice);
    }
    o
}
