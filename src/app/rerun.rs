//! `fairbench rerun RESULT`: what a result ran, run once more into a new result. The
//! recorded command line is taken as it was (a sysbench line in fairbench's words), with the
//! recorded seed, the recorded workload file when the one at its path changed or is gone,
//! and a new output; the password, never stored, comes from where it always does.

use super::{read_result, Error};
use crate::cli::sysbench::{is_sysbench_line, translate};
use crate::cli::{Cli, RerunArgs};
use crate::model::WorkloadFileRecord;
use crate::plan::ConfigError;
use clap::Parser;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub(super) fn rerun_cmd(args: &RerunArgs) -> Result<ExitCode, Error> {
    let doc = read_result(&args.result)?;
    if doc.conditions.run.shard.is_some() || !doc.shards.is_empty() {
        return Err(ConfigError(format!(
            "{} is a shard's or a combined result: rerun every shard (its recorded command line on each client host, with a new --shard-key) and combine them",
            args.result.display()
        ))
        .into());
    }
    let file = doc.conditions.workload.file.as_ref();
    let replaced = match file {
        Some(f) => recorded_workload(f, &args.result)?,
        None => None,
    };
    let recorded = &doc.conditions.client.command_line;
    let seed = doc.conditions.run.rand_seed;
    let swap = replaced.as_ref().zip(file).map(|(new, f)| (f.path.as_str(), new.as_path()));
    let mut line = rebuilt(recorded, seed, args.target.as_deref(), args.out.as_deref(), swap)
        .map_err(|why| Error::NotRerunnable { result: args.result.clone(), why })?;
    line = overridden(line, &args.overrides);
    for difference in differences(&doc, args) {
        super::say(format_args!("note: {difference}"));
    }
    super::say(format_args!(
        "Rerunning {} (seed {seed}): {}",
        args.result.display(),
        crate::db::redact::redact_args(line.iter().cloned()).join(" ")
    ));
    let cli = Cli::try_parse_from(&line).map_err(|e| {
        let first = e.to_string().lines().next().unwrap_or_default().trim_start_matches("error: ").to_string();
        ConfigError(format!("{}: its command line no longer parses: {first}", args.result.display()))
    })?;
    super::run(cli)
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
fn overridden(line: Vec<String>, overrides: &[String]) -> Vec<String> {
    let replaced: Vec<&str> = overrides.iter().filter(|a| a.starts_with("--")).map(|a| flag_name(a)).collect();
    let mut kept = without(line, |flag| replaced.contains(&flag));
    kept.extend(overrides.iter().cloned());
    kept
}

/// `--threads=8` -> `--threads`.
fn flag_name(arg: &str) -> &str {
    arg.split_once('=').map_or(arg, |(f, _)| f)
}

/// `args` without the options `drop` names, and their values (`--x=v`, or `--x v`).
fn without(args: Vec<String>, drop: impl Fn(&str) -> bool) -> Vec<String> {
    let mut kept = Vec::with_capacity(args.len());
    let mut args = args.into_iter().peekable();
    while let Some(arg) = args.next() {
        if !(arg.starts_with("--") && drop(flag_name(&arg))) {
            kept.push(arg);
        } else if !arg.contains('=') {
            args.next_if(|value| !value.starts_with("--"));
        }
    }
    kept
}

/// The recorded workload file, written beside the result when the file at its path is no
/// longer what ran (changed or gone); `None` when it still is.
fn recorded_workload(f: &WorkloadFileRecord, result: &Path) -> Result<Option<PathBuf>, Error> {
    if std::fs::read_to_string(&f.path).is_ok_and(|now| now == f.content) {
        return Ok(None);
    }
    let copy = PathBuf::from(format!("{}.workload.toml", result.with_extension("").display()));
    std::fs::write(&copy, &f.content)
        .map_err(|e| ConfigError(format!("cannot write the recorded workload file to {}: {e}", copy.display())))?;
    super::say(format_args!(
        "note: {} is not the workload file that ran (changed or gone): running the recorded one, written to {}",
        f.path,
        copy.display()
    ));
    Ok(Some(copy))
}

/// Why a result's recorded command line cannot be run again.
#[derive(Debug, thiserror::Error)]
pub enum Unrepeatable {
    #[error("it records no command line")]
    NoCommandLine,
    /// The translator's refusal.
    #[error("its sysbench line no longer translates: {0}")]
    Untranslatable(String),
    /// The command that wrote it.
    #[error("it was written by `fairbench {0}`, which rerun does not repeat: run that command again")]
    OtherCommand(String),
}

/// The recorded command line to run again: fairbench's word order, `run` or `bench`, the
/// recorded seed, `out` and `target` when given (else the recorded target without its
/// redacted password), and `workload` = (recorded path, file to use instead).
fn rebuilt(
    recorded: &[String],
    seed: u64,
    target: Option<&str>,
    out: Option<&Path>,
    workload: Option<(&str, &Path)>,
) -> Result<Vec<String>, Unrepeatable> {
    if recorded.len() < 2 {
        return Err(Unrepeatable::NoCommandLine);
    }
    let args = match is_sysbench_line(recorded) {
        true => translate(recorded).map_err(Unrepeatable::Untranslatable)?.args,
        false => recorded.to_vec(),
    };
    let command = args[1].as_str();
    if command != "run" && command != "bench" {
        return Err(Unrepeatable::OtherCommand(command.to_string()));
    }
    // Options the rerun sets itself.
    let set_here = |flag: &str| {
        matches!(flag, "--out" | "--rand-seed" | "--rand_seed") || (flag == "--target" && target.is_some())
    };
    let mut line = Vec::with_capacity(args.len() + 3);
    for arg in without(args, set_here) {
        let flag = flag_name(&arg);
        let arg = match workload {
            Some((old, new)) if arg == old => new.display().to_string(),
            // A sysbench line's redacted --mysql-password became an encoded `***` in the URL.
            _ if target.is_none() && (flag == "--target" || arg.contains("://")) => {
                arg.replacen(":***@", "@", 1).replacen(":%2A%2A%2A@", "@", 1)
            }
            _ => arg.clone(),
        };
        line.push(arg);
    }
    line.push(format!("--rand-seed={seed}"));
    if let Some(t) = target {
        line.push(format!("--target={t}"));
    }
    if let Some(o) = out {
        line.push(format!("--out={}", o.display()));
    }
    Ok(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_recorded_line_with_its_seed_a_new_output_and_no_redacted_password() {
        let recorded = strings(&[
            "fairbench",
            "run",
            "oltp_read_write",
            "--target",
            "mysql://bench:***@db:3306/sb",
            "--threads=8",
            "--out",
            "old.json",
            "--rand-seed=5",
        ]);
        let line = rebuilt(&recorded, 42, None, Some(Path::new("new.json")), None).unwrap();
        assert_eq!(
            line,
            strings(&[
                "fairbench",
                "run",
                "oltp_read_write",
                "--target",
                "mysql://bench@db:3306/sb",
                "--threads=8",
                "--rand-seed=42",
                "--out=new.json",
            ])
        );
        let line = rebuilt(&recorded, 42, Some("postgres://h/db"), None, None).unwrap();
        assert!(line.ends_with(&strings(&["--threads=8", "--rand-seed=42", "--target=postgres://h/db"])), "{line:?}");
    }

    #[test]
    fn a_sysbench_line_a_changed_file_and_other_commands() {
        let recorded = strings(&[
            "fairbench",
            "oltp_point_select",
            "--mysql-host=db",
            "--mysql-user=u",
            "--mysql-password=***",
            "--threads=4",
            "run",
        ]);
        let line = rebuilt(&recorded, 7, None, None, None).unwrap();
        assert_eq!(&line[1..3], ["run", "oltp_point_select"]);
        assert!(line.iter().any(|a| a.contains("mysql://u@db")) && !line.iter().any(|a| a.contains("***")), "{line:?}");
        let recorded = strings(&["fairbench", "bench", "w.toml", "--time=5"]);
        let line = rebuilt(&recorded, 7, None, None, Some(("w.toml", Path::new("r.workload.toml")))).unwrap();
        assert_eq!(line, strings(&["fairbench", "bench", "r.workload.toml", "--time=5", "--rand-seed=7"]));
        let e = rebuilt(&strings(&["fairbench", "ab", "w", "--a=x", "--b=y"]), 7, None, None, None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "it was written by `fairbench ab`, which rerun does not repeat: run that command again"
        );
        let line = strings(&["fairbench", "run", "w", "--threads", "8", "--time=5", "--ps", "--rand-seed=7"]);
        let line = overridden(line, &strings(&["--threads=16", "--time", "9"]));
        assert_eq!(line, strings(&["fairbench", "run", "w", "--ps", "--rand-seed=7", "--threads=16", "--time", "9"]));
    }
}
