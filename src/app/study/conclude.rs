//! A study's conclusions from its directory: each cell's completed runs read back from
//! their records and built as one result of repeats (the one builder), audited; the cells'
//! figures; the claims judged on them. `study run` concludes when its runs end, `study
//! report` again from the files.

use super::Error;
use crate::cli::StudyReportArgs;
use crate::model::record::Record;
use crate::model::study::{CellFigures, RoundFigures, RunProbe, StudyCell, StudyDocument, StudyRun};
use crate::model::{Metric, ResultDocument, RunStatus, Severity};
use crate::report::{Report as _, StudyHtml, StudyText};
use crate::study::claims::{self, CellResult};
use crate::study::dir::{self, StudyDirError};
use crate::timeline::record::{read_record, record_path_for};
use std::path::Path;
use std::process::ExitCode;

pub(super) fn report_cmd(args: &StudyReportArgs) -> Result<ExitCode, Error> {
    let mut doc = dir::load(&args.dir)?.ok_or_else(|| StudyDirError::NoStudy(args.dir.clone()))?;
    let cells = conclude(&args.dir, &mut doc)?;
    match args.format.as_str() {
        "json" => println!("{}", crate::model::pretty_json(&doc)),
        "html" => print!("{}", html(&args.dir, &doc, &cells)),
        _ => print!("{}", StudyText.render(&doc, &Default::default())),
    }
    Ok(ExitCode::SUCCESS)
}

/// The study as one offline HTML page, each cell's report (`cells`) at its end.
pub(super) fn html(dir: &Path, doc: &StudyDocument, cells: &[(String, ResultDocument)]) -> String {
    let file = dir::document_path(dir).display().to_string();
    StudyHtml { file: &file, cells }.render(doc, &Default::default())
}

/// The cells' figures and the claims' verdicts, from what `dir` holds; each cell with a
/// completed run as one result.
pub(super) fn conclude(dir: &Path, doc: &mut StudyDocument) -> Result<Vec<(String, ResultDocument)>, Error> {
    // A document written before runs recorded their server, rows and tps: from the results.
    for run in doc.runs.iter_mut().filter(|r| r.status.is_some() && r.server.is_none()) {
        if let Ok(d) = ResultDocument::read(&dir.join(&run.file)) {
            crate::study::history::note_result(run, &d, None);
        }
    }
    let mut built = Vec::new();
    for cell in &doc.plan.cells {
        built.push((cell_result(dir, doc, cell)?, probe_runs(dir, doc, cell)?));
    }
    let results: Vec<CellResult> = built
        .iter()
        .map(|((d, trouble), runs)| CellResult { doc: d.as_ref(), trouble: trouble.clone(), runs })
        .collect();
    doc.cells = doc.plan.cells.iter().zip(&results).map(|(cell, r)| figures(doc, cell, r)).collect();
    doc.claims = claims::judge(&doc.declared, &doc.plan.cells, &results);
    let docs: Vec<Option<&ResultDocument>> = results.iter().map(|r| r.doc).collect();
    doc.conditions = crate::study::conditions::by_target(&doc.plan.cells, &docs);
    doc.cliffs = crate::study::cliff::cliffs(&doc.plan.cells, &doc.cells);
    doc.noise = crate::study::noise::floors(&doc.plan.cells, &docs);
    crate::study::noise::mark(&mut doc.claims, &doc.noise);
    let ids = doc.plan.cells.iter().map(|c| c.id.clone());
    Ok(ids.zip(built).filter_map(|(id, ((d, _), _))| d.map(|d| (id, d))).collect())
}

/// The cell's completed runs as one result of repeats (audited), and what kept the others
/// from completing.
fn cell_result(
    dir: &Path,
    doc: &StudyDocument,
    cell: &StudyCell,
) -> Result<(Option<ResultDocument>, Option<String>), Error> {
    let mut records = Vec::new();
    let mut trouble = Vec::new();
    let runs: Vec<_> = doc.runs.iter().filter(|r| r.cell == cell.id).collect();
    for run in &runs {
        match run.status {
            Some(RunStatus::Completed) => records.push(read_record(&record_path_for(&dir.join(&run.file)))?.record),
            Some(status) => trouble.push(format!(
                "repeat {} {}{}",
                run.repeat,
                status.name(),
                run.failure.as_deref().map(|f| format!(" ({f})")).unwrap_or_default()
            )),
            None => trouble.push(format!("repeat {} not run yet", run.repeat)),
        }
    }
    let built = match Record::of_repeats(records) {
        Some(record) => {
            Some(crate::result::complete(crate::result::Basis::Record(&record), crate::result::Ending::default())?)
        }
        None => None,
    };
    let trouble = (!trouble.is_empty())
        .then(|| format!("{} of {} runs did not complete: {}", trouble.len(), runs.len(), trouble.join("; ")));
    Ok((built, trouble))
}

/// A probe cell's completed runs, each read from its own result (the probe's figures are
/// there, not in the record); none for other cells.
fn probe_runs(dir: &Path, doc: &StudyDocument, cell: &StudyCell) -> Result<Vec<(u32, ResultDocument)>, Error> {
    if cell.probe.is_none() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for run in doc.runs.iter().filter(|r| r.cell == cell.id && r.status == Some(RunStatus::Completed)) {
        out.push((run.repeat, super::super::read_result(&dir.join(&run.file))?));
    }
    Ok(out)
}

