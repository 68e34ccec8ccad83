//! A workload file loaded for one run: its text and hash (recorded in the result), the
//! `--set` overrides and the program compiled for the target's database.

use super::program::{compile, scalar_from_text, Program};
use super::spec::{self, Scalar};
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

/// Whether a workload argument names a file or a recipe rather than a built-in workload.
pub fn is_file(arg: &str) -> bool {
    arg.ends_with(".toml") || super::recipes::find(arg).is_some()
}

/// `--set NAME=VALUE` pairs.
pub fn parse_sets(sets: &[String]) -> Result<Vec<(String, Scalar)>, String> {
    sets.iter()
        .map(|kv| {
            let (k, v) = kv.split_once('=').ok_or_else(|| format!("--set {kv:?}: write NAME=VALUE"))?;
            Ok((k.trim().to_string(), scalar_from_text(v.trim())))
        })
        .collect()
}

/// Reads, validates and compiles `path` for `dialect`; every problem of the file is in the
/// error, one per line, each `file:line:col: what`.
/// A path that does not exist but names a recipe is the built-in recipe (`recipe:NAME`).
pub fn load(path: &Path, dialect: Dialect, sets: &[String]) -> Result<FileWorkload, String> {
    let arg = path.display().to_string();
    let a_file = arg.ends_with(".toml") && path.exists();
    let (shown, text) = match super::recipes::find(&arg) {
        Some(text) if !a_file => (format!("recipe:{}", arg.trim_end_matches(".toml")), text.to_string()),
        _ => (arg.clone(), std::fs::read_to_string(path).map_err(|e| format!("cannot read workload file {arg}: {e}"))?),
    };
    let overrides = parse_sets(sets)?;
    let spec = spec::parse(&shown, &text)?;
    let program = compile(&spec, &shown, &text, dialect, &overrides).map_err(|errors| errors.join("\nerror: "))?;
    let sha256 = Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
    Ok(FileWorkload { path: shown, text, sha256, overrides, program })
}
