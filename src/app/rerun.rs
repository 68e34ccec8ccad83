//! `fairbench rerun RESULT`: what a result ran, run once more into a new result. The
//! recorded request is executed (a result written before requests were kept: its command
//! line, as `run` parses it), with the recorded seed, the recorded workload file when the one at its path changed or is gone,
//! and a new output; the password, never stored, comes from where it always does.

use super::{read_result, Error};
use crate::cli::RerunArgs;
use crate::model::{ProbeRequest, ResultDocument, RunRequest, WorkloadFileRecord};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub(super) fn rerun_cmd(args: &RerunArgs) -> Result<ExitCode, Error> {
    let doc = read_result(&args.result)?;
    if let Some(recorded) = doc.ha.as_ref().and_then(|ha| ha.request.as_ref()) {
        return rerun_probe(recorded, &doc, args);
    }
    if doc.conditions.run.shard.is_some() || !doc.shards.is_empty() {
        return Err(super::UsageError::RerunShard { result: args.result.clone() }.into());
    }
    let file = doc.conditions.workload.file.as_ref();
    let replaced = match file {
        Some(f) => recorded_workload(f, &args.result)?,
        None => None,
    };
    let seed = doc.conditions.run.rand_seed;
    let swap = replaced.as_ref().zip(file).map(|(new, f)| (f.path.as_str(), new.as_path()));
    let (request, bench) = match &doc.conditions.client.request {
        Some(recorded) => (again(recorded, seed, args, swap.map(|(_, new)| new))?, recorded.bench),
        None => {
            let place = (args.target.as_deref(), args.out.as_deref());
            crate::cli::recorded_request(&doc.conditions.client.command_line, seed, place, swap, &args.overrides)
                .map_err(|why| Error::NotRerunnable { result: args.result.clone(), why })?
        }
    };
    for difference in differences(&doc, args) {
        super::say(format_args!("note: {difference}"));
    }
    super::say(format_args!(
        "Rerunning {} (seed {seed}): {}",
        args.result.display(),
        doc.conditions.client.command_line.join(" ")
    ));
    super::run_or_bench(&request, bench)
}

/// A probe's recorded request once more, with a new output; its URLs' passwords come from
/// where they always do. Its nodes and faults are the recorded ones: another target or
/// options are given to `probe` itself.
fn rerun_probe(recorded: &ProbeRequest, doc: &ResultDocument, args: &RerunArgs) -> Result<ExitCode, Error> {
    if args.target.is_some() || !args.overrides.is_empty() {
        return Err(super::UsageError::RerunProbeChanged { result: args.result.clone() }.into());
    }
    let mut request = recorded.redacted(crate::model::request::without_redacted_password);
    if let Some(common) = request.common_mut() {
        common.out = args.out.clone();
    }
    for difference in differences(doc, args) {
        super::say(format_args!("note: {difference}"));
    }
    super::say(format_args!(
        "Rerunning probe {} from {}: {}",
        doc.ha.as_ref().map_or("", |ha| ha.probe.as_str()),
        args.result.display(),
        doc.conditions.client.command_line.join(" ")
    ));
    super::probe::probe_cmd(&request)
}

/// The recorded request once more: its seed, a new output, the target given (else the
/// recorded one, whose password comes from where it always does), the recorded workload
/// file when the one at its path changed, and the options replaced.
fn again(recorded: &RunRequest, seed: u64, args: &RerunArgs, workload: Option<&Path>) -> Result<RunRequest, Error> {
    let mut run = recorded.clone();
    run.workload.rand_seed = seed;
    run.out = args.out.clone();
    run.target.targets = match &args.target {
        Some(t) => vec![t.clone()],
        None => run.target.targets.iter().map(|t| crate::model::request::without_redacted_password(t)).collect(),
    };
    if let Some(new) = workload {
        run.workload.workload = new.display().to_string();
    }
    match args.overrides.is_empty() {
        true => Ok(run),
        false => Ok(crate::cli::overlay(&run, &args.overrides, "rerun")?),
    }
}

/// What is not as it was: fairbench's version, the target, the client host.
fn differences(doc: &crate::model::ResultDocument, args: &RerunArgs) -> Vec<String> {
    let mut out = Vec::new();
    let version = env!("CARGO_PKG_VERSION");
    if doc.fairbench_version != version {
        out.push(format!("the result was written by fairbench {}; this is {version}", doc.fairbench_version));
    }
    if let Some(t) = &args.target {
        let now = crate::db::redact::redact_args([t.clone()]).join("");
        out.push(format!("target {now} instead of the recorded {}", doc.target.url));
    }
    let host = crate::conditions::host::read().hostname;
    let was = &doc.conditions.client.host.hostname;
    if &host != was {
        out.push(format!("client host {host} instead of the recorded {was}"));
    }
    if !args.overrides.is_empty() {
        out.push(format!("options replaced: {}", args.overrides.join(" ")));
    }
    out
}

/// `line` with each option of `overrides` in place of the recorded one.
fn recorded_workload(f: &WorkloadFileRecord, result: &Path) -> Result<Option<PathBuf>, Error> {
    if std::fs::read_to_string(&f.path).is_ok_and(|now| now == f.content) {
        return Ok(None);
    }
    let copy = PathBuf::from(format!("{}.workload.toml", result.with_extension("").display()));
    std::fs::write(&copy, &f.content)
        .map_err(|source| super::OutputError::WorkloadCopy { path: copy.clone(), source })?;
    super::say(format_args!(
        "note: {} is not the workload file that ran (changed or gone): running the recorded one, written to {}",
        f.path,
        copy.display()
    ));
    Ok(Some(copy))
}
