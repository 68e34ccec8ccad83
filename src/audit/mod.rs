//! The audit: what in a result's conditions makes its numbers misleading. Each rule reads
//! the result document only, so `fairbench audit RESULT.json` gives the same findings later.

mod client;
mod counters;
mod dataset;
mod ha;
mod rules;
mod shards;
mod stalls;
mod tpcc;
mod trend;

use crate::model::ResultDocument;
pub use crate::model::{Finding, Severity};

/// Every rule, most severe findings first, each id once.
pub fn audit(doc: &ResultDocument) -> Vec<Finding> {
    let general = match doc.ha.as_ref().is_some_and(|h| h.load.is_none()) {
        // A probe alone: its writes are a measuring instrument, not a load whose throughput
        // is the claim, so only the rules about the setup and the run's completeness apply.
        true => rules::for_probes(doc),
        false => rules::all(doc).into_iter().chain(client::all(doc)).chain(tpcc::all(doc)).collect(),
    };
    let general = ha::fold_durability(general, ha::all(doc));
    let mut findings = merge_same_ids(general.into_iter().chain(shards::all(doc)));
    findings.sort_by(|a, b| b.severity.cmp(&a.severity).then_with(|| a.id.cmp(&b.id)));
    findings
}

/// One finding per id: a rule that found two problems (a run both short and not settled)
/// says both in one finding, at the more severe of their severities, with all the evidence.
fn merge_same_ids(findings: impl Iterator<Item = Finding>) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    for f in findings {
        let Some(first) = out.iter_mut().find(|o| o.id == f.id) else {
            out.push(f);
            continue;
        };
        // The more severe problem is named first.
        first.title = match f.severity > first.severity {
            true => format!("{}; and {}", f.title, first.title),
            false => format!("{}; and {}", first.title, f.title),
        };
        first.severity = first.severity.max(f.severity);
        if !first.advice.contains(&f.advice) {
            first.advice = format!("{}; {}", first.advice, f.advice);
        }
        for (key, value) in f.evidence {
            // The same name with another value: both kept, the second under a numbered name.
            match first.evidence.get(&key) {
                Some(v) if *v != value => {
                    first.evidence.insert(format!("{key}_2"), value);
                }
                _ => {
                    first.evidence.insert(key, value);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
