//! `fairbench study ...`: a study file planned (`plan`), run and resumed (`run`), reported
//! (`report`). The study's logic (plan, the lab and its resume, claims) is src/study's;
//! here a cell becomes a request (or a probe) and the lab's bench measures it.

mod conclude;
mod plan_text;
mod preflight;
mod run;

use super::error::UsageError;
use super::Error;
use crate::cli::{StudyArgs, StudyCommand};
use crate::model::RunRequest;
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

/// A cell's run as the words of `run` after its name: the workload (a file named relative
/// to the study file), the study's time and warmup, the seed of its repeat (the study's
/// seed plus the repeat's number less one: every target's k-th repeat draws the same
/// random streams, and a repeat on tables an earlier one changed draws new ones, as
/// sysbench's unique ids must), the workload's options, the point's values.
fn cell_words(file: &StudyFile, cell: &Cell, path: &Path, repeat: u32) -> Vec<String> {
    let (s, w) = (&file.study, &file.workloads[cell.workload]);
    let workload = match w.name.ends_with(".toml") {
        true => path.parent().unwrap_or(Path::new("")).join(&w.name).display().to_string(),
        false => w.name.clone(),
    };
    let mut words = vec![workload];
    words.extend([format!("--time={}", s.time_s), format!("--warmup={}", s.warmup_s)]);
    words.extend(s.seed.map(|seed| format!("--rand-seed={}", seed.saturating_add(repeat.max(1) as u64 - 1))));
    let flag = |name: &str, value: String| format!("--{}={value}", name.replace('_', "-"));
    words.extend(w.options.iter().map(|(k, v)| flag(k, option_text(v))));
    words.extend(cell.point.iter().map(|v| flag(&v.axis, v.value.clone())));
    words
}

/// The cell's run as a request: the study file's option text parsed once, by `run`'s own
/// definition (the target and where it goes are set by whoever runs it).
fn cell_request(file: &StudyFile, cell: &Cell, path: &Path, repeat: u32) -> Result<RunRequest, Error> {
    let w = &file.workloads[cell.workload];
    let mut argv = vec!["fairbench".to_string(), "run".into()];
    argv.extend(cell_words(file, cell, path, repeat));
    crate::cli::parse_request(&argv, "study")
        .map(|(request, _quiet)| request)
        .map_err(|source| UsageError::StudyCell { path: path.to_path_buf(), workload: w.name.clone(), source }.into())
}

/// Where a cell runs: its target's nodes (the first takes the workload and is where its
/// dataset is prepared), the sandbox its faults act on, the result file.
struct Place<'a> {
    nodes: &'a [String],
    sandbox: Option<&'a str>,
    out: Option<&'a Path>,
}

/// What a cell measures: a run, as its request; or a probe with that run beside it
/// (`--with`), as the probe's request.
enum Measurement {
    Run(RunRequest),
    Probe(crate::model::ProbeRequest),
}

/// The cell's `repeat` at `place`: its run (with its target's faults), or its probe.
fn measurement(
    file: &StudyFile,
    plan: &StudyPlan,
    cell: &Cell,
    path: &Path,
    repeat: u32,
    place: &Place,
) -> Result<Measurement, Error> {
    if file.workloads[cell.workload].probe.is_some() {
        let line = cell_line(file, plan, cell, path, repeat, place);
        return Ok(Measurement::Probe(crate::cli::probe_request(&line).map_err(|e| refused(file, cell, path, e))?));
    }
    let mut run = cell_request(file, cell, path, repeat)?;
    run.target.targets = vec![place.nodes.first().cloned().unwrap_or_default()];
    let target = &plan.instances[cell.instance].target;
    if let Some(schedule) = file.workloads[cell.workload].faults.get(target) {
        run.faults.fault = Some(schedule.clone());
        run.faults.sandbox = place.sandbox.map(str::to_string);
    }
    run.out = place.out.map(Path::to_path_buf);
    Ok(Measurement::Run(run))
}

fn refused(file: &StudyFile, cell: &Cell, path: &Path, source: crate::cli::FlagError) -> Error {
    let workload = file.workloads[cell.workload].name.clone();
    UsageError::StudyCell { path: path.to_path_buf(), workload, source }.into()
}

/// A cell's run as the command line it is, for display and for a probe: `run` (with
/// `--fault` when its workload has faults on its target), or `probe failover|lag` with
/// that run as its `--with`.
fn cell_line(file: &StudyFile, plan: &StudyPlan, cell: &Cell, path: &Path, repeat: u32, place: &Place) -> Vec<String> {
    let w = &file.workloads[cell.workload];
    let target = &plan.instances[cell.instance].target;
    let mut extra: Vec<String> = Vec::new();
    if let Some(schedule) = w.faults.get(target) {
        extra.push(format!("--fault={schedule}"));
        extra.extend(place.sandbox.map(|s| format!("--sandbox={s}")));
    }
    extra.extend(place.out.map(|o| format!("--out={}", o.display())));
    let Some(kind) = w.probe else {
        let mut argv = vec!["fairbench".to_string(), "run".into()];
        argv.extend(cell_words(file, cell, path, repeat));
        argv.push(format!("--target={}", place.nodes.first().map_or("", String::as_str)));
        argv.extend(extra);
        return argv;
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
    argv.push(format!("--with={}", cell_words(file, cell, path, repeat).join(" ")));
    argv
}

/// A cell's measurement made against placeholder nodes: a bad option of a run or a probe
/// is refused before anything starts.
fn check_command(file: &StudyFile, plan: &StudyPlan, cell: &Cell, path: &Path) -> Result<(), Error> {
    let target = &file.targets[&plan.instances[cell.instance].target];
    let nodes: Vec<String> = match target.node_names() {
        names if names.is_empty() => {
            std::iter::once(target.url.clone().unwrap_or_default()).chain(target.replica_urls.clone()).collect()
        }
        names => names.iter().map(|n| format!("mysql://{n}/placeholder")).collect(),
    };
    let place = Place { nodes: &nodes, sandbox: Some("placeholder"), out: None };
    measurement(file, plan, cell, path, 1, &place).map(|_| ())
}

/// An option's value as `run` takes it: sysbench's on/off for true/false.
fn option_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Boolean(b) => if *b { "on" } else { "off" }.into(),
        other => other.to_string(),
    }
}
