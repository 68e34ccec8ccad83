//! `rerun` of a result written before results kept their request: its recorded command
//! line rebuilt (its seed, a new output, the password left to the environment) and parsed
//! as `run` parses it.

use crate::model::RunRequest;
use std::path::Path;

/// The request of a recorded `run` or `bench` line (`recorded`, passwords redacted) with
/// `seed`, `target` and `out` in place of the recorded ones, the workload file `workload`
/// (recorded path, replacement) swapped, and `overrides` replacing the options they name.
/// Also whether the line was `bench`.
pub fn recorded_request(
    recorded: &[String],
    seed: u64,
    (target, out): (Option<&str>, Option<&Path>),
    workload: Option<(&str, &Path)>,
    overrides: &[String],
) -> Result<(RunRequest, bool), Unrepeatable> {
    let line = overridden(rebuilt(recorded, seed, target, out, workload)?, overrides);
    let bench = line.get(1).is_some_and(|c| c == "bench");
    let (request, _) = super::request::parse_request(&line, "rerun").map_err(Unrepeatable::NoLongerParses)?;
    Ok((request, bench))
}

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
    #[error("its command line no longer parses: {0}")]
    NoLongerParses(super::FlagError),
}

/// The recorded command line to run again: fairbench's word order, `run` or `bench`, the
/// recorded seed, `out` and `target` when given (else the recorded target without its
/// redacted password), and `workload` = (recorded path, file to use instead).
use super::sysbench::{is_sysbench_line, translate};

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
                crate::model::request::without_redacted_password(&arg)
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
