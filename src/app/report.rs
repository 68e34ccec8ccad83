//! `fairbench report` (HTML) and `fairbench export` (CSV): read result files, render.

use super::{Error, UsageError};
use crate::cli::{ExportArgs, ExportWhat, ReportArgs, ShowArgs};
use crate::compare::{self, Input};
use crate::model::comparison::COMPARISON_SCHEMA_NAME;
use crate::model::file::{self, write_atomic};
use crate::model::sweep::{SweepDocument, SWEEP_SCHEMA_NAME};
use crate::model::{ResultDocument, ResultFileError};
use crate::report::html::{self, HtmlInput};
use crate::report::{CompareText, CsvReport, HtmlReport, Report as _, ReportOptions, TextReport};
use std::path::Path;
use std::process::ExitCode;

/// The streamed intervals file beside `result`, when the result names one and it is as it
/// was written (size and SHA-256): every interval, where the result keeps at most 300
/// entries. A result whose entries each cover several intervals says so when it has none.
fn streamed_intervals(doc: &ResultDocument, result: &Path) -> Option<std::path::PathBuf> {
    let merged = doc.intervals.iter().any(|i| i.duration_s > 1.5);
    let named = doc.streamed.iter().find(|f| f.format.starts_with("intervals-jsonl"))?;
    let path = result.with_file_name(&named.file);
    let intact = crate::timeline::digest(&path).is_ok_and(|(bytes, sha)| bytes == named.bytes && sha == named.sha256);
    if !intact && merged {
        super::say(format_args!(
            "note: {} is missing or changed since the run: exporting the result's {} entries, each covering several intervals",
            path.display(),
            doc.intervals.len()
        ));
    }
    intact.then_some(path)
}

/// Every interval of a streamed intervals file, one at a time, to `each`.
fn each_interval(path: &Path, mut each: impl FnMut(crate::model::IntervalStats)) -> Result<(), Error> {
    let fail = |problem: String| ResultFileError::Field { path: path.to_path_buf(), field: "line".into(), problem };
    let lines = crate::timeline::IntervalLines::open(path)
        .map_err(|source| ResultFileError::Read { path: path.to_path_buf(), source })?;
    for (n, line) in lines.enumerate() {
        let line = line.map_err(|source| ResultFileError::Read { path: path.to_path_buf(), source })?;
        each(crate::timeline::lines::parse(&line).map_err(|e| fail(format!("{}: {e}", n + 1)))?);
    }
    Ok(())
}

/// The CSV rows of every interval of a streamed intervals file.
fn every_interval(path: &Path) -> Result<String, Error> {
    let mut csv = String::from(crate::report::csv::INTERVALS_HEADER);
    each_interval(path, |interval| crate::report::csv::interval_rows(&interval, &mut csv))?;
    Ok(csv)
}

/// Every interval of a streamed intervals file.
fn read_intervals(path: &Path) -> Result<Vec<crate::model::IntervalStats>, Error> {
    let mut intervals = Vec::new();
    each_interval(path, |interval| intervals.push(interval))?;
    Ok(intervals)
}

/// A file `report` reads: a result, or a sweep of them.
enum Loaded {
    Result(Box<ResultDocument>),
    Sweep(Box<SweepDocument>),
    Comparison(Box<crate::model::comparison::Comparison>),
}

fn load(path: &Path) -> Result<Loaded, Error> {
    // Read once, and never into a serde_json::Value (several times the file's size).
    let text = file::read_text(path)?;
    let schema = file::schema_of(&text).ok().and_then(|(schema, _)| schema);
    match schema.as_deref() {
        Some(SWEEP_SCHEMA_NAME) => Ok(Loaded::Sweep(Box::new(typed(path, &text)?))),
        Some(COMPARISON_SCHEMA_NAME) => Ok(Loaded::Comparison(Box::new(typed(path, &text)?))),
        _ => Ok(Loaded::Result(Box::new(super::with_facts(ResultDocument::parse(&text).map_err(|e| e.at(path))?)))),
    }
}

/// A sweep or comparison file, a bad field named with its path.
fn typed<T: serde::de::DeserializeOwned>(path: &Path, text: &str) -> Result<T, Error> {
    let de = &mut serde_json::Deserializer::from_str(text);
    Ok(serde_path_to_error::deserialize(de).map_err(|e| ResultFileError::Field {
        path: path.into(),
        field: e.path().to_string(),
        problem: e.inner().to_string(),
    })?)
}

