//! A workload file loaded for one run: its text and hash (recorded in the result), the
//! `--set` overrides and the program compiled for the target's database.

use super::program::{compile, scalar_from_text, Program};
use super::spec::{self, Scalar, SpecError};
use crate::model::Dialect;
use sha2::{Digest, Sha256};
use std::path::Path;

#[derive(Clone, Debug)]
pub struct FileWorkload {
    /// As given on the command line.
    pub path: String,
    pub text: String,
    /// SHA-256 of `text`, hex.
    pub sha256: String,
    pub overrides: Vec<(String, Scalar)>,
    pub program: Program,
}

/// A `--set` without its `=VALUE`: the argument as given.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("--set {0:?}: write NAME=VALUE")]
pub struct SetError(pub String);

/// A workload file that cannot be run: unreadable, not TOML of the right shape, bad
/// `--set`s, or problems compiling it (each `file:line:col: what`, one per line).
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read workload file {path}: {source}")]
    Unreadable { path: String, source: std::io::Error },
    #[error(transparent)]
    Set(#[from] SetError),
    #[error(transparent)]
    Spec(#[from] SpecError),
    // The CLI prints the first with `error: `; the others get theirs here.
    #[error("{}", .0.join("\nerror: "))]
    Invalid(crate::workload::program::CompileErrors),
}

/// Whether a workload argument names a file or a recipe rather than a built-in workload.
pub fn is_file(arg: &str) -> bool {
    arg.ends_with(".toml") || super::recipes::find(arg).is_some()
}

/// `--set NAME=VALUE` pairs.
pub fn parse_sets(sets: &[String]) -> Result<Vec<(String, Scalar)>, SetError> {
    sets.iter()
        .map(|kv| {
            let (k, v) = kv.split_once('=').ok_or_else(|| SetError(kv.clone()))?;
            Ok((k.trim().to_string(), scalar_from_text(v.trim())))
        })
        .collect()
}

/// Reads, validates and compiles `path` for `dialect`; every problem of the file is in the
/// error, one per line, each `file:line:col: what`.
/// A path that does not exist but names a recipe is the built-in recipe (`recipe:NAME`).
pub fn load(path: &Path, dialect: Dialect, sets: &[String]) -> Result<FileWorkload, LoadError> {
    let arg = path.display().to_string();
    let a_file = arg.ends_with(".toml") && path.exists();
    let (shown, text) = match super::recipes::find(&arg) {
        Some(text) if !a_file => (format!("recipe:{}", arg.trim_end_matches(".toml")), text.to_string()),
        _ => (arg.clone(), read(path)?),
    };
    let overrides = parse_sets(sets)?;
    let spec = spec::parse(&shown, &text)?;
    let program = compile(&spec, &shown, &text, dialect, &overrides).map_err(LoadError::Invalid)?;
    let sha256 = Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
    Ok(FileWorkload { path: shown, text, sha256, overrides, program })
}

/// A workload file's text.
pub fn read(path: &Path) -> Result<String, LoadError> {
    std::fs::read_to_string(path).map_err(|source| LoadError::Unreadable { path: path.display().to_string(), source })
}
