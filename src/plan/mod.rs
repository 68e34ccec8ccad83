//! A validated run: what the flags mean once checked, as plain data (no I/O).

mod error;
mod request;

use crate::model::RetryPolicy;
pub use crate::model::{Arrival, LoopModel};
use crate::random::DistributionSpec;
use crate::workload::file::FileWorkload;
use crate::workload::program::Program;
use crate::workload::{OltpOptions, StatementInfo, Workload};
pub use error::PlanError;
pub use request::{parse_thresholds, MAX_RATE};
use std::sync::Arc;
use std::time::Duration;

/// What a run executes: a built-in sysbench workload with its options, or a workload file.
#[derive(Clone, Debug)]
pub enum WorkloadPlan {
    /// `program`: the built-in definition compiled with these options.
    Sysbench {
        workload: Workload,
        oltp: OltpOptions,
        program: Arc<Program>,
    },
    File(Arc<FileWorkload>),
}

impl WorkloadPlan {
    pub fn name(&self) -> &str {
        match self {
            WorkloadPlan::Sysbench { workload, .. } => workload.name(),
            WorkloadPlan::File(f) => &f.program.name,
        }
    }

    /// What the clients run: the compiled program.
    pub fn program(&self) -> &Program {
        match self {
            WorkloadPlan::Sysbench { program, .. } => program,
            WorkloadPlan::File(f) => &f.program,
        }
    }

    /// The statements measured, in id order.
    pub fn statements(&self) -> Vec<StatementInfo> {
        self.program().measured().0
    }

    /// The kinds of event, in id order: one per transaction (a built-in has one, named
    /// after it), then one per deferred transaction for its executions by the deferred
    /// worker.
    pub fn transactions(&self) -> Vec<String> {
        self.program().kind_names()
    }

    /// Whether an event can write.
    pub fn writes(&self) -> bool {
        self.program().writes()
    }

    /// The tables the workload reads and writes.
    pub fn table_names(&self) -> Vec<String> {
        match self {
            WorkloadPlan::Sysbench { oltp, .. } => oltp.table_names().collect(),
            WorkloadPlan::File(f) => f.program.tables.iter().map(|t| t.name().to_string()).collect(),
        }
    }

    /// Rows prepare loads into each table (the largest table's, for a file).
    pub fn declared_rows(&self) -> u64 {
        match self {
            WorkloadPlan::Sysbench { workload, oltp, .. } => workload.rows_to_load(oltp),
            WorkloadPlan::File(f) => f.program.tables.iter().map(|t| t.rows).max().unwrap_or(0),
        }
    }

    /// A file's rows per table (empty for a built-in: every table has `declared_rows`).
    pub fn declared_rows_by_table(&self) -> std::collections::BTreeMap<String, u64> {
        match self {
            WorkloadPlan::Sysbench { .. } => Default::default(),
            WorkloadPlan::File(f) => f.program.tables.iter().map(|t| (t.name().to_string(), t.rows)).collect(),
        }
    }

    /// The built-in's options, if it is one.
    pub fn oltp(&self) -> Option<&OltpOptions> {
        match self {
            WorkloadPlan::Sysbench { oltp, .. } => Some(oltp),
            WorkloadPlan::File(_) => None,
        }
    }
}

/// When a run ends: whichever comes first.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StopCondition {
    /// Measured seconds (after warmup); `None`: no time limit.
    pub time: Option<Duration>,
    /// Events after warmup, over all clients; `None`: no limit.
    pub events: Option<u64>,
}

/// Longest --time and --warmup accepted: ten years (Instant arithmetic stays far from overflow).
pub const MAX_TIME: Duration = Duration::from_secs(10 * 365 * 86_400);

