//! `--shard I/N` around a run: the barrier joined, the dataset checked once shard 0 has it
//! ready.

use super::Failure;
use crate::db::Database;
use crate::model::RunRequest;
use crate::plan::RunPlan;
use crate::shard::{Barrier, ShardRun};
use std::sync::Arc;

/// `--shard I/N`: joins the barrier in the target database (the plan's key filled in).
pub(super) fn join<D: Database, E: Failure>(
    db: Arc<D>,
    plan: &mut RunPlan,
    request: &RunRequest,
) -> Result<Option<ShardRun<D>>, E> {
    let Some(shard) = plan.shard.take() else { return Ok(None) };
    let shard = crate::shard::keyed(shard, || crate::shard::run_key(request));
    let seed_given = request.workload.rand_seed != 0;
    // Every shard draws from the same run's streams (each from its own clients' part).
    if !seed_given {
        plan.rand_seed = crate::shard::seed_of(&shard.key);
    }
    plan.shard = Some(shard.clone());
    let host = crate::conditions::host::read().hostname;
    Ok(Some(ShardRun::new(Barrier::join(db, &shard, &host)?)))
}

/// Runs `check` (the dataset's) for a shard. `bench` prepares missing tables on shard 0
/// only: the other shards wait until it has them ready. A shard whose check fails calls the
/// run off for all.
pub(super) fn dataset_checked<D: Database, T, E: Failure>(
    shard: &mut ShardRun<D>,
    bench: bool,
    check: impl FnOnce() -> Result<T, E>,
) -> Result<T, E> {
    let barrier = shard.barrier();
    let (leads, index) = (barrier.plan.leads(), barrier.plan.index);
    if bench && !leads {
        barrier.wait_for(0, "dataset", &|| false)?;
    }
    match check() {
        Ok(before) => {
            if bench && leads {
                barrier.arrive("dataset")?;
            }
            Ok(before)
        }
        Err(e) => {
            barrier.abort(&format!("shard {index} could not start: {e}"));
            Err(e)
        }
    }
}
