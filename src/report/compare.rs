//! `fairbench compare` as text (a table a person reads) or JSON (the comparison document).

use crate::model::comparison::{
    Comparison, Difference, Estimate, IntervalMethod, MetricComparison, Significance, Verdict,
};
use crate::model::Metric;
use std::fmt::Write;

use super::{Report, ReportOptions};

/// The comparison document itself, pretty-printed.
pub struct CompareJson;

impl Report<Comparison> for CompareJson {
    fn render(&self, c: &Comparison, _: &ReportOptions) -> String {
        crate::model::pretty_json(c)
    }
}

/// `all`: every difference (else each product's own settings, those only one side has,
/// are counted per side rather than listed).
pub struct CompareText {
    pub all: bool,
}

/// Rows of one group of differences printed before the rest is left to `--json`.
const MAX_ROWS_PER_GROUP: usize = 25;

impl Report<Comparison> for CompareText {
    fn render(&self, c: &Comparison, _: &ReportOptions) -> String {
        let mut o = String::new();
        // The answer first: what differs on purpose, however long, comes after it.
        sides(&mut o, c);
        verdict(&mut o, c);
        metrics(&mut o, c);
        under_test(&mut o, c);
        differences(&mut o, c, self.all);
        let _ = writeln!(o);
        o.push_str(&super::findings("Comparison findings", &c.findings));
        for s in &c.sides {
            let count = |sev: crate::model::Severity| s.audit.iter().filter(|f| f.severity == sev).count();
            let ids: Vec<&str> = s.audit.iter().map(|f| f.id.as_str()).collect();
            let _ = writeln!(
                o,
                "  {}'s own audit: {} critical, {} warn, {} info ({})",
                s.label,
                count(crate::model::Severity::Critical),
                count(crate::model::Severity::Warn),
                count(crate::model::Severity::Info),
                if ids.is_empty() { "nothing found".into() } else { ids.join(", ") }
            );
        }
        claims(&mut o, c);
        thresholds(&mut o, c);
        o
    }
}

fn sides(o: &mut String, c: &Comparison) {
    let _ = writeln!(o, "Comparing {} results (A is the baseline):", c.sides.len());
    if !c.order.is_empty() {
        let _ = writeln!(o, "  measured in turns: {}", c.order.join(" "));
    }
    for s in &c.sides {
        let _ = writeln!(
            o,
            "  {} = {}: {} on {} {}, {} client{}, {} repeat{}, {:.1} s measured",
            s.label,
            s.file,
            s.workload,
            s.product,
            s.version,
            s.threads,
            if s.threads == 1 { "" } else { "s" },
            s.repeats,
            if s.repeats == 1 { "" } else { "s" },
            s.measured_s
        );
    }
}

/// The answer before the table: per side, one sentence on throughput and tail latency
/// against A; then each claim's verdict.
fn verdict(o: &mut String, c: &Comparison) {
    let _ = writeln!(o);
    for sentence in verdict_sentences(c) {
        let _ = writeln!(o, "{sentence}");
    }
}

/// The verdict as sentences, for the text and the HTML report: `B: 1.24x the transactions
/// per second of A (95% interval 1.03-1.49x); COMMIT p99 0.13x A's (...).`, then
/// `Claim tps>=2x (B): supported.`
pub fn verdict_sentences(c: &Comparison) -> Vec<String> {
    let mut out = Vec::new();
    let find = |name: &str| c.metrics.iter().find(|m| m.metric == name);
    let rate = find("tps").or_else(|| find("qps"));
    let tail = find("commit.p99").or_else(|| find("p99"));
    for side in 1..c.sides.len() {
        let mut parts = Vec::new();
        if let Some(part) = rate.and_then(|m| ratio_sentence(m, side, true)) {
            parts.push(part);
        }
        if let Some(part) = tail.and_then(|m| ratio_sentence(m, side, false)) {
            parts.push(part);
        }
        if !parts.is_empty() {
            out.push(format!("{}: {}.", c.sides[side].label, parts.join("; ")));
        }
    }
    for claim in &c.claims {
        let verdict = match claim.verdict {
            Verdict::Supported => "supported",
            Verdict::Refuted => "refuted",
            Verdict::Inconclusive => "inconclusive",
        };
        let undermined = match claim.undermined_by.len() {
            0 => String::new(),
            _ => format!(" (undermined by {})", claim.undermined_by.join(", ")),
        };
        out.push(format!("Claim {} ({}): {verdict}{undermined}.", claim.claim, c.sides[claim.side].label));
    }
    out
}

