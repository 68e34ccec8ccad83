//! Why flags do not make a request: one variant per problem, each its one line.

use crate::model::criterion::CriterionError;

/// Flags that do not read as a command's options (bad input: exit 2).
#[derive(Debug, thiserror::Error)]
pub enum FlagError {
    /// `command` (sweep, ab, rerun, ...) was given options `run` does not take.
    #[error("{command}: {problem} ({command} takes the options of `fairbench run`)")]
    NotRunOptions { command: String, problem: String },
    #[error("{command}: not a run: {given}")]
    NotARun { command: String, given: String },
    #[error("{command}: {source}")]
    Unreadable { command: String, source: clap::Error },
    #[error("{command}: {flag} needs a value")]
    MissingValue { command: &'static str, flag: String },
    #[error("{flag}: {value:?} is not a whole number (a list: 1,2,4)")]
    NotAList { flag: String, value: String },
    #[error("ab: --out names one file; give --out-dir for both results")]
    AbOutFile,
    #[error("ab: give exactly two --target URLs, A then B (got {given})")]
    AbTargets { given: usize },
    #[error("--claim: {0}")]
    Claim(CriterionError),
    /// A study's probe cell that clap refuses: its first line.
    #[error("{problem}")]
    NotProbeOptions { problem: String },
    #[error("a study's probe cell is a probe")]
    ProbeCellNotAProbe,
    #[error("--with takes a workload and its options without --target: it runs on the probe's targets (failover: on whichever takes writes; lag: on the primary)")]
    TargetInsideWith,
    #[error("--fault goes on the probe, not inside --with")]
    FaultInsideWith,
    /// `--with`'s run options that do not make a run.
    #[error("--with {with:?}: {}", source.to_string().trim_start_matches("--with: "))]
    With { with: String, source: Box<FlagError> },
    #[error("{0}")]
    Plan(#[from] crate::plan::PlanError),
}