/// Everything `run` needs, validated.
#[derive(Clone, Debug)]
pub struct RunPlan {
    pub workload: WorkloadPlan,
    pub distribution: DistributionSpec,
    pub threads: u32,
    pub stop: StopCondition,
    /// Seconds run before statistics start (whole seconds: the timeline resolution).
    pub warmup_s: u32,
    /// Print a line this often; `None`: no interval lines.
    pub report_interval: Option<Duration>,
    /// The percentile of the report table's P columns.
    pub percentile: f64,
    /// Further percentiles reported for every class.
    pub percentiles: Vec<f64>,
    /// Errors that roll back and retry the event.
    pub retry: RetryPolicy,
    /// Seed of every client's random stream (client i uses seed and i).
    pub rand_seed: u64,
    pub loop_model: LoopModel,
    /// How a client reconnects after losing its connection.
    pub reconnect: crate::model::ReconnectPolicy,
    /// Deadline of each administrative query (counters, conditions, table sizes).
    pub admin_timeout: Duration,
    /// Times the measured phase runs (each after its own warmup).
    pub repeats: u32,
    /// The target's price per hour (`--cost-per-hour`), for cost per operation.
    pub cost_per_hour: Option<f64>,
    /// `--shard I/N`: this process runs one part of a run split over client hosts;
    /// `threads`, an open loop's rate and `--events` above are then this shard's share.
    pub shard: Option<ShardPlan>,
    /// The server's figures followed every interval (its driver's list; empty: none).
    pub server_figures: Vec<crate::model::SampledFigure>,
}

/// One shard of a run split over client hosts (docs/distributed.md).
#[derive(Clone, Debug, PartialEq)]
pub struct ShardPlan {
    /// From 0.
    pub index: u32,
    pub count: u32,
    /// Names the run at the barrier every shard meets at.
    pub key: String,
    /// How long a shard waits at the barrier for the others.
    pub timeout: Duration,
    /// The whole run's clients (`--threads`), this shard's, and the id of its first.
    pub total_threads: u32,
    pub threads: u32,
    pub first_client: u32,
    /// Open loop: the whole run's rate.
    pub total_rate: Option<f64>,
}

impl ShardPlan {
    /// Shard 0 reads what is read once for the whole run (the server's counters).
    pub fn leads(&self) -> bool {
        self.index == 0
    }
}

/// Part `index` of `count` of `total` items: (first, how many), the first `total % count`
/// parts taking one more, so the parts are contiguous, disjoint and cover `total`.
pub fn share(total: u64, index: u32, count: u32) -> (u64, u64) {
    let (count, index) = (count.max(1) as u64, index as u64);
    let (each, extra) = (total / count, total % count);
    (index * each + index.min(extra), each + u64::from(index < extra))
}

/// The shortest timeline tick (and --report-interval).
pub const MIN_TICK: Duration = Duration::from_millis(10);

impl RunPlan {
    /// How often the clients' recorders are collected into a timeline entry: a second, or
    /// less when --report-interval asks for shorter windows: the longest step that divides
    /// both a second and the interval (whole milliseconds), so that windows, the warmup's
    /// end and whole seconds all fall on ticks.
    pub fn tick(&self) -> Duration {
        let ms = |d: Duration| d.as_millis() as u64;
        let gcd = |mut a: u64, mut b: u64| {
            while b != 0 {
                (a, b) = (b, a % b);
            }
            a
        };
        match self.report_interval {
            Some(r) if ms(r) % 1000 != 0 => Duration::from_millis(gcd(ms(r), 1000).max(ms(MIN_TICK))),
            _ => Duration::from_secs(1),
        }
    }

    /// Ticks one measured phase takes, warmup included, when its length is set (`--time`).
    pub fn planned_ticks(&self) -> Option<u64> {
        let time = self.stop.time?;
        let total = time + Duration::from_secs(self.warmup_s as u64);
        Some(total.as_nanos().div_ceil(self.tick().as_nanos()) as u64)
    }

