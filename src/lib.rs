//! fairbench: database benchmarks whose numbers people can believe.
//!
//! Data flows one way: [`workload`] -> [`runner`] -> [`recorder`] -> [`result`] ->
//! [`report`]. Databases sit behind one seam, [`db::Database`]. The CLI ([`cli`], [`app`])
//! is a thin layer: the library never touches the terminal except through the report types.

pub mod app;
pub mod audit;
pub mod cli;
pub mod conditions;
pub mod db;
pub mod model;
pub mod plan;
pub mod prepare;
pub mod random;
pub mod recorder;
pub mod report;
pub mod result;
pub mod runner;
pub mod stats;
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

/// Cores this process may use.
pub fn cpu_count() -> u32 {
    std::thread::available_parallelism().map(|n| n.get() as u32).unwrap_or(1)
}

/// This host's name, for the report's `compute` column.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "localhost".into())
}
