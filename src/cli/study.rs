//! `fairbench study ...`: a study declared in one file (docs/studies.md).

use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Args, Debug, Clone)]
pub struct StudyArgs {
    #[command(subcommand)]
    pub command: StudyCommand,
}

#[derive(Subcommand, Debug, Clone)]
pub enum StudyCommand {
    /// What a study file runs, in order: its targets (the sandboxes it starts), cells,
    /// repeats, datasets and measuring time. Connects nowhere, starts nothing.
    Plan(StudyPlanArgs),
    /// Runs a study: starts its sandboxes, prepares each point's dataset, runs every cell's
    /// repeats in the planned order (each run a result and record in DIR/runs), judges the
    /// claims and writes DIR/study.json and DIR/report.html. Run again on the same DIR, it
    /// resumes: finished runs are kept, killed or interrupted ones run again, and a file
    /// whose cells changed is refused.
    Run(StudyRunFlags),
    /// The report of a study directory, verdicts first: text on stdout, or --format json,
    /// or --format html.
    Report(StudyReportArgs),
}

#[derive(Args, Debug, Clone)]
pub struct StudyRunFlags {
    /// The study file (TOML).
    pub file: PathBuf,
    /// The study's directory [default: fairbench-results/study-<file stem>: study-commit-latency for
    /// commit-latency.toml].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Also run again the runs that failed (a server that was down, say); by default a
    /// failed run stays failed, and is shown as failed.
    #[arg(long)]
    pub retry_failed: bool,
    /// Run the whole study once more in its directory: a new round of every cell's
    /// repeats (numbered on from the last), so the report shows the spread between runs of
    /// the study as well as within one.
    #[arg(long)]
    pub again: bool,
}

#[derive(Args, Debug, Clone)]
pub struct StudyReportArgs {
    /// A study's directory (as `study run --out` wrote it).
    pub dir: PathBuf,
    /// text, json (the study document) or html (the report as one offline page).
    #[arg(long, default_value = "text", value_parser = ["text", "json", "html"])]
    pub format: String,
}

#[derive(Args, Debug, Clone)]
pub struct StudyPlanArgs {
    /// The study file (TOML).
    pub file: PathBuf,
}
