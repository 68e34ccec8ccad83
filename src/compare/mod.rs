//! Compares results: each headline metric on every side, its ratio to the baseline (the
//! first result) with a 95% confidence interval, the conditions that differ, the findings
//! that make the comparison unfair, claim verdicts and thresholds. Reads result documents
//! only; the statistics are [`crate::stats::interval`]'s.

mod claims;
pub mod diff;
mod subject;

pub use claims::judge_value;
pub use subject::Subject;

use crate::model::comparison::{
    Comparison, Estimate, IntervalMethod, MetricComparison, RatioRecord, Side, SideThreshold, Significance, UnderTest,
    COMPARISON_SCHEMA_NAME, COMPARISON_SCHEMA_VERSION,
};
use crate::model::metric::{self, Better, Quantity};
use crate::model::stats::measured_seconds;
use crate::model::{Criterion, Metric, ResultDocument, ThresholdRecord};
use crate::stats::interval::{self, Interval, Method};

/// Repeats each side needs before intervals come from them rather than from timelines.
pub const MIN_REPEATS: usize = 3;

/// One result file to compare.
pub struct Input {
    pub file: String,
    pub doc: ResultDocument,
}

/// The comparison of `inputs` (the first is the baseline) with verdicts on `claims` and
/// `thresholds` checked on every side.
/// `subject`: the difference under test (`--under-test`), reported apart and not held
/// against the comparison.
pub fn compare(
    inputs: &[Input],
    claims: &[Criterion],
    thresholds: &[Criterion],
    subject: Option<&Subject>,
) -> Comparison {
    let docs: Vec<&ResultDocument> = inputs.iter().map(|i| &i.doc).collect();
    let sides = inputs.iter().enumerate().map(|(i, input)| side(i, input)).collect();
    let mut classes: Vec<&str> = Vec::new();
    for d in &docs {
        classes.extend(d.stats.iter().filter(|(_, s)| s.count > 0).map(|(k, _)| k.as_str()));
    }
    let metrics = metric::headline(&classes)
        .into_iter()
        .filter(|m| docs.iter().any(|d| d.metric(m).is_some()))
        .map(|m| metric_comparison(&m, &docs))
        .collect();
    // A setting under test that alone changes the durability in effect: that change is the
    // subject too.
    let in_effect: Option<Vec<&crate::model::Durability>> =
        docs.iter().map(|d| d.conditions.server.facts.as_ref().map(|f| &f.durability)).collect();
    let explained = subject.zip(in_effect).is_some_and(|(s, sides)| s.explains_durability(&sides));
    let (tested, differences): (Vec<_>, Vec<_>) = diff::differences(&docs)
        .into_iter()
        .partition(|d| subject.is_some_and(|s| s.covers(d)) || explained && diff::is_durability_in_effect(d));
    let findings = diff::findings(&docs, &differences, subject);
    let claims = claims::verdicts(claims, &docs, &findings, subject);
    let thresholds = docs
        .iter()
        .enumerate()
        .flat_map(|(side, d)| {
            thresholds
                .iter()
                .map(move |t| SideThreshold { side, check: ThresholdRecord::check(t, d.metric(&t.metric)) })
        })
        .collect();
    Comparison {
        schema: COMPARISON_SCHEMA_NAME.into(),
        schema_version: COMPARISON_SCHEMA_VERSION,
        sides,
        metrics,
        under_test: subject.map(|s| UnderTest { name: s.name().to_string(), differences: tested }),
        differences,
        findings,
        claims,
        thresholds,
        order: Vec::new(),
    }
}

/// `A`, `B`, ... `Z`, then `S27`...
pub fn label(i: usize) -> String {
    match u8::try_from(i).ok().filter(|&i| i < 26) {
        Some(i) => char::from(b'A' + i).to_string(),
        None => format!("S{}", i + 1),
    }
}

fn side(i: usize, input: &Input) -> Side {
    let c = &input.doc.conditions;
    Side {
        file: input.file.clone(),
        label: label(i),
        workload: c.workload.name.clone(),
        product: c.server.product.clone(),
        version: c.server.version.clone(),
        threads: c.run.threads,
        repeats: input.doc.repeats.len().max(1) as u32,
        measured_s: c.run.measured_s,
        audit: input.doc.audit.clone(),
    }
}

