//! Claim verdicts: a claim holds for the whole 95% interval (supported), for none of it
//! (refuted), or for part of it (inconclusive). Each carries the findings that undermine it.

use super::{label, ratio_interval, value_interval, Subject};
use crate::model::comparison::{ClaimRecord, Estimate, Verdict};
use crate::model::criterion::{Bound, Op};
use crate::model::{Criterion, Finding, ResultDocument, Severity};

/// Every claim about every side but the baseline.
pub fn verdicts(
    claims: &[Criterion],
    docs: &[&ResultDocument],
    findings: &[Finding],
    subject: Option<&Subject>,
) -> Vec<ClaimRecord> {
    let mut undermining: Vec<String> =
        findings.iter().filter(|f| f.severity >= Severity::Warn).map(|f| f.id.clone()).collect();
    for (i, d) in docs.iter().enumerate() {
        undermining.extend(
            d.audit
                .iter()
                .filter(|f| f.severity == Severity::Critical && !subject.is_some_and(|s| s.explains(f)))
                .map(|f| format!("{}:{}", label(i), f.id)),
        );
    }
    let mut out = Vec::new();
    for c in claims {
        for side in 1..docs.len() {
            let (evidence, what) = match c.bound {
                Bound::Ratio(_) => (ratio_interval(&c.metric, docs[0], docs[side]), "ratio"),
                Bound::Absolute(_) => (value_interval(&c.metric, docs[side]), "value"),
            };
            let (verdict, reason) = verdict(c, evidence.as_ref(), what, docs, side);
            out.push(ClaimRecord {
                claim: c.text.clone(),
                side,
                verdict,
                evidence,
                reason,
                undermined_by: undermining.clone(),
            });
        }
    }
    out
}

/// An absolute claim (`commit.p99<2ms`) on one result: its value's interval against the bound.
pub fn judge_value(c: &Criterion, doc: &ResultDocument) -> ClaimRecord {
    let evidence = value_interval(&c.metric, doc);
    let (verdict, reason) = verdict(c, evidence.as_ref(), "value", &[doc], 0);
    ClaimRecord { claim: c.text.clone(), side: 0, verdict, evidence, reason, undermined_by: Vec::new() }
}

fn verdict(
    c: &Criterion,
    e: Option<&Estimate>,
    what: &str,
    docs: &[&ResultDocument],
    side: usize,
) -> (Verdict, String) {
    let bound = match c.bound {
        Bound::Ratio(b) | Bound::Absolute(b) => b,
    };
    let Some(e) = e else {
        let why = if docs[side].metric(&c.metric).is_none() || docs[0].metric(&c.metric).is_none() {
            format!("{} is not measured on both sides", c.metric)
        } else {
            format!("no interval for {}: too few repeats and measured seconds, or not in the timeline", c.metric)
        };
        return (Verdict::Inconclusive, why);
    };
    let show = |v: f64| match c.bound {
        Bound::Ratio(_) => format!("{v:.3}x"),
        Bound::Absolute(_) => c.metric.show(v),
    };
    let range = format!("{what} {} (95% interval {} to {})", show(e.estimate), show(e.low), show(e.high));
    let inside = e.low <= bound && bound <= e.high;
    let verdict = match c.op {
        Op::Eq if e.low == bound && e.high == bound => Verdict::Supported,
        Op::Eq if !inside => Verdict::Refuted,
        Op::Eq => Verdict::Inconclusive,
        op => match (op.holds(e.low, bound), op.holds(e.high, bound)) {
            (true, true) => Verdict::Supported,
            (false, false) => Verdict::Refuted,
            _ => Verdict::Inconclusive,
        },
    };
    let reason = match verdict {
        Verdict::Supported => format!("the whole interval satisfies it: {range}"),
        Verdict::Refuted => format!("no part of the interval satisfies it: {range}"),
        Verdict::Inconclusive => format!("the interval straddles the bound: {range}"),
    };
    (verdict, reason)
}
