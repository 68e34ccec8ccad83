//! `fairbench study plan FILE`: the study's plan as a person reads it.

use super::option_text;
use crate::model::plural;
use crate::study::plan::Instance;
use crate::study::{StudyFile, StudyPlan};
use std::fmt::Write;

pub(super) fn instance(file: &StudyFile, i: &Instance) -> String {
    let t = &file.targets[&i.target];
    let mut settings: Vec<String> = t.set.clone();
    settings.extend(i.settings.iter().map(|v| format!("{}={}", v.axis.trim_start_matches("set."), v.value)));
    match (&t.sandbox, &t.url) {
        (Some(engine), _) if settings.is_empty() => format!("{}: a {engine} sandbox", i.target),
        (Some(engine), _) => format!("{}: a {engine} sandbox with {}", i.target, settings.join(", ")),
        (None, Some(url)) => format!("{}: {}", i.target, crate::db::redact::redact_str(url)),
        (None, None) => i.target.clone(),
    }
}

pub(super) fn plan_text(file: &StudyFile, p: &StudyPlan, name: &str) -> String {
    let s = &file.study;
    let mut o = String::new();
    let _ = writeln!(o, "Study: {} ({name})", s.title);
    if let Some(q) = &s.question {
        let _ = writeln!(o, "Question: {q}");
    }
    if let Some(seed) = &file.seed {
        o.push_str(&crate::report::study_seed::seed_text(&seed.record()));
    }
    let _ = writeln!(o, "Targets ({}):", p.instances.len());
    for i in &p.instances {
        let _ = writeln!(o, "  {}", instance(file, i));
    }
    let _ = writeln!(o, "Workloads:");
    for w in &file.workloads {
        let _ = writeln!(o, "  {}", workload(w));
    }
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
    if file.workloads.iter().any(|w| !w.faults.is_empty()) {
        let _ = writeln!(o, "Faults change a sandbox (a node killed, a replica promoted): each is removed after a run with faults and started and prepared afresh before its next run");
    }
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
        let [target, workload, point] = p.label(file, &p.cells[*cell]);
        let _ = writeln!(o, "  {:>4}  {target}  {workload}  {point}  repeat {repeat}/{}", n + 1, s.repeats);
    }
    o
}

/// `failover: oltp_read_write (tables=2) beside probe failover; faults on replicas: kill primary @8s`.
fn workload(w: &crate::study::file::WorkloadSpec) -> String {
    let mut out = match &w.label {
        Some(label) => format!("{label}: {}", w.name),
        None => w.name.clone(),
    };
    if !w.options.is_empty() {
        let options: Vec<String> = w.options.iter().map(|(k, v)| format!("{k}={}", option_text(v))).collect();
        out += &format!(" ({})", options.join(" "));
    }
    if let Some(p) = w.probe {
        out += &format!(" beside probe {}", p.name());
        out += &w.probe_rate.map(|r| format!(" at {r} writes/s")).unwrap_or_default();
    }
    for (target, schedule) in &w.faults {
        out += &format!("; faults on {target}: {schedule}");
    }
    out
}
