//! `fairbench recover RESULT`: the result of a run that never ended, built from its record
//! and saved.

use super::{read_result, Error};
use crate::cli::RecoverArgs;
use crate::report::Report as _;
use std::process::ExitCode;

pub(super) fn recover_cmd(args: &RecoverArgs) -> Result<ExitCode, Error> {
    let started = read_result(&args.result)?;
    let recovered = crate::recover::recover(started, &args.result)?;
    let mut doc = recovered.doc;
    let out = args.out.as_deref().unwrap_or(&args.result);
    let ledger = crate::probe::session::Ledger::from_lines(&recovered.ledger);
    let settle = ledger.as_ref().map(|l| l.options.settle_timeout);
    if let (Some(ledger), Some(ha)) = (ledger, doc.ha.as_mut()) {
        // A probe that never ended: its verdict from the ledger it left, its rows looked up.
        let failover = ledger.verdict(None, Default::default());
        ha.duration_s = failover.attempts.last().map_or(0.0, |a| (a.at_us + a.took_us) as f64 / 1e6);
        ha.failover = Some(failover);
    }
    doc.write(out)?;
    if let Some(settle) = settle {
        loss_check(&mut doc, out, settle);
    }
    let doc = crate::result::complete(crate::result::Basis::Built(doc), crate::result::Ending::default())?;
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

/// The recovered ledger's acknowledged writes looked up on the probe's nodes; nodes that
/// cannot be reached leave the verdict unverified, said so with the command to run later.
fn loss_check(doc: &mut crate::model::ResultDocument, out: &std::path::Path, settle: std::time::Duration) {
    let request = crate::model::probe_request::VerifyRequest {
        result: out.to_path_buf(),
        targets: Vec::new(),
        password_file: None,
        settle_timeout_s: settle.as_secs_f64(),
        connect: crate::model::request::ConnectRequest { connect_timeout: 5.0, ..Default::default() },
    };
    println!("The probe's acknowledged writes, looked up on its nodes:");
    match crate::probe::look_again(doc, &request) {
        Ok(()) => print!("{}", super::probe::verification(doc)),
        Err(e) => println!(
            "The loss check could not run ({e}): the ledger is saved; run `fairbench probe verify {}` (with --target and --password-file as needed) once the nodes answer",
            out.display()
        ),
    }
}
