//! `fairbench study ...`: a study file planned (`plan`), run and resumed (`run`), reported
//! (`report`). The study's logic (plan, resume, claims) is src/study's; this is where it
//! meets sandboxes, connections and runs.

mod conclude;
mod history;
mod plan_text;
mod preflight;
mod run;

use super::Error;
use crate::cli::{RunArgs, StudyArgs, StudyCommand};
use crate::plan::ConfigError;
use crate::study::file::ProbeKind;
use crate::study::plan::Cell;
use crate::study::{StudyFile, StudyPlan};
use std::path::Path;
use std::process::ExitCode;

pub(super) fn study_cmd(args: &StudyArgs) -> Result<ExitCode, Error> {
    match &args.command {
        StudyCommand::Plan(a) => {
            let file = StudyFile::load(&a.file)?;
            let plan = StudyPlan::of(&file);
            let checked = preflight::check(&file, &plan, &a.file)?;
            print!("{}", plan_text::plan_text(&file, &plan, &a.file.display().to_string()));
            checked.unchecked.iter().for_each(|n| println!("Not checked: {n}"));
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

/// Where a cell runs: its target's nodes (the first takes the workload and is where its
/// dataset is prepared), the sandbox its faults act on, the result file.
struct Place<'a> {
    nodes: &'a [String],
    sandbox: Option<&'a str>,
    out: Option<&'a Path>,
}

/// A cell's run as the command line it is: `run` (with `--fault` when its workload has
/// faults on its target), or `probe failover|lag` with that run as its `--with`.
fn cell_command(
    file: &StudyFile,
    plan: &StudyPlan,
    cell: &Cell,
    path: &Path,
    repeat: u32,
    place: &Place,
) -> Vec<String> {
    let w = &file.workloads[cell.workload];
    let target = &plan.instances[cell.instance].target;
    let mut extra: Vec<String> = Vec::new();
    if let Some(schedule) = w.faults.get(target) {
        extra.push(format!("--fault={schedule}"));
        extra.extend(place.sandbox.map(|s| format!("--sandbox={s}")));
    }
    extra.extend(place.out.map(|o| format!("--out={}", o.display())));
    let Some(kind) = w.probe else {
        extra.insert(0, format!("--target={}", place.nodes.first().map_or("", String::as_str)));
        return cell_argv(file, cell, path, repeat, &extra);
    };
    let mut argv: Vec<String> = ["fairbench", "probe", kind.name()].map(String::from).to_vec();
    match kind {
        ProbeKind::Failover => argv.extend(place.nodes.iter().map(|n| format!("--target={n}"))),
        ProbeKind::Lag => {
            argv.extend(place.nodes.first().map(|n| format!("--primary={n}")));
            argv.extend(place.nodes.iter().skip(1).map(|n| format!("--replica={n}")));
        }
    }
    argv.extend(w.probe_rate.map(|r| format!("--rate={r}")));
    argv.extend(extra);
    argv.push(format!("--with={}", cell_argv(file, cell, path, repeat, &[])[2..].join(" ")));
    argv
}

/// A cell's command line parsed as fairbench would, against placeholder nodes: a bad option
/// of a probe is refused before anything starts.
fn check_command(file: &StudyFile, plan: &StudyPlan, cell: &Cell, path: &Path) -> Result<(), Error> {
    let target = &file.targets[&plan.instances[cell.instance].target];
    let nodes: Vec<String> = match target.node_names() {
        names if names.is_empty() => {
            std::iter::once(target.url.clone().unwrap_or_default()).chain(target.replica_urls.clone()).collect()
        }
        names => names.iter().map(|n| format!("mysql://{n}/placeholder")).collect(),
    };
    let argv =
        cell_command(file, plan, cell, path, 1, &Place { nodes: &nodes, sandbox: Some("placeholder"), out: None });
    <crate::cli::Cli as clap::Parser>::try_parse_from(&argv).map(|_| ()).map_err(|e| {
        let w = &file.workloads[cell.workload];
        ConfigError(format!(
            "{}: workload {:?}: {}",
            path.display(),
            w.name,
            e.to_string().lines().next().unwrap_or("")
        ))
        .into()
    })
}

/// An option's value as `run` takes it: sysbench's on/off for true/false.
fn option_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Boolean(b) => if *b { "on" } else { "off" }.into(),
        other => other.to_string(),
    }
}
