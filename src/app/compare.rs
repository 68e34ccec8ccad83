//! `fairbench compare`: read the results, compare, print, and exit by the verdicts.

use super::Error;
use crate::cli::CompareArgs;
use crate::compare::{self, Input};
use crate::model::comparison::Verdict;
use crate::report::{CompareJson, CompareText, Report as _, ReportOptions};
use std::process::ExitCode;

/// Exit codes: 0 every claim supported and every threshold met; 3 a threshold failed; 4 a
/// claim was refuted or inconclusive (3 wins when both); 2 bad input.
pub(super) fn compare_cmd(args: &CompareArgs) -> Result<ExitCode, Error> {
    let claims = args.claims()?;
    let thresholds = args.thresholds()?;
    let inputs = args
        .results
        .iter()
        .map(|path| Ok(Input { file: path.display().to_string(), doc: super::read_result(path)? }))
        .collect::<Result<Vec<_>, Error>>()?;
    let subject = args.under_test.as_deref().map(compare::Subject::parse);
    let comparison = compare::compare(&inputs, &claims, &thresholds, subject.as_ref());
    if args.json {
        println!("{}", CompareJson.render(&comparison, &ReportOptions::default()));
    } else {
        print!("{}", CompareText { all: args.all }.render(&comparison, &ReportOptions::default()));
    }
    let failed = comparison.thresholds.iter().any(|t| !t.check.passed);
    let unsupported = comparison.claims.iter().any(|c| c.verdict != Verdict::Supported);
    Ok(match (failed, unsupported) {
        (true, _) => ExitCode::from(3),
        (false, true) => ExitCode::from(4),
        (false, false) => ExitCode::SUCCESS,
    })
}
