//! `fairbench verify WORKLOAD`: a workload file's checks on the tables as they are now (after
//! a crash, a failover or a run elsewhere), each printed as a run's report prints it.

use super::{say, Error, UsageError};
use crate::cli::VerifyTablesArgs;
use crate::db::{Database, TargetUrl};
use crate::workload;
use std::process::ExitCode;
use std::time::Duration;

/// The checks that hold after a run (those of the initial population only are left out:
/// the workload's own transactions change what they check).
pub fn verify_cmd<D: Database>(db: &D, args: &VerifyTablesArgs, target: &TargetUrl) -> Result<ExitCode, Error> {
    if !workload::file::is_file(&args.workload) {
        return Err(UsageError::VerifyBuiltin { workload: args.workload.clone() }.into());
    }
    let f = workload::file::load(std::path::Path::new(&args.workload), target.dialect, &args.set)?;
    let checks = &f.program.checks;
    if checks.is_empty() {
        return Err(UsageError::NoChecks { workload: args.workload.clone() }.into());
    }
    // A server that cannot be reached is one error, not one per check.
    let results = crate::runner::checks::try_run(db, checks, Duration::from_secs(600))?;
    for c in &results {
        say(format_args!("{}", c.line()));
    }
    let failed = results.iter().filter(|c| !c.passed).count();
    let verdict = if failed == 0 { "all passed".to_string() } else { format!("{failed} failed") };
    say(format_args!("{} on {}: {verdict}", crate::model::plural(results.len() as u64, "check"), target.redacted()));
    Ok(if failed == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
