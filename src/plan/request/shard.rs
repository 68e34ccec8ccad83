//! A shard's request: which part of a run split over client hosts this process runs.

use crate::model::request::ShardRequest;
use crate::plan::{share, ConfigError, ShardPlan};
use std::time::Duration;

impl ShardRequest {
    /// (index, count) from --shard, or `None` for a run on one host.
    pub fn index_and_count(&self) -> Result<Option<(u32, u32)>, ConfigError> {
        let Some(text) = &self.shard else { return Ok(None) };
        let bad =
            || ConfigError(format!("--shard {text:?}: give I/N (I from 0 to N-1), or N with JOB_COMPLETION_INDEX set"));
        let (index, count) = match text.split_once('/') {
            Some((i, n)) => (i.trim().parse::<u32>().map_err(|_| bad())?, n.trim().parse::<u32>().map_err(|_| bad())?),
            None => {
                let n = text.trim().parse::<u32>().map_err(|_| bad())?;
                let i = self.shard_index.ok_or_else(|| {
                    ConfigError(format!(
                        "--shard {n} gives no index and JOB_COMPLETION_INDEX is not set: give --shard I/{n}"
                    ))
                })?;
                (i, n)
            }
        };
        if count == 0 || index >= count {
            return Err(ConfigError(format!(
                "--shard {index}/{count}: the index runs from 0 to N-1 and N is at least 1"
            )));
        }
        if let Some(key) = &self.shard_key {
            let fine = |c: char| c.is_ascii_alphanumeric() || "._:-".contains(c);
            if key.is_empty() || key.len() > 64 || !key.chars().all(fine) {
                return Err(ConfigError(format!(
                    "--shard-key {key:?}: use 1 to 64 letters, digits, '.', '_', ':' or '-'"
                )));
            }
        }
        if self.shard_timeout == 0 {
            return Err("--shard-timeout must be at least 1 second".into());
        }
        Ok(Some((index, count)))
    }

    /// This shard of a run of `threads` clients (and an open loop's `rate`), its key left
    /// empty when none was given (the command line's, filled in where it is known).
    pub fn plan(&self, threads: u32, rate: Option<f64>) -> Result<Option<ShardPlan>, ConfigError> {
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
    pub fn refuse_in(&self, command: &str) -> Result<(), ConfigError> {
        match &self.shard {
            Some(_) => Err(ConfigError(format!(
                "--shard applies to run, bench and prepare, not to {command}: run each shard with `fairbench run ... --shard I/N`"
            ))),
            None => Ok(()),
        }
    }
}
