//! The three pages: one result, a comparison, a sweep. Each returns its title, its body and
//! its charts (drawn into the body's figures by report.js).

use super::chart::Chart;
use super::data;
use super::escape::html as esc;
use super::multi::{self, reading};
use super::single::{self, bytes, loop_model, ms3, rate};
use super::{details, figures, findings, severity_counts, table, TableCell};
use crate::model::comparison::Comparison;
use crate::model::stats::trim_float;
use crate::model::sweep::SweepDocument;
use crate::model::{Finding, ResultDocument};
use std::collections::BTreeMap;
use std::fmt::Write;

pub fn single_page(file: &str, d: &ResultDocument) -> (String, String, Vec<Chart>) {
    let c = &d.conditions;
    let title = format!("{} on {}", c.workload.name, crate::report::probed::subject(d));
    let mut charts = data::single_charts(d);
    // Without a probe the faults were performed on the run's own clock: marked on its timeline.
    if let (Some(f), None) = (&d.faults, &d.ha) {
        let marks = super::ha::fault_marks(Some(f));
        for c in charts.iter_mut().filter(|c| c.x.format == "s") {
            c.marks.extend(marks.iter().cloned());
        }
    }
    if let Some(h) = &d.ha {
        charts.extend(super::ha::charts(h, d.faults.as_ref()));
    }
    let mut o = format!("<header><h1>fairbench: {}</h1></header>", esc(&title));
    let _ = write!(o, "<section class=\"headline\">{}</section>", single::headline(file, d));
    let _ = write!(
        o,
        "<section><h2>Audit ({})</h2>{}</section>",
        esc(&severity_counts(&d.audit)),
        findings(&d.audit, "The audit found nothing that makes these numbers misleading.")
    );
    o.push_str(&single::thresholds(d));
    for section in crate::report::sections::HTML_BEFORE_CHARTS {
        o.push_str(&section.html(d));
    }
    o.push_str("<section><h2>Charts</h2>");
    if d.intervals.iter().any(|i| i.warmup) {
        o.push_str("<p class=\"muted\">Grey bands: warmup (not measured). One point per second, not smoothed.</p>");
    }
    if charts.is_empty() {
        o.push_str("<p class=\"none\">No timeline was recorded.</p>");
    }
    o.push_str(&figures(&charts, ""));
    o.push_str("</section>");
    o.push_str(&single::repeats(d));
    o.push_str(&single::errors(d));
    let _ = write!(o, "<section><h2>Statements</h2>{}</section>", single::statements(d));
    o.push_str(&single::conditions(d));
    (format!("fairbench: {title} ({file})"), o, charts)
}

pub fn compare_page(files: &[&str], docs: &[&ResultDocument], c: &Comparison) -> (String, String, Vec<Chart>) {
    let labels: Vec<String> =
        (0..docs.len()).map(|i| c.sides.get(i).map_or_else(|| format!("S{}", i + 1), |s| s.label.clone())).collect();
    let legends: Vec<String> =
        labels.iter().enumerate().map(|(i, l)| format!("{l}: {}", files.get(i).copied().unwrap_or(""))).collect();
    let charts = multi::compare_charts(&legends, docs, c);
    let mut o = format!("<header><h1>fairbench comparison: {} results (A is the baseline)</h1></header>", docs.len());
    o.push_str(&verdict(&labels, c));
    o.push_str(&side_by_side(&labels, files, docs));
    let _ = write!(
        o,
        "<section><h2>Comparison findings ({})</h2>{}</section>",
        esc(&severity_counts(&c.findings)),
        findings(&c.findings, "Nothing found that makes this comparison unfair.")
    );
    let _ = write!(
        o,
        "<section><h2>Metrics and ratios to A</h2><p class=\"muted\">An interval that contains 1 reads \
         <em>no significant difference</em>; without an interval (too few seconds or repeats, or a metric the \
         timeline does not carry) only the raw ratio is shown, with no error bar.</p>{}{}</section>",
        metrics(&labels, c),
        figures(&charts, "ratios")
    );
    let _ = write!(
        o,
        "<section><h2>Timelines and distributions</h2><p class=\"muted\">Grey bands: warmup. One point per second, \
         not smoothed.</p>{}</section>",
        figures(&charts, "cmp-")
    );
    o.push_str(&differences(&labels, c));
    o.push_str(&claims(&labels, c));
    o.push_str(&each_sides_audit(&labels, files, docs));
    let title = format!("fairbench comparison: {}", files.join(" vs "));
    (title, o, charts)
}

