//! A study as one page, the answer first: each claim's verdict in words and its checks'
//! ratios with their intervals; then throughput and p99 against each swept axis, one line
//! per target (dashed: the 95% interval's ends); the cost table; every cell; the runs that
//! did not complete.

use super::chart::{sig, Axis, Chart, Mark, Series};
use super::escape::html as esc;
use super::{figures, table, TableCell};
use crate::model::comparison::Estimate;
use crate::model::study::{CellFigures, StudyCell, StudyDocument};
use crate::model::RunStatus;
use crate::report::study::{
    cell_conditions, cell_rows, condition_summary, cost_row, repeat_row, rounds_line, rounds_words, what, CELL_HEADER,
    COST_HEADER, REPEAT_HEADER,
};
use serde_json::Value;
use std::fmt::Write;

pub fn study_page(
    file: &str,
    d: &StudyDocument,
    cell_docs: &[(String, crate::model::ResultDocument)],
) -> (String, String, Vec<Chart>) {
    let charts = study_charts(d);
    let title = format!("study: {}", d.title);
    let mut o = format!("<header><h1>{}</h1>", esc(&d.title));
    if let Some(q) = &d.question {
        let _ = write!(o, "<p class=\"question\">{}</p>", esc(q));
    }
    let _ = write!(o, "<p class=\"muted\">{} ({})</p></header>", esc(&d.file), esc(file));
    if let Some(seed) = &d.seed {
        o.push_str(&crate::report::study_seed::seed_html(seed, esc));
    }
    o.push_str(&verdicts(d));
    o.push_str(&noise(d));
    o.push_str(&figures(&charts, "study-ratio"));
    if charts.iter().any(|c| c.id.starts_with("study-axis")) {
        o.push_str("<section><h2>Against each axis</h2>");
        for c in &d.cliffs {
            let _ = write!(o, "<p class=\"cliff\"><strong>Cache cliff:</strong> {}</p>", esc(&c.describe()));
        }
        o.push_str(&figures(&charts, "study-axis"));
        o.push_str("</section>");
    }
    o.push_str(&probes(d));
    o.push_str(&costs(d));
    o.push_str(&cells(d));
    o.push_str(&conditions(d));
    o.push_str(&runs(d));
    o.push_str(&cell_reports(d, cell_docs));
    (title, o, charts)
}

fn noise(d: &StudyDocument) -> String {
    if d.noise.is_empty() {
        return String::new();
    }
    let items: String = d.noise.iter().map(|f| format!("<li>{}</li>", esc(&f.describe()))).collect();
    format!(
        "<section><h2>Noise floor</h2><p class=\"muted\">{}</p><ul>{items}</ul></section>",
        esc(crate::report::study::NOISE_IS)
    )
}

fn verdicts(d: &StudyDocument) -> String {
    let mut o = String::from("<section class=\"verdict\" id=\"verdicts\"><h2>Verdicts</h2>");
    if !d.claims.is_empty() {
        let _ = write!(o, "<p class=\"muted\">{}</p>", esc(crate::report::study::VERDICTS_ARE));
    }
    if d.claims.is_empty() {
        o.push_str("<p class=\"none\">No claims declared: the cells' figures below are the study's answer.</p>");
    }
    for c in &d.claims {
        let v = c.verdict.name();
        let _ = write!(
            o,
            "<p class=\"sentence claim-{v}\"><span class=\"verdict-word {v}\">{}</span> &ldquo;{}&rdquo;</p><p>as run: {}</p><p class=\"muted\"><code>{}</code>: {}</p>",
            esc(&v.to_uppercase()),
            esc(&c.claim.says),
            esc(if c.as_run.is_empty() { "no side has a result yet" } else { &c.as_run }),
            esc(&what(c)),
            esc(&c.reason)
        );
        let rows = c
            .checks
            .iter()
            .map(|k| {
                vec![
                    TableCell::text(&match &k.baseline_cell {
                        Some(b) => format!("{} vs {b}", k.cell),
                        None => k.cell.clone(),
                    }),
                    TableCell::text(&k.at),
                    TableCell::text(k.verdict.name()).class(k.verdict.name()),
                    TableCell::text(&k.reason),
                    TableCell::text(&k.undermined_by.join(", ")),
                ]
            })
            .collect();
        o.push_str(&table(&["cells", "at", "verdict", "why", "undermined by"], rows, ""));
    }
    o.push_str("</section>");
    o
}

