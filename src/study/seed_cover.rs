//! Whether each point a `[seed]` says is reproduced is covered by the plan: a target,
//! workload or axis value some cell has, a claim that judges at least one cell (or pair).
//! The file's check (file.rs) knows the names exist; this knows they reach a cell.

use super::claims::{self, CellResult};
use super::file::StudyFile;
use super::plan::StudyPlan;
use super::seed::By;

/// `point: by ENTRY covers no cell` for each `by` entry that reaches nothing.
pub fn uncovered(file: &StudyFile) -> Vec<String> {
    let Some(seed) = &file.seed else { return Vec::new() };
    let plan = StudyPlan::of(file);
    let cells = plan.record(file, vec![String::new(); plan.cells.len()]).cells;
    let has = |axis: &str, value: &str| cells.iter().any(|c| c.value(axis) == Some(value));
    let none: Vec<CellResult> = cells.iter().map(|_| CellResult { doc: None, trouble: None, runs: &[] }).collect();
    let mut out = Vec::new();
    for r in &seed.reproduced {
        for by in &r.by {
            let covered = match By::parse(by) {
                Some(By::Target(t)) => has("target", t),
                Some(By::Workload(w)) => has("workload", w),
                Some(By::Axis(a, v)) => has(a, v),
                Some(By::Claim(id)) => file.claims.iter().filter(|c| c.id.as_deref() == Some(id)).any(|c| {
                    let judged = claims::judge(&[c.definition()], &cells, &none);
                    judged.iter().any(|j| !j.checks.is_empty())
                }),
                None => false,
            };
            if !covered {
                out.push(format!("{:?}: by {by} covers no cell", r.point));
            }
        }
    }
    out
}
