//! A study as text, the answer first: each claim's verdict with its checks and what
//! undermines them, then every cell's figures over its repeats, then the runs that did not
//! complete.

use super::{Report, ReportOptions};
use crate::model::comparison::{Estimate, Verdict};
use crate::model::study::{CellFigures, StudyClaim, StudyDocument, TargetConditions};
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
        if let Some(seed) = &d.seed {
            o.push_str(&super::study_seed::seed_text(seed));
        }
        verdicts(&mut o, d);
        cells(&mut o, d);
        for c in &d.cliffs {
            let _ = writeln!(o, "\nCache cliff: {}", c.describe());
        }
        probes(&mut o, d);
        conditions(&mut o, d);
        costs(&mut o, d);
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
pub(super) fn what(c: &StudyClaim) -> String {
    let c = &c.claim;
    match (&c.vary, &c.baseline, &c.subject) {
        (Some(v), Some(b), Some(s)) => format!("{} with {v} {b} -> {s}", c.check),
        _ => c.check.clone(),
    }
}

/// `1234.5 (1200.1-1260.3)`, or without an interval `1234.5 (no interval)`.
pub(super) fn estimate(value: Option<f64>, e: Option<&Estimate>, scale: f64, digits: usize) -> String {
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
    let rows: Vec<Vec<String>> = d
        .plan
        .cells
        .iter()
        .map(|c| {
            let f = d.cells.iter().find(|f| f.cell == c.id);
            vec![
                c.id.clone(),
                c.target.clone(),
                if c.settings.is_empty() { "-".to_string() } else { c.settings.join(",") },
                c.workload.clone(),
                c.point(),
                f.map_or("-".into(), runs_cell),
                estimate(f.and_then(|f| f.tps), f.and_then(|f| f.tps_interval.as_ref()), 1.0, 1),
                estimate(f.and_then(|f| f.p99_us), f.and_then(|f| f.p99_interval.as_ref()), 1000.0, 3),
            ]
        })
        .collect();
    columns(o, &["cell", "target", "settings", "workload", "point", "runs", "tps", "p99 ms"], &rows);
    for f in d.cells.iter().filter(|f| !f.findings.is_empty()) {
        let _ = writeln!(o, "  {} audit: {}", f.cell, f.findings.join(", "));
    }
}

/// Rows of cells as aligned columns under `header`.
fn columns(o: &mut String, header: &[&str], rows: &[Vec<String>]) {
    let header: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    let widths: Vec<usize> =
        (0..header.len()).map(|i| rows.iter().chain([&header]).map(|r| r[i].len()).max().unwrap_or(0)).collect();
    for row in [&header].into_iter().chain(rows.iter()) {
        let line: Vec<String> = row.iter().zip(&widths).map(|(s, w)| format!("{s:<w$}")).collect();
        let _ = writeln!(o, "  {}", line.join("  ").trim_end());
    }
}

fn costs(o: &mut String, d: &StudyDocument) {
    let priced: Vec<&CellFigures> = d.cells.iter().filter(|f| f.cost.is_some()).collect();
    let Some(currency) = priced.first().and_then(|f| f.cost.as_ref()).map(|c| c.currency.clone()) else {
        return;
    };
    let _ = writeln!(
        o,
        "\nCost per million transactions ({currency}; compute, storage and IOPS by the hour at the cell's tps, I/O by the requests per transaction the server counted):"
    );
    let money = |v: f64| format!("{v:.4}");
    let rows: Vec<Vec<String>> = priced
        .iter()
        .map(|f| {
            let c = f.cost.as_ref().expect("priced");
            let target = d.plan.cells.iter().find(|x| x.id == f.cell).map_or("", |x| x.target.as_str());
            vec![
                f.cell.clone(),
                target.to_string(),
                f.tps.map_or("-".into(), |t| format!("{t:.1}")),
                money(c.total) + if c.io.is_none() { " (no I/O)" } else { "" },
                money(c.compute),
                money(c.storage),
                c.io.map_or("not counted".into(), money),
                money(c.provisioned_iops),
                c.io_requests_per_transaction.map_or("-".into(), |r| format!("{r:.2}")),
            ]
        })
        .collect();
    columns(o, &["cell", "target", "tps", "total", "compute", "storage", "I/O", "IOPS", "I/O requests/txn"], &rows);
}