/// The results side by side, the baseline first.
fn side_by_side(labels: &[String], files: &[&str], docs: &[&ResultDocument]) -> String {
    let stat = |d: &ResultDocument, class: &str| d.stats.get(class).cloned().unwrap_or_default();
    let rows = docs
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let k = &d.conditions;
            vec![
                TableCell::text(&labels[i]).strong(),
                TableCell::text(files.get(i).copied().unwrap_or("")),
                TableCell::text(&k.workload.name),
                TableCell::text(&format!("{} {}", k.server.product, k.server.version)),
                TableCell::num(k.run.threads.to_string()),
                TableCell::text(&loop_model(d)),
                TableCell::num(format!("{:.1}", k.run.measured_s)),
                TableCell::num(d.repeats.len().max(1).to_string()),
                TableCell::num(rate(stat(d, "total").qps)),
                TableCell::num(rate(stat(d, "event").qps)),
                TableCell::num(ms3(stat(d, "event").p95_us)),
                TableCell::num(ms3(stat(d, "event").p99_us)),
                TableCell::text(&severity_counts(&d.audit)),
            ]
        })
        .collect();
    let head = [
        "",
        "file",
        "workload",
        "target",
        "clients",
        "loop",
        "measured s",
        "repeats",
        "queries/s",
        "events/s",
        "p95 ms",
        "p99 ms",
        "audit",
    ];
    format!("<section class=\"headline\">{}</section>", table(&head, rows, "num"))
}

/// Each metric's values, and each side's ratio to A with its interval and reading.
fn metrics(labels: &[String], c: &Comparison) -> String {
    let mut head: Vec<String> = vec!["metric".into(), "better".into()];
    head.extend(labels.iter().cloned());
    for l in labels.iter().skip(1) {
        head.push(format!("{l} / A (95% interval)"));
        head.push(format!("{l}: reading"));
    }
    let rows = c
        .metrics
        .iter()
        .map(|m| {
            let metric = crate::model::Metric::parse(&m.metric).ok();
            let show = |v: Option<f64>| match (v, &metric) {
                (Some(v), Some(mm)) => mm.show(v),
                (Some(v), None) => format!("{v}"),
                _ => "-".into(),
            };
            let mut r = vec![TableCell::code(&m.metric), TableCell::text(&m.better)];
            r.extend(m.values.iter().map(|v| TableCell::num(show(*v))));
            for side in 1..labels.len() {
                let Some(rr) = m.ratios.iter().find(|r| r.side == side) else {
                    r.extend([TableCell::num("-".into()), TableCell::text("no ratio")]);
                    continue;
                };
                let text = match &rr.interval {
                    Some(e) => format!("{:.3}x [{:.3}, {:.3}]", rr.ratio, e.low, e.high),
                    None => format!("{:.3}x", rr.ratio),
                };
                let says = reading(rr.significance, rr.interval.is_some());
                r.extend([TableCell::num(text), TableCell::text(says).class(&says.replace([' ', ':'], "-"))]);
            }
            r
        })
        .collect();
    let head: Vec<&str> = head.iter().map(String::as_str).collect();
    table(&head, rows, "num")
}

/// Each side's own audit, folded.
fn each_sides_audit(labels: &[String], files: &[&str], docs: &[&ResultDocument]) -> String {
    let mut o = String::from("<section><h2>Each side's own audit</h2>");
    for (i, d) in docs.iter().enumerate() {
        let ids: Vec<&str> = d.audit.iter().map(|f| f.id.as_str()).collect();
        let summary = format!(
            "{}: {} ({}){}",
            labels[i],
            files.get(i).copied().unwrap_or(""),
            severity_counts(&d.audit),
            if ids.is_empty() { String::new() } else { format!(": {}", ids.join(", ")) }
        );
        o.push_str(&details(&summary, &findings(&d.audit, "nothing found"), false, ""));
    }
    o.push_str("</section>");
    o
}

