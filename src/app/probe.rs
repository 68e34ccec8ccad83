//! `fairbench probe failover|lag|verify`: the flags made a request (src/cli), the probe
//! measured by the measure room (the probe in src/probe, a `--with` workload in a run
//! session of src/measure), the result saved and printed. This surface watches it as its
//! [`crate::measure::Observer`], as it watches a run.

use super::run::save_and_print;
use super::Error;
use crate::model::probe_request::VerifyRequest;
use crate::model::{ProbeRequest, ResultDocument};
use crate::probe::Probed;
use crate::report::Report as _;
use std::process::ExitCode;

pub(super) fn probe_cmd(request: &ProbeRequest) -> Result<ExitCode, Error> {
    match request {
        ProbeRequest::Verify(v) => verify_cmd(v),
        _ => {
            let verbose = request.common().is_some_and(|c| c.verbose);
            save_and_print_probe(probe(request)?, verbose)
        }
    }
}

/// A failover or lag probe run, its result made (not yet saved).
pub(super) fn probe(request: &ProbeRequest) -> Result<Probed, Error> {
    crate::measure::measure_probe(request, &super::live::Job::new(0))
}

fn save_and_print_probe(probed: Probed, verbose: bool) -> Result<ExitCode, Error> {
    if let Some(workload) = &probed.workload {
        return save_and_print(&probed.doc, &probed.path, workload);
    }
    probed.doc.write(&probed.path)?;
    let opts = crate::report::ReportOptions { percentile: 95.0, verbose };
    print!("{}", crate::report::TextReport.render(&probed.doc, &opts));
    print!("\n{}", crate::report::findings("Audit", &probed.doc.audit));
    super::say(format_args!("Result saved to {}", probed.path.display()));
    Ok(ExitCode::SUCCESS)
}

/// `probe verify`: the rows of a saved failover probe looked up again on every node (or the
/// nodes named), the final primary judged anew; the result's checks, verdict and audit are
/// replaced.
fn verify_cmd(request: &VerifyRequest) -> Result<ExitCode, Error> {
    let doc = crate::probe::verify(super::read_result(&request.result)?, request)?;
    print!("{}", verification(&doc));
    doc.write(&request.result)?;
    print!("\n{}", crate::report::findings("Audit", &doc.audit));
    super::say(format_args!("Result updated: {}", request.result.display()));
    Ok(ExitCode::SUCCESS)
}

/// What the look-up of a failover probe's rows found, as text.
pub(super) fn verification(doc: &ResultDocument) -> String {
    let mut text = String::new();
    if let Some(f) = doc.ha.as_ref().and_then(|h| h.failover.as_ref()) {
        crate::report::ha::verification(&mut text, f);
    }
    text
}