/// `1.24x the transactions per second of A (95% interval 1.03-1.49x)`, or for a latency
/// `COMMIT p99 0.13x A's (...)`; says when the interval holds 1.
fn ratio_sentence(m: &MetricComparison, side: usize, first: bool) -> Option<String> {
    let r = m.ratios.iter().find(|r| r.side == side)?;
    let what = match m.metric.as_str() {
        "tps" => "the transactions per second".to_string(),
        "qps" => "the queries per second".to_string(),
        "commit.p99" => "COMMIT p99".to_string(),
        other => other.replace('.', " "),
    };
    let head = match first {
        true => format!("{:.2}x {what} of A", r.ratio),
        false => format!("{what} {:.2}x A's", r.ratio),
    };
    Some(match (&r.interval, r.significance) {
        (Some(e), Significance::NoSignificantDifference) => {
            format!("{head} (95% interval {:.2}-{:.2}x: no significant difference)", e.low, e.high)
        }
        (Some(e), _) => format!("{head} (95% interval {:.2}-{:.2}x)", e.low, e.high),
        (None, _) => format!("{head} (no interval)"),
    })
}

fn metrics(o: &mut String, c: &Comparison) {
    let _ = writeln!(o);
    let methods: Vec<IntervalMethod> =
        c.metrics.iter().flat_map(|m| m.ratios.iter().filter_map(|r| r.interval.as_ref().map(|e| e.method))).collect();
    let _ = writeln!(
        o,
        "Ratios to A with 95% confidence intervals{}:",
        match (methods.contains(&IntervalMethod::Repeats), methods.contains(&IntervalMethod::BlockBootstrap)) {
            (true, false) => ", from the repeats (Welch t on the logarithms)",
            (false, true) => ", from the per-second timelines (moving-block bootstrap: one run per side)",
            (true, true) => " (R: from the repeats; T: from the per-second timelines)",
            (false, false) => "",
        }
    );
    if c.metrics.iter().any(|m| m.ratios.iter().any(|r| r.interval.is_none())) {
        let _ = writeln!(
            o,
            "(\"no interval\": fewer than 3 repeats and 10 measured seconds on a side, or a metric the timeline does not carry)"
        );
    }
    let mut header = format!("{:<16}", "metric");
    for s in &c.sides {
        let _ = write!(header, " {:>14}", s.label);
    }
    for s in c.sides.iter().skip(1) {
        let _ = write!(header, "  {:<40}", format!("{}/A", s.label));
    }
    let _ = writeln!(o, "{}", header.trim_end());
    for m in &c.metrics {
        let _ = writeln!(o, "{}", metric_row(m, c.sides.len()).trim_end());
    }
}

fn metric_row(m: &MetricComparison, sides: usize) -> String {
    let metric = Metric::parse(&m.metric).ok();
    let show = |v: f64| metric.as_ref().map_or(format!("{v:.3}"), |x| x.show(v));
    let mut row = format!("{:<16}", m.metric);
    for v in &m.values {
        let _ = write!(row, " {:>14}", v.map_or("-".into(), show));
    }
    for side in 1..sides {
        let cell = match m.ratios.iter().find(|r| r.side == side) {
            None => "-".to_string(),
            Some(r) => {
                let verdict = match r.significance {
                    Significance::NoSignificantDifference => "no significant difference",
                    Significance::Better => "better",
                    Significance::Worse => "worse",
                    Significance::Unknown => "no interval",
                };
                match &r.interval {
                    Some(e) => format!("{:.3}x [{:.3}, {:.3}]{} {verdict}", r.ratio, e.low, e.high, tag(e)),
                    None => format!("{:.3}x {verdict}", r.ratio),
                }
            }
        };
        let _ = write!(row, "  {cell:<40}");
    }
    row
}

fn tag(e: &Estimate) -> &'static str {
    match e.method {
        IntervalMethod::Repeats => " R",
        IntervalMethod::BlockBootstrap => " T",
    }
}

