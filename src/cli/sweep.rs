//! `fairbench sweep`'s flags: a workload and `run`'s options, with lists for --threads,
//! --table-size and --tables. Each point's options are parsed by `run`'s own definition, so
//! a point means exactly what the same `run` line means.

use super::FlagError;
use crate::model::RunRequest;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug, Clone)]
pub struct SweepArgs {
    /// The workload, then any option of `run` (fairbench run --help). --threads, --table-size
    /// and --tables take comma-separated lists: --threads 1,2,4,8,16 --table-size 10000,1000000.
    /// --out names the sweep's file (every point's result is inside it).
    #[arg(
        required = true,
        num_args = 1..,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "WORKLOAD [RUN OPTIONS]"
    )]
    pub args: Vec<String>,
}

/// The swept values and the options every point shares.
#[derive(Clone, Debug)]
pub struct Sweep {
    pub threads: Vec<u32>,
    pub tables: Vec<u32>,
    pub table_sizes: Vec<u64>,
    pub out: Option<PathBuf>,
    /// Whether any list was given for the data size (then each size is prepared).
    pub sizes_given: bool,
    /// The options every point shares, and whether --quiet was among them.
    base: RunRequest,
    quiet: bool,
}

impl SweepArgs {
    pub fn sweep(&self) -> Result<Sweep, FlagError> {
        let mut shared = Vec::new();
        let (mut threads, mut tables, mut sizes, mut out) = (None, None, None, None);
        let mut it = self.args.iter();
        while let Some(arg) = it.next() {
            let (name, inline) = split_flag(arg);
            let slot = match name {
                "--threads" | "--num-threads" => &mut threads,
                "--tables" => &mut tables,
                "--table-size" | "--table_size" => &mut sizes,
                "--out" => &mut out,
                _ => {
                    shared.push(arg.clone());
                    continue;
                }
            };
            let value = match inline {
                Some(v) => v,
                None => it.next().cloned().ok_or_else(|| missing_value("sweep", name))?,
            };
            *slot = Some((name.to_string(), value));
        }
        let sizes_given = tables.is_some() || sizes.is_some();
        let mut argv = vec!["fairbench".to_string(), "run".to_string()];
        argv.extend(shared);
        let (base, quiet) = super::request::parse_request(&argv, "sweep")?;
        Ok(Sweep {
            threads: list(threads, 1)?,
            tables: list(tables, 1)?,
            table_sizes: list(sizes, 10_000)?,
            out: out.map(|(_, v)| PathBuf::from(v)),
            sizes_given,
            base,
            quiet,
        })
    }
}

/// `--name=value` -> (`--name`, the value); anything else as it is, with no value.
pub(super) fn split_flag(arg: &str) -> (&str, Option<String>) {
    match arg.split_once('=') {
        Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
        _ => (arg, None),
    }
}

pub(super) fn missing_value(command: &'static str, flag: &str) -> FlagError {
    FlagError::MissingValue { command, flag: flag.to_string() }
}

/// A flag's comma-separated list of numbers (sorted, each once), or `default` alone.
fn list<T: std::str::FromStr + Ord + Copy>(given: Option<(String, String)>, default: T) -> Result<Vec<T>, FlagError> {
    let Some((name, value)) = given else { return Ok(vec![default]) };
    let mut out = value
        .split(',')
        .map(|v| v.trim().parse::<T>().map_err(|_| FlagError::NotAList { flag: name.clone(), value: v.to_string() }))
        .collect::<Result<Vec<T>, _>>()?;
    out.sort();
    out.dedup();
    Ok(out)
}

impl Sweep {
    /// The `run` options of one point.
    /// The run at one point: the shared options with its threads, tables and table size;
    /// and whether --quiet was given.
    pub fn point(&self, threads: u32, tables: u32, table_size: u64) -> (RunRequest, bool) {
        let mut run = self.base.clone();
        run.threads = threads;
        run.workload.oltp.tables = tables;
        run.workload.oltp.table_size = table_size;
        (run, self.quiet)
    }

    pub fn sizes(&self) -> Vec<(u32, u64)> {
        let mut out: Vec<(u32, u64)> =
            self.tables.iter().flat_map(|&t| self.table_sizes.iter().map(move |&s| (t, s))).collect();
        out.sort_by_key(|&(t, s)| (t as u128 * s as u128, t));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sweep(args: &[&str]) -> Result<Sweep, FlagError> {
        SweepArgs { args: args.iter().map(|s| s.to_string()).collect() }.sweep()
    }

    #[test]
    fn lists_and_shared_options() {
        let s = sweep(&["oltp_read_only", "--threads", "4,1,2", "--table-size=1000,100", "--time=5"]).unwrap();
        assert_eq!(s.threads, [1, 2, 4]);
        assert_eq!(s.table_sizes, [100, 1000]);
        assert_eq!(s.tables, [1]);
        assert!(s.sizes_given);
        let (run, quiet) = s.point(2, 1, 100);
        assert_eq!((run.threads, run.workload.oltp.table_size, run.time, quiet), (2, 100, Some(5), false));
        assert_eq!(s.sizes(), [(1, 100), (1, 1000)]);
        assert!(!sweep(&["oltp_read_only", "--threads=8"]).unwrap().sizes_given);
    }

    #[test]
    fn bad_lists_and_options_are_one_line() {
        let e = sweep(&["oltp_read_only", "--threads", "1,two"]).unwrap_err();
        assert!(matches!(&e, FlagError::NotAList { flag, value } if flag == "--threads" && value == "two"), "{e:?}");
        assert!(e.to_string().contains("\"two\" is not a whole number"), "{e}");
        let e = sweep(&["oltp_read_only", "--threads"]).unwrap_err();
        assert!(matches!(e, FlagError::MissingValue { command: "sweep", .. }), "{e:?}");
        let e = sweep(&["oltp_read_only", "--nosuch=1"]).unwrap_err().to_string();
        assert!(e.starts_with("sweep: unexpected argument '--nosuch'") && !e.contains('\n'), "{e}");
    }
}
