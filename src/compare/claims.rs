//! Claim verdicts: a claim holds for the whole 95% interval (supported), for none of it
//! (refuted), or for part of it (inconclusive). Each carries the findings that undermine it.

use super::{label, ratio_interval, value_interval, Subject};
use crate::model::comparison::{ClaimRecord, Estimate, Verdict};
use crate::model::criterion::{Bound, Op};
use crate::model::metric::{LatencyFigure, Metric};
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
    if let Some(attained) = attained(c, docs[side]) {
        return attained;
    }
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

/// A run's slowest or fastest is a latency that happened, not an estimate: one past a bound
/// on the slowest (`commit.max<226ms`) or the fastest (`min>1ms`) refutes the claim whatever
/// the interval (more runs can only go further), and one that reaches a claimed extreme
/// (`max>=1s`, `commit.min<=2ms`) supports it. Other cases are left to the interval.
fn attained(c: &Criterion, doc: &ResultDocument) -> Option<(Verdict, String)> {
    let (Bound::Absolute(bound), Metric::Latency { figure, .. }) = (&c.bound, &c.metric) else { return None };
    let observed = doc.metric(&c.metric)?;
    let holds = c.op.holds(observed, *bound);
    let below = match c.op {
        Op::Lt | Op::Le => true,
        Op::Gt | Op::Ge => false,
        Op::Eq => return None,
    };
    let (verdict, how) = match (figure, below, holds) {
        (LatencyFigure::Max, true, false) | (LatencyFigure::Min, false, false) => (Verdict::Refuted, "breaks it"),
        (LatencyFigure::Max, false, true) | (LatencyFigure::Min, true, true) => (Verdict::Supported, "reaches it"),
        _ => return None,
    };
    let name = if matches!(figure, LatencyFigure::Max) { "slowest" } else { "fastest" };
    Some((
        verdict,
        format!("the {name} measured, {}, {how} (an observed extreme, not an estimate)", c.metric.show(observed)),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// commit: fastest 0.144 ms, slowest 29.784 ms.
    fn doc() -> ResultDocument {
        serde_json::from_str(include_str!("../audit/testdata/mariadb_loopback.json")).unwrap()
    }

    fn judged(claim: &str) -> (Verdict, String) {
        let record = judge_value(&Criterion::claim(claim).unwrap(), &doc());
        (record.verdict, record.reason)
    }

    #[test]
    fn an_observed_extreme_past_the_bound_decides_whatever_the_interval() {
        let (verdict, reason) = judged("commit.max<20ms");
        assert_eq!(verdict, Verdict::Refuted, "{reason}");
        assert!(reason.starts_with("the slowest measured, 29.784 ms, breaks it"), "{reason}");
        assert_eq!(judged("commit.min>1ms").0, Verdict::Refuted);
        assert_eq!(judged("commit.min<=1ms").0, Verdict::Supported);
        assert_eq!(judged("commit.max>=25ms").0, Verdict::Supported);
    }

    #[test]
    fn an_extreme_within_its_bound_is_left_to_the_interval() {
        // A slowest under the bound today can be passed by the next run: not supported by
        // the observation alone.
        let (_, reason) = judged("commit.max<60ms");
        assert!(!reason.contains("observed extreme"), "{reason}");
        let (_, reason) = judged("commit.p99<1ms");
        assert!(!reason.contains("observed extreme"), "{reason}");
    }
}
