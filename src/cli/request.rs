//! The command line into typed requests, once: everything below the command surface takes
//! a [`RunRequest`] (or a [`PrepareRequest`]) and never sees a flag. User-facing option
//! text that is not argv (a study's options, `probe --with`, `rerun`'s replacements) is
//! parsed here too, by `run`'s own definition, so it means what the same `run` line means.

use super::FlagError;
use super::{Cli, Command, ConnectArgs, FaultArgs, PrepareArgs, RunArgs, ShardArgs, TargetArgs, WorkloadArgs};
use crate::model::request::{ConnectRequest, FaultRequest, ShardRequest};
use crate::model::{PrepareRequest, RunRequest, TargetRequest, WorkloadRequest};
use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches};

impl From<&ConnectArgs> for ConnectRequest {
    fn from(a: &ConnectArgs) -> Self {
        ConnectRequest {
            connect_timeout: a.connect_timeout.as_secs_f64(),
            admin_timeout: a.admin_timeout.as_secs_f64(),
            max_packet: a.max_packet,
            allow_cleartext_password: a.allow_cleartext_password,
        }
    }
}

impl From<&TargetArgs> for TargetRequest {
    fn from(a: &TargetArgs) -> Self {
        TargetRequest {
            targets: a.targets.clone(),
            password_file: a.password_file.clone(),
            connect: (&a.connect).into(),
            ps: a.ps,
        }
    }
}

impl From<&FaultArgs> for FaultRequest {
    fn from(a: &FaultArgs) -> Self {
        FaultRequest { fault: a.fault.clone(), sandbox: a.sandbox.clone() }
    }
}

impl From<&ShardArgs> for ShardRequest {
    fn from(a: &ShardArgs) -> Self {
        ShardRequest {
            shard: a.shard.clone(),
            shard_index: a.shard_index,
            shard_key: a.shard_key.clone(),
            shard_timeout: a.shard_timeout,
            print_result: a.print_result,
        }
    }
}

impl From<&WorkloadArgs> for WorkloadRequest {
    fn from(a: &WorkloadArgs) -> Self {
        WorkloadRequest {
            workload: a.workload.clone(),
            set: a.set.clone(),
            oltp: a.oltp(),
            rand_type: a.rand_type.clone(),
            sysbench_defaults: a.sysbench_defaults,
            rand_spec_iter: a.rand_spec_iter,
            rand_spec_pct: a.rand_spec_pct,
            rand_spec_res: a.rand_spec_res,
            rand_pareto_h: a.rand_pareto_h,
            rand_zipfian_exp: a.rand_zipfian_exp,
            rand_seed: a.rand_seed,
        }
    }
}

impl WorkloadArgs {
    fn oltp(&self) -> crate::workload::OltpOptions {
        crate::workload::OltpOptions {
            tables: self.tables,
            table_size: self.table_size,
            range_size: self.range_size,
            point_selects: self.point_selects,
            simple_ranges: self.simple_ranges,
            sum_ranges: self.sum_ranges,
            order_ranges: self.order_ranges,
            distinct_ranges: self.distinct_ranges,
            index_updates: self.index_updates,
            non_index_updates: self.non_index_updates,
            delete_inserts: self.delete_inserts,
            range_selects: self.range_selects,
            skip_trx: self.skip_trx,
            auto_inc: self.auto_inc,
            secondary: self.secondary,
            create_secondary: self.create_secondary,
            mysql_storage_engine: self.mysql_storage_engine.clone(),
        }
    }
}

impl From<&RunArgs> for RunRequest {
    fn from(a: &RunArgs) -> Self {
        RunRequest {
            bench: false,
            target: (&a.target).into(),
            workload: (&a.workload).into(),
            threads: a.threads,
            time: a.time,
            events: a.events,
            warmup: a.warmup,
            report_interval: a.report_interval.map(|d| d.as_secs_f64()),
            percentile: a.percentile,
            percentiles: a.percentiles.clone(),
            format: a.format.clone(),
            verbose: a.verbose,
            histogram: a.histogram,
            out: a.out.clone(),
            metrics_listen: a.metrics_listen.clone(),
            ignore_errors: a.ignore_errors.clone(),
            reconnect_timeout: a.reconnect_timeout,
            faults: (&a.faults).into(),
            rate: a.rate,
            arrival: a.arrival.clone(),
            max_backlog: a.max_backlog,
            prepare_threads: a.prepare_threads,
            allow_foreign_tables: a.allow_foreign_tables,
            repeat: a.repeat,
            thresholds: a.thresholds.clone(),
            cost_per_hour: a.cost_per_hour,
            shard: (&a.shard).into(),
        }
    }
}

impl From<&PrepareArgs> for PrepareRequest {
    fn from(a: &PrepareArgs) -> Self {
        PrepareRequest {
            target: (&a.target).into(),
            workload: (&a.workload).into(),
            threads: a.threads,
            overwrite: a.overwrite,
            insert_only: a.bulk_load == super::BulkLoad::Insert,
            shard: (&a.shard).into(),
        }
    }
}

/// `argv` (from the program's name on) as the `run` it spells, for `command` (named in
/// errors): the request and whether `--quiet` was given.
pub fn parse_request(argv: &[String], command: &str) -> Result<(RunRequest, bool), FlagError> {
    let (args, quiet, _) = parse_run(argv, command)?;
    Ok(((&args).into(), quiet))
}

