//! What `study plan` refuses beyond the file's own shape (src/study/file.rs), before any
//! sandbox starts: server settings the target's engine does not know (asked of its own
//! server program), and claims on a latency class no workload they cover measures. The
//! workloads themselves are resolved by the command (src/app/study), which hands over the
//! classes each one measures.

use super::file::{setting_axis, StudyFile};
use crate::model::criterion::Criterion;
use crate::model::Metric;
use std::collections::{BTreeMap, BTreeSet};

/// Why `study run` would fail, or judge a claim on nothing.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error("{file}: workload {name:?}: {problem}")]
    Workload { file: String, name: String, problem: String },
    #[error("{file}: {entry}: {problem}")]
    Setting { file: String, entry: String, problem: String },
    #[error("{file}: claim {says:?}: {problem}")]
    Claim { file: String, says: String, problem: String },
}

/// A target whose settings were not checked, and why.
#[derive(Debug, thiserror::Error)]
pub enum Unchecked {
    /// fairbench sets nothing on a server it did not start.
    #[error("target {target:?} is a URL: its server's settings are its own, read when it runs, not checked here")]
    Url { target: String },
    /// The engine's server program did not list its settings (not installed, say).
    #[error("target {target:?}: its settings were not checked against {engine}'s own list: {why}")]
    NoList { target: String, engine: String, why: crate::sandbox::SandboxError },
}

/// Each sandbox target's settings (its `set` and the matrix's `set.NAME` axes), checked
/// against its engine's own list. Returns the targets whose settings could not be checked.
pub fn settings(file: &StudyFile, path: &str) -> Result<Vec<Unchecked>, CheckError> {
    let mut notes = Vec::new();
    let axes: Vec<(String, String)> = file
        .matrix
        .iter()
        .filter_map(|(axis, values)| Some((axis, setting_axis(axis)?, values)))
        .flat_map(|(axis, name, values)| {
            values
                .iter()
                .map(move |v| (format!("matrix axis {axis:?}"), format!("{name}={}", super::file::value_text(v))))
        })
        .collect();
    for (target, t) in &file.targets {
        let Some(engine) = t.sandbox.as_deref() else {
            notes.push(Unchecked::Url { target: target.clone() });
            continue;
        };
        let own = t.set.iter().map(|s| (format!("target {target:?}: set {s:?}"), s.clone()));
        let entries: Vec<(String, String)> = own.chain(axes.iter().cloned()).collect();
        if entries.is_empty() {
            continue;
        }
        let bad =
            |entry: &str, problem: String| CheckError::Setting { file: path.into(), entry: entry.into(), problem };
        for (entry, setting) in &entries {
            crate::sandbox::parse_settings(std::slice::from_ref(setting)).map_err(|e| bad(entry, e.to_string()))?;
        }
        let all: Vec<String> = entries.iter().map(|(_, s)| s.clone()).collect();
        let known =
            match crate::sandbox::engine_managed(engine, t.manager.as_deref()).and_then(|e| e.known_settings(&all)) {
                Ok(known) => known,
                Err(why) => {
                    notes.push(Unchecked::NoList { target: target.clone(), engine: engine.into(), why });
                    continue;
                }
            };
        for (entry, setting) in &entries {
            let name = setting.split_once('=').map_or(setting.as_str(), |(n, _)| n.trim());
            if !known.knows(name) {
                let guess = known.nearest(name).map(|n| format!("did you mean {n}? ")).unwrap_or_default();
                return Err(bad(
                    entry,
                    format!(
                        "{engine} has no setting {name:?}: {guess}(`{}` lists the {} it knows)",
                        known.listed_by,
                        known.len()
                    ),
                ));
            }
        }
    }
    Ok(notes)
}

/// Every claim on a latency class (`commit.p99`) names one that a workload it covers
/// measures; `classes` holds, per workload label, the classes its runs record.
pub fn claims(file: &StudyFile, path: &str, classes: &BTreeMap<String, BTreeSet<String>>) -> Result<(), CheckError> {
    for c in &file.claims {
        let bad = |problem: String| CheckError::Claim { file: path.into(), says: c.says.clone(), problem };
        let criterion = Criterion::claim(&c.check).map_err(|e| bad(e.to_string()))?;
        let Metric::Latency { class, .. } = &criterion.metric else { continue };
        let wanted =
            |label: &str| c.only.get("workload").is_none_or(|v| v.iter().any(|w| super::file::value_text(w) == label));
        let covered: Vec<(&String, &BTreeSet<String>)> = classes.iter().filter(|(l, _)| wanted(l)).collect();
        if covered.iter().any(|(_, known)| known.contains(class)) {
            continue;
        }
        let known: BTreeSet<&String> = covered.iter().flat_map(|(_, k)| k.iter()).collect();
        let guess = crate::model::nearest(class, known.iter().map(|k| k.as_str()))
            .map(|k| format!("did you mean {k}? "))
            .unwrap_or_default();
        let names: Vec<&str> = covered.iter().map(|(l, _)| l.as_str()).collect();
        let listed: Vec<&str> = known.iter().map(|k| k.as_str()).collect();
        return Err(bad(format!(
            "check {:?}: no workload it covers ({}) records latency class {class:?}: {guess}(they record {})",
            c.check,
            names.join(", "),
            listed.join(", ")
        )));
    }
    Ok(())
}
