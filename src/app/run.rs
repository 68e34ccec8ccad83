//! `run` and `bench`: the request measured by the measure room, its result completed, saved
//! and printed. The job's status line, interval lines and notices are this surface's: it
//! watches the measurement as its [`Observer`].

use super::live::Job;
use super::{do_prepare, Error, LoadSettings};
use crate::collector::Progress;
use crate::db::{Database, TargetUrl};
use crate::measure::{measure_run, Observer};
use crate::metrics::LiveMetrics;
use crate::model::{ResultDocument, RunRequest, RunStatus};
use crate::plan::RunPlan;
use crate::report::{IntervalPrinter, JsonReport, Report, ReportOptions, SysbenchReport, TextReport};
use std::process::ExitCode;
use std::sync::Arc;

pub(super) fn run_cmd<D: Database>(
    db: Arc<D>,
    args: &RunRequest,
    targets: &[TargetUrl],
    bench: bool,
) -> Result<ExitCode, Error> {
    let job = Job::new(0);
    let (closed, out_path) = measure_run(db, args, targets, bench, args.out.as_deref(), &job)?;
    drop(job);
    let doc = closed.complete()?;
    if args.shard.print_result {
        super::shard::print_marked(&doc, &out_path);
    }
    save_and_print(&doc, &out_path, args)
}

impl crate::measure::Failure for Error {}

/// The terminal watches a measurement: its lines on stderr, the status line, and `bench`'s
/// prepare with its meter.
impl Observer for Job {
    type Error = Error;

    fn say(&self, line: std::fmt::Arguments<'_>) {
        Job::say(self, line);
    }

    fn warn(&self, line: std::fmt::Arguments<'_>) {
        eprintln!("warning: {line}");
    }

    fn expect_parts(&self, parts: u32) {
        Job::expect_parts(self, parts);
    }

    fn repeat(&self, line: std::fmt::Arguments<'_>) {
        Job::repeat(self, line);
    }

    fn part_starts(&self, warmup_s: u32, time: Option<std::time::Duration>) {
        Job::part_starts(self, warmup_s, time);
    }

    fn part_ends(&self) {
        Job::part_ends(self);
    }

    fn progress(
        &self,
        request: &RunRequest,
        plan: &RunPlan,
        metrics: Option<Arc<LiveMetrics>>,
    ) -> Box<dyn Progress + Send> {
        Box::new(Job::progress(self, interval_printer(request, plan), metrics))
    }

    fn prepare<D: Database>(
        &self,
        db: Arc<D>,
        request: &RunRequest,
        plan: &RunPlan,
        target: &TargetUrl,
    ) -> Result<(), Error> {
        do_prepare(db, &plan.workload, &LoadSettings::for_run(request, plan, false), target)
    }
}

/// Where interval lines go: sysbench's format on stdout, where its parsers read them;
/// otherwise stderr, or nowhere with --quiet.
fn interval_printer(args: &RunRequest, plan: &RunPlan) -> IntervalPrinter<Box<dyn std::io::Write + Send>> {
    match args.format() {
        "sysbench" => {
            IntervalPrinter::sysbench(Box::new(std::io::stdout()) as Box<dyn std::io::Write + Send>, plan.percentile)
        }
        _ if super::quiet() => IntervalPrinter::new(Box::new(std::io::sink()), plan.percentile),
        _ => IntervalPrinter::new(Box::new(std::io::stderr()), plan.percentile),
    }
}

/// Saved before printing: whatever happens next, the measurements are on disk. If `--out`
/// fails now (disk full, directory gone), the result goes to a fallback file.
pub(super) fn save_and_print(
    doc: &ResultDocument,
    out_path: &std::path::Path,
    args: &RunRequest,
) -> Result<ExitCode, Error> {
    let saved_to = match doc.write(out_path) {
        Ok(()) => out_path.to_path_buf(),
        Err(first) => {
            let name =
                out_path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "result.json".into());
            let fallback = std::env::temp_dir().join(format!("fairbench-fallback-{}-{name}", std::process::id()));
            if doc.write(&fallback).is_err() {
                return Err(first.into());
            }
            eprintln!("warning: {first}; the result was saved to {} instead", fallback.display());
            fallback
        }
    };
    let opts = ReportOptions { percentile: args.percentile, verbose: args.verbose };
    match args.format() {
        "json" => println!("{}", JsonReport.render(doc, &opts)),
        "sysbench" => {
            print!("\n{}", SysbenchReport { histogram: args.histogram }.render(doc, &opts));
            if !doc.audit.is_empty() {
                super::say(format_args!(
                    "audit: {} about these numbers: fairbench audit {}",
                    crate::model::plural(doc.audit.len() as u64, "finding"),
                    saved_to.display()
                ));
            }
        }
        _ => {
            print!("{}", TextReport.render(doc, &opts));
            if args.histogram {
                print!("\n{}", SysbenchReport::histogram_only(doc));
            }
            print!("\n{}", crate::report::findings("Audit", &doc.audit));
        }
    }
    super::say(format_args!("Result saved to {}", saved_to.display()));
    let run = &doc.conditions.run;
    let failed_checks: Vec<&str> = doc.checks.iter().filter(|c| !c.passed).map(|c| c.name.as_str()).collect();
    Ok(match run.status {
        RunStatus::Completed if !failed_checks.is_empty() => {
            eprintln!("error: check failed: {} (see the result's checks)", failed_checks.join(", "));
            ExitCode::from(1)
        }
        // A shard's thresholds judge only its part: `combine` checks them on the whole run.
        RunStatus::Completed if doc.conditions.run.shard.is_some() => ExitCode::SUCCESS,
        RunStatus::Completed if doc.thresholds.iter().any(|t| !t.passed) => {
            let failed: Vec<&str> = doc.thresholds.iter().filter(|t| !t.passed).map(|t| t.threshold.as_str()).collect();
            eprintln!("error: threshold failed: {}", failed.join(", "));
            ExitCode::from(3)
        }
        RunStatus::Completed => ExitCode::SUCCESS,
        RunStatus::Interrupted => ExitCode::from(130),
        RunStatus::Failed | RunStatus::Running | RunStatus::Incomplete => {
            eprintln!("error: {}", run.failure.as_deref().unwrap_or("the run failed"));
            ExitCode::from(1)
        }
    })
}