/// `base` with the `run` options in `words` (no workload) put over it: only the options
/// `words` gives change; the rest stays as `base` has it.
pub fn overlay(base: &RunRequest, words: &[String], command: &str) -> Result<RunRequest, FlagError> {
    let mut argv = vec!["fairbench".to_string(), "run".into(), base.workload.workload.clone()];
    argv.extend(words.iter().cloned());
    let (args, _, given) = parse_run(&argv, command)?;
    let over = serde_json::to_value(RunRequest::from(&args)).expect("a request serializes");
    let mut merged = serde_json::to_value(base).expect("a request serializes");
    for id in given.iter().filter(|id| id.as_str() != "workload") {
        copy_leaf(&over, &mut merged, id);
    }
    Ok(serde_json::from_value(merged).expect("a request's own fields deserialize"))
}

/// Parses `argv` as `run`: its flags, `--quiet`, and the ids of the options given on it.
fn parse_run(argv: &[String], command: &str) -> Result<(RunArgs, bool, Vec<String>), FlagError> {
    let matches = Cli::command().try_get_matches_from(argv).map_err(|e| {
        let text = e.to_string();
        let problem = text.lines().next().unwrap_or("invalid options").trim_start_matches("error: ").to_string();
        FlagError::NotRunOptions { command: command.to_string(), problem }
    })?;
    let given = match matches.subcommand() {
        Some(("run" | "bench", sub)) => sub
            .ids()
            .filter(|id| sub.value_source(id.as_str()) == Some(ValueSource::CommandLine))
            .map(|id| id.to_string())
            .collect(),
        _ => {
            let given = argv.get(1).cloned().unwrap_or_default();
            return Err(FlagError::NotARun { command: command.to_string(), given });
        }
    };
    let cli = Cli::from_arg_matches(&matches)
        .map_err(|source| FlagError::Unreadable { command: command.to_string(), source })?;
    match cli.command {
        Command::Run(args) | Command::Bench(args) => Ok((args, cli.quiet, given)),
        _ => unreachable!("matched as run"),
    }
}

/// Copies the field named `id` (a request's field names are the flags' ids) from `from`
/// into `to`, wherever it sits in the request's nesting.
fn copy_leaf(from: &serde_json::Value, to: &mut serde_json::Value, id: &str) -> bool {
    let (Some(f), Some(t)) = (from.as_object(), to.as_object_mut()) else { return false };
    for (key, value) in f {
        if key == id && !value.is_object() {
            t.insert(key.clone(), value.clone());
            return true;
        }
        if value.is_object() && t.get_mut(key).is_some_and(|inner| copy_leaf(value, inner, id)) {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    /// Every name a request's schema gives a field, at any depth.
    fn field_names(v: &serde_json::Value, into: &mut std::collections::BTreeSet<String>) {
        match v {
            serde_json::Value::Object(map) => {
                if let Some(serde_json::Value::Object(props)) = map.get("properties") {
                    into.extend(props.keys().cloned());
                }
                map.values().for_each(|inner| field_names(inner, into));
            }
            serde_json::Value::Array(items) => items.iter().for_each(|inner| field_names(inner, into)),
            _ => {}
        }
    }

    /// `overlay` copies a given option by its id into the request's field of that name: an
    /// option of `run` without such a field would be dropped from every sweep point, `ab`
    /// side and rerun override without a word.
    #[test]
    fn every_run_option_names_a_request_field() {
        let schema = serde_json::to_value(schemars::schema_for!(RunRequest)).unwrap();
        let mut fields = std::collections::BTreeSet::new();
        field_names(&schema, &mut fields);
        let cli = Cli::command();
        let run = cli.find_subcommand("run").expect("run is a command");
        // Not the request's: the workload's name is the request's own field, the rest are
        // clap's, printing flags handled before a request exists, or parsed into others.
        let not_fields = ["help", "version"];
        let missing: Vec<String> = run
            .get_arguments()
            .map(|a| a.get_id().to_string())
            .filter(|id| !not_fields.contains(&id.as_str()) && !fields.contains(id))
            .collect();
        assert!(missing.is_empty(), "run options with no RunRequest field of their name: {missing:?}");
        assert!(run.get_arguments().count() > 40 && fields.contains("threads") && fields.contains("rand_seed"));
        assert!(!fields.contains("no_such_option"));
    }

    #[test]
    fn a_bare_run_line_is_the_default_request() {
        let (r, quiet) = parse_request(&words(&["fairbench", "run", "oltp_read_only"]), "test").unwrap();
        let mut expected = RunRequest::new("oltp_read_only");
        // The environment may name the target (FAIRBENCH_TARGET).
        expected.target.targets = r.target.targets.clone();
        assert_eq!((r, quiet), (expected, false));
        let e = parse_request(&words(&["fairbench", "list"]), "sweep").unwrap_err();
        assert!(matches!(&e, FlagError::NotARun { given, .. } if given == "list"), "{e:?}");
        assert_eq!(e.to_string(), "sweep: not a run: list");
    }

    #[test]
    fn an_overlay_changes_only_what_it_gives() {
        let mut base = RunRequest::new("oltp_read_only");
        base.threads = 8;
        base.workload.oltp.table_size = 500;
        base.shard.shard_timeout = 7;
        let r = overlay(&base, &words(&["--table-size=900", "--shard-timeout", "9", "--ps=off"]), "test").unwrap();
        assert_eq!((r.threads, r.workload.oltp.table_size, r.shard.shard_timeout, r.target.ps), (8, 900, 9, false));
        let e = overlay(&base, &words(&["--nosuch=1"]), "rerun").unwrap_err();
        assert!(matches!(&e, FlagError::NotRunOptions { command, .. } if command == "rerun"), "{e:?}");
        let e = e.to_string();
        assert!(e.starts_with("rerun: unexpected argument '--nosuch'") && !e.contains('\n'), "{e}");
    }
}