/// The answer first: the difference under test, then one sentence per side and per claim.
fn verdict(labels: &[String], c: &Comparison) -> String {
    let mut o = String::from("<section class=\"verdict\">");
    if let Some(u) = &c.under_test {
        let _ = write!(
            o,
            "<p class=\"under-test\">Under test: <strong>{}</strong> — the subject of this comparison, not held \
             against it{}</p>",
            esc(&u.name),
            if u.differences.is_empty() { " (but it is the same on every side)" } else { "" }
        );
        if !u.differences.is_empty() {
            let mut head: Vec<&str> = vec!["key"];
            head.extend(labels.iter().map(String::as_str));
            let rows = u
                .differences
                .iter()
                .map(|d| {
                    let mut r = vec![TableCell::code(&d.key)];
                    r.extend(d.values.iter().map(|v| TableCell::text(v.as_deref().unwrap_or("(absent)"))));
                    r
                })
                .collect();
            o.push_str(&table(&head, rows, "diff"));
        }
    }
    for sentence in crate::report::verdict_sentences(c) {
        let _ = write!(o, "<p class=\"sentence\">{}</p>", esc(&sentence));
    }
    o.push_str("</section>");
    o
}

/// The conditions that differ, grouped; values unlike the baseline's highlighted where the
/// difference matters (not a row estimate off by one, not a variable no rule reads).
fn differences(labels: &[String], c: &Comparison) -> String {
    let mut o = format!("<section><h2>Conditions that differ ({})</h2>", c.differences.len());
    if c.differences.is_empty() {
        o.push_str("<p class=\"none\">Every recorded condition is the same on every side.</p>");
    }
    let mut groups: Vec<(&str, Vec<&crate::model::comparison::Difference>)> = vec![];
    for d in &c.differences {
        match groups.iter_mut().find(|(g, _)| *g == d.group) {
            Some((_, v)) => v.push(d),
            None => groups.push((&d.group, vec![d])),
        }
    }
    let mut head: Vec<&str> = vec!["key"];
    head.extend(labels.iter().map(String::as_str));
    for (group, diffs) in groups {
        let rows = diffs
            .iter()
            .map(|d| {
                let base = d.values.first().cloned().flatten();
                let mut r = vec![TableCell::code(&d.key)];
                for (i, v) in d.values.iter().enumerate() {
                    let cell = TableCell::text(v.as_deref().unwrap_or("(absent)"));
                    r.push(if i > 0 && *v != base && d.matters() { cell.class("differs") } else { cell });
                }
                r
            })
            .collect();
        let summary = format!("{group} ({})", diffs.len());
        o.push_str(&details(&summary, &table(&head, rows, "diff"), diffs.len() <= 25, ""));
    }
    o.push_str("</section>");
    o
}

fn claims(labels: &[String], c: &Comparison) -> String {
    let mut o = String::new();
    if !c.claims.is_empty() {
        let rows = c
            .claims
            .iter()
            .map(|k| {
                vec![
                    TableCell::code(&k.claim),
                    TableCell::text(labels.get(k.side).map_or("?", |s| s.as_str())),
                    TableCell::text(k.verdict.name()).class(k.verdict.name()),
                    TableCell::text(&k.reason),
                    TableCell::text(&k.undermined_by.join(", ")),
                ]
            })
            .collect();
        let _ = write!(
            o,
            "<section><h2>Claims</h2>{}</section>",
            table(&["claim", "side", "verdict", "why", "undermined by"], rows, "")
        );
    }
    if !c.thresholds.is_empty() {
        let rows = c
            .thresholds
            .iter()
            .map(|t| {
                vec![
                    TableCell::code(&t.check.threshold),
                    TableCell::text(labels.get(t.side).map_or("?", |s| s.as_str())),
                    TableCell::num(t.check.value.map_or("not measured".into(), |v| format!("{v}"))),
                    if t.check.passed {
                        TableCell::text("pass").class("pass")
                    } else {
                        TableCell::text("FAIL").class("fail")
                    },
                ]
            })
            .collect();
        let _ = write!(
            o,
            "<section><h2>Thresholds</h2>{}</section>",
            table(&["threshold", "side", "value", "verdict"], rows, "")
        );
    }
    o
}

