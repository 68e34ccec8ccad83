//! sysbench command lines, read as sysbench reads them and rewritten into fairbench's own
//! (`[options] testname [options] command`, `--name=value` only, `-` and `_` alike in names).
//!
//! Every option of sysbench 1.0.20 (general, random numbers, database, mysql, pgsql and the
//! oltp scripts' options), its deprecated aliases and the common 0.4/0.5 spellings is either
//! translated, ignored with a note (it changes nothing fairbench measures), or refused with
//! one line naming what to use instead. Nothing is dropped silently.

use crate::workload::Workload;
use clap::CommandFactory;

/// A sysbench line rewritten: fairbench's arguments, and what the reader must know.
#[derive(Debug, PartialEq)]
pub struct Translation {
    pub args: Vec<String>,
    pub notes: Vec<String>,
}

/// fairbench's commands (clap's definition, so a new command is never taken for a sysbench
/// test); a line starting with anything else (but help and version) is sysbench-shaped.
fn own_commands() -> Vec<String> {
    super::Cli::command().get_subcommands().map(|c| c.get_name().to_string()).filter(|c| c != "help").collect()
}

fn is_own_command(word: &str) -> bool {
    own_commands().iter().any(|c| c == word)
}
const OWN_FLAGS: [&str; 5] = ["help", "--help", "-h", "--version", "-V"];

/// Whether `args` (program name first) is a sysbench-shaped line rather than fairbench's.
/// Also a line in fairbench's order that carries sysbench options (`run oltp_read_write
/// --db-ps-mode=disable`): [`translate`] rewrites those.
pub fn is_sysbench_line(args: &[String]) -> bool {
    let sysbench_order = |first: &String| !is_own_command(first) && !OWN_FLAGS.contains(&first.as_str());
    // fairbench's global --quiet may come before its command (`fairbench -q list`).
    let first = args.iter().skip(1).find(|a| !matches!(a.as_str(), "-q" | "--quiet"));
    first.is_some_and(sysbench_order) || own_order::has_sysbench_options(args)
}

/// The commands of sysbench's oltp scripts.
const COMMANDS: [&str; 6] = ["prepare", "run", "cleanup", "help", "prewarm", "warmup"];

/// What the options of a line add up to.
#[derive(Default)]
struct Line {
    test: Option<String>,
    positionals: Vec<String>,
    conn: connection::Connection,
    /// fairbench flags, as `--name=value` (or `--name`).
    flags: Vec<(String, Option<String>)>,
    notes: Vec<String>,
    ignored: Vec<String>,
    /// sysbench 0.4/0.5 oltp options seen (`--oltp-read-only` etc.).
    legacy_read_only: Option<bool>,
    legacy_write_only: Option<bool>,
    /// The first option refused on run, which the other commands ignore.
    run_only_refusal: Option<String>,
    /// A line in fairbench's word order (`run oltp_read_write ...`), which keeps fairbench's defaults.
    own_order: bool,
    /// fairbench's --target (or --password-file) among the flags clap reads as they are.
    given_target: bool,
    /// A fairbench option given without `=VALUE` that takes one (`--target URL`, as
    /// fairbench's own order writes it): the next word is its value.
    awaiting_value: bool,
}

type Refusal = String;

/// Translates a sysbench-shaped line (see [`is_sysbench_line`]). The error is one line.
pub fn translate(args: &[String]) -> Result<Translation, Refusal> {
    if args.get(1).is_some_and(|first| is_own_command(first)) {
        return own_order::translate(args);
    }
    let mut line = Line::default();
    for arg in args.iter().skip(1) {
        match arg.strip_prefix("--") {
            Some(option) => {
                let (name, value) = match option.split_once('=') {
                    Some((n, v)) => (n, Some(v)),
                    None => (option, None),
                };
                line.option(&name.replace('_', "-"), value)?;
            }
            None if arg == "-q" => line.flag("quiet", None),
            None if arg.starts_with('-') && arg.len() > 1 => {
                return Err(format!("{arg}: sysbench options are written --name=value"));
            }
            None if std::mem::take(&mut line.awaiting_value) => {
                if let Some((_, value)) = line.flags.last_mut() {
                    *value = Some(arg.clone());
                }
            }
            None => line.positionals.push(arg.clone()),
        }
    }
    line.finish(args.first().cloned().unwrap_or_else(|| "fairbench".into()))
}

/// `on`/`off` as sysbench reads a boolean (no value: on).
fn boolean(name: &str, value: Option<&str>) -> Result<bool, Refusal> {
    match value.map(|v| v.to_ascii_lowercase()).as_deref() {
        None | Some("on" | "true" | "yes" | "1") => Ok(true),
        Some("off" | "false" | "no" | "0") => Ok(false),
        Some(v) => Err(format!("--{name}={v}: use on or off")),
    }
}

