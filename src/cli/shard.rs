//! `--shard I/N` and its companions, on run, bench and prepare.

use clap::Args;

/// A run split over client hosts (docs/distributed.md).
#[derive(Args, Debug, Clone, Default)]
pub struct ShardArgs {
    /// Run shard I of N (I from 0) of a run split over client hosts: --threads, --rate and
    /// --events stay the whole run's, of which this shard runs its share with client ids of
    /// its own; the shards start together through a barrier in the target database.
    /// `--shard N` takes I from JOB_COMPLETION_INDEX (Kubernetes Indexed Jobs).
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// The shard index when --shard gives only N.
    #[arg(long = "shard-index", env = "JOB_COMPLETION_INDEX", hide = true)]
    pub shard_index: Option<u32>,
    /// Names the run the shards belong to: the same on every shard, new for every run
    /// (default: FAIRBENCH_SHARD_KEY, else derived from the command line).
    #[arg(long = "shard-key", env = "FAIRBENCH_SHARD_KEY", value_name = "KEY")]
    pub shard_key: Option<String>,
    /// Seconds a shard waits at the barrier for the others before it fails the run.
    #[arg(long = "shard-timeout", default_value_t = 120, value_name = "SECONDS")]
    pub shard_timeout: u64,
    /// Also print the result JSON on stdout between the lines -----BEGIN FAIRBENCH RESULT-----
    /// and -----END FAIRBENCH RESULT----- (for logs collected by a cluster; `fairbench
    /// combine` reads them).
    #[arg(long = "print-result")]
    pub print_result: bool,
}
