//! `fairbench recover RESULT`: the result of a run that never ended, rebuilt and saved.

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
    let [jsonl, hlog] = crate::timeline::paths_for(&args.result);
    println!(
        "Recovered {} from {} and {}: {:.1} s measured, {} events, status incomplete{}",
        crate::model::plural(recovered.intervals as u64, "interval"),
        jsonl.display(),
        hlog.display(),
        run.measured_s,
        run.events,
        if recovered.torn { " (a last line cut short by the stop is left out)" } else { "" }
    );
    if recovered.unlogged.0 > 0 {
        println!(
            "The last {} ({:.1} s) are in {} only: the interval log never received their histograms",
            crate::model::plural(recovered.unlogged.0 as u64, "interval"),
            recovered.unlogged.1,
            jsonl.display()
        );
    }
    // The same report a run that ended prints, from what was recovered.
    let opts = crate::report::ReportOptions { percentile: 95.0, verbose: false };
    print!("\n{}", crate::report::TextReport.render(&doc, &opts));
    print!("\n{}", crate::report::findings("Audit", &doc.audit));
    super::say(format_args!("Result saved to {}", out.display()));
    Ok(ExitCode::SUCCESS)
}