/// The probe cells, run by run (each run one failover or one lag series), as rows:
/// cell, target, faults, repeat, downtime, lost, lag p99, lag max, verdict.
pub(super) fn probe_rows(d: &StudyDocument) -> Vec<Vec<String>> {
    let us = |v: Option<f64>| v.map_or("-".into(), crate::model::metric::show_us);
    let mut rows = Vec::new();
    for f in d.cells.iter().filter(|f| !f.probes.is_empty()) {
        let cell = d.plan.cells.iter().find(|c| c.id == f.cell);
        for p in &f.probes {
            let mut verdict = p.verdict.clone();
            if !p.findings.is_empty() {
                verdict += &format!(" [{}]", p.findings.join(", "));
            }
            rows.push(vec![
                f.cell.clone(),
                cell.map_or(String::new(), |c| c.target.clone()),
                cell.and_then(|c| c.faults.clone()).unwrap_or_else(|| "none".into()),
                p.repeat.to_string(),
                us(p.downtime_us),
                p.lost.map_or("-".into(), |l| l.to_string()),
                us(p.lag_p99_us),
                us(p.lag_max_us),
                verdict,
            ]);
        }
    }
    rows
}

pub(super) const PROBE_HEADER: [&str; 9] =
    ["cell", "target", "faults", "run", "downtime", "lost", "lag p99", "lag max", "verdict"];

fn probes(o: &mut String, d: &StudyDocument) {
    let rows = probe_rows(d);
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(o, "\nProbes, run by run (downtime: the longest span without a write acknowledged on a primary; lost: acknowledged writes the final primary lacks; lag: the worst replica's):");
    columns(o, &PROBE_HEADER, &rows);
}

/// A target's shared conditions in one line: its server, durability in effect, redo
/// capacity, client host.
pub(super) fn condition_summary(t: &TargetConditions) -> String {
    let get = |g: &str, k: &str| t.common.get(g).and_then(|m| m.get(k)).cloned();
    let mut parts = Vec::new();
    if let (Some(p), Some(v)) = (get("server", "product"), get("server", "version")) {
        parts.push(format!("{p} {v}"));
    }
    parts.extend(get("durability", "in effect").map(|v| format!("durability: {v}")));
    parts.extend(get("logging/redo", "redo capacity (in effect)").map(|v| format!("redo capacity {v}")));
    let host: Vec<String> = ["cores", "memory", "os"]
        .iter()
        .filter_map(|k| get("client host", k).map(|v| if *k == "cores" { format!("{v} cores") } else { v }))
        .collect();
    if !host.is_empty() {
        parts.push(format!("client host {}", host.join(", ")));
    }
    let n: usize = t.common.values().map(|m| m.len()).sum();
    parts.push(format!("{n} conditions alike on its {}", plural(t.cells.len().max(1) as u64, "cell")));
    parts.join("; ")
}

/// What differs by cell: `memory/cache innodb_buffer_pool_size=134217728, dataset rows=20000`
/// (a value past 60 characters cut: study.json has it whole).
pub(super) fn cell_conditions(groups: &crate::model::study::ConditionGroups) -> String {
    let cut = |v: &str| match v.char_indices().nth(60) {
        Some((i, _)) => format!("{}...", &v[..i]),
        None => v.to_string(),
    };
    let each = groups.iter().flat_map(|(g, m)| m.iter().map(move |(k, v)| format!("{g} {k}={}", cut(v))));
    each.collect::<Vec<_>>().join(", ")
}

fn conditions(o: &mut String, d: &StudyDocument) {
    if d.conditions.is_empty() {
        return;
    }
    let _ = writeln!(o, "\nConditions, once per target (what all its cells share; then what differs by cell):");
    for t in &d.conditions {
        let _ = writeln!(o, "  {}: {}", t.target, condition_summary(t));
        for (cell, groups) in &t.cells {
            let _ = writeln!(o, "    {cell}: {}", cell_conditions(groups));
        }
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
