//! The noise floor of a study: an A/A design is two targets declared alike (the same
//! sandbox engine and settings, or the same URL), run like any other pair. Whatever
//! separates their throughput is noise (the host, the order, caches, a sandbox's own luck),
//! and a ratio between other targets inside that spread says nothing.

use crate::compare::{self, Input};
use crate::model::study::{NoiseFloor, StudyCell};
use crate::model::{Criterion, ResultDocument};

/// Every pair of cells that differ only in which of two alike targets ran them.
pub fn floors(cells: &[StudyCell], docs: &[Option<&ResultDocument>]) -> Vec<NoiseFloor> {
    let mut out = Vec::new();
    for (i, a) in cells.iter().enumerate() {
        for (j, b) in cells.iter().enumerate().skip(i + 1) {
            if a.target != b.target && alike(a, b) {
                out.push(NoiseFloor {
                    targets: [a.target.clone(), b.target.clone()],
                    cells: [a.id.clone(), b.id.clone()],
                    at: a.describe(&["target"]),
                    tps_ratio: docs[i].zip(docs[j]).and_then(|(x, y)| tps_ratio(x, y)),
                });
            }
        }
    }
    out
}

/// The same run on the same kind of target with the same settings, every other axis equal.
fn alike(a: &StudyCell, b: &StudyCell) -> bool {
    let others = |c: &StudyCell| c.values.iter().filter(|v| v.axis != "target").cloned().collect::<Vec<_>>();
    a.run == b.run
        && a.settings == b.settings
        && a.target_kind == b.target_kind
        && a.faults == b.faults
        && others(a) == others(b)
}

/// `b`'s throughput over `a`'s with its interval between repeats.
fn tps_ratio(a: &ResultDocument, b: &ResultDocument) -> Option<crate::model::comparison::Estimate> {
    let any = Criterion::claim("tps>=1x").ok()?;
    let inputs = [a, b].map(|d| Input { file: String::new(), doc: d.clone() });
    let comparison = compare::compare(&inputs, std::slice::from_ref(&any), &[], None);
    comparison.claims.into_iter().next()?.evidence
}

/// Marks a throughput ratio whose estimate lies inside the A/A pairs' spread
/// (`within-noise-floor`): the study's own noise could have made it.
pub fn mark(claims: &mut [crate::model::study::StudyClaim], floors: &[NoiseFloor]) {
    let spreads: Vec<(f64, f64)> =
        floors.iter().filter_map(|f| f.tps_ratio.as_ref()).map(|e| (e.low, e.high)).collect();
    let Some(low) = spreads.iter().map(|s| s.0.min(1.0 / s.1)).reduce(f64::min) else { return };
    let high = spreads.iter().map(|s| s.1.max(1.0 / s.0)).fold(f64::MIN, f64::max);
    for claim in claims.iter_mut().filter(|c| c.claim.check.starts_with("tps") || c.claim.check.starts_with("qps")) {
        for check in claim.checks.iter_mut().filter(|k| k.baseline_cell.is_some()) {
            let inside = check.evidence.as_ref().is_some_and(|e| e.estimate >= low && e.estimate <= high);
            if inside && !check.undermined_by.iter().any(|u| u == "within-noise-floor") {
                check.undermined_by.push("within-noise-floor".into());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::comparison::{Estimate, IntervalMethod, Verdict};
    use crate::model::study::{ClaimCheck, ClaimDefinition, StudyClaim};

    fn estimate(estimate: f64, low: f64, high: f64) -> Estimate {
        Estimate { estimate, low, high, method: IntervalMethod::Repeats, detail: 3 }
    }

    fn claim(check: &str, ratio: f64) -> StudyClaim {
        let k = ClaimCheck {
            baseline_cell: Some("c01".into()),
            cell: "c02".into(),
            at: String::new(),
            verdict: Verdict::Supported,
            evidence: Some(estimate(ratio, ratio * 0.99, ratio * 1.01)),
            reason: String::new(),
            undermined_by: vec![],
        };
        let claim = ClaimDefinition {
            id: None,
            says: String::new(),
            check: check.into(),
            vary: None,
            baseline: None,
            subject: None,
            only: Default::default(),
        };
        StudyClaim { claim, verdict: Verdict::Supported, reason: String::new(), as_run: String::new(), checks: vec![k] }
    }

    #[test]
    fn a_throughput_ratio_inside_the_a_a_spread_either_way_is_marked() {
        let floor = NoiseFloor {
            targets: ["a".into(), "b".into()],
            cells: ["c03".into(), "c04".into()],
            at: String::new(),
            tps_ratio: Some(estimate(1.02, 0.95, 1.10)),
        };
        // The spread both ways: 1/1.10 = 0.909 up to 1/0.95 = 1.053, joined with 0.95-1.10.
        let mut claims = vec![claim("tps>=1.05x", 1.08), claim("tps>=1.05x", 0.92), claim("tps>=1.05x", 1.2)];
        claims.push(claim("p99<=0.5x", 1.0));
        mark(&mut claims, std::slice::from_ref(&floor));
        let marked: Vec<bool> = claims.iter().map(|c| c.checks[0].undermined_by == ["within-noise-floor"]).collect();
        assert_eq!(marked, [true, true, false, false]);
    }
}