pub fn sweep_page(file: &str, s: &SweepDocument) -> (String, String, Vec<Chart>) {
    let charts = multi::sweep_charts(s);
    let first = s.points.first().map(|p| &p.result);
    let product =
        first.map_or(String::new(), |r| format!(" on {} {}", r.conditions.server.product, r.conditions.server.version));
    let title = format!("sweep of {}{product}", s.workload);
    let mut o = format!("<header><h1>fairbench: {}</h1></header>", esc(&title));
    let list = |v: Vec<String>| v.join(", ");
    let facts: Vec<(&str, String)> = vec![
        ("target", s.target.clone()),
        ("points", s.points.len().to_string()),
        ("clients", list(s.threads.iter().map(u32::to_string).collect())),
        ("tables", list(s.tables.iter().map(u32::to_string).collect())),
        ("rows per table", list(s.table_sizes.iter().map(u64::to_string).collect())),
        ("loop model", first.map_or("-".into(), loop_model)),
        (
            "per point",
            first.map_or("-".into(), |r| {
                format!(
                    "{} s warmup, {} s limit",
                    r.conditions.run.warmup_s,
                    r.conditions.run.time_limit_s.map_or("-".into(), trim_float)
                )
            }),
        ),
    ];
    o.push_str("<section class=\"headline\"><dl class=\"facts\">");
    for (k, v) in facts {
        let _ = write!(o, "<div><dt>{}</dt><dd>{}</dd></div>", esc(k), esc(&v));
    }
    let _ = write!(o, "</dl><p class=\"muted\">{}</p>", esc(file));
    o.push_str("<h3>Saturation</h3>");
    if s.saturation.is_empty() {
        o.push_str("<p>Not reached: throughput grew, or latency did not rise, at every step.</p>");
    }
    for sat in &s.saturation {
        let _ = write!(
            o,
            "<p class=\"sat\">At <strong>{} client{}</strong> ({} table(s) of {} rows, {:.1} events/s): {}</p>",
            sat.threads,
            if sat.threads == 1 { "" } else { "s" },
            sat.tables,
            sat.table_size,
            sat.tps,
            esc(&sat.reason)
        );
    }
    if !s.cache_cliffs.is_empty() {
        o.push_str("<h3>Past the cache</h3>");
    }
    for c in &s.cache_cliffs {
        let _ = write!(o, "<p class=\"sat\">{}</p>", esc(&c.reason));
    }
    o.push_str("</section>");
    o.push_str(&sweep_audit(s));
    let _ = write!(
        o,
        "<section><h2>Charts</h2><p class=\"muted\">Per event latency; the vertical lines mark the saturation \
         point and the largest cache.</p>{}</section>",
        figures(&charts, "sweep-")
    );
    o.push_str(&sweep_table(s));
    if let Some(r) = first {
        o.push_str("<p class=\"muted\">Conditions of the first point (every point's are in the sweep file):</p>");
        o.push_str(&single::conditions(r));
    }
    (format!("fairbench: {title} ({file})"), o, charts)
}

/// Every audit finding of the points, once, with the points it was found on.
fn sweep_audit(s: &SweepDocument) -> String {
    let mut seen: BTreeMap<String, (Finding, Vec<String>)> = BTreeMap::new();
    for p in &s.points {
        for f in &p.result.audit {
            let at = format!("{}x{}/{}c", p.tables, p.table_size, p.threads);
            seen.entry(f.id.clone()).or_insert_with(|| (f.clone(), vec![])).1.push(at);
        }
    }
    let list: Vec<Finding> = seen
        .into_values()
        .map(|(mut f, at)| {
            f.title = format!("{} (points: {})", f.title, at.join(", "));
            f
        })
        .collect();
    format!(
        "<section><h2>Audit of the points ({})</h2>{}</section>",
        esc(&severity_counts(&list)),
        findings(&list, "The audit found nothing on any point.")
    )
}

fn sweep_table(s: &SweepDocument) -> String {
    let rows = s
        .points
        .iter()
        .map(|p| {
            let r = &p.result;
            let stat = |class: &str| r.stats.get(class).cloned().unwrap_or_default();
            let ds = &r.conditions.dataset;
            let cache = ds.describe_cache_fit();
            let saturated =
                s.saturation.iter().any(|x| (x.tables, x.table_size, x.threads) == (p.tables, p.table_size, p.threads));
            vec![
                TableCell::num(p.tables.to_string()),
                TableCell::num(p.table_size.to_string()),
                TableCell::num(p.threads.to_string()),
                TableCell::num(format!("{:.1}", stat("total").qps)),
                TableCell::num(format!("{:.1}", stat("event").qps)),
                TableCell::num(ms3(stat("event").p95_us)),
                TableCell::num(ms3(stat("event").p99_us)),
                TableCell::num(bytes(ds.total_bytes)),
                TableCell::text(&cache),
                TableCell::text(r.conditions.run.status.name()),
                if saturated { TableCell::text("saturation").class("sat") } else { TableCell::text("") },
            ]
        })
        .collect();
    let head = [
        "tables",
        "rows/table",
        "clients",
        "queries/s",
        "events/s",
        "p95 ms",
        "p99 ms",
        "data",
        "data vs cache",
        "status",
        "",
    ];
    format!("<section><h2>Sweep table</h2>{}</section>", table(&head, rows, "num"))
}