fn required<'a>(name: &str, value: Option<&'a str>) -> Result<&'a str, Refusal> {
    value
        .filter(|v| !v.is_empty())
        .ok_or_else(|| format!("--{name} needs a value: --{name}=VALUE (sysbench reads options as --name=value)"))
}

impl Line {
    fn flag(&mut self, name: &str, value: Option<&str>) {
        self.flags.retain(|(n, _)| n != name);
        self.flags.push((name.to_string(), value.map(str::to_string)));
    }

    fn value(&mut self, fairbench: &str, name: &str, value: Option<&str>) -> Result<(), Refusal> {
        let v = required(name, value)?;
        self.flag(fairbench, Some(v));
        Ok(())
    }

    /// A fairbench option in a sysbench-shaped line (`--target`, `--out`, `--format`...).
    fn pass_through(&mut self, name: &str, value: Option<&str>) -> Result<(), Refusal> {
        let cli = super::Cli::command();
        let long = |a: &clap::Arg| a.get_long() == Some(name);
        let known = cli.get_arguments().any(long) || cli.get_subcommands().any(|c| c.get_arguments().any(long));
        if !known {
            return Err(match equivalent(name) {
                Some(e) => format!("unknown option --{name} ({e})"),
                None => format!("unknown option --{name}: not a sysbench 1.0.20 option nor a fairbench one (see `fairbench run --help`)"),
            });
        }
        let takes_value = |a: &clap::Arg| long(a) && a.get_action().takes_values();
        self.awaiting_value = value.is_none()
            && (cli.get_arguments().any(takes_value)
                || cli.get_subcommands().any(|c| c.get_arguments().any(takes_value)));
        self.flags.push((name.to_string(), value.map(str::to_string)));
        Ok(())
    }

    fn finish(mut self, program: String) -> Result<Translation, Refusal> {
        let mut positionals = std::mem::take(&mut self.positionals);
        // sysbench reads `--test=NAME` and a test name both given as one test.
        if let (Some(t), Some(first)) = (&self.test, positionals.first()) {
            if positionals.len() > 1 && script_stem(t) == script_stem(first) {
                positionals.remove(0);
            }
        }
        let mut positionals = positionals.into_iter();
        let test = match self.test.take() {
            Some(t) => {
                self.notes
                    .push(format!("--test is sysbench's deprecated spelling: `fairbench {t} ...` reads the same"));
                t
            }
            None => match positionals.next() {
                Some(t) => t,
                None if self.has("help") || self.has("version") => return Ok(self.help_or_version(program)),
                None => {
                    return Err(
                        "no test name: e.g. `fairbench oltp_read_write --tables=8 run` (see `fairbench list`)".into()
                    )
                }
            },
        };
        let command = positionals.next();
        if let Some(extra) = positionals.next() {
            return Err(format!("unexpected argument {extra:?} after the command (sysbench options are --name=value)"));
        }
        let workload = self.workload(&test)?;
        self.legacy_modes_need_oltp_lua(Some(&test))?;
        self.refuse_on_run(command.as_deref())?;
        let command = match command.as_deref() {
            Some(c) if COMMANDS.contains(&c) => c.to_string(),
            Some(c) if Workload::parse(c).is_some() => {
                return Err(format!(
                    "{c:?} after {test:?}: give one test name, then a command (prepare, run or cleanup)"
                ))
            }
            Some(c) => return Err(format!("unknown command {c:?}: use prepare, run, cleanup or help")),
            None if self.has("help") => "help".to_string(),
            None => return Err(format!("{test}: a command is required: prepare, run, cleanup or help")),
        };
        let command = match command.as_str() {
            "help" => return Ok(Translation { args: vec![program, "list".into(), "--show".into(), workload], notes: self.notes }),
            "prewarm" | "warmup" => {
                return Err(format!(
                    "{command}: fairbench has no prewarm command; run with --warmup-time=SECONDS (warmup statements are left out of the results)"
                ))
            }
            c => c,
        };
        let mut args = vec![program, command.to_string(), workload];
        self.target(&mut args)?;
        self.differences(command);
        if command == "run" && !self.has("time") {
            // sysbench's --time defaults to 10 s and limits a run with --events too.
            self.flags.push(("time".into(), Some("10".into())));
        }
        if command == "cleanup" && !self.flags.iter().any(|(n, _)| n == "tables") {
            // sysbench's cleanup drops sbtest1..--tables, 1 by default.
            self.flags.push(("tables".into(), Some("1".into())));
        }
        let accepted = accepted_flags(command);
        for (name, value) in std::mem::take(&mut self.flags) {
            if !accepted.contains(&name) {
                self.ignored.push(format!("--{name}"));
                continue;
            }
            args.push(match value {
                Some(v) => format!("--{name}={v}"),
                None => format!("--{name}"),
            });
        }
        self.note_ignored(command);
        Ok(Translation { args, notes: self.notes })
    }