/// Every ratio check with its interval, one row each (the claims' evidence at a glance).
fn ratio_chart(d: &StudyDocument) -> Chart {
    let mut ch = Chart::new(
        "study-ratio",
        "Ratio checks: subject / baseline with 95% intervals (log scale; no bar: no interval)",
        "ratio",
        Axis::new("ratio (log scale)", "log", "ratio"),
        Axis::new("check", "category", "num"),
    );
    let mut s = Series::line("ratio", vec![], vec![], 0).styled("points");
    let mut bounds = vec![1.0];
    for c in d.claims.iter().filter(|c| c.claim.vary.is_some()) {
        for k in &c.checks {
            ch.categories.push(format!("{} vs {}", k.cell, k.baseline_cell.as_deref().unwrap_or("-")));
            let e = k.evidence.as_ref();
            s.x.push(e.map_or(Value::Null, |e| sig(e.estimate, 4)));
            s.y.push(if e.is_some() { Value::from(ch.categories.len() - 1) } else { Value::Null });
            s.lo.push(e.map_or(Value::Null, |e| sig(e.low, 4)));
            s.hi.push(e.map_or(Value::Null, |e| sig(e.high, 4)));
            s.tip.push(format!("{} at {}: {} ({})", c.claim.check, k.at, k.verdict.name(), k.reason));
            bounds.extend(e.iter().flat_map(|e| [e.low, e.high]));
        }
    }
    ch.series.push(s);
    let positive = bounds.iter().copied().filter(|v| *v > 0.0);
    let (lo, hi) = positive.fold((1.0f64, 1.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    ch.x.min = Some(lo / 1.25);
    ch.x.max = Some(hi * 1.25);
    ch.marks.push(Mark { x: 1.0, label: "1 = same as the baseline".into() });
    ch.height = 110 + 28 * ch.categories.len().max(1) as u32;
    ch
}

/// Every chart: the ratio checks, then tps and p99 against each numeric axis with 2 or
/// more values.
pub fn study_charts(d: &StudyDocument) -> Vec<Chart> {
    let mut charts = vec![ratio_chart(d)];
    let axes: Vec<String> = d.plan.cells.first().map_or(vec![], |c| c.values.iter().map(|v| v.axis.clone()).collect());
    for axis in axes {
        let mut xs: Vec<f64> = d.plan.cells.iter().filter_map(|c| c.value(&axis)?.parse().ok()).collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        if xs.len() < 2 {
            continue;
        }
        for (key, title, unit, scale, pick) in METRICS {
            let mut ch = Chart::new(
                &format!("study-axis-{key}-{axis}"),
                &format!("{title} against {axis}, one line per cell's other values (dashed: 95% interval)"),
                "line",
                Axis::new(&axis, "log", "num"),
                Axis::new(unit, "linear", "num"),
            );
            ch.x.ticks = xs.clone();
            lines(&mut ch, d, &axis, scale, pick);
            for c in d.cliffs.iter().filter(|c| c.axis == axis) {
                if let Ok(x) = c.values[1].parse::<f64>() {
                    ch.marks.push(Mark { x, label: format!("cache cliff ({})", c.cells[1]) });
                }
            }
            charts.push(ch);
        }
    }
    charts.retain(Chart::has_data);
    charts
}

type Pick = fn(&CellFigures) -> (Option<f64>, Option<&Estimate>);

const METRICS: [(&str, &str, &str, f64, Pick); 2] = [
    ("tps", "Transactions per second (TPS)", "events per second", 1.0, |f| (f.tps, f.tps_interval.as_ref())),
    ("p99", "p99 latency per event", "p99 latency (ms)", 1000.0, |f| (f.p99_us, f.p99_interval.as_ref())),
];

/// One line (and its interval's two dashed lines) per group of cells that differ only in
/// `axis`.
fn lines(ch: &mut Chart, d: &StudyDocument, axis: &str, scale: f64, pick: Pick) {
    let mut groups: Vec<(String, Vec<&StudyCell>)> = vec![];
    for c in &d.plan.cells {
        let label = c.describe(&[axis, "workload"]) + &format!(" {}", c.workload);
        match groups.iter_mut().find(|(l, _)| *l == label) {
            Some((_, cells)) => cells.push(c),
            None => groups.push((label, vec![c])),
        }
    }
    for (n, (label, cells)) in groups.iter().enumerate() {
        let (mut x, mut y, mut lo, mut hi) = (vec![], vec![], vec![], vec![]);
        for c in cells {
            let Some(at) = c.value(axis).and_then(|v| v.parse::<f64>().ok()) else { continue };
            let (value, e) = d.cells.iter().find(|f| f.cell == c.id).map_or((None, None), pick);
            x.push(Value::from(at));
            y.push(value.map_or(Value::Null, |v| sig(v / scale, 5)));
            lo.push(e.map_or(Value::Null, |e| sig(e.low / scale, 5)));
            hi.push(e.map_or(Value::Null, |e| sig(e.high / scale, 5)));
        }
        ch.series.push(Series::line(label.trim(), x.clone(), y, n));
        ch.series.push(Series::line(&format!("{} (95% low)", label.trim()), x.clone(), lo, n).styled("dash"));
        ch.series.push(Series::line(&format!("{} (95% high)", label.trim()), x, hi, n).styled("dash"));
    }
}

fn cells(d: &StudyDocument) -> String {
    let cell = |(i, v): (usize, String)| match i {
        6 | 7 => TableCell::num(v),
        9 => TableCell::code(&v),
        _ => TableCell::text(&v),
    };
    let rows = cell_rows(d).into_iter().map(|r| r.into_iter().enumerate().map(cell).collect()).collect();
    let rounds = d.cells.iter().filter(|f| f.rounds.len() >= 2).map(|f| format!("{} {}", f.cell, rounds_words(f)));
    let reruns = d.reruns.iter().map(|r| format!("{} round {}: {}", r.cell, r.round, r.describe()));
    let notes: String = rounds.chain(reruns).map(|n| format!("<p>{}</p>", esc(&n))).collect();
    format!(
        "<section><h2>Cells</h2><p class=\"muted\">Figures over each cell's completed repeats with 95% intervals: {}.</p>{}{notes}</section>",
        esc(&rounds_line(d)),
        table(&CELL_HEADER, rows, "")
    )
}

/// Each target's conditions once: a summary, what differs by cell, and every shared
/// condition folded away.
fn conditions(d: &StudyDocument) -> String {
    if d.conditions.is_empty() {
        return String::new();
    }
    let mut o = String::from("<section><h2>Conditions, once per target</h2>");
    for t in &d.conditions {
        let _ = write!(o, "<h3>{}</h3><p>{}</p>", esc(&t.target), esc(&condition_summary(t)));
        if !t.cells.is_empty() {
            let rows =
                t.cells.iter().map(|(c, g)| vec![TableCell::text(c), TableCell::text(&cell_conditions(g))]).collect();
            o.push_str(&table(&["cell", "differs from the target's other cells"], rows, ""));
        }
        let shared: Vec<Vec<TableCell>> = t
            .common
            .iter()
            .flat_map(|(g, m)| {
                m.iter().map(move |(k, v)| vec![TableCell::text(g), TableCell::text(k), TableCell::code(v)])
            })
            .collect();
        let _ = write!(
            o,
            "<details><summary>the {} conditions all its cells share</summary>{}</details>",
            shared.len(),
            table(&["group", "condition", "value"], shared, "")
        );
    }
    o.push_str("</section>");
    o
}

/// Each cell's usual report (its repeats built as one result), folded away.
fn cell_reports(d: &StudyDocument, cell_docs: &[(String, crate::model::ResultDocument)]) -> String {
    use crate::report::Report as _;
    if cell_docs.is_empty() {
        return String::new();
    }
    let mut o = String::from("<section><h2>Each cell's report</h2><p class=\"muted\">Its completed repeats built as one result, reported as <code>fairbench report</code> reports a result, with its audit.</p>");
    for (id, doc) in cell_docs {
        let what = d.plan.cells.iter().find(|c| c.id == *id).map_or(String::new(), |c| c.describe(&[]));
        let mut text = crate::report::TextReport.render(doc, &Default::default());
        text.push('\n');
        text.push_str(&crate::report::findings("Audit", &doc.audit));
        let _ = write!(o, "<details><summary>{} {}</summary><pre>{}</pre></details>", esc(id), esc(&what), esc(&text));
    }
    o.push_str("</section>");
    o
}

fn probes(d: &StudyDocument) -> String {
    let rows: Vec<Vec<TableCell>> = crate::report::study::probe_rows(d)
        .into_iter()
        .map(|r| {
            r.iter()
                .enumerate()
                .map(|(i, v)| if (3..8).contains(&i) { TableCell::num(v.clone()) } else { TableCell::text(v) })
                .collect()
        })
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let kinds: String =
        crate::report::study::downtime_kinds(d).iter().map(|k| format!("<li>{}</li>", esc(k))).collect();
    let kinds = match kinds.is_empty() {
        true => kinds,
        false => format!("<p>Failover downtimes by what ended them, each kind ranked apart (a scheduled downtime is this file's own promote step, never ranked against one a cluster or manager detected):</p><ul>{kinds}</ul>"),
    };
    format!(
        "<section><h2>Probes, run by run</h2><p class=\"muted\">Each run is one failover or one series of heartbeats: downtime is the longest span without a write acknowledged on a primary (scheduled: ended by the file's own promote step; detected: by the cluster itself), lost the acknowledged writes the final primary lacks, lag the worst replica's.</p>{}{kinds}</section>",
        table(&crate::report::study::PROBE_HEADER, rows, "")
    )
}

fn costs(d: &StudyDocument) -> String {
    let priced: Vec<&CellFigures> = d.cells.iter().filter(|f| f.cost.is_some()).collect();
    let Some(currency) = priced.first().and_then(|f| f.cost.as_ref()).map(|c| c.currency.clone()) else {
        return String::new();
    };
    let rows = priced
        .iter()
        .filter_map(|f| cost_row(d, f))
        .map(|row| {
            row.iter()
                .enumerate()
                .map(|(i, v)| if i == 3 || i == 4 { TableCell::num(v.clone()).strong() } else { TableCell::text(v) })
                .collect()
        })
        .collect();
    format!(
        "<section><h2>Cost per million transactions ({})</h2><p class=\"muted\">Two models side by side. I/O excluded: compute, storage and provisioned IOPS only (a month's bill excluding per-request I/O, over the transactions a month holds at the cell's throughput). I/O billed: the same plus I/O requests at their price per million, by the requests per transaction the server itself counted. Month, I/O excluded: that bill for 730 hours.</p>{}</section>",
        esc(&currency),
        table(&COST_HEADER, rows, "")
    )
}

fn runs(d: &StudyDocument) -> String {
    let missing: Vec<Vec<TableCell>> = d
        .runs
        .iter()
        .filter(|r| r.status != Some(RunStatus::Completed))
        .map(|r| {
            vec![
                TableCell::text(&r.cell),
                TableCell::num(r.repeat.to_string()),
                TableCell::text(r.status.map_or("not run", |s| s.name())).class("fail"),
                TableCell::text(r.failure.as_deref().unwrap_or("")),
            ]
        })
        .collect();
    let done = d.runs.len() - missing.len();
    let mut o = format!("<section><h2>Runs</h2><p>{done} of {} runs completed.</p>", d.runs.len());
    if !missing.is_empty() {
        o.push_str(&table(&["cell", "repeat", "status", "why"], missing, ""));
    }
    let every = d.runs.iter().map(|r| repeat_row(r).iter().map(|v| TableCell::text(v)).collect()).collect();
    let _ = write!(
        o,
        "<details><summary>Every run: its server (by its own identity) and its rows as it began</summary>{}</details>",
        table(&REPEAT_HEADER, every, "")
    );
    o.push_str("</section>");
    o
}
