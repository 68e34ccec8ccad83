//! `fairbench study plan FILE`: the study's plan as a person reads it.

use super::Error;
use crate::cli::{RunArgs, StudyArgs, StudyCommand};
use crate::model::plural;
use crate::plan::ConfigError;
use crate::study::plan::{Cell, Instance, Value};
use crate::study::{StudyFile, StudyPlan};
use std::fmt::Write;
use std::path::Path;
use std::process::ExitCode;

pub(super) fn study_cmd(args: &StudyArgs) -> Result<ExitCode, Error> {
    match &args.command {
        StudyCommand::Plan(a) => {
            let file = StudyFile::load(&a.file)?;
            let plan = StudyPlan::of(&file);
            for cell in &plan.cells {
                run_line(&file, cell, &a.file)?;
            }
            print!("{}", plan_text(&file, &plan, &a.file.display().to_string()));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A cell's run as the `run` command line it is (its options checked by `run`'s parser): the
/// study's time, warmup and seed, the workload's options, the point's values.
fn run_line(file: &StudyFile, cell: &Cell, path: &Path) -> Result<RunArgs, Error> {
    let (s, w) = (&file.study, &file.workloads[cell.workload]);
    // A workload file is named relative to the study file.
    let workload = match w.name.ends_with(".toml") {
        true => path.parent().unwrap_or(Path::new("")).join(&w.name).display().to_string(),
        false => w.name.clone(),
    };
    let mut argv = vec!["fairbench".to_string(), "run".into(), workload];
    argv.extend([format!("--time={}", s.time_s), format!("--warmup={}", s.warmup_s)]);
    argv.extend(s.seed.map(|seed| format!("--rand-seed={seed}")));
    let flag = |name: &str, value: String| format!("--{}={value}", name.replace('_', "-"));
    argv.extend(w.options.iter().map(|(k, v)| flag(k, option_text(v))));
    argv.extend(cell.point.iter().map(|v| flag(&v.axis, v.value.clone())));
    crate::cli::study_run_args(&argv)
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

fn values(v: &[Value]) -> String {
    v.iter().map(|v| format!("{}={}", v.axis, v.value)).collect::<Vec<_>>().join(" ")
}

fn instance(file: &StudyFile, i: &Instance) -> String {
    let t = &file.targets[&i.target];
    let mut settings: Vec<String> = t.set.clone();
    settings.extend(i.settings.iter().map(|v| format!("{}={}", v.axis.trim_start_matches("set."), v.value)));
    match (&t.sandbox, &t.url) {
        (Some(engine), _) if settings.is_empty() => format!("{}: a {engine} sandbox", i.target),
        (Some(engine), _) => format!("{}: a {engine} sandbox with {}", i.target, settings.join(", ")),
        (None, Some(url)) => format!("{}: {}", i.target, crate::db::url::redact_str(url)),
        (None, None) => i.target.clone(),
    }
}

fn plan_text(file: &StudyFile, p: &StudyPlan, name: &str) -> String {
    let s = &file.study;
    let mut o = String::new();
    let _ = writeln!(o, "Study: {} ({name})", s.title);
    if let Some(q) = &s.question {
        let _ = writeln!(o, "Question: {q}");
    }
    let _ = writeln!(o, "Targets ({}):", p.instances.len());
    for i in &p.instances {
        let _ = writeln!(o, "  {}", instance(file, i));
    }
    let workloads: Vec<String> = file
        .workloads
        .iter()
        .map(|w| match w.options.is_empty() {
            true => w.name.clone(),
            false => {
                let options: Vec<String> = w.options.iter().map(|(k, v)| format!("{k}={}", option_text(v))).collect();
                format!("{} ({})", w.name, options.join(" "))
            }
        })
        .collect();
    let _ = writeln!(o, "Workloads: {}", workloads.join(", "));
    let sandboxes = p.instances.iter().filter(|i| i.sandbox).count();
    let _ = writeln!(
        o,
        "Cells: {}, {} each, {}: {}",
        p.cells.len(),
        plural(s.repeats as u64, "run"),
        match s.order {
            crate::study::file::Order::Interleaved => "interleaved point by point".to_string(),
            crate::study::file::Order::Random =>
                format!("in a random order within each point (seed {})", s.seed.unwrap_or(1)),
        },
        plural(p.runs.len() as u64, "run"),
    );
    let _ = writeln!(
        o,
        "Started and removed: {}; datasets prepared: {}",
        match sandboxes {
            1 => "1 sandbox".to_string(),
            n => format!("{n} sandboxes"),
        },
        p.datasets
    );
    let _ = writeln!(
        o,
        "Time: {} x ({} s warmup + {} s) = {:.1} min of running, plus preparing{}",
        plural(p.runs.len() as u64, "run"),
        s.warmup_s,
        s.time_s,
        p.run_s as f64 / 60.0,
        if sandboxes > 0 { " and starting sandboxes" } else { "" }
    );
    let _ = writeln!(o, "Order:");
    for (n, (cell, repeat)) in p.runs.iter().enumerate() {
        let c = &p.cells[*cell];
        let i = &p.instances[c.instance];
        let target = match i.settings.is_empty() {
            true => i.target.clone(),
            false => format!("{} ({})", i.target, values(&i.settings)),
        };
        let _ = writeln!(
            o,
            "  {:>4}  {target}  {}  {}  repeat {repeat}/{}",
            n + 1,
            file.workloads[c.workload].name,
            values(&c.point),
            s.repeats
        );
    }
    o
}
