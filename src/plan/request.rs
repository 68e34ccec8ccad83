//! A run's request into its validated plan: the stop condition, the load model and its rate,
//! percentiles, the errors to retry, a shard's share, the thresholds.

use crate::model::request::RunRequest;
use crate::plan::{Arrival, LoopModel, PlanError, RunPlan, StopCondition, WorkloadPlan};
use std::time::Duration;

mod shard;
mod workload;

impl RunRequest {
    /// The report to print: --format, else sysbench's with --sysbench-defaults, else text.
    pub fn format(&self) -> &str {
        match &self.format {
            Some(f) => f,
            None if self.workload.sysbench_defaults => "sysbench",
            None => "text",
        }
    }

    /// The `--threshold`s, parsed.
    pub fn thresholds(&self) -> Result<Vec<crate::model::Criterion>, PlanError> {
        parse_thresholds(&self.thresholds)
    }

    /// The validated run plan of `workload` for a target of `dialect` (which decides what
    /// error codes mean).
    pub fn plan(&self, dialect: crate::model::Dialect, workload: WorkloadPlan) -> Result<RunPlan, PlanError> {
        // sysbench: --events=0 is no limit.
        let events = self.events.filter(|&n| n > 0);
        let time = match (self.time, events) {
            (Some(0), _) => None,
            (Some(t), _) => Some(Duration::from_secs(t)),
            // sysbench's 10 s also ends a run given --events.
            (None, Some(_)) if !self.workload.sysbench_defaults => None,
            (None, _) => Some(Duration::from_secs(10)),
        };
        if let Some(rate) = self.open_rate() {
            check_rate(rate, time)?;
        }
        if self.percentile != 0.0 && !(1.0..=100.0).contains(&self.percentile) {
            return Err(PlanError::Percentile { given: self.percentile });
        }
        // sysbench's 0 (none) leaves the interval lines and P columns at their default.
        let percentile = if self.percentile == 0.0 { 95.0 } else { self.percentile };
        // A percentile the summaries do not keep anyway is computed as an extra one.
        let mut percentiles = self.percentiles.clone();
        if ![50.0, 95.0, 99.0, 99.9, 100.0].contains(&percentile) && !percentiles.contains(&percentile) {
            percentiles.push(percentile);
        }
        // Each shard runs its share of the run's clients, events and rate.
        let shard = self.shard.plan(self.threads, self.open_rate())?;
        let threads = shard.as_ref().map_or(self.threads, |s| s.threads);
        let events = events.map(|e| shard.as_ref().map_or(e, |s| crate::plan::share(e, s.index, s.count).1.max(1)));
        let share = |total: f64| total * threads as f64 / self.threads.max(1) as f64;
        let plan = RunPlan {
            shard,
            workload,
            distribution: self.workload.distribution()?,
            threads,
            stop: StopCondition { time, events },
            warmup_s: self.warmup,
            report_interval: self.report_interval.map(|s| Duration::from_millis((s * 1000.0).round() as u64)),
            percentile,
            percentiles,
            retry: retry_policy(dialect, &self.ignore_errors)?,
            rand_seed: self.workload.seed(),
            loop_model: match self.open_rate() {
                None => LoopModel::Closed,
                Some(rate) => LoopModel::Open {
                    rate: share(rate),
                    arrival: match self.arrival.as_str() {
                        "fixed" => Arrival::Fixed,
                        "poisson" => Arrival::Poisson,
                        a => return Err(PlanError::UnknownArrival { given: a.to_string() }),
                    },
                    max_backlog: self.max_backlog.unwrap_or_else(|| (share(rate) * 10.0).ceil().max(1.0) as u64),
                },
            },
            reconnect: crate::model::ReconnectPolicy::new(self.reconnect_timeout, self.threads),
            admin_timeout: Duration::from_secs_f64(self.target.connect.admin_timeout),
            repeats: self.repeat,
            cost_per_hour: self.cost_per_hour,
            server_figures: Vec::new(),
        };
        plan.validate()?;
        Ok(plan)
    }
}

impl RunRequest {
    /// The open loop's rate: `--rate`, but 0 (sysbench's "no limit") is a closed loop.
    pub fn open_rate(&self) -> Option<f64> {
        self.rate.filter(|r| *r != 0.0)
    }
}

/// The most events per second an open-loop schedule can keep apart: one per nanosecond,
/// the resolution of its intended start times.
pub const MAX_RATE: f64 = 1e9;

/// `--rate` within what a run of `time` can honour: at least one arrival within the
/// measured time (without --time: within the longest run), at most [`MAX_RATE`].
fn check_rate(rate: f64, time: Option<Duration>) -> Result<(), PlanError> {
    if !(rate.is_finite() && rate > 0.0) {
        return Err(PlanError::RateNotPositive { rate });
    }
    if rate > MAX_RATE {
        return Err(PlanError::RateAboveMax { rate });
    }
    let span = time.unwrap_or(crate::plan::MAX_TIME);
    if rate < 1.0 / span.as_secs_f64() {
        return Err(PlanError::RateTooLow { rate, time });
    }
    Ok(())
}

/// `--threshold`s: each `METRIC OP NUMBER[UNIT]`.
pub fn parse_thresholds(given: &[String]) -> Result<Vec<crate::model::Criterion>, PlanError> {
    given.iter().map(|t| crate::model::Criterion::threshold(t).map_err(PlanError::Threshold)).collect()
}

/// `--ignore-errors`: codes of the target's dialect, `all` (every server error, as sysbench)
/// or `none`; empty: the dialect's defaults.
fn retry_policy(dialect: crate::model::Dialect, given: &[String]) -> Result<crate::model::RetryPolicy, PlanError> {
    use crate::model::{ErrorCode, RetryPolicy};
    let words: Vec<&str> = if given.is_empty() {
        dialect.default_retry_codes().to_vec()
    } else {
        given.iter().map(|s| s.trim()).filter(|s| !s.is_empty()).collect()
    };
    let mut policy = RetryPolicy::default();
    for w in words {
        match w.to_ascii_lowercase().as_str() {
            "all" => policy.all_server_errors = true,
            "none" => {}
            _ => policy.codes.push(
                ErrorCode::parse(dialect, w)
                    .ok_or_else(|| PlanError::UnknownErrorCode { given: w.to_string(), dialect })?,
            ),
        }
    }
    Ok(policy)
}
