//! A study's claims judged on its cells. An absolute claim (`commit.p99<2ms`) is checked on
//! every cell it covers; a ratio claim (`tps>=5x`) on every pair of cells that differ only
//! in the variable under test, baseline against subject. The claim is supported when every
//! check supports it, refuted when any refutes it, otherwise inconclusive; a cell without a
//! result makes its check inconclusive, never silently absent.

pub use super::cell_result::CellResult;

use super::cell_result::missing;
use crate::compare::{self, Input, Subject};
use crate::model::comparison::Verdict;
use crate::model::criterion::Bound;
use crate::model::study::{ClaimCheck, ClaimDefinition, StudyCell, StudyClaim};
use crate::model::{Criterion, ResultDocument, Severity};

/// Every claim of the file on `cells` (in the plan's order) and their results.
pub fn judge(specs: &[ClaimDefinition], cells: &[StudyCell], results: &[CellResult]) -> Vec<StudyClaim> {
    specs.iter().map(|spec| judge_one(spec, cells, results)).collect()
}

fn judge_one(spec: &ClaimDefinition, cells: &[StudyCell], results: &[CellResult]) -> StudyClaim {
    let Ok(criterion) = Criterion::claim(&spec.check) else {
        let reason = format!("{:?} is not a claim fairbench can check", spec.check);
        let claim = spec.clone();
        return StudyClaim { claim, verdict: Verdict::Inconclusive, reason, as_run: String::new(), checks: vec![] };
    };
    let probe_figure = match criterion.metric {
        crate::model::Metric::Ha(f) => Some(f),
        _ => None,
    };
    let covered: Vec<usize> = (0..cells.len())
        .filter(|&i| {
            covers(spec, &cells[i]) && probe_figure.is_none_or(|f| super::probe_claims::measures(&cells[i], f))
        })
        .collect();
    let (vary, baseline, subject) = match criterion.bound {
        Bound::Absolute(_) => (None, None, None),
        Bound::Ratio(_) => {
            (Some(spec.vary.clone().unwrap_or_else(|| "target".into())), spec.baseline.clone(), spec.subject.clone())
        }
    };
    let checks: Vec<ClaimCheck> = match (&vary, &baseline, &subject) {
        (Some(vary), Some(base), Some(subj)) => covered
            .iter()
            .filter(|&&i| cells[i].value(vary) == Some(subj.as_str()))
            .flat_map(|&i| {
                let partners = covered.iter().filter(move |&&j| cells[j].value(vary) == Some(base.as_str()));
                partners.filter(move |&&j| same_elsewhere(&cells[i], &cells[j], vary)).map(move |&j| (j, i))
            })
            .map(|(j, i)| ratio_check(&criterion, vary, (&cells[j], &results[j]), (&cells[i], &results[i])))
            .collect(),
        _ => match probe_figure {
            Some(f) => {
                covered.iter().map(|&i| super::probe_claims::check(&criterion, f, &cells[i], &results[i])).collect()
            }
            None => covered.iter().map(|&i| absolute_check(&criterion, &cells[i], &results[i])).collect(),
        },
    };
    let (verdict, reason) = overall(&checks);
    let claim = ClaimDefinition { vary, baseline, subject, ..spec.clone() };
    let docs: Vec<Option<&ResultDocument>> = results.iter().map(|r| r.doc).collect();
    let as_run = super::sides::as_run(&claim, &checks, cells, &docs);
    StudyClaim { claim, verdict, reason, as_run, checks }
}

/// Whether the claim's `where` lets `cell` in.
fn covers(spec: &ClaimDefinition, cell: &StudyCell) -> bool {
    spec.only.iter().all(|(axis, wanted)| cell.value(axis).is_some_and(|v| wanted.iter().any(|w| w == v)))
}

/// Whether two cells agree on every axis both have, `vary` aside.
fn same_elsewhere(a: &StudyCell, b: &StudyCell, vary: &str) -> bool {
    a.values.iter().filter(|v| v.axis != vary).all(|v| b.value(&v.axis).is_none_or(|w| w == v.value))
}

fn overall(checks: &[ClaimCheck]) -> (Verdict, String) {
    let count = |v: Verdict| checks.iter().filter(|c| c.verdict == v).count();
    let (yes, no, open) = (count(Verdict::Supported), count(Verdict::Refuted), count(Verdict::Inconclusive));
    let n = checks.len();
    match (yes, no, open) {
        (0, 0, 0) => (Verdict::Inconclusive, "no cell of the study is covered by it".into()),
        (_, 0, 0) => (Verdict::Supported, format!("supported by all {n} of its checks")),
        (_, 0, _) => (Verdict::Inconclusive, format!("{open} of its {n} checks are inconclusive, none refutes it")),
        _ => (Verdict::Refuted, format!("refuted by {no} of its {n} checks")),
    }
}