    /// The options the command has no use for, in one note, as sysbench ignores them.
    fn note_ignored(&mut self, command: &str) {
        if !self.ignored.is_empty() {
            self.notes.push(format!(
                "ignored for {command} (nothing fairbench measures depends on them): {}",
                self.ignored.join(", ")
            ));
        }
    }

    fn refuse_on_run(&mut self, command: Option<&str>) -> Result<(), Refusal> {
        match self.run_only_refusal.take() {
            Some(why) if matches!(command, Some("run" | "bench")) => Err(why),
            _ => Ok(()),
        }
    }

    /// 0.5's `--oltp-read-only` / `--oltp-write-only` choose a mode of its oltp.lua only
    /// (sysbench 1.0 refuses them as invalid options with its own scripts).
    fn legacy_modes_need_oltp_lua(&self, test: Option<&str>) -> Result<(), Refusal> {
        let given = self.legacy_read_only.is_some() || self.legacy_write_only.is_some();
        if given && test.map(script_stem) != Some("oltp") {
            return Err("--oltp-read-only and --oltp-write-only are options of sysbench 0.5's oltp.lua (sysbench 1.0 refuses them): name the test instead, oltp_read_only or oltp_write_only".into());
        }
        Ok(())
    }

    /// Whether fairbench's own --target (or its --password-file) names the server.
    fn target_given(&self) -> bool {
        self.given_target || self.has("target") || self.has("password-file")
    }

    fn has(&self, flag: &str) -> bool {
        self.flags.iter().any(|(n, _)| n == flag)
    }

    fn help_or_version(self, program: String) -> Translation {
        let flag = if self.has("version") { "--version" } else { "--help" };
        Translation { args: vec![program, flag.into()], notes: self.notes }
    }

    /// The workload a test name or script path stands for.
    fn workload(&mut self, test: &str) -> Result<String, Refusal> {
        let file = test.rsplit('/').next().unwrap_or(test);
        let stem = script_stem(test);
        if let Some(w) = Workload::parse(stem) {
            return Ok(w.name().to_string());
        }
        match stem {
            // 0.5's script; a bare `oltp` is 0.4's built-in test.
            "oltp" if file.ends_with(".lua") => self.legacy_oltp(test),
            "oltp" => Err(
                "--test=oltp is sysbench 0.4's built-in test (one table `sbtest`); sysbench 1.0's equivalent is oltp_read_write (or oltp_read_only): `fairbench oltp_read_write ... run`"
                    .into(),
            ),
            "select" | "insert" | "delete" | "update_index" | "update_non_index" | "oltp_simple" => {
                let now = match stem {
                    "select" | "oltp_simple" => "oltp_point_select".to_string(),
                    s => format!("oltp_{s}"),
                };
                Err(format!(
                    "{test} is a sysbench 0.5 script whose statements differ from 1.0's; its 1.0 successor is {now}: `fairbench {now} ... run`"
                ))
            }
            "bulk_insert" | "select_random_points" | "select_random_ranges" | "parallel_prepare" => Err(format!(
                "{test}: not one of fairbench's sysbench workloads (see `fairbench list`); a workload file can express it (docs/workloads.md)"
            )),
            "fileio" | "cpu" | "memory" | "threads" | "mutex" => {
                Err(format!("sysbench's {stem} test measures the machine, not a database; fairbench has no equivalent"))
            }
            _ if test.ends_with(".toml") => Ok(test.to_string()),
            _ if file.ends_with(".lua") => Err(format!(
                "{test} is a custom Lua script: fairbench runs sysbench's oltp workloads (see `fairbench list`) and workload files (docs/workloads.md)"
            )),
            _ => Err(match (crate::workload::nearest(test), nearest_command(test)) {
                (_, Some(c)) => format!("unknown command {test:?}: did you mean `fairbench {c} ...`?"),
                (Some(n), None) => format!("unknown test {test:?}: did you mean {n}? (`fairbench list` shows them all)"),
                (None, None) => format!("unknown test {test:?}: `fairbench list` shows the workloads"),
            }),
        }
    }

