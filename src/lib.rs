//! fairbench: database benchmarks whose numbers people can believe.
//!
//! Data flows one way: workload -> runner -> recorder -> collector -> result document ->
//! report / audit. Each module below may import only the modules listed after its arrow
//! (`tests/module_graph.rs` fails on any other import, and on any cycle):
//!
//! - [`argv`] -> nothing. Hides passwords in the process's visible arguments.
//! - [`model`] -> nothing. The result document and everything in it, as typed data.
//! - [`stats`] -> nothing. HdrHistogram latencies; confidence intervals.
//! - [`random`] -> nothing. sysbench's random streams and distributions.
//! - [`workload`] -> model, random. What events do: workload files and the built-in
//!   definition (spec -> program), value generators, recipes, the sbtest schema.
//! - [`db`] -> model. The one seam to databases: [`db::Database`] opens [`db::Connection`]s.
//! - [`plan`] -> model, random, workload. A validated run.
//! - [`recorder`] -> model, stats, workload. What clients record; the [`recorder::Sink`] seam.
//! - [`metrics`] -> model, recorder, stats. `--metrics-listen`: the run's figures as
//!   OpenMetrics text, its latency histograms from each interval's HdrHistograms.
//! - [`timeline`] -> model, recorder, stats. The files beside the result, appended as the run
//!   goes: the run's record (what every result is built from), each interval's figures, and
//!   each kept entry's histograms as an HdrHistogram log.
//! - [`collector`] -> model, recorder, timeline, workload. The local sink: the timeline's
//!   entries for the run's record, report windows, the live figures.
//! - [`conditions`] -> db, model. Reads the server and host the run depends on.
//! - [`runner`] -> db, model, plan, random, recorder, workload. Workers, clients, the run loop.
//! - [`prepare`] -> db, model, random, workload. Creates, loads and drops fairbench's tables.
//! - [`probe`] -> audit, collector, conditions, db, model, recorder, result, runner, sandbox, stats, timeline.
//!   High-availability probes: a writer through a failover (every attempt recorded) and replica
//!   lag from heartbeats, run from a [`model::ProbeRequest`] (nodes opened, faults scheduled on
//!   the probe's clock, the result finished once); without a workload, a probe streams its
//!   record as a run does and its result is `result::build` of it. A `--with` workload runs in
//!   a run session of the [`measure`] room, which lends itself as a [`probe::Host`].
//! - [`shard`] -> db, model, plan, probe, runner. Runs split over client hosts: the barrier in
//!   the target database, clock offsets, each shard's record of its start.
//! - [`result`] -> audit, collector, model, plan, recorder, runner, stats, workload.
//!   `build(record)`: the one way a result document is made, from a run's record (and the
//!   figures some workloads report: TPC-C-like tpmC from histograms); `complete`: build then
//!   finish, the one last step (streamed files, a probe's figures beside a workload, the audit).
//! - [`measure`] -> collector, conditions, db, metrics, model, plan, prepare, probe, recorder, result, runner, sandbox, shard, timeline, workload.
//!   A [`model::RunRequest`] measured end
//!   to end: dataset checks, plan, runner, collector, the record streamed and closed
//!   ([`result::Closed`]), `--metrics-listen`; a probe request too ([`measure::measure_probe`]:
//!   the probe in its room, its `--with` workload here); what it says goes through a
//!   [`measure::Observer`], which the app implements (this room prints nothing).
//! - [`recover`] -> model, result, timeline. The record of a run that never ended, built.
//! - [`combine`] -> collector, model, recorder, result. The shards of one run as one: their
//!   records merged (histograms summed exactly, timelines entry by entry) and built; a row
//!   per shard.
//! - [`audit`] -> model. Reads result documents only.
//! - [`report`] -> model, stats. Reads result documents (and decodes their histograms).
//! - [`compare`] -> model, stats. Reads result documents: ratios, intervals, conditions diff,
//!   claims.
//! - [`sandbox`] -> db, model. Local server instances with replication, for HA probes and
//!   A/B of one setting.
//! - [`study`] -> compare, model, random, sandbox. A study file (targets, workloads, matrix,
//!   repeats, claims), its plan (cells and the order of their runs), its directory (resumed
//!   only by the same plan), its lab (runs in order, sandboxes started and removed, resume;
//!   measuring through [`study::lab::Bench`], which the app implements), its claims judged
//!   on the cells' results.
//! - [`k8s`] -> nothing. The Kubernetes Indexed Job of `fairbench k8s job`, as typed objects
//!   written as YAML.
//! - [`cli`] -> k8s, model, plan, random, workload. Flags, parsed in one place, into typed
//!   requests ([`model::RunRequest`]); nothing below the command surface sees a flag.
//! - [`app`] -> everything. The commands; the only place that prints outside report.

pub mod app;
pub mod argv;
pub mod audit;
pub mod cli;
pub mod collector;
pub mod combine;
pub mod compare;
pub mod conditions;
pub mod db;
pub mod k8s;
pub mod measure;
pub mod metrics;
pub mod model;
pub mod plan;
pub mod prepare;
pub mod probe;
pub mod random;
pub mod recorder;
pub mod recover;
pub mod report;
pub mod result;
pub mod runner;
pub mod sandbox;
pub mod shard;
pub mod stats;
pub mod study;
pub mod timeline;
pub mod workload;

use std::future::Future;

/// A current-thread tokio runtime with a LocalSet: the execution context of every client,
/// loader and admin connection (drivers spawn their connection tasks locally).
pub struct LocalRuntime {
    rt: tokio::runtime::Runtime,
    local: tokio::task::LocalSet,
}

impl LocalRuntime {
    pub fn block_on<F: Future>(&self, f: F) -> F::Output {
        self.local.block_on(&self.rt, f)
    }
}

pub fn local_runtime() -> LocalRuntime {
    LocalRuntime {
        rt: tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime"),
        local: tokio::task::LocalSet::new(),
    }
}

/// Locks `m` even if a thread panicked while holding it. Every mutex of fairbench guards
/// data that stays consistent between statements (counters, recorders, the first failure),
/// so one crashed client must not turn every other lock into a second panic.
pub fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Cores this process may use.
pub fn cpu_count() -> u32 {
    std::thread::available_parallelism().map(|n| n.get() as u32).unwrap_or(1)
}