/// `fairbench show FILE` (and `report --text`): the text a run, sweep or ab printed.
pub(super) fn show_cmd(args: &ShowArgs) -> Result<ExitCode, Error> {
    print!("{}", show_text(&args.file, &ReportOptions { percentile: args.percentile, verbose: args.verbose })?);
    Ok(ExitCode::SUCCESS)
}

pub(super) fn show_text(path: &Path, opts: &ReportOptions) -> Result<String, Error> {
    Ok(match load(path)? {
        Loaded::Result(doc) => {
            format!("{}\n{}", TextReport.render(&doc, opts), crate::report::findings("Audit", &doc.audit))
        }
        Loaded::Sweep(sweep) => crate::report::SweepTable.render(&sweep, opts),
        Loaded::Comparison(c) => CompareText { all: false }.render(&c, opts),
    })
}

pub(super) fn report_cmd(args: &ReportArgs) -> Result<ExitCode, Error> {
    if args.under_test.is_some() && args.files.len() < 2 {
        return Err(UsageError::UnderTestAlone.into());
    }
    let names: Vec<String> = args.files.iter().map(|p| p.display().to_string()).collect();
    if args.text {
        let [file] = args.files.as_slice() else {
            return Err(UsageError::TextOneFile.into());
        };
        return show_cmd(&ShowArgs { file: file.clone(), verbose: false, percentile: 95.0 });
    }
    let mut loaded = args.files.iter().map(|p| load(p)).collect::<Result<Vec<_>, _>>()?;
    if let Some(i) = loaded.iter().position(|l| matches!(l, Loaded::Comparison(_))) {
        return Err(UsageError::ReportComparison { file: names[i].clone() }.into());
    }
    let page = match loaded.as_mut_slice() {
        [Loaded::Sweep(sweep)] => HtmlReport { file: &names[0] }.render(&**sweep, &ReportOptions::default()),
        [Loaded::Result(doc)] => {
            // Every interval of the streamed file (drawn from buckets when long), where the
            // result keeps at most 300 entries.
            if let Some(path) = streamed_intervals(doc, &args.files[0]) {
                doc.intervals = read_intervals(&path)?;
            }
            HtmlReport { file: &names[0] }.render(&**doc, &ReportOptions::default())
        }
        many => {
            if many.iter().any(|l| matches!(l, Loaded::Sweep(_))) {
                return Err(UsageError::SweepNotAlone.into());
            }
            let inputs: Vec<Input> = loaded
                .into_iter()
                .zip(&names)
                .map(|(l, file)| match l {
                    Loaded::Result(doc) => Input { file: file.clone(), doc: *doc },
                    Loaded::Sweep(_) | Loaded::Comparison(_) => unreachable!("checked above"),
                })
                .collect();
            let subject = args.under_test.as_deref().map(compare::Subject::parse);
            let comparison = compare::compare(&inputs, &[], &[], subject.as_ref());
            let docs: Vec<&ResultDocument> = inputs.iter().map(|i| &i.doc).collect();
            html::render(&HtmlInput::Compare {
                files: names.iter().map(String::as_str).collect(),
                docs,
                comparison: &comparison,
            })
        }
    };
    write_atomic(&args.out, &page)?;
    super::say(format_args!("Report written to {} ({} KB)", args.out.display(), page.len().div_ceil(1024)));
    Ok(ExitCode::SUCCESS)
}

pub(super) fn export_cmd(args: &ExportArgs) -> Result<ExitCode, Error> {
    let doc = ResultDocument::read(&args.file)?;
    let format = match args.what {
        ExportWhat::Intervals => CsvReport::Intervals,
        ExportWhat::Statements => CsvReport::Statements,
        ExportWhat::Conditions => CsvReport::Conditions,
    };
    // Every interval the streamed file holds, where the result keeps at most 300 entries.
    let streamed = matches!(format, CsvReport::Intervals).then(|| streamed_intervals(&doc, &args.file)).flatten();
    let csv = match streamed {
        Some(path) => every_interval(&path)?,
        None => format.render(&doc, &ReportOptions { percentile: 95.0, verbose: false }),
    };
    match &args.out {
        Some(path) => write_atomic(path, &csv)?,
        None => print!("{csv}"),
    }
    Ok(ExitCode::SUCCESS)
}
