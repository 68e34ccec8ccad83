//! `fairbench combine`: the shards' results (files, or logs with marked results) into one
//! result, audited, saved and reported.

use super::{with_facts, Error};
use crate::cli::CombineArgs;
use crate::combine::{self, Source};
use crate::model::{ResultDocument, ResultFileError};
use crate::report::{Report, ReportOptions, TextReport};
use std::process::ExitCode;

pub(super) fn combine_cmd(args: &CombineArgs) -> Result<ExitCode, Error> {
    let mut sources = Vec::new();
    for path in &args.inputs {
        sources.extend(read(path)?);
    }
    let mut doc = combine::combine(sources)?;
    doc.tpcc = crate::result::tpcc::figures(&doc);
    doc.audit = crate::audit::audit(&doc);
    doc.write(&args.out)?;
    if args.json {
        println!("{}", doc.to_json());
    } else {
        let opts = ReportOptions { percentile: 95.0, verbose: args.verbose };
        print!("{}", TextReport.render(&doc, &opts));
        print!("\n{}", crate::report::findings("Audit", &doc.audit));
    }
    super::say(format_args!("Combined {} shards into {}", doc.shards.len(), args.out.display()));
    let failed: Vec<&str> = doc.thresholds.iter().filter(|t| !t.passed).map(|t| t.threshold.as_str()).collect();
    if !failed.is_empty() {
        eprintln!("error: threshold failed: {}", failed.join(", "));
        return Ok(ExitCode::from(3));
    }
    Ok(ExitCode::SUCCESS)
}

/// A result file, or every result marked in a log.
fn read(path: &std::path::Path) -> Result<Vec<Source>, Error> {
    let text = crate::model::file::read_text(path)?;
    let marked = combine::marked(&text);
    if marked.is_empty() {
        let doc = ResultDocument::parse(&text).map_err(|e| e.at(path))?;
        return Ok(vec![Source { name: path.display().to_string(), doc: with_facts(doc) }]);
    }
    marked
        .iter()
        .enumerate()
        .map(|(n, json)| {
            let name = format!("{} (result {} of {})", path.display(), n + 1, marked.len());
            let doc = ResultDocument::parse(json).map_err(|e| match e.at(path) {
                ResultFileError::NotJson { path, problem } => {
                    ResultFileError::NotJson { path, problem: format!("marked result {}: {problem}", n + 1) }
                }
                other => other,
            })?;
            Ok(Source { name, doc: with_facts(doc) })
        })
        .collect()
}
