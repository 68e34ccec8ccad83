//! `fairbench combine`: the shards' results and records (files, or logs with marked results
//! and records) into one result, built from their merged record, audited, saved beside that
//! record and reported.

use super::{with_facts, Error};
use crate::cli::CombineArgs;
use crate::combine::{self, ShardInput};
use crate::model::{ResultDocument, ResultFileError};
use crate::report::{Report, ReportOptions, TextReport};
use crate::timeline::record::{parse_record, read_record, record_path_for, write_record};
use std::path::Path;
use std::process::ExitCode;

/// A log's marked records that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum LogRecordError {
    #[error("{0} marks {1} results and {2} records: each shard prints both (--print-result of this version)")]
    Unpaired(String, usize, usize),
    #[error("{0}: its marked record is not base64 ({1}): the log was cut or changed")]
    NotBase64(String, base64::DecodeError),
}

pub(super) fn combine_cmd(args: &CombineArgs) -> Result<ExitCode, Error> {
    let mut sources = Vec::new();
    for path in &args.inputs {
        sources.extend(read(path)?);
    }
    let combined = combine::combine(sources)?;
    let record_path = record_path_for(&args.out);
    write_record(&combined.record, &record_path)
        .map_err(|source| ResultFileError::Write { path: record_path.clone(), source })?;
    let streamed = crate::timeline::describe(&args.out)
        .map_err(|source| ResultFileError::Write { path: record_path.clone(), source })?;
    let doc =
        crate::result::complete(crate::result::Basis::Built(combined.doc), crate::result::Ending::streamed(streamed))?;
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

/// A result file and the record beside it, or every result and record marked in a log.
fn read(path: &Path) -> Result<Vec<ShardInput>, Error> {
    let text = crate::model::file::read_text(path)?;
    let marked = combine::marked(&text);
    if marked.is_empty() {
        let doc = ResultDocument::parse(&text).map_err(|e| e.at(path))?;
        let record_path = record_path_for(path);
        let record = match record_path.exists() {
            true => Some(read_record(&record_path)?.record),
            false => None,
        };
        return Ok(vec![ShardInput { name: path.display().to_string(), doc: with_facts(doc), record }]);
    }
    let records = combine::marked_records(&text);
    if !records.is_empty() && records.len() != marked.len() {
        return Err(LogRecordError::Unpaired(path.display().to_string(), marked.len(), records.len()).into());
    }
    let records = records.into_iter().map(Some).chain(std::iter::repeat(None));
    marked
        .iter()
        .zip(records)
        .enumerate()
        .map(|(n, (json, record))| {
            let name = format!("{} (result {} of {})", path.display(), n + 1, marked.len());
            let doc = ResultDocument::parse(json).map_err(|e| match e.at(path) {
                ResultFileError::NotJson { path, problem } => {
                    ResultFileError::NotJson { path, problem: format!("marked result {}: {problem}", n + 1) }
                }
                other => other,
            })?;
            let record = match record {
                Some(text) => {
                    let bytes = base64_decode(text).map_err(|e| LogRecordError::NotBase64(name.clone(), e))?;
                    Some(parse_record(&bytes, Path::new(&name))?)
                }
                None => None,
            };
            Ok(ShardInput { name, doc: with_facts(doc), record })
        })
        .collect()
}

/// Base64 as `--print-result` wraps it (lines of 76).
fn base64_decode(text: &str) -> Result<Vec<u8>, base64::DecodeError> {
    use base64::Engine;
    let joined: String = text.split_whitespace().collect();
    base64::engine::general_purpose::STANDARD.decode(joined)
}
