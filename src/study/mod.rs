//! Studies: a matrix of runs over targets, workloads, run options and server settings,
//! repeated, declared in one file (docs/studies.md). This step reads the file and plans
//! the runs (`fairbench study plan`); running them comes next.

pub mod file;
pub mod plan;

pub use file::{StudyFile, StudyFileError};
pub use plan::StudyPlan;
