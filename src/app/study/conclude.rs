//! A study's conclusions from its directory: each cell's completed runs read back from
//! their records and built as one result of repeats (the one builder), audited; the cells'
//! figures; the claims judged on them. `study run` concludes when its runs end, `study
//! report` again from the files.

use super::Error;
use crate::cli::StudyReportArgs;
use crate::model::record::Record;
use crate::model::study::{CellFigures, StudyCell, StudyDocument};
use crate::model::{Metric, ResultDocument, RunStatus, Severity};
use crate::report::{HtmlReport, Report as _, StudyText};
use crate::study::claims::{self, CellResult};
use crate::study::dir::{self, StudyDirError};
use crate::timeline::record::{read_record, record_path_for};
use std::path::Path;
use std::process::ExitCode;

pub(super) fn report_cmd(args: &StudyReportArgs) -> Result<ExitCode, Error> {
    let mut doc = dir::load(&args.dir)?.ok_or_else(|| StudyDirError::NoStudy(args.dir.clone()))?;
    conclude(&args.dir, &mut doc)?;
    match args.format.as_str() {
        "json" => println!("{}", crate::model::pretty_json(&doc)),
        "html" => print!("{}", html(&args.dir, &doc)),
        _ => print!("{}", StudyText.render(&doc, &Default::default())),
    }
    Ok(ExitCode::SUCCESS)
}

/// The study as one offline HTML page.
pub(super) fn html(dir: &Path, doc: &StudyDocument) -> String {
    let file = dir::document_path(dir).display().to_string();
    HtmlReport { file: &file }.render(doc, &Default::default())
}

/// The cells' figures and the claims' verdicts, from what `dir` holds.
pub(super) fn conclude(dir: &Path, doc: &mut StudyDocument) -> Result<(), Error> {
    let mut built = Vec::new();
    for cell in &doc.plan.cells {
        built.push(cell_result(dir, doc, cell)?);
    }
    let results: Vec<CellResult> =
        built.iter().map(|(d, trouble)| CellResult { doc: d.as_ref(), trouble: trouble.clone() }).collect();
    doc.cells = doc.plan.cells.iter().zip(&results).map(|(cell, r)| figures(doc, cell, r)).collect();
    doc.claims = claims::judge(&doc.declared, &doc.plan.cells, &results);
    Ok(())
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
            let mut d = crate::result::build(&record)?;
            d.audit = crate::audit::audit(&d);
            Some(d)
        }
        None => None,
    };
    let trouble = (!trouble.is_empty())
        .then(|| format!("{} of {} runs did not complete: {}", trouble.len(), runs.len(), trouble.join("; ")));
    Ok((built, trouble))
}

fn figures(doc: &StudyDocument, cell: &StudyCell, r: &CellResult) -> CellFigures {
    let runs: Vec<_> = doc.runs.iter().filter(|run| run.cell == cell.id).collect();
    let statuses: Vec<RunStatus> = runs.iter().map(|run| run.status.unwrap_or(RunStatus::Running)).collect();
    let p99 = Metric::parse("p99").expect("p99 is a metric");
    CellFigures {
        cell: cell.id.clone(),
        completed: statuses.iter().filter(|s| **s == RunStatus::Completed).count() as u32,
        planned: runs.len() as u32,
        status: statuses.iter().copied().max_by_key(|s| s.severity()).unwrap_or(RunStatus::Running),
        tps: r.doc.and_then(|d| d.metric(&Metric::Tps)),
        tps_interval: r.doc.and_then(|d| crate::compare::value_interval(&Metric::Tps, d)),
        p99_us: r.doc.and_then(|d| d.metric(&p99)),
        p99_interval: r.doc.and_then(|d| crate::compare::value_interval(&p99, d)),
        findings: r
            .doc
            .map(|d| d.audit.iter().filter(|f| f.severity >= Severity::Warn).map(|f| f.id.clone()).collect())
            .unwrap_or_default(),
        cost: doc.prices.get(&cell.target).zip(r.doc).and_then(|(p, d)| crate::study::cost::cost(p, d)),
    }
}
