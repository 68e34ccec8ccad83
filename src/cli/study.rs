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
}

#[derive(Args, Debug, Clone)]
pub struct StudyPlanArgs {
    /// The study file (TOML).
    pub file: PathBuf,
}

/// One of a study's runs as `fairbench run` reads it (`argv` from the program's name on):
/// its options checked by `run`'s own definition, or the first line of clap's error.
pub fn run_args(argv: &[String]) -> Result<super::RunArgs, crate::plan::ConfigError> {
    super::sweep::parse_run(argv, "study").map(|(args, _)| args)
}
