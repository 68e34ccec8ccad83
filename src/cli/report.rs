//! `fairbench report` (one offline HTML file) and `fairbench export` (CSV) flags.

use clap::{Args, ValueEnum};
use std::path::PathBuf;

#[derive(Args, Debug, Clone)]
pub struct ReportArgs {
    /// Result files (run, bench) or a sweep file; several results are compared, the first
    /// being the baseline.
    #[arg(required = true, num_args = 1..)]
    pub files: Vec<PathBuf>,
    /// The HTML file to write (self-contained: opens offline, from disk).
    #[arg(long, short = 'o', default_value = "report.html")]
    pub out: PathBuf,
    /// Several results: the difference the comparison is about, as for `compare --under-test`
    /// (a setting, a run option, or product/version/target), shown first.
    #[arg(long, value_name = "NAME")]
    pub under_test: Option<String>,
    /// Print the text report instead (one file), as `fairbench show` does.
    #[arg(long, conflicts_with_all = ["out", "under_test"])]
    pub text: bool,
}

#[derive(Args, Debug, Clone)]
pub struct ShowArgs {
    /// A saved result (run, bench, repeats, a probe, combined, recovered), a sweep file or an
    /// ab comparison.
    pub file: PathBuf,
    /// The report's wide per-query table too.
    #[arg(long, short = 'v')]
    pub verbose: bool,
    /// Percentile in the report's P columns.
    #[arg(long, default_value_t = 95.0)]
    pub percentile: f64,
}

#[derive(Args, Debug, Clone)]
pub struct ExportArgs {
    /// A result file written by run or bench.
    pub file: PathBuf,
    /// Write CSV (the only format so far; stated so scripts keep working when others come).
    #[arg(long, required = true)]
    pub csv: bool,
    /// intervals: one row per timeline second and class; statements: one row per statement
    /// kind and per class; conditions: one key/value row per condition.
    #[arg(long, value_enum, default_value_t = ExportWhat::Intervals)]
    pub what: ExportWhat,
    /// Write to this file instead of stdout.
    #[arg(long, short = 'o')]
    pub out: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ExportWhat {
    Intervals,
    Statements,
    Conditions,
}
