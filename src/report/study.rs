//! A study as text, the answer first: each claim's verdict with its checks and what
//! undermines them, then every cell's figures over its repeats, then the runs that did not
//! complete.

use super::{Report, ReportOptions};
use crate::model::comparison::{Estimate, Verdict};
use crate::model::study::{CellFigures, StudyClaim, StudyDocument};
use crate::model::{plural, RunStatus};
use std::fmt::Write;

pub struct StudyText;

impl Report<StudyDocument> for StudyText {
    fn render(&self, d: &StudyDocument, _: &ReportOptions) -> String {
        let mut o = String::new();
        let _ = writeln!(o, "Study: {} ({})", d.title, d.file);
        if let Some(q) = &d.question {
            let _ = writeln!(o, "Question: {q}");
        }
        verdicts(&mut o, d);
        cells(&mut o, d);
        runs(&mut o, d);
        o
    }
}

fn word(v: Verdict) -> &'static str {
    match v {
        Verdict::Supported => "SUPPORTED",
        Verdict::Refuted => "REFUTED",
        Verdict::Inconclusive => "INCONCLUSIVE",
    }
}

fn verdicts(o: &mut String, d: &StudyDocument) {
    if d.claims.is_empty() {
        let _ = writeln!(o, "\nNo claims declared: the cells' figures below are the study's answer.");
        return;
    }
    let _ = writeln!(o, "\nVerdicts:");
    for c in &d.claims {
        let _ = writeln!(o, "  {:<13} {}", word(c.verdict), c.claim.says);
        let _ = writeln!(o, "  {:<13} {}: {}", "", what(c), c.reason);
        for k in &c.checks {
            let cells = match &k.baseline_cell {
                Some(b) => format!("{} vs {b}", k.cell),
                None => k.cell.clone(),
            };
            let at = if k.at.is_empty() { String::new() } else { format!(" at {}", k.at) };
            let _ = writeln!(o, "  {:<13}   {} [{cells}]{at}: {}", "", word(k.verdict).to_lowercase(), k.reason);
            if !k.undermined_by.is_empty() {
                let _ = writeln!(o, "  {:<13}     undermined by: {}", "", k.undermined_by.join(", "));
            }
        }
    }
}

/// The check and, for a ratio, the variable it varies: `tps>=5x, set.x 1 -> 0`.
fn what(c: &StudyClaim) -> String {
    let c = &c.claim;
    match (&c.vary, &c.baseline, &c.subject) {
        (Some(v), Some(b), Some(s)) => format!("{} with {v} {b} -> {s}", c.check),
        _ => c.check.clone(),
    }
}

/// `1234.5 (1200.1-1260.3)`, or without an interval `1234.5 (no interval)`.
fn estimate(value: Option<f64>, e: Option<&Estimate>, scale: f64, digits: usize) -> String {
    match (value, e) {
        (Some(_), Some(e)) => {
            format!("{:.digits$} ({:.digits$}-{:.digits$})", e.estimate / scale, e.low / scale, e.high / scale)
        }
        (Some(v), None) => format!("{:.digits$} (no interval)", v / scale),
        (None, _) => "-".into(),
    }
}

fn cells(o: &mut String, d: &StudyDocument) {
    let _ = writeln!(o, "\nCells ({}; figures over completed repeats, 95% intervals):", d.plan.cells.len());
    let rows: Vec<[String; 7]> = d
        .plan
        .cells
        .iter()
        .map(|c| {
            let f = d.cells.iter().find(|f| f.cell == c.id);
            let settings = if c.settings.is_empty() { "-".to_string() } else { c.settings.join(",") };
            [
                c.id.clone(),
                c.target.clone(),
                settings,
                c.describe(&["target", "workload"])
                    .split(' ')
                    .filter(|p| !p.starts_with("set."))
                    .collect::<Vec<_>>()
                    .join(" "),
                f.map_or("-".into(), runs_cell),
                estimate(f.and_then(|f| f.tps), f.and_then(|f| f.tps_interval.as_ref()), 1.0, 1),
                estimate(f.and_then(|f| f.p99_us), f.and_then(|f| f.p99_interval.as_ref()), 1000.0, 3),
            ]
        })
        .collect();
    let header = ["cell", "target", "settings", "point", "runs", "tps", "p99 ms"].map(String::from);
    let widths: Vec<usize> =
        (0..7).map(|i| rows.iter().chain([&header]).map(|r| r[i].len()).max().unwrap_or(0)).collect();
    for row in [&header].into_iter().chain(rows.iter()) {
        let line: Vec<String> = row.iter().zip(&widths).map(|(s, w)| format!("{s:<w$}")).collect();
        let _ = writeln!(o, "  {}", line.join("  ").trim_end());
    }
    let workloads: Vec<&str> = d.plan.cells.iter().map(|c| c.workload.as_str()).collect();
    if workloads.windows(2).any(|w| w[0] != w[1]) {
        let _ = writeln!(
            o,
            "  (workload per cell: {})",
            d.plan.cells.iter().map(|c| format!("{} {}", c.id, c.workload)).collect::<Vec<_>>().join(", ")
        );
    } else if let Some(w) = workloads.first() {
        let _ = writeln!(o, "  workload: {w}");
    }
    for f in d.cells.iter().filter(|f| !f.findings.is_empty()) {
        let _ = writeln!(o, "  {} audit: {}", f.cell, f.findings.join(", "));
    }
}

fn runs_cell(f: &CellFigures) -> String {
    match f.status {
        RunStatus::Completed => format!("{}/{}", f.completed, f.planned),
        s => format!("{}/{} {}", f.completed, f.planned, s.name()),
    }
}

fn runs(o: &mut String, d: &StudyDocument) {
    let done = d.runs.iter().filter(|r| r.status == Some(RunStatus::Completed)).count();
    let _ = writeln!(o, "\nRuns: {} of {} completed", done, plural(d.runs.len() as u64, "run"));
    for r in d.runs.iter().filter(|r| r.status != Some(RunStatus::Completed)) {
        let status = r.status.map_or("not run", |s| s.name());
        let why = r.failure.as_deref().map(|f| format!(": {f}")).unwrap_or_default();
        let _ = writeln!(o, "  {} repeat {} {status}{why}", r.cell, r.repeat);
    }
}
