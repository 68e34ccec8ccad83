//! `fairbench probe failover|lag|verify`: the flags made a request (src/cli), the probe run
//! by its room (src/probe), the result saved and printed. A workload given with `--with` runs
//! in this surface's run session ([`measure_run`]), lent to the probe as its [`Host`].

use super::run::save_and_print;
use super::Error;
use crate::db::{Database, TargetUrl};
use crate::measure::{default_out, measure_run};
use crate::model::probe_request::VerifyRequest;
use crate::model::{ProbeRequest, ResultDocument, RunRequest};
use crate::probe::{Host, Notice, Probed};
use crate::report::Report as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

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
    crate::probe::run(request, &Commands)
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

/// What the commands lend a probe: the run session, and stderr for its notices.
struct Commands;

impl Host for Commands {
    type Error = Error;

    fn measure<D: Database>(
        &self,
        db: Arc<D>,
        request: &RunRequest,
        urls: &[TargetUrl],
    ) -> Result<(crate::result::Closed, PathBuf), Error> {
        let job = super::live::Job::new(0);
        measure_run(db, request, urls, request.bench, request.out.as_deref(), &job)
    }

    fn default_out(&self, name: &str) -> PathBuf {
        default_out(name)
    }

    fn notice(&self, notice: Notice<'_>) {
        match notice {
            Notice::FailoverStarts { rate, writers, others, role_poll_ms, run_id } => {
                let others = match others {
                    0 => String::new(),
                    n => format!(" and {n} other node(s) of the cluster"),
                };
                super::say(format_args!(
                    "probe failover: one write every {:.1} ms to {} (in this order on each reconnect), the role of every target{others} read every {role_poll_ms} ms, run id {run_id}",
                    1000.0 / rate,
                    writers.join(", "),
                ))
            }
            Notice::LagStarts { rate, primary, poll_ms, run_id } => super::say(format_args!(
                "probe lag: a heartbeat every {:.1} ms on {primary}, each replica read every {poll_ms} ms, run id {run_id}",
                1000.0 / rate
            )),
            Notice::AlsoReading { what } => {
                super::say(format_args!("probe failover: also reading {what}, a node the cluster names"))
            }
            Notice::NotReading { what, why } => {
                super::say(format_args!("probe failover: not reading {what}: {why} (give a node with --node)"))
            }
            Notice::StreamError { error } => eprintln!(
                "warning: the streamed files stopped at a write error ({error}); the result has every entry"
            ),
        }
    }
}
