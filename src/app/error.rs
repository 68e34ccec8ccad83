//! What the commands themselves refuse: one variant per problem, each its one line.

use std::path::PathBuf;

/// A command given what it does not do (bad input: exit 2).
#[derive(Debug, thiserror::Error)]
pub enum UsageError {
    #[error("this command takes one --target; several (the nodes of one replicated database) are for run and bench")]
    OneTarget,
    #[error("several --target are the nodes of one replicated database: all mysql:// or all postgres://")]
    MixedNodes,
    #[error("no command {name:?}: the commands are {}", known.join(", "))]
    NoSuchCommand { name: String, known: Vec<String> },
    #[error("{name:?} is neither a built-in workload nor a recipe (see `fairbench list`)")]
    NotAWorkloadOrRecipe { name: String },
    #[error("--dialect {given:?}: use mysql, postgres or sqlite")]
    UnknownDialect { given: String },
    #[error("verify {workload:?}: a workload file PATH.toml or a recipe name (see `fairbench list`); built-in workloads have no checks")]
    VerifyBuiltin { workload: String },
    #[error("{workload} declares no check to run")]
    NoChecks { workload: String },
    #[error("sweep: --tables and --table-size lists apply to the sysbench workloads; a workload file's sizes are its --set parameters")]
    SweepSizesOfFile,
    #[error("{} is a shard's or a combined result: rerun every shard (its recorded command line on each client host, with a new --shard-key) and combine them", .result.display())]
    RerunShard { result: PathBuf },
    #[error("{} is a probe's result: rerun runs it as recorded (with --out only); for another target or options run `fairbench probe` with them", .result.display())]
    RerunProbeChanged { result: PathBuf },
    #[error("report: --under-test names what differs between several results")]
    UnderTestAlone,
    #[error("report --text prints one file: give one")]
    TextOneFile,
    #[error("report: {file} is a comparison; give the result files it compares (or `fairbench show` it)")]
    ReportComparison { file: String },
    #[error("report: a sweep file is reported on its own")]
    SweepNotAlone,
    #[error("--print-result: prepare writes no result (run and bench do)")]
    PrintResultOfPrepare,
    #[error("--fault acts on a sandbox, and none has a node at {host}:{port}: name it with --sandbox (exec 'COMMAND' @T steps need none)")]
    FaultWithoutSandbox { host: String, port: u16 },
    /// A study cell whose options or probe line do not parse.
    #[error("{}: workload {workload:?}: {source}", path.display())]
    StudyCell { path: PathBuf, workload: String, source: crate::cli::FlagError },
}

/// A file a command writes cannot be written (exit 2: found before anything is measured).
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("cannot write the recorded workload file to {}: {source}", .path.display())]
    WorkloadCopy { path: PathBuf, source: std::io::Error },
    #[error("cannot render the manual: {0}")]
    Manual(std::io::Error),
}