fn differences(o: &mut String, c: &Comparison, all: bool) {
    let _ = writeln!(o);
    if c.differences.is_empty() {
        let _ = writeln!(o, "Conditions: the same on every side.");
        return;
    }
    let own: Vec<&Difference> = c.differences.iter().filter(|d| !all && d.one_sided()).collect();
    let listed: Vec<&Difference> = c.differences.iter().filter(|d| all || !d.one_sided()).collect();
    let _ = writeln!(o, "Conditions that differ ({}):", c.differences.len());
    let _ = writeln!(
        o,
        "  (* changes what the numbers may mean; unmarked: a variable no rule reads, or the same value within 1%)"
    );
    if !own.is_empty() {
        let per_side: Vec<String> = c
            .sides
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let n = own.iter().filter(|d| d.values[i].is_some()).count();
                format!("{} {n}", s.label)
            })
            .collect();
        let _ = writeln!(
            o,
            "  each product's own settings (on some sides only; --all lists them): {}",
            per_side.join(", ")
        );
    }
    let mut group = "";
    let mut shown = 0;
    for (i, d) in listed.iter().enumerate() {
        if d.group != group {
            group = &d.group;
            shown = 0;
            let _ = writeln!(o, "  {group}:");
        }
        shown += 1;
        if shown > MAX_ROWS_PER_GROUP && !all {
            let left = listed[i..].iter().take_while(|x| x.group == group).count();
            if shown == MAX_ROWS_PER_GROUP + 1 {
                let _ = writeln!(o, "    ... {left} more (all of them with --json)");
            }
            continue;
        }
        difference_row(o, c, d, d.matters());
    }
}

/// `marked`: with `*`, a difference that matters.
fn difference_row(o: &mut String, c: &Comparison, d: &Difference, marked: bool) {
    let values: Vec<String> = d
        .values
        .iter()
        .enumerate()
        .map(|(side, v)| format!("{}: {}", c.sides[side].label, v.as_deref().unwrap_or("(none)")))
        .collect();
    let _ = writeln!(o, "  {} {:<34} {}", if marked { '*' } else { ' ' }, d.key, values.join("   "));
}

/// `--under-test`: the difference the comparison is about, before the numbers.
fn under_test(o: &mut String, c: &Comparison) {
    let Some(u) = &c.under_test else { return };
    let _ = writeln!(o);
    match u.differences.len() {
        0 => {
            let _ = writeln!(o, "Under test: {} (but it is the same on every side).", u.name);
        }
        n => {
            let _ = writeln!(
                o,
                "Under test: {} ({n} difference{}, the subject of this comparison: not held against it):",
                u.name,
                if n == 1 { "" } else { "s" }
            );
            for d in u.differences.iter().take(MAX_ROWS_PER_GROUP) {
                difference_row(o, c, d, false);
            }
            if n > MAX_ROWS_PER_GROUP {
                let _ = writeln!(o, "    ... {} more (all of them with --json)", n - MAX_ROWS_PER_GROUP);
            }
        }
    }
}

fn claims(o: &mut String, c: &Comparison) {
    if c.claims.is_empty() {
        return;
    }
    let _ = writeln!(o, "\nClaims:");
    for claim in &c.claims {
        let side = &c.sides[claim.side].label;
        let verdict = match claim.verdict {
            Verdict::Supported => "SUPPORTED",
            Verdict::Refuted => "REFUTED",
            Verdict::Inconclusive => "INCONCLUSIVE",
        };
        // A ratio is B against A; an absolute bound is about B alone.
        let about = if claim.claim.ends_with('x') { format!("{side} against A") } else { side.clone() };
        let _ = writeln!(o, "  {} ({about}): {verdict}: {}", claim.claim, claim.reason);
        if !claim.undermined_by.is_empty() {
            let _ = writeln!(o, "      undermined by: {}", claim.undermined_by.join(", "));
        }
    }
}

fn thresholds(o: &mut String, c: &Comparison) {
    if c.thresholds.is_empty() {
        return;
    }
    let _ = writeln!(o, "\nThresholds:");
    for t in &c.thresholds {
        let value = match (t.check.value, Metric::parse(&t.check.metric)) {
            (Some(v), Ok(m)) => m.show(v),
            _ => "not measured".into(),
        };
        let _ = writeln!(
            o,
            "  {} {}: {} ({value})",
            c.sides[t.side].label,
            t.check.threshold,
            if t.check.passed { "pass" } else { "FAIL" }
        );
    }
}
