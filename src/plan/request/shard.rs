//! A shard's request: which part of a run split over client hosts this process runs.

use crate::model::request::ShardRequest;
use crate::plan::{share, PlanError, ShardPlan};
use std::time::Duration;

impl ShardRequest {
    /// (index, count) from --shard, or `None` for a run on one host.
    pub fn index_and_count(&self) -> Result<Option<(u32, u32)>, PlanError> {
        let Some(text) = &self.shard else { return Ok(None) };
        let bad = || PlanError::ShardSyntax { given: text.clone() };
        let (index, count) = match text.split_once('/') {
            Some((i, n)) => (i.trim().parse::<u32>().map_err(|_| bad())?, n.trim().parse::<u32>().map_err(|_| bad())?),
            None => {
                let n = text.trim().parse::<u32>().map_err(|_| bad())?;
                let i = self.shard_index.ok_or(PlanError::ShardIndexMissing { count: n })?;
                (i, n)
            }
        };
        if count == 0 || index >= count {
            return Err(PlanError::ShardOutOfRange { index, count });
        }
        if let Some(key) = &self.shard_key {
            let fine = |c: char| c.is_ascii_alphanumeric() || "._:-".contains(c);
            if key.is_empty() || key.len() > 64 || !key.chars().all(fine) {
                return Err(PlanError::ShardKey { given: key.clone() });
            }
        }
        if self.shard_timeout == 0 {
            return Err(PlanError::ShardTimeout);
        }
        Ok(Some((index, count)))
    }

    /// This shard of a run of `threads` clients (and an open loop's `rate`), its key left
    /// empty when none was given (the command line's, filled in where it is known).
    pub fn plan(&self, threads: u32, rate: Option<f64>) -> Result<Option<ShardPlan>, PlanError> {
        let Some((index, count)) = self.index_and_count()? else { return Ok(None) };
        let (first_client, mine) = share(threads as u64, index, count);
        Ok(Some(ShardPlan {
            index,
            count,
            key: self.shard_key.clone().unwrap_or_default(),
            timeout: Duration::from_secs(self.shard_timeout),
            total_threads: threads,
            threads: mine as u32,
            first_client: first_client as u32,
            total_rate: rate,
        }))
    }

    /// Commands that run a workload but not as a shard (ab, sweep, probe --with) refuse
    /// the flag rather than start a run that waits for other shards.
    pub fn refuse_in(&self, command: &'static str) -> Result<(), PlanError> {
        match &self.shard {
            Some(_) => Err(PlanError::ShardRefused { command }),
            None => Ok(()),
        }
    }
}
