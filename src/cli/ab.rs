//! `fairbench ab`'s flags: a workload, two --target URLs, and `run`'s options for both
//! sides (each side's options are parsed by `run`'s own definition, as sweep's points are),
//! plus compare's --claim, --threshold and --under-test for the comparison that follows.

use super::FlagError;
use crate::model::RunRequest;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug, Clone)]
pub struct AbArgs {
    /// The workload, --target A_URL --target B_URL, then any option of `run` (fairbench run
    /// --help) for both sides, and compare's --claim, --threshold and --under-test.
    /// --repeat N runs A B A B ... N times each; --out-dir takes both results and the
    /// comparison.
    #[arg(
        required = true,
        num_args = 1..,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "WORKLOAD --target A --target B [RUN OPTIONS]"
    )]
    pub args: Vec<String>,
}

/// Both sides' shared options and what the comparison checks.
#[derive(Clone, Debug)]
pub struct Ab {
    pub targets: [String; 2],
    pub out_dir: Option<PathBuf>,
    pub claims: Vec<String>,
    pub thresholds: Vec<String>,
    pub under_test: Option<String>,
    /// The options both sides share, whether they give a seed, and --quiet.
    base: RunRequest,
    seeded: bool,
    quiet: bool,
}

impl AbArgs {
    pub fn ab(&self) -> Result<Ab, FlagError> {
        let (mut targets, mut shared) = (Vec::new(), Vec::new());
        let (mut out_dir, mut claims, mut thresholds, mut under_test) = (None, Vec::new(), Vec::new(), None);
        let mut it = self.args.iter();
        while let Some(arg) = it.next() {
            let (name, inline) = super::sweep::split_flag(arg);
            if !["--target", "--out-dir", "--claim", "--threshold", "--under-test", "--out"].contains(&name) {
                shared.push(arg.clone());
                continue;
            }
            let value = match inline {
                Some(v) => v,
                None => it.next().cloned().ok_or_else(|| super::sweep::missing_value("ab", name))?,
            };
            match name {
                "--target" => targets.push(value),
                "--out-dir" => out_dir = Some(PathBuf::from(value)),
                "--claim" => claims.push(value),
                "--threshold" => thresholds.push(value),
                "--under-test" => under_test = Some(value),
                _ => return Err(FlagError::AbOutFile),
            }
        }
        let targets: [String; 2] =
            targets.try_into().map_err(|t: Vec<String>| FlagError::AbTargets { given: t.len() })?;
        let seeded = shared.iter().any(|a| a.starts_with("--rand-seed") || a.starts_with("--rand_seed"));
        let mut argv = vec!["fairbench".to_string(), "run".to_string()];
        argv.extend(shared);
        let (base, quiet) = super::request::parse_request(&argv, "ab")?;
        Ok(Ab { targets, out_dir, claims, thresholds, under_test, base, seeded, quiet })
    }
}

impl Ab {
    /// Side `i`'s `run` options: the shared ones, its target, `seed` unless one was given
    /// (both sides draw the same random streams).
    /// Side `i` (0: A, 1: B): the shared options on its target, with `seed` unless the
    /// options give one; and whether --quiet was given.
    pub fn side(&self, i: usize, seed: u64) -> (RunRequest, bool) {
        let mut run = self.base.clone();
        run.target.targets = vec![self.targets[i].clone()];
        if !self.seeded {
            run.workload.rand_seed = seed;
        }
        (run, self.quiet)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ab(args: &[&str]) -> Result<Ab, FlagError> {
        AbArgs { args: args.iter().map(|s| s.to_string()).collect() }.ab()
    }

    #[test]
    fn two_targets_shared_options_and_the_comparisons_flags() {
        let a = ab(&[
            "oltp_read_only",
            "--target",
            "sqlite://a.db",
            "--time=5",
            "--target=sqlite://b.db",
            "--repeat",
            "3",
            "--under-test",
            "target",
            "--claim=tps>=1x",
        ])
        .unwrap();
        assert_eq!(a.targets, ["sqlite://a.db", "sqlite://b.db"]);
        assert_eq!((a.under_test.as_deref(), a.claims.as_slice()), (Some("target"), &["tps>=1x".to_string()][..]));
        let (b, _) = a.side(1, 42);
        assert_eq!((b.target.target(), b.time, b.repeat, b.workload.rand_seed), ("sqlite://b.db", Some(5), 3, 42));
    }

    #[test]
    fn one_target_or_a_single_out_file_is_one_line() {
        let e = ab(&["oltp_read_only", "--target", "sqlite://a.db"]).unwrap_err();
        assert!(matches!(e, FlagError::AbTargets { given: 1 }), "{e:?}");
        assert!(e.to_string().contains("exactly two --target URLs") && e.to_string().contains("got 1"), "{e}");
        let e = ab(&["oltp_read_only", "--target=a", "--target=b", "--out=x.json"]).unwrap_err();
        assert!(matches!(e, FlagError::AbOutFile) && e.to_string().contains("--out-dir"), "{e}");
    }
}