/// One run's probe figures and verdict.
fn run_probe(repeat: u32, d: &ResultDocument) -> Option<RunProbe> {
    use crate::model::ha_figure::HaFigure;
    let ha = d.ha.as_ref()?;
    let value = |f: HaFigure| f.of(ha).exact();
    // A lag known only from below (heartbeats never seen) is still a figure: its bound.
    let lag = |f: HaFigure| match f.of(ha) {
        crate::model::ha_figure::HaValue::AtLeast(v, _) => (Some(v), true),
        v => (v.exact(), false),
    };
    let ((lag_p99_us, p99_bound), (lag_max_us, max_bound)) = (lag(HaFigure::LagP99), lag(HaFigure::LagMax));
    let verdict = match (&ha.failover, &ha.lag) {
        (Some(f), _) => crate::report::ha::verdict(f, d.faults.as_ref()),
        (None, Some(l)) => lag_words(l),
        (None, None) => String::new(),
    };
    Some(RunProbe {
        repeat,
        probe: ha.probe.clone(),
        downtime_us: value(HaFigure::Downtime),
        origin: ha
            .failover
            .as_ref()
            .and_then(|f| crate::model::fault::downtime_origin(f, d.faults.as_ref()))
            .map(|(origin, _)| origin),
        lost: value(HaFigure::Lost).map(|v| v as u64),
        lag_p99_us,
        lag_max_us,
        lag_at_least: p99_bound || max_bound,
        verdict,
        findings: d
            .audit
            .iter()
            .filter(|f| f.severity >= Severity::Warn && f.id.starts_with("ha-"))
            .map(|f| f.id.clone())
            .collect(),
    })
}

/// `replica1: p99 3.1 ms, max 9.8 ms, 400 heartbeats, 0 unseen`, replica by replica.
fn lag_words(l: &crate::model::ha::LagRecord) -> String {
    let each = l.replicas.iter().map(|r| {
        format!(
            "{}: p99 {}, max {}, {} heartbeats, {} unseen",
            r.node,
            r.lag.at(99.0).map_or("-".into(), crate::model::metric::show_us),
            crate::model::metric::show_us(r.lag.max_us),
            r.lag.count,
            r.unseen
        )
    });
    each.collect::<Vec<_>>().join("; ")
}

fn figures(doc: &StudyDocument, cell: &StudyCell, r: &CellResult) -> CellFigures {
    let runs: Vec<_> = doc.runs.iter().filter(|run| run.cell == cell.id).collect();
    let statuses: Vec<RunStatus> = runs.iter().filter_map(|run| run.status).collect();
    let p99 = Metric::parse("p99").expect("p99 is a metric");
    let cache = r.doc.and_then(|d| d.conditions.dataset.cache_ratio());
    CellFigures {
        cell: cell.id.clone(),
        completed: statuses.iter().filter(|s| **s == RunStatus::Completed).count() as u32,
        planned: runs.len() as u32,
        not_run: (runs.len() - statuses.len()) as u32,
        status: statuses.iter().copied().max_by_key(|s| s.severity()),
        rounds: rounds(&runs),
        tps: r.doc.and_then(|d| d.metric(&Metric::Tps)),
        tps_interval: r.doc.and_then(|d| crate::compare::value_interval(&Metric::Tps, d)),
        p99_us: r.doc.and_then(|d| d.metric(&p99)),
        p99_interval: r.doc.and_then(|d| crate::compare::value_interval(&p99, d)),
        findings: r
            .doc
            .map(|d| d.audit.iter().filter(|f| f.severity >= Severity::Warn).map(|f| f.id.clone()).collect())
            .unwrap_or_default(),
        cost: doc.prices.get(&cell.target).zip(r.doc).and_then(|(p, d)| crate::study::cost::cost(p, d)),
        cache_ratio: cache.map(|(_, ratio)| ratio),
        cache: cache.map(|(name, _)| name.to_string()),
        probes: r.runs.iter().filter_map(|(repeat, d)| run_probe(*repeat, d)).collect(),
    }
}

/// Each round's completed repeats and the median of their tps.
fn rounds(runs: &[&StudyRun]) -> Vec<RoundFigures> {
    let mut numbers: Vec<u32> = runs.iter().map(|r| r.round).collect();
    numbers.sort();
    numbers.dedup();
    let figures = |round: u32| {
        let done = runs.iter().filter(|r| r.round == round && r.status == Some(RunStatus::Completed));
        let mut tps: Vec<f64> = done.clone().filter_map(|r| r.tps).collect();
        tps.sort_by(f64::total_cmp);
        let median = match tps.len() {
            0 => None,
            n if n % 2 == 1 => Some(tps[n / 2]),
            n => Some((tps[n / 2 - 1] + tps[n / 2]) / 2.0),
        };
        RoundFigures { round, completed: done.count() as u32, median_tps: median }
    };
    numbers.into_iter().map(figures).collect()
}
