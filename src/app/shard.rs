//! `--shard I/N` around a run: the dataset checked once shard 0 has it ready, and a shard's
//! result printed between markers for logs collected by a cluster.

use super::Error;
use crate::db::Database;
use crate::model::ResultDocument;
use crate::plan::ConfigError;
use crate::shard::ShardRun;

use crate::combine::{BEGIN, END};

/// Runs `check` (the dataset's) for a shard. `bench` prepares missing tables on shard 0
/// only: the other shards wait until it has them ready. A shard whose check fails calls the
/// run off for all.
pub(super) fn dataset_checked<D: Database, T>(
    shard: &mut ShardRun<D>,
    bench: bool,
    check: impl FnOnce() -> Result<T, Error>,
) -> Result<T, Error> {
    let barrier = shard.barrier();
    let (leads, index) = (barrier.plan.leads(), barrier.plan.index);
    if bench && !leads {
        barrier.wait_for(0, "dataset", &|| false).map_err(|e| ConfigError(e.to_string()))?;
    }
    match check() {
        Ok(before) => {
            if bench && leads {
                barrier.arrive("dataset").map_err(|e| ConfigError(e.to_string()))?;
            }
            Ok(before)
        }
        Err(e) => {
            barrier.abort(&format!("shard {index} could not start: {e}"));
            Err(e)
        }
    }
}

/// The result on stdout between the markers `fairbench combine` looks for in a log.
pub(super) fn print_marked(doc: &ResultDocument) {
    println!("{BEGIN}\n{}\n{END}", serde_json::to_string(doc).expect("a result serializes"));
}
