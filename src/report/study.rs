//! A study as text, the answer first: each claim's verdict with its checks and what
//! undermines them, then every cell's figures over its repeats, then the runs that did not
//! complete.

use super::{Report, ReportOptions};
use crate::model::comparison::{Estimate, Verdict};
use crate::model::study::{CellFigures, StudyClaim, StudyDocument, StudyRun, TargetConditions};
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
        noise(&mut o, d);
        cells(&mut o, d);
        for c in &d.cliffs {
            let _ = writeln!(o, "\nCache cliff: {}", c.describe());
        }
        probes(&mut o, d);
        conditions(&mut o, d);
        costs(&mut o, d);
        repeats(&mut o, d);
        runs(&mut o, d);
        o
    }
}

/// What a study's verdict is about.
pub(super) const VERDICTS_ARE: &str = "each claim is the question as its source put it, asked of the targets as they ran here: a verdict is about these targets on this host, not about the systems the source measured";

pub(super) const NOISE_IS: &str = "A/A pairs, targets declared alike and run like any other pair: a throughput ratio inside their spread could be this study's noise (within-noise-floor)";

fn noise(o: &mut String, d: &StudyDocument) {
    if d.noise.is_empty() {
        return;
    }
    let _ = writeln!(o, "\nNoise floor ({NOISE_IS}):");
    d.noise.iter().for_each(|f| _ = writeln!(o, "  {}", f.describe()));
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
    let _ = writeln!(o, "\nVerdicts ({VERDICTS_ARE}):");
    for c in &d.claims {
        let _ = writeln!(o, "  {:<13} \"{}\"", word(c.verdict), c.claim.says);
        let sides = if c.as_run.is_empty() { "no side has a result yet" } else { &c.as_run };
        let _ = writeln!(o, "  {:<13} as run: {sides}", "");
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

/// The cells table's columns, text and HTML alike (the text leaves out the last two: each
/// cell's audit follows the table as a line, and its run is in the plan).
pub(super) const CELL_HEADER: [&str; 10] =
    ["cell", "target", "settings", "workload", "point", "runs", "tps", "p99 ms", "audit", "run"];

/// Every planned cell as a row of [`CELL_HEADER`].
pub(super) fn cell_rows(d: &StudyDocument) -> Vec<Vec<String>> {
    let row = |c: &crate::model::study::StudyCell| {
        let f = d.cells.iter().find(|f| f.cell == c.id);
        vec![
            c.id.clone(),
            c.target.clone(),
            if c.settings.is_empty() { "-".to_string() } else { c.settings.join(",") },
            c.workload.clone(),
            c.point(),
            f.map_or("-".into(), CellFigures::runs_words),
            estimate(f.and_then(|f| f.tps), f.and_then(|f| f.tps_interval.as_ref()), 1.0, 1),
            estimate(f.and_then(|f| f.p99_us), f.and_then(|f| f.p99_interval.as_ref()), 1000.0, 3),
            f.map_or(String::new(), |f| f.findings.join(", ")),
            c.run.clone(),
        ]
    };
    d.plan.cells.iter().map(row).collect()
}

fn cells(o: &mut String, d: &StudyDocument) {
    let _ = writeln!(o, "\nCells ({}; figures over completed repeats, 95% intervals):", d.plan.cells.len());
    let _ = writeln!(o, "  {}", rounds_line(d));
    let rows: Vec<Vec<String>> = cell_rows(d).into_iter().map(|mut r| r.drain(..8).collect()).collect();
    columns(o, &CELL_HEADER[..8], &rows);
    for f in d.cells.iter().filter(|f| !f.findings.is_empty()) {
        let _ = writeln!(o, "  {} audit: {}", f.cell, f.findings.join(", "));
    }
    for f in d.cells.iter().filter(|f| f.rounds.len() >= 2) {
        let _ = writeln!(o, "  {} {}", f.cell, rounds_words(f));
    }
    for r in &d.reruns {
        let _ = writeln!(o, "  {} round {}: {}", r.cell, r.round, r.describe());
    }
}

/// How many runs of the study the intervals span.
pub(super) fn rounds_line(d: &StudyDocument) -> String {
    match d.runs.iter().map(|r| r.round).max().unwrap_or(1) {
        0 | 1 => "intervals are within one run of the study; run it again with --again to see the spread between runs"
            .to_string(),
        n => format!("{n} runs of the study (rounds, `study run --again`): intervals are over the repeats of every round; the spread between rounds is below"),
    }
}

/// `2 rounds; median tps by round 5536.0, 5798.0: spread 262.0 tps (4.7% of the lowest)`.
pub(super) fn rounds_words(f: &CellFigures) -> String {
    let medians: Vec<String> =
        f.rounds.iter().map(|r| r.median_tps.map_or("-".into(), |m| format!("{m:.1}"))).collect();
    let spread = match f.round_spread() {
        Some((tps, share)) => format!(": spread {tps:.1} tps ({:.1}% of the lowest)", share * 100.0),
        None => ": no spread (fewer than two rounds with a completed repeat)".into(),
    };
    format!("{}; median tps by round {}{spread}", plural(f.rounds.len() as u64, "round"), medians.join(", "))
}

/// Each run with the server it ran on, its rows as it began and its tps.
fn repeats(o: &mut String, d: &StudyDocument) {
    if d.runs.iter().all(|r| r.server.is_none() && r.rows_at_start.is_none()) {
        return;
    }
    let _ = writeln!(o, "\nRepeats, run by run (rows: the workload's tables' rows as the run began; server: the one it ran on, by its own identity):");
    let rows: Vec<Vec<String>> = d.runs.iter().map(|r| repeat_row(r).to_vec()).collect();
    columns(o, &REPEAT_HEADER, &rows);
}

pub(super) const REPEAT_HEADER: [&str; 7] = ["cell", "round", "repeat", "status", "tps", "rows", "server"];

/// A run as a row under [`REPEAT_HEADER`].
pub(super) fn repeat_row(r: &StudyRun) -> [String; 7] {
    let rows =
        r.rows_at_start.map_or("-".into(), |s| format!("{}{}", s.rows, if s.exact { "" } else { " (estimate)" }));
    [
        r.cell.clone(),
        r.round.to_string(),
        r.repeat.to_string(),
        r.status.map_or("not run", |s| s.name()).to_string(),
        r.tps.map_or("-".into(), |t| format!("{t:.1}")),
        rows,
        r.server.clone().unwrap_or_else(|| "-".into()),
    ]
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
    let _ = writeln!(o, "\nCost per million transactions ({currency}), two models side by side:");
    let _ = writeln!(o, "  I/O excluded: compute, storage and provisioned IOPS only (a month's bill excluding per-request I/O, over the transactions a month holds at the cell's tps);");
    let _ = writeln!(o, "  I/O billed: the same plus I/O requests at their price per million, by the requests per transaction the server counted; month, I/O excluded: that bill for 730 hours.");
    let rows: Vec<Vec<String>> = priced.iter().filter_map(|f| cost_row(d, f)).collect();
    columns(o, &COST_HEADER, &rows);
}

pub(super) const COST_HEADER: [&str; 12] = [
    "cell",
    "target",
    "tps",
    "I/O excluded",
    "I/O billed",
    "month, I/O excluded",
    "compute",
    "storage",
    "storage priced on",
    "I/O",
    "IOPS",
    "I/O requests/txn",
];

/// A priced cell's row under COST_HEADER (none for a cell without a cost).
pub(super) fn cost_row(d: &StudyDocument, f: &CellFigures) -> Option<Vec<String>> {
    let money = |v: f64| format!("{v:.4}");
    let c = f.cost.as_ref()?;
    let target = d.plan.cells.iter().find(|x| x.id == f.cell).map_or("", |x| x.target.as_str());
    Some(vec![
        f.cell.clone(),
        target.to_string(),
        f.tps.map_or("-".into(), |t| format!("{t:.1}")),
        money(c.total_without_io),
        money(c.total) + if c.io.is_none() { " (no I/O counted)" } else { "" },
        format!("{:.2}", c.month_without_io),
        money(c.compute),
        money(c.storage),
        c.storage_basis.clone(),
        c.io.map_or("not counted".into(), money),
        money(c.provisioned_iops),
        c.io_requests_per_transaction.map_or("-".into(), |r| format!("{r:.2}")),
    ])
}

/// The probe cells, run by run (each run one failover or one lag series), as rows:
/// cell, target, faults, repeat, downtime, lost, lag p99, lag max, verdict.
pub(super) fn probe_rows(d: &StudyDocument) -> Vec<Vec<String>> {
    let us = |v: Option<f64>| v.map_or("-".into(), crate::model::metric::show_us);
    let mut rows = Vec::new();
    for f in d.cells.iter().filter(|f| !f.probes.is_empty()) {
        let cell = d.plan.cells.iter().find(|c| c.id == f.cell);
        for p in &f.probes {
            let lag = |v: Option<f64>| match p.lag_at_least {
                true => v.map_or("-".into(), |v| format!(">= {}", crate::model::metric::show_us(v))),
                false => us(v),
            };
            let mut verdict = p.verdict.clone();
            if !p.findings.is_empty() {
                verdict += &format!(" [{}]", p.findings.join(", "));
            }
            rows.push(vec![
                f.cell.clone(),
                cell.map_or(String::new(), |c| c.target.clone()),
                cell.and_then(|c| c.faults.clone()).unwrap_or_else(|| "none".into()),
                p.repeat.to_string(),
                match (p.downtime_us, p.origin) {
                    (Some(v), Some(o)) => format!("{} {}", crate::model::metric::show_us(v), o.name()),
                    (v, _) => us(v),
                },
                p.lost.map_or("-".into(), |l| l.to_string()),
                lag(p.lag_p99_us),
                lag(p.lag_max_us),
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
    let kinds = downtime_kinds(d);
    if !kinds.is_empty() {
        let _ = writeln!(o, "\nFailover downtimes by what ended them, each kind ranked apart (a scheduled downtime is this file's own promote step, never ranked against one a cluster or manager detected):");
        kinds.iter().for_each(|line| _ = writeln!(o, "  {line}"));
    }
}

/// Per kind of downtime (detected, requested, scheduled), the targets from the shortest
/// median downtime to the longest: `detected: galera (failover) 6.3 s (2 runs), patroni
/// (failover) 10.2 s (2 runs)`.
pub(super) fn downtime_kinds(d: &StudyDocument) -> Vec<String> {
    use crate::model::fault::DowntimeOrigin;
    let mut lines = Vec::new();
    for kind in [DowntimeOrigin::Detected, DowntimeOrigin::Requested, DowntimeOrigin::Scheduled] {
        // Per target and workload: a failover under load and one without are apart.
        let mut by_target: std::collections::BTreeMap<String, Vec<f64>> = Default::default();
        for f in &d.cells {
            let Some(cell) = d.plan.cells.iter().find(|c| c.id == f.cell) else { continue };
            let of_kind = f.probes.iter().filter(|p| p.origin == Some(kind)).filter_map(|p| p.downtime_us);
            by_target.entry(format!("{} ({})", cell.target, cell.workload)).or_default().extend(of_kind);
        }
        let mut ranked: Vec<(f64, String)> = by_target
            .into_iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(t, mut v)| {
                v.sort_by(f64::total_cmp);
                let n = v.len();
                let median = if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 };
                (median, format!("{t} {} ({})", crate::model::metric::show_us(median), plural(v.len() as u64, "run")))
            })
            .collect();
        ranked.sort_by(|a, b| a.0.total_cmp(&b.0));
        if !ranked.is_empty() {
            let each: Vec<String> = ranked.into_iter().map(|(_, words)| words).collect();
            lines.push(format!("{}: {}", kind.name(), each.join(", ")));
        }
    }
    lines
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
    // Documents from before `compared` was recorded: the cells that differ, if any did.
    let cells = if t.compared > 0 { t.compared as usize } else { t.cells.len().max(1) };
    parts.push(format!("{n} conditions alike on its {}", plural(cells as u64, "cell")));
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

fn runs(o: &mut String, d: &StudyDocument) {
    let done = d.runs.iter().filter(|r| r.status == Some(RunStatus::Completed)).count();
    let _ = writeln!(o, "\nRuns: {} of {} completed", done, plural(d.runs.len() as u64, "run"));
    for r in d.runs.iter().filter(|r| r.status != Some(RunStatus::Completed)) {
        let status = r.status.map_or("not run", |s| s.name());
        let why = r.failure.as_deref().map(|f| format!(": {f}")).unwrap_or_default();
        let _ = writeln!(o, "  {} repeat {} {status}{why}", r.cell, r.repeat);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_counts_the_cells_read_and_run_words_agree_with_the_runs() {
        let t = TargetConditions { target: "maria".into(), compared: 3, ..Default::default() };
        assert!(condition_summary(&t).ends_with("0 conditions alike on its 3 cells"), "{}", condition_summary(&t));
        let f = |completed, not_run, status| CellFigures {
            cell: "c01".into(),
            completed,
            planned: 3,
            not_run,
            status,
            rounds: vec![],
            tps: None,
            tps_interval: None,
            p99_us: None,
            p99_interval: None,
            findings: vec![],
            cost: None,
            cache_ratio: None,
            cache: None,
            probes: vec![],
        };
        assert_eq!(f(0, 3, None).runs_words(), "0/3 not run");
        assert_eq!(f(1, 1, Some(RunStatus::Interrupted)).runs_words(), "1/3 (1 interrupted, 1 not run)");
        assert_eq!(f(3, 0, Some(RunStatus::Completed)).runs_words(), "3/3");
    }
}