    pub fn validate(&self) -> Result<(), PlanError> {
        if let Some(o) = self.workload.oltp() {
            o.validate()?;
        }
        self.distribution.validate()?;
        if self.threads == 0 && self.shard.is_none() {
            return Err(PlanError::NoThreads);
        }
        if self.repeats == 0 {
            return Err(PlanError::NoRepeats);
        }
        if self.cost_per_hour.is_some_and(|c| !(c.is_finite() && c > 0.0)) {
            return Err(PlanError::CostPerHour);
        }
        if self.stop.time.is_some_and(|t| t > MAX_TIME) || self.warmup_s as u64 > MAX_TIME.as_secs() {
            return Err(PlanError::TooLong);
        }
        if !(self.percentile > 0.0 && self.percentile <= 100.0) {
            return Err(PlanError::Percentile { given: self.percentile });
        }
        if let Some(&p) = self.percentiles.iter().find(|p| !(**p > 0.0 && **p <= 100.0)) {
            return Err(PlanError::Percentiles { given: p });
        }
        if let LoopModel::Open { rate, max_backlog, .. } = self.loop_model {
            if !(rate > 0.0 && rate.is_finite()) {
                return Err(PlanError::RateNotPositive { rate });
            }
            if max_backlog == 0 {
                return Err(PlanError::NoBacklog);
            }
        }
        if let Some(s) = &self.shard {
            if s.index >= s.count {
                return Err(PlanError::ShardOutOfRange { index: s.index, count: s.count });
            }
            if self.repeats > 1 {
                return Err(PlanError::ShardRepeat);
            }
            if self.threads == 0 || s.total_threads < s.count {
                return Err(PlanError::ShardWithoutClients { threads: s.total_threads, count: s.count });
            }
        }
        if self.report_interval.is_some_and(|r| r < MIN_TICK) {
            return Err(PlanError::ReportIntervalTooShort);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{share, PlanError, RunPlan};
    use crate::model::{Dialect, RunRequest};
    use std::time::Duration;

    /// The plan of `oltp_read_only` on SQLite with `change` made to its request.
    fn plan(change: impl FnOnce(&mut RunRequest)) -> Result<RunPlan, PlanError> {
        let mut r = RunRequest::new("oltp_read_only");
        change(&mut r);
        let workload = r.workload.builtin(Dialect::Sqlite)?;
        r.plan(Dialect::Sqlite, workload)
    }

    #[test]
    fn each_refusal_is_its_own_variant() {
        assert!(plan(|_| {}).is_ok());
        let e = plan(|r| r.rate = Some(-5.0)).unwrap_err();
        assert!(matches!(e, PlanError::RateNotPositive { rate } if rate == -5.0), "{e:?}");
        assert!(matches!(plan(|r| r.rate = Some(1e10)), Err(PlanError::RateAboveMax { .. })));
        let e = plan(|r| (r.rate, r.time) = (Some(1e-300), Some(2))).unwrap_err();
        assert!(matches!(e, PlanError::RateTooLow { time: Some(t), .. } if t == Duration::from_secs(2)), "{e:?}");
        assert!(e.to_string().starts_with("--rate 1e-300 is too low for --time 2 s:"), "{e}");
        let e = plan(|r| r.workload.workload = "oltp_read_wirte".into()).unwrap_err();
        assert!(matches!(e, PlanError::UnknownWorkload { nearest: Some("oltp_read_write"), .. }), "{e:?}");
        assert!(e.to_string().contains("did you mean oltp_read_write? "), "{e}");
        let e = plan(|r| r.shard.shard = Some("3/2".into())).unwrap_err();
        assert!(matches!(e, PlanError::ShardOutOfRange { index: 3, count: 2 }), "{e:?}");
        let e = plan(|r| r.shard.shard = Some("half".into())).unwrap_err();
        assert!(matches!(e, PlanError::ShardSyntax { ref given } if given == "half"), "{e:?}");
        let e = plan(|r| (r.rate, r.arrival) = (Some(10.0), "burst".into())).unwrap_err();
        assert!(matches!(e, PlanError::UnknownArrival { ref given } if given == "burst"), "{e:?}");
        let e = plan(|r| r.ignore_errors = vec!["nope".into()]).unwrap_err();
        assert!(matches!(e, PlanError::UnknownErrorCode { dialect: Dialect::Sqlite, .. }), "{e:?}");
        assert!(matches!(plan(|r| r.percentile = 150.0), Err(PlanError::Percentile { given }) if given == 150.0));
        assert!(matches!(plan(|r| r.threads = 0), Err(PlanError::NoThreads)));
        assert!(matches!(plan(|r| r.workload.set = vec!["x=1".into()]), Err(PlanError::SetOnBuiltin)));
        let mut sharded = RunRequest::new("oltp_read_only");
        sharded.shard.shard = Some("0/2".into());
        let e = sharded.shard.refuse_in("sweep").unwrap_err();
        assert!(matches!(e, PlanError::ShardRefused { command: "sweep" }), "{e:?}");
    }

    #[test]
    fn shares_are_contiguous_disjoint_and_cover_the_total() {
        for (total, count) in [(10u64, 3u32), (3, 3), (64, 5), (7, 1)] {
            let mut next = 0;
            for i in 0..count {
                let (first, n) = share(total, i, count);
                assert_eq!(first, next);
                next += n;
            }
            assert_eq!(next, total);
        }
        assert_eq!(share(10, 0, 3), (0, 4));
        assert_eq!(share(10, 2, 3), (7, 3));
    }
}