fn metric_comparison(m: &Metric, docs: &[&ResultDocument]) -> MetricComparison {
    let values: Vec<Option<f64>> = docs.iter().map(|d| d.metric(m)).collect();
    let ratios = (1..docs.len())
        .filter_map(|side| {
            let ratio = ratio(values[0], values[side])?;
            let interval = ratio_interval(m, docs[0], docs[side]);
            let significance = match &interval {
                None => Significance::Unknown,
                Some(e) if e.low <= 1.0 && 1.0 <= e.high => Significance::NoSignificantDifference,
                Some(e) => match (e.low > 1.0, m.better()) {
                    (true, Better::Higher) | (false, Better::Lower) => Significance::Better,
                    _ => Significance::Worse,
                },
            };
            Some(RatioRecord { side, ratio, interval, significance })
        })
        .collect();
    MetricComparison {
        metric: m.to_string(),
        unit: unit(m).into(),
        better: match m.better() {
            Better::Higher => "higher",
            Better::Lower => "lower",
        }
        .into(),
        values,
        ratios,
    }
}

fn ratio(base: Option<f64>, other: Option<f64>) -> Option<f64> {
    let (b, o) = (base?, other?);
    (b > 0.0 && o.is_finite()).then(|| o / b)
}

pub fn unit(m: &Metric) -> &'static str {
    match m.quantity() {
        Quantity::Latency | Quantity::Cpu => "us",
        Quantity::Rate => "per_s",
        Quantity::Count => "count",
        Quantity::Fraction => "fraction",
        Quantity::Money => "money",
    }
}

/// Each repeat's value of `m`, when the result has enough repeats and all of them have it.
fn repeat_values(m: &Metric, d: &ResultDocument) -> Option<Vec<f64>> {
    if d.repeats.len() < MIN_REPEATS {
        return None;
    }
    d.repeats.iter().map(|r| m.value(&r.metric_source(d.conditions.run.cost_per_hour))).collect()
}

/// `m` per full measured second, weighted by the events behind it.
fn timeline(m: &Metric, d: &ResultDocument) -> Vec<(f64, f64)> {
    measured_seconds(&d.intervals).filter_map(|i| m.per_second(i, d.conditions.run.cost_per_hour)).collect()
}

/// A fixed seed per metric: the same files always give the same intervals.
fn seed(m: &Metric) -> u64 {
    m.to_string().bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// The 95% interval of other/base for `m`: from the repeats when both sides have 3 or
/// more, else from the two timelines. Centred (multiplicatively) on the ratio of the whole
/// results, the number printed: the method gives the interval's relative width.
pub fn ratio_interval(m: &Metric, base: &ResultDocument, other: &ResultDocument) -> Option<Estimate> {
    let point = ratio(base.metric(m), other.metric(m))?;
    let found = match (repeat_values(m, base), repeat_values(m, other)) {
        (Some(a), Some(b)) => interval::ratio_from_repeats(&a, &b),
        _ => interval::ratio_from_timelines(&timeline(m, base), &timeline(m, other), seed(m)),
    }?;
    centred(found, point)
}

/// The 95% interval of one side's `m`, the same way.
pub fn value_interval(m: &Metric, d: &ResultDocument) -> Option<Estimate> {
    let point = d.metric(m)?;
    let found = match repeat_values(m, d) {
        Some(v) => interval::value_from_repeats(&v),
        None => interval::value_from_timeline(&timeline(m, d), seed(m)),
    }?;
    centred(found, point)
}

fn centred(i: Interval, point: f64) -> Option<Estimate> {
    let method = match i.method {
        Method::Repeats => IntervalMethod::Repeats,
        Method::BlockBootstrap => IntervalMethod::BlockBootstrap,
    };
    // A zero estimate has no relative width: keep the interval as found.
    let scale = if i.estimate > 0.0 && point > 0.0 { point / i.estimate } else { 1.0 };
    let (low, high) = (i.low * scale, i.high * scale);
    (low.is_finite() && high.is_finite()).then_some(Estimate { estimate: point, low, high, method, detail: i.detail })
}
