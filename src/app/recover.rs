//! `fairbench recover RESULT`: the result of a run that never ended, built from its record
//! and saved.

use super::{read_result, Error};
use crate::audit;
use crate::cli::RecoverArgs;
use crate::plan::ConfigError;
use crate::report::Report as _;
use std::process::ExitCode;

pub(super) fn recover_cmd(args: &RecoverArgs) -> Result<ExitCode, Error> {
    let started = read_result(&args.result)?;
    let recovered = crate::recover::recover(started, &args.result).map_err(|e| ConfigError(e.to_string()))?;
    let mut doc = recovered.doc;
    doc.audit = audit::audit(&doc);
    let out = args.out.as_deref().unwrap_or(&args.result);
    doc.write(out)?;
    let run = &doc.conditions.run;
    println!(
        "Recovered {} from {}: {:.1} s measured, {} events, status {}{}",
        crate::model::plural(recovered.entries as u64, "timeline segment"),
        recovered.record.display(),
        run.measured_s,
        run.events,
        run.status.name(),
        if recovered.torn { " (a last line cut short by the stop is left out)" } else { "" }
    );
    let (n, secs) = recovered.unrecorded;
    if n > 0 {
        println!(
            "The last {} ({secs:.1} s) are in {} only: their counts never reached the record",
            crate::model::plural(n as u64, "interval"),
            crate::timeline::paths_for(&args.result)[0].display()
        );
    }
    // The same report a run that ended prints, from what was recovered.
    let opts = crate::report::ReportOptions { percentile: 95.0, verbose: false };
    print!("\n{}", crate::report::TextReport.render(&doc, &opts));
    print!("\n{}", crate::report::findings("Audit", &doc.audit));
    super::say(format_args!("Result saved to {}", out.display()));
    Ok(ExitCode::SUCCESS)
}
