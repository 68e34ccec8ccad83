//! A claim on a probe's figure (`lost==0`, `downtime<15s`, `lag_p99<100ms`), judged run by
//! run: each run is one failover or one series of heartbeats, and the claim is a promise
//! about every one of them, so a single run that breaks it refutes it. A figure that is no
//! number because the failover split the brain refutes it too; one only bounded from
//! below (an outage still open, a heartbeat never seen) refutes it when the bound already
//! does, else leaves it open.

use super::cell_result::{missing, CellResult};
use crate::model::comparison::Verdict;
use crate::model::criterion::{Bound, Op};
use crate::model::ha_figure::{HaFigure, HaValue};
use crate::model::study::{ClaimCheck, StudyCell};
use crate::model::{Criterion, Severity};

/// Whether `cell`'s probe measures `figure`.
pub fn measures(cell: &StudyCell, figure: HaFigure) -> bool {
    cell.probe.as_deref().and_then(super::file::ProbeKind::named).is_some_and(|k| k.measures(figure))
}

/// One run's figure against the bound: `Some(true)` holds, `Some(false)` breaks it, `None`
/// open; with the words for it.
fn judge_run(c: &Criterion, bound: f64, figure: HaFigure, value: &HaValue) -> (Option<bool>, String) {
    let op = c.op;
    let show = |v: f64| c.metric.show(v).replace(' ', "");
    match value {
        HaValue::Exact(v) => (Some(op.holds(*v, bound)), format!("{} {}", figure.name(), show(*v))),
        HaValue::AtLeast(v, why) => {
            let said = format!("{} at least {} ({why})", figure.name(), show(*v));
            match op {
                Op::Lt | Op::Le | Op::Eq if !op.holds(*v, bound) && *v > bound => (Some(false), said),
                Op::Gt | Op::Ge if op.holds(*v, bound) => (Some(true), said),
                _ => (None, said),
            }
        }
        HaValue::Broken(why) => (Some(false), why.clone()),
        HaValue::Unmeasured(why) => (None, why.clone()),
    }
}

/// Why a run's downtime cannot answer a claim on failover time: this run's own promote
/// step made the new primary, so the figure is the schedule's (docs/ha.md).
fn scheduled(figure: HaFigure, doc: &crate::model::ResultDocument) -> Option<String> {
    use crate::model::fault::{downtime_origin, DowntimeOrigin};
    let f = doc.ha.as_ref()?.failover.as_ref().filter(|_| figure == HaFigure::Downtime)?;
    match downtime_origin(f, doc.faults.as_ref())? {
        (DowntimeOrigin::Scheduled, Some(step)) => Some(format!(
            "downtime {:.0} ms scheduled by its own {} (not detected: it measures the schedule)",
            f.downtime_ms,
            step.label()
        )),
        _ => None,
    }
}

/// The check of `c` on one probe cell, run by run.
pub fn check(c: &Criterion, figure: HaFigure, cell: &StudyCell, r: &CellResult) -> ClaimCheck {
    let mut out = ClaimCheck {
        baseline_cell: None,
        cell: cell.id.clone(),
        at: cell.describe(&[]),
        verdict: Verdict::Inconclusive,
        evidence: None,
        reason: String::new(),
        undermined_by: Vec::new(),
    };
    let Bound::Absolute(bound) = c.bound else {
        out.reason = format!("{} is judged on each run against a bound, not as a ratio", figure.name());
        return out;
    };
    let mut undermined_by: Vec<String> = Vec::new();
    let mut said = Vec::new();
    let (mut held, mut broke, mut open) = (0, Vec::new(), Vec::new());
    for (repeat, doc) in r.runs {
        let Some(ha) = &doc.ha else {
            open.push(format!("run {repeat} holds no probe"));
            continue;
        };
        let (verdict, words) = match scheduled(figure, doc) {
            Some(why) => (None, why),
            None => judge_run(c, bound, figure, &figure.of(ha)),
        };
        said.push(format!("run {repeat}: {words}"));
        match verdict {
            Some(true) => held += 1,
            Some(false) => broke.push(format!("run {repeat}: {words}")),
            None => open.push(format!("run {repeat}: {words}")),
        }
        for f in doc.audit.iter().filter(|f| f.severity >= Severity::Warn && f.id.starts_with("ha-")) {
            let id = format!("{}:{}", cell.id, f.id);
            if !undermined_by.contains(&id) {
                undermined_by.push(id);
            }
        }
    }
    if r.trouble.is_some() {
        undermined_by.push(format!("{}:runs-missing", cell.id));
    }
    let (verdict, reason) = match (broke.is_empty(), open.is_empty(), held) {
        (false, _, _) => {
            (Verdict::Refuted, format!("broken in {} of {} runs: {}", broke.len(), r.runs.len(), broke.join("; ")))
        }
        (true, true, n) if n > 0 => (Verdict::Supported, format!("holds in every run ({})", said.join("; "))),
        (true, true, _) => (Verdict::Inconclusive, missing(cell, r).unwrap_or_else(|| "no run completed".into())),
        (true, false, _) => {
            (Verdict::Inconclusive, format!("not judged in {} run(s): {}", open.len(), open.join("; ")))
        }
    };
    ClaimCheck { verdict, reason, undermined_by, ..out }
}
