//! Studies: a matrix of runs over targets, workloads, run options and server settings,
//! repeated, declared in one file (docs/studies.md): the file read and checked, its plan
//! (cells and the order of their runs), resuming against what a directory already holds,
//! the lab that runs it (sandboxes, cells in order, resume), and the claims judged on
//! the cells' results.

pub mod cell_result;
pub mod check;
pub mod claims;
pub mod cliff;
pub mod conditions;
pub mod cost;
pub mod dir;
pub mod file;
pub mod history;
pub mod lab;
pub mod noise;
pub mod plan;
pub mod probe_claims;
pub mod resume;
pub mod seed;
pub mod seed_cover;
pub mod sides;

pub use file::{StudyFile, StudyFileError};
pub use plan::StudyPlan;