    /// sysbench 0.5's oltp.lua: oltp_read_write's statements as plain-text queries.
    fn legacy_oltp(&mut self, test: &str) -> Result<String, Refusal> {
        let flagged = self.flags.iter().filter(|(n, _)| n == "mysql-storage-engine").map(|(_, v)| v);
        let engines = self.conn.options.iter().filter(|(_, n, _)| n.ends_with("-engine")).map(|(_, _, v)| v);
        if flagged.chain(engines).flatten().any(|e| e.eq_ignore_ascii_case("myisam")) {
            return Err(format!(
                "{test} on MyISAM wraps events in LOCK TABLES; fairbench's oltp_read_write uses transactions: drop the engine option or use InnoDB"
            ));
        }
        let workload = match (self.legacy_read_only, self.legacy_write_only) {
            (Some(true), Some(true)) => {
                return Err("--oltp-read-only and --oltp-write-only together run nothing".into())
            }
            (Some(true), _) => "oltp_read_only",
            (_, Some(true)) => "oltp_write_only",
            _ => "oltp_read_write",
        };
        if !self.has("ps") {
            self.flag("ps", Some("off"));
        }
        self.notes.push(format!(
            "{test} (sysbench 0.5) runs as {workload}: the same statements per event, sent as plain-text queries (--ps=off) as 0.5 did"
        ));
        Ok(workload.to_string())
    }

    /// Where fairbench's defaults differ from sysbench 1.0.20's, said once each.
    fn differences(&mut self, command: &str) {
        if command != "run" {
            return;
        }
        let no_percentile = self.flags.iter().any(|(n, v)| n == "percentile" && v.as_deref() == Some("0"));
        if no_percentile && self.has("report-interval") {
            self.notes.push(
                "--percentile=0: the report shows no percentile, as sysbench's; the interval lines show the 95th (sysbench prints `lat (ms,0%): 0.00` there, which is no latency)"
                    .into(),
            );
        }
        let defaults = self.has("sysbench-defaults");
        if !self.has("rand-type") && !defaults {
            self.notes.push(
                "ids are drawn uniformly; sysbench 1.0.20 draws them from its `special` distribution (1% of ids get 75% of draws): add --rand-type=special or --sysbench-defaults to match"
                    .into(),
            );
        }
        if !self.has("format") {
            self.flags.push(("format".into(), Some("sysbench".into())));
            self.notes.push(
                "report in sysbench's format (--format=text for fairbench's own, with commit latency and the audit)"
                    .into(),
            );
        }
    }
}

/// A test's name without its script's directory and `.lua`.
fn script_stem(test: &str) -> &str {
    let file = test.rsplit('/').next().unwrap_or(test);
    file.strip_suffix(".lua").unwrap_or(file)
}

/// fairbench's command nearest to a mistyped first word (`runn`, `prepar`).
fn nearest_command(word: &str) -> Option<String> {
    own_commands()
        .into_iter()
        .filter(|c| strsim::damerau_levenshtein(word, c) <= 2 && word.len() > 2)
        .min_by_key(|c| strsim::damerau_levenshtein(word, c))
}

/// The long flags fairbench's `command` accepts.
fn accepted_flags(command: &str) -> Vec<String> {
    let cli = super::Cli::command();
    let mut flags: Vec<String> = cli
        .find_subcommand(command)
        .map(|c| c.get_arguments().filter_map(|a| a.get_long().map(str::to_string)).collect())
        .unwrap_or_default();
    flags.extend(cli.get_arguments().filter_map(|a| a.get_long().map(str::to_string))); // global: --quiet
    flags
}

/// What fairbench calls a sysbench option, for errors about flags in fairbench's own grammar.
pub fn equivalent(flag: &str) -> Option<String> {
    let name = flag.trim_start_matches('-').split('=').next().unwrap_or("").replace('_', "-");
    if let Some(ours) = options::renamed(&name) {
        return Some(format!("fairbench: --{ours}"));
    }
    match name.as_str() {
        "mysql-table-engine" => Some("fairbench: --mysql-storage-engine".into()),
        "db-driver" | "mysql-host" | "mysql-port" | "mysql-user" | "mysql-password" | "mysql-db" | "mysql-socket" => {
            Some("fairbench takes the server as a URL: --target mysql://user:pass@host:port/db, or write the line in sysbench's order, `fairbench oltp_read_write --mysql-host=... run`".into())
        }
        n if n.starts_with("pgsql-") => Some("fairbench takes the server as a URL: --target postgres://user:pass@host:port/db".into()),
        _ => None,
    }
}

mod connection;
mod options;
mod own_order;

#[cfg(test)]
mod tests;
