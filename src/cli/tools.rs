//! Flags of the commands that connect nowhere: check, list, completions, man.

use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug, Clone)]
pub struct CompletionsArgs {
    /// bash, zsh, fish, elvish or powershell.
    pub shell: clap_complete::Shell,
}

#[derive(Args, Debug, Clone)]
pub struct ManArgs {
    /// A command's own page (prepare, run, ...); without it, fairbench's.
    pub command: Option<String>,
}

#[derive(Args, Debug, Clone)]
pub struct ListArgs {
    /// Print one workload: a recipe's file, or a built-in's statements per event.
    #[arg(long, value_name = "NAME")]
    pub show: Option<String>,
}

#[derive(Args, Debug, Clone)]
pub struct CheckArgs {
    /// A workload file (see docs/workloads.md).
    pub file: PathBuf,
    /// The databases it must run on: mysql, postgres, sqlite, comma-separated (default: all
    /// three). `check` exits 1 when one of them cannot run it.
    #[arg(long, value_delimiter = ',')]
    pub dialect: Vec<String>,
    /// Override a [params] value, e.g. --set customers=100000 (repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// Also draw N example values of every generator (seed 1; `ids` drawn uniformly).
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub sample: u32,
}
