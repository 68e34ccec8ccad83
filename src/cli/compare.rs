//! `fairbench compare`'s flags.

use super::{parse_thresholds, FlagError};
use crate::model::Criterion;
use crate::plan::PlanError;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug, Clone)]
pub struct CompareArgs {
    /// Result files written by run or bench; the first is the baseline.
    #[arg(required = true, num_args = 2..)]
    pub results: Vec<PathBuf>,
    /// A claim to check against the results, repeatable: qps>=5x (a ratio to the baseline),
    /// p99<=0.5x, commit.p99<=2ms (absolute). Any refuted or inconclusive: exit code 4.
    #[arg(long = "claim")]
    pub claims: Vec<String>,
    /// A threshold every result must meet, repeatable (p99<10ms, qps>5000, errors==0).
    /// Any that fails: exit code 3.
    #[arg(long = "threshold")]
    pub thresholds: Vec<String>,
    /// The difference this comparison is about: a setting (innodb_flush_log_at_trx_commit),
    /// a run option (threads), or product, version or target for whole servers. Reported as
    /// the subject, not as a finding, and it does not undermine claims.
    #[arg(long = "under-test", value_name = "NAME")]
    pub under_test: Option<String>,
    /// Print the comparison as JSON (docs/compare.md).
    #[arg(long)]
    pub json: bool,
    /// List every difference: also each product's own settings (those only some sides
    /// have) and every row of long groups.
    #[arg(long)]
    pub all: bool,
}

impl CompareArgs {
    pub fn claims(&self) -> Result<Vec<Criterion>, FlagError> {
        parse_claims(&self.claims)
    }

    pub fn thresholds(&self) -> Result<Vec<Criterion>, PlanError> {
        parse_thresholds(&self.thresholds)
    }
}

/// `--claim`s (compare's and ab's): each `METRIC OP NUMBER[UNIT|x]`.
pub fn parse_claims(given: &[String]) -> Result<Vec<Criterion>, FlagError> {
    given.iter().map(|c| Criterion::claim(c).map_err(FlagError::Claim)).collect()
}
