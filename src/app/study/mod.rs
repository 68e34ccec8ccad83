//! `fairbench study ...`: a study file planned (`plan`), run and resumed (`run`), reported
//! (`report`). The study's logic (plan, resume, claims) is src/study's; this is where it
//! meets sandboxes, connections and runs.

mod conclude;
mod plan_text;
mod run;

use super::Error;
use crate::cli::{RunArgs, StudyArgs, StudyCommand};
use crate::plan::ConfigError;
use crate::study::plan::Cell;
use crate::study::{StudyFile, StudyPlan};
use std::path::Path;
use std::process::ExitCode;

pub(super) fn study_cmd(args: &StudyArgs) -> Result<ExitCode, Error> {
    match &args.command {
        StudyCommand::Plan(a) => {
            let file = StudyFile::load(&a.file)?;
            let plan = StudyPlan::of(&file);
            for cell in &plan.cells {
                run_args(&file, cell, &a.file, 1, &[])?;
            }
            print!("{}", plan_text::plan_text(&file, &plan, &a.file.display().to_string()));
            Ok(ExitCode::SUCCESS)
        }
        StudyCommand::Run(a) => run::study_run(a),
        StudyCommand::Report(a) => conclude::report_cmd(a),
    }
}

/// A cell's run as the `run` command line it is: the workload (a file named relative to
/// the study file), the study's time and warmup, the seed of its repeat (the study's seed
/// plus the repeat's number less one: every target's k-th repeat draws the same random
/// streams, and a repeat on tables an earlier one changed draws new ones, as sysbench's
/// unique ids must), the workload's options, the point's values, then `extra` (the target,
/// the result file).
fn cell_argv(file: &StudyFile, cell: &Cell, path: &Path, repeat: u32, extra: &[String]) -> Vec<String> {
    let (s, w) = (&file.study, &file.workloads[cell.workload]);
    let workload = match w.name.ends_with(".toml") {
        true => path.parent().unwrap_or(Path::new("")).join(&w.name).display().to_string(),
        false => w.name.clone(),
    };
    let mut argv = vec!["fairbench".to_string(), "run".into(), workload];
    argv.extend([format!("--time={}", s.time_s), format!("--warmup={}", s.warmup_s)]);
    argv.extend(s.seed.map(|seed| format!("--rand-seed={}", seed.saturating_add(repeat.max(1) as u64 - 1))));
    let flag = |name: &str, value: String| format!("--{}={value}", name.replace('_', "-"));
    argv.extend(w.options.iter().map(|(k, v)| flag(k, option_text(v))));
    argv.extend(cell.point.iter().map(|v| flag(&v.axis, v.value.clone())));
    argv.extend(extra.iter().cloned());
    argv
}

/// The cell's run, its options checked by `run`'s own parser.
fn run_args(file: &StudyFile, cell: &Cell, path: &Path, repeat: u32, extra: &[String]) -> Result<RunArgs, Error> {
    let w = &file.workloads[cell.workload];
    crate::cli::study_run_args(&cell_argv(file, cell, path, repeat, extra))
        .map_err(|e| ConfigError(format!("{}: workload {:?}: {}", path.display(), w.name, e.0)).into())
}

/// An option's value as `run` takes it: sysbench's on/off for true/false.
fn option_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Boolean(b) => if *b { "on" } else { "off" }.into(),
        other => other.to_string(),
    }
}