/// Findings that undermine any verdict on this cell: its audit's warnings and worse, too
/// few repeats for an interval between runs, throughput drifting across repeats, runs that
/// did not complete.
/// `subject`: the variable under test, whose own findings (durability off when durability
/// is what varies) are the point, not a flaw.
fn cell_concerns(cell: &StudyCell, r: &CellResult, subject: Option<&Subject>) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(doc) = r.doc {
        out.extend(
            doc.audit
                .iter()
                .filter(|f| f.severity >= Severity::Warn && !subject.is_some_and(|s| s.explains(f)))
                .map(|f| format!("{}:{}", cell.id, f.id)),
        );
        // A comparison names too few repeats itself.
        if subject.is_none() && doc.repeats.len().max(1) < compare::MIN_REPEATS {
            out.push(format!("{}:too-few-repeats", cell.id));
        }
        if drifts(doc) {
            out.push(format!("{}:drift-across-repeats", cell.id));
        }
    }
    if r.doc.is_some() && r.trouble.is_some() {
        out.push(format!("{}:runs-missing", cell.id));
    }
    out
}

/// Three or more repeats whose throughput only rises (or only falls), by more than 5% from
/// the first to the last: the system was still changing (caches, checkpoints, growth).
pub fn drifts(doc: &ResultDocument) -> bool {
    let tps: Vec<f64> = doc.repeats.iter().map(|r| r.events as f64 / r.measured_s.max(1e-9)).collect();
    if tps.len() < 3 || tps[0] <= 0.0 {
        return false;
    }
    let rising = tps.windows(2).all(|w| w[1] > w[0]);
    let falling = tps.windows(2).all(|w| w[1] < w[0]);
    (rising || falling) && ((tps[tps.len() - 1] - tps[0]) / tps[0]).abs() > 0.05
}

fn absolute_check(c: &Criterion, cell: &StudyCell, r: &CellResult) -> ClaimCheck {
    let mut check = ClaimCheck {
        baseline_cell: None,
        cell: cell.id.clone(),
        at: cell.describe(&[]),
        verdict: Verdict::Inconclusive,
        evidence: None,
        reason: missing(cell, r).unwrap_or_default(),
        undermined_by: cell_concerns(cell, r, None),
    };
    if let Some(doc) = r.doc {
        let record = compare::judge_value(c, doc);
        (check.verdict, check.evidence, check.reason) = (record.verdict, record.evidence, record.reason);
    }
    check
}

fn ratio_check(
    c: &Criterion,
    vary: &str,
    (bcell, base): (&StudyCell, &CellResult),
    (cell, r): (&StudyCell, &CellResult),
) -> ClaimCheck {
    let subject = Subject::parse(vary.strip_prefix("set.").unwrap_or(vary));
    let mut undermined_by = cell_concerns(bcell, base, Some(&subject));
    undermined_by.extend(cell_concerns(cell, r, Some(&subject)));
    let mut check = ClaimCheck {
        baseline_cell: Some(bcell.id.clone()),
        cell: cell.id.clone(),
        at: cell.describe(&[vary]),
        verdict: Verdict::Inconclusive,
        evidence: None,
        reason: String::new(),
        undermined_by,
    };
    let (Some(bdoc), Some(doc)) = (base.doc, r.doc) else {
        check.reason = missing(bcell, base).or_else(|| missing(cell, r)).unwrap_or_default();
        return check;
    };
    let inputs = [bdoc, doc].map(|d| Input { file: String::new(), doc: d.clone() });
    let comparison = compare::compare(&inputs, std::slice::from_ref(c), &[], Some(&subject));
    if let Some(claim) = comparison.claims.into_iter().next() {
        check.verdict = claim.verdict;
        check.evidence = claim.evidence;
        check.reason = claim.reason;
        // The sides' critical findings are already the cells' own; the conditions that
        // differ are the comparison's.
        let cells = [bcell.id.as_str(), cell.id.as_str()];
        for id in claim.undermined_by {
            let named = match id.split_once(':') {
                Some(("A", f)) => format!("{}:{f}", cells[0]),
                Some(("B", f)) => format!("{}:{f}", cells[1]),
                _ => id,
            };
            if !check.undermined_by.contains(&named) {
                check.undermined_by.push(named);
            }
        }
    }
    check
}
