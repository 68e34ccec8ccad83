//! Findings (the audit's, a comparison's) as the terminal shows them.

use crate::model::{Finding, Severity};
use std::fmt::Write;

/// The findings as the terminal shows them.
pub fn findings(title: &str, findings: &[Finding]) -> String {
    let mut o = String::new();
    if findings.is_empty() {
        let _ = writeln!(o, "{title}: nothing found.");
        return o;
    }
    let count = |s| findings.iter().filter(|f| f.severity == s).count();
    let _ = writeln!(
        o,
        "{title}: {} critical, {} warn, {} info",
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
