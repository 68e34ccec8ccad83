//! `fairbench k8s job`: checks the command the pods will run, prints the Job, and says how to
//! create its Secret and collect its results.

use super::{say, Error};
use crate::cli::{JobArgs, K8sArgs, K8sCommand};
use crate::db::TargetUrl;
use crate::k8s::{JobRequest, K8sError};
use std::process::ExitCode;

/// The commands a Job can run as shards.
const COMMANDS: [&str; 3] = ["bench", "run", "prepare"];

/// Flags the Job adds itself: given again they would contradict it.
const JOB_FLAGS: [&str; 4] = ["--shard", "--shard-key", "--print-result", "--out"];

/// Flags that carry a password, or a file on this machine holding one.
const PASSWORD_FLAGS: [&str; 4] = ["--password-file", "--password", "--mysql-password", "--pgsql-password"];

pub(super) fn k8s_cmd(args: &K8sArgs) -> Result<ExitCode, Error> {
    match &args.command {
        K8sCommand::Job(job) => job_cmd(job),
    }
}

fn job_cmd(args: &JobArgs) -> Result<ExitCode, Error> {
    let (command, options) = args.command.split_first().ok_or(K8sError::NoCommand)?;
    if !COMMANDS.contains(&command.as_str()) {
        return Err(K8sError::NotAJobCommand(command.clone()).into());
    }
    let secret = args.secret.clone().unwrap_or_else(|| format!("{}-db", args.name));
    check_options(command, options, &secret)?;
    let req = JobRequest {
        name: args.name.clone(),
        namespace: args.namespace.clone(),
        shards: args.shards,
        image: args.image.clone(),
        secret,
        cpu: args.cpu.clone(),
        memory: args.memory.clone(),
        command: command.clone(),
        options: options.to_vec(),
    };
    let yaml = crate::k8s::job_yaml(&req)?;
    print!("{yaml}");
    say(format_args!(
        "Create the Secret first, from a file holding only the password, no newline at its end (the password never passes through fairbench): {}",
        req.secret_hint()
    ));
    if req.command != "prepare" {
        say(format_args!(
            "When the Job has completed, collect and combine the shards' results: {}",
            req.collect_hint()
        ));
    }
    Ok(ExitCode::SUCCESS)
}

/// The inner options as the pods will read them: no flag the Job sets, no password, and a
/// shared server as --target. Parsed by fairbench's own flags, so a typo fails here.
fn check_options(command: &str, options: &[String], secret: &str) -> Result<(), K8sError> {
    for flag in options.iter().filter_map(|o| flag_name(o)) {
        if JOB_FLAGS.contains(&flag.as_str()) {
            return Err(K8sError::SetByTheJob(flag));
        }
        if PASSWORD_FLAGS.contains(&flag.as_str()) {
            return Err(K8sError::PasswordFlag { flag, secret: secret.into() });
        }
    }
    if !crate::db::redact::arg_password_spans(options).is_empty() {
        return Err(K8sError::PasswordInTarget(secret.into()));
    }
    let (target, workload) = crate::cli::pod_run(command, options)?;
    // No environment: the password, if any, is the pods' to read.
    let url = TargetUrl::parse(&target, |_| None).map_err(|e| K8sError::Target(e.into()))?;
    if url.embedded() {
        return Err(K8sError::SqliteTarget);
    }
    if workload.ends_with(".toml") && crate::workload::recipes::find(&workload).is_none() {
        eprintln!("warning: the pods read the workload file {workload} inside the image: build it in or mount it");
    }
    Ok(())
}

/// `--name` of an option `--name[=value]`, with sysbench's `_` read as `-`.
fn flag_name(arg: &str) -> Option<String> {
    let name = arg.strip_prefix("--")?.split('=').next()?;
    Some(format!("--{}", name.replace('_', "-")))
}
