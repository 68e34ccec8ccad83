//! Why a request cannot make a valid plan: one variant per problem, each its one line.

use crate::model::criterion::CriterionError;
use crate::model::Dialect;
use crate::random::DistributionError;
use crate::workload::builtin::BuiltinError;
use crate::workload::OptionsError;
use std::time::Duration;

/// Flags or options that cannot make a valid plan (bad input: exit 2).
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// A bad built-in workload option, as the options word it.
    #[error(transparent)]
    Options(#[from] OptionsError),
    /// A bad --rand-* flag, as the distribution words it.
    #[error(transparent)]
    Distribution(#[from] DistributionError),
    #[error(
        "unknown workload {name:?}: {}(`fairbench list` shows them all; a workload file ends in .toml)",
        nearest.map(|n| format!("did you mean {n}? ")).unwrap_or_default()
    )]
    UnknownWorkload { name: String, nearest: Option<&'static str> },
    #[error("--set overrides a workload file's [params]; built-in workloads take their own flags")]
    SetOnBuiltin,
    #[error("{workload}: these options leave nothing to run ({source})")]
    NothingToRun { workload: &'static str, source: BuiltinError },
    #[error("unknown --rand-type {given:?}: use uniform, gaussian, special, pareto or zipfian")]
    UnknownDistribution { given: String },
    #[error("--threads must be at least 1")]
    NoThreads,
    #[error("--repeat must be at least 1")]
    NoRepeats,
    #[error("--cost-per-hour must be a price above 0")]
    CostPerHour,
    #[error("--time and --warmup must be at most {} s (ten years)", crate::plan::MAX_TIME.as_secs())]
    TooLong,
    #[error("--percentile {given} is not between 1 and 100")]
    Percentile { given: f64 },
    #[error("--percentiles: {given} is not in (0, 100]")]
    Percentiles { given: f64 },
    #[error("--rate {} is not a positive number of events per second", short(*.rate))]
    RateNotPositive { rate: f64 },
    #[error(
        "--rate {} is above {} events per second, the most the schedule can represent (one event per nanosecond)",
        short(*.rate),
        short(crate::plan::MAX_RATE)
    )]
    RateAboveMax { rate: f64 },
    /// Fewer than one arrival expected within `time` (`None`: the longest run).
    #[error("{}", rate_too_low(*.rate, *.time))]
    RateTooLow { rate: f64, time: Option<Duration> },
    #[error("unknown --arrival {given:?}: use fixed or poisson")]
    UnknownArrival { given: String },
    #[error("--max-backlog must be at least 1 event")]
    NoBacklog,
    #[error("--report-interval must be at least 0.01 s (omit it for no interval lines)")]
    ReportIntervalTooShort,
    #[error("--threshold: {0}")]
    Threshold(CriterionError),
    #[error(
        "--ignore-errors: {given:?} is not a {} error code (e.g. {}), `all` or `none`",
        dialect.name(),
        dialect.default_retry_codes().join(", ")
    )]
    UnknownErrorCode { given: String, dialect: Dialect },
    #[error("--shard {given:?}: give I/N (I from 0 to N-1), or N with JOB_COMPLETION_INDEX set")]
    ShardSyntax { given: String },
    #[error("--shard {count} gives no index and JOB_COMPLETION_INDEX is not set: give --shard I/{count}")]
    ShardIndexMissing { count: u32 },
    #[error("--shard {index}/{count}: the index runs from 0 to N-1 and N is at least 1")]
    ShardOutOfRange { index: u32, count: u32 },
    #[error("--shard-key {given:?}: use 1 to 64 letters, digits, '.', '_', ':' or '-'")]
    ShardKey { given: String },
    #[error("--shard-timeout must be at least 1 second")]
    ShardTimeout,
    #[error("--repeat with --shard: run the sharded run once per repeat and combine each (compare takes the combined results)")]
    ShardRepeat,
    #[error("--threads {threads} over {count} shards: every shard needs at least one client")]
    ShardWithoutClients { threads: u32, count: u32 },
    /// A command that runs a workload, but not as one shard of several.
    #[error("--shard applies to run, bench and prepare, not to {command}: run each shard with `fairbench run ... --shard I/N`")]
    ShardRefused { command: &'static str },
}

fn rate_too_low(rate: f64, time: Option<Duration>) -> String {
    let (span, named) = match time {
        Some(t) => (t, format!("--time {} s", t.as_secs())),
        None => (crate::plan::MAX_TIME, format!("the longest run ({} s)", crate::plan::MAX_TIME.as_secs())),
    };
    format!(
        "--rate {} is too low for {named}: arrivals {} s apart, so the run may measure none (at least {} events per second)",
        short(rate),
        short(1.0 / rate),
        short(1.0 / span.as_secs_f64())
    )
}

/// A number for a message: plain when moderate, otherwise in exponent notation.
fn short(x: f64) -> String {
    if x == 0.0 || !x.is_finite() || (1e-3..1e7).contains(&x.abs()) {
        let plain = format!("{x:.4}");
        let plain = if plain.contains('.') { plain.trim_end_matches('0').trim_end_matches('.') } else { &plain };
        plain.to_string()
    } else {
        format!("{x:.3e}").replace(".000e", "e")
    }
}
