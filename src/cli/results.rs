//! Commands on result files that neither render nor compare them: audit, recover, rerun.

use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug, Clone)]
pub struct AuditArgs {
    /// A result file written by `run` or `bench` (--out).
    pub result: PathBuf,
    /// Print the findings as a JSON array (id, severity, title, evidence, advice).
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug, Clone)]
pub struct RecoverArgs {
    /// The result file of the run that never ended (status `running`): its streamed
    /// timeline (RESULT.intervals.jsonl.gz and RESULT.hlog) must be beside it.
    pub result: PathBuf,
    /// Write the rebuilt result here instead of over RESULT.
    #[arg(short, long)]
    pub out: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct RerunArgs {
    /// A result file written by `run`, `bench` or `probe`: its recorded request is run again
    /// with the recorded seed (and the recorded workload file, if that changed or is gone);
    /// a probe's with its recorded nodes and faults.
    pub result: PathBuf,
    /// Run against this target instead of the recorded one (whose password was never
    /// stored: without this, it comes from --password-file's variables, FAIRBENCH_PASSWORD,
    /// MYSQL_PWD or PGPASSWORD).
    #[arg(long)]
    pub target: Option<String>,
    /// Where the new result goes (default: fairbench-results/<workload>-<time>.json).
    #[arg(short, long)]
    pub out: Option<PathBuf>,
    /// Options that replace the recorded ones, after `--`: `rerun r.json -- --threads 16`.
    #[arg(last = true)]
    pub overrides: Vec<String>,
}

#[derive(Args, Debug, Clone)]
pub struct CombineArgs {
    /// The shards' result files (`--out` of each `--shard I/N` run), or logs holding
    /// results printed by --print-result (e.g. `kubectl logs` of every pod): every shard
    /// of one run, each once.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Where the combined result goes.
    #[arg(short, long)]
    pub out: PathBuf,
    /// Print the combined result's JSON instead of its report.
    #[arg(long)]
    pub json: bool,
    /// The report's wide per-query table too.
    #[arg(long, short = 'v')]
    pub verbose: bool,
}
