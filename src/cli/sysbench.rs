//! sysbench command lines, read as sysbench reads them and rewritten into fairbench's own
//! (`[options] testname [options] command`, `--name=value` only, `-` and `_` alike in names).
//!
//! Every option of sysbench 1.0.20 (general, random numbers, database, mysql, pgsql and the
//! oltp scripts' options), its deprecated aliases and the common 0.4/0.5 spellings is either
//! translated, ignored with a note (it changes nothing fairbench measures), or refused with
//! one line naming what to use instead. Nothing is dropped silently.

use crate::workload::Workload;
use clap::CommandFactory;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

/// A sysbench line rewritten: fairbench's arguments, and what the reader must know.
#[derive(Debug, PartialEq)]
pub struct Translation {
    pub args: Vec<String>,
    pub notes: Vec<String>,
}

/// fairbench's commands; a line starting with anything else (but help and version) is
/// sysbench-shaped.
const OWN_COMMANDS: [&str; 15] = [
    "ab",
    "prepare",
    "report",
    "export",
    "run",
    "cleanup",
    "bench",
    "audit",
    "compare",
    "sweep",
    "check",
    "list",
    "schema",
    "completions",
    "man",
];
const OWN_FLAGS: [&str; 5] = ["help", "--help", "-h", "--version", "-V"];

/// Whether `args` (program name first) is a sysbench-shaped line rather than fairbench's.
pub fn is_sysbench_line(args: &[String]) -> bool {
    args.get(1).is_some_and(|first| !OWN_COMMANDS.contains(&first.as_str()) && !OWN_FLAGS.contains(&first.as_str()))
}

/// The commands of sysbench's oltp scripts.
const COMMANDS: [&str; 6] = ["prepare", "run", "cleanup", "help", "prewarm", "warmup"];

/// sysbench's connection options, resolved into one target URL once the driver is known
/// (sysbench ignores the options of the driver it does not use, wherever they stand).
#[derive(Default)]
struct Connection {
    driver: Option<String>,
    /// (driver, option without the driver's prefix, value), in order.
    options: Vec<(String, String, Option<String>)>,
}

/// What the options of a line add up to.
#[derive(Default)]
struct Line {
    test: Option<String>,
    positionals: Vec<String>,
    conn: Connection,
    /// fairbench flags, as `--name=value` (or `--name`).
    flags: Vec<(String, Option<String>)>,
    notes: Vec<String>,
    ignored: Vec<String>,
    rand_type_given: bool,
    format_given: bool,
    target_given: bool,
    /// sysbench 0.4/0.5 oltp options seen (`--oltp-read-only` etc.).
    legacy_read_only: Option<bool>,
    legacy_write_only: Option<bool>,
}

type Refusal = String;

/// Translates a sysbench-shaped line (see [`is_sysbench_line`]). The error is one line.
pub fn translate(args: &[String]) -> Result<Translation, Refusal> {
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

    fn switch(&mut self, fairbench: &str, name: &str, value: Option<&str>) -> Result<(), Refusal> {
        let on = boolean(name, value)?;
        self.flag(fairbench, Some(if on { "on" } else { "off" }));
        Ok(())
    }

    fn value(&mut self, fairbench: &str, name: &str, value: Option<&str>) -> Result<(), Refusal> {
        let v = required(name, value)?;
        self.flag(fairbench, Some(v));
        Ok(())
    }

    /// One `--name[=value]`, name with `_` read as `-`.
    fn option(&mut self, name: &str, value: Option<&str>) -> Result<(), Refusal> {
        match name {
            // sysbench's general options and their 1.0.20 deprecated aliases.
            "threads" | "num-threads" => self.value("threads", name, value),
            "events" | "max-requests" => self.value("events", name, value),
            "time" | "max-time" => self.value("time", name, value),
            "rate" | "tx-rate" => match required(name, value)? {
                "0" => Ok(()), // sysbench: 0 is no rate limit
                v => self.value("rate", name, Some(v)),
            },
            "report-interval" => match required(name, value)? {
                "0" => Ok(()),
                v => self.value("report-interval", name, Some(v)),
            },
            "warmup-time" => self.value("warmup", name, value),
            "percentile" => match required(name, value)? {
                "0" => {
                    self.notes.push("--percentile=0 (no percentile) is not needed: fairbench keeps every percentile in the result; the report shows the 95th".into());
                    Ok(())
                }
                v => self.value("percentile", name, Some(v)),
            },
            "histogram" => {
                if boolean(name, value)? {
                    self.flag("histogram", None);
                }
                Ok(())
            }
            "test" => {
                self.test = Some(required(name, value)?.to_string());
                Ok(())
            }
            "help" => {
                self.flag("help", None);
                Ok(())
            }
            "quiet" => {
                self.flag("quiet", None);
                Ok(())
            }
            "version" => {
                self.flag("version", None);
                Ok(())
            }
            "verbosity" | "debug" | "validate" | "thread-stack-size" | "thread-init-timeout" | "forced-shutdown"
            | "luajit-cmd" | "db-debug" | "mysql-debug" => {
                self.ignored.push(format!("--{name}"));
                Ok(())
            }
            "report-checkpoints" => Err(format!(
                "--{name}: fairbench has no report checkpoints; every --report-interval window is kept in the result's timeline"
            )),
            "config-file" => Err(format!("--{name}: give the options on the command line")),
            // Random numbers (0.4/0.5 spellings too).
            "rand-type" | "oltp-dist-type" => {
                self.rand_type_given = true;
                self.value("rand-type", name, value)
            }
            "rand-spec-iter" | "oltp-dist-iter" => self.value("rand-spec-iter", name, value),
            "rand-spec-pct" | "oltp-dist-pct" => self.value("rand-spec-pct", name, value),
            "rand-spec-res" | "oltp-dist-res" => self.value("rand-spec-res", name, value),
            "rand-seed" => self.value("rand-seed", name, value),
            "rand-pareto-h" => self.value("rand-pareto-h", name, value),
            "rand-zipfian-exp" => self.value("rand-zipfian-exp", name, value),
            "rand-init" => {
                // 0.4/0.5: seed from the clock. fairbench does unless --rand-seed is given.
                self.ignored.push(format!("--{name}"));
                Ok(())
            }
            // Databases.
            "db-driver" => {
                let d = required(name, value)?;
                match d {
                    "mysql" | "pgsql" => {
                        self.conn.driver = Some(d.to_string());
                        Ok(())
                    }
                    _ => Err(format!("--db-driver={d}: fairbench speaks mysql and pgsql (and sqlite:// through --target)")),
                }
            }
            "db-ps-mode" => match required(name, value)? {
                "auto" => self.value("ps", name, Some("on")),
                "disable" => self.value("ps", name, Some("off")),
                v => Err(format!("--db-ps-mode={v}: use auto or disable (fairbench: --ps=on|off)")),
            },
            _ if name.starts_with("mysql-") || name.starts_with("pgsql-") => self.driver_option(name, value),
            // The oltp scripts' options (and 0.4/0.5 `--oltp-*` ones).
            _ => self.oltp_option(name, value),
        }
    }

    fn driver_option(&mut self, name: &str, value: Option<&str>) -> Result<(), Refusal> {
        let (driver, field) = name.split_once('-').unwrap_or((name, ""));
        match (driver, field) {
            (_, "host" | "port" | "user" | "password" | "db" | "ignore-errors")
            | ("mysql", "socket" | "ssl" | "storage-engine" | "table-engine") => {
                if field != "ssl" {
                    required(name, value)?;
                } else {
                    boolean(name, value)?;
                }
                self.conn.options.push((driver.to_string(), field.to_string(), value.map(str::to_string)));
                Ok(())
            }
            ("mysql", "ssl-cipher") => Err(format!(
                "--{name}: fairbench negotiates TLS with rustls and does not pick ciphers; drop the option (TLS: --mysql-ssl=on)"
            )),
            ("mysql", "compression") => match boolean(name, value)? {
                false => Ok(()),
                true => Err(format!(
                    "--{name}=on: fairbench does not compress the protocol; drop it (results with and without compression differ)"
                )),
            },
            ("mysql", "dry-run") => match boolean(name, value)? {
                false => Ok(()),
                true => Err(format!(
                    "--{name}: fairbench has no dry-run driver; its client cost per event is measured in every run (result: client_cost)"
                )),
            },
            ("pgsql", "variant") => Err(format!("--{name}: fairbench has no Redshift variant of the oltp workloads")),
            _ => Err(format!("unknown option --{name}: not a sysbench 1.0.20 option (see `fairbench run --help`)")),
        }
    }

    fn oltp_option(&mut self, name: &str, value: Option<&str>) -> Result<(), Refusal> {
        let legacy = name.strip_prefix("oltp-");
        let bare = legacy.unwrap_or(name);
        match bare {
            "tables" | "tables-count" => self.value("tables", name, value),
            "table-size" | "range-size" | "point-selects" | "simple-ranges" | "sum-ranges" | "order-ranges"
            | "distinct-ranges" | "index-updates" | "non-index-updates" | "delete-inserts" => {
                self.value(bare, name, value)
            }
            "range-selects" | "skip-trx" | "auto-inc" | "secondary" | "create-secondary" => {
                self.switch(bare, name, value)
            }
            "read-only" if legacy.is_some() => {
                self.legacy_read_only = Some(boolean(name, value)?);
                Ok(())
            }
            "write-only" if legacy.is_some() => {
                self.legacy_write_only = Some(boolean(name, value)?);
                Ok(())
            }
            "test-mode" | "nontrx-mode" | "connect-delay" | "user-delay-min" | "user-delay-max" | "reconnect-mode"
            | "sp-name" | "order-by-pk"
                if legacy.is_some() =>
            {
                Err(format!(
                    "--{name} is a sysbench 0.4 option with no 1.0 equivalent: sysbench 1.0's oltp_read_write / oltp_read_only / oltp_point_select replace the 0.4 oltp modes"
                ))
            }
            "create-table-options" | "reconnect" => Err(format!(
                "--{name} is an option of sysbench after 1.0.20; fairbench implements 1.0.20 (see `fairbench run --help`)"
            )),
            "pgsql-variant" => Err(format!("--{name}: fairbench has no Redshift variant of the oltp workloads")),
            "target" | "password-file" => {
                self.target_given = true;
                self.pass_through(name, value)
            }
            "format" => {
                self.format_given = true;
                self.pass_through(name, value)
            }
            _ => self.pass_through(name, value),
        }
    }

    /// A fairbench option in a sysbench-shaped line (`--target`, `--out`, `--format`...).
    fn pass_through(&mut self, name: &str, value: Option<&str>) -> Result<(), Refusal> {
        let known =
            super::Cli::command().get_subcommands().any(|c| c.get_arguments().any(|a| a.get_long() == Some(name)));
        if !known {
            return Err(match equivalent(name) {
                Some(e) => format!("unknown option --{name} ({e})"),
                None => format!("unknown option --{name}: not a sysbench 1.0.20 option nor a fairbench one (see `fairbench run --help`)"),
            });
        }
        self.flags.push((name.to_string(), value.map(str::to_string)));
        Ok(())
    }

    fn finish(mut self, program: String) -> Result<Translation, Refusal> {
        let mut positionals = std::mem::take(&mut self.positionals).into_iter();
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
        if !self.ignored.is_empty() {
            self.notes.push(format!(
                "ignored for {command} (nothing fairbench measures depends on them): {}",
                self.ignored.join(", ")
            ));
        }
        Ok(Translation { args, notes: self.notes })
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
        let stem = file.strip_suffix(".lua").unwrap_or(file);
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

    /// The server, from --db-driver and the --mysql-* / --pgsql-* options.
    fn target(&mut self, args: &mut Vec<String>) -> Result<(), Refusal> {
        let given = |d: &str| self.conn.options.iter().any(|(o, _, _)| o == d);
        let driver = match (&self.conn.driver, given("mysql"), given("pgsql")) {
            (Some(d), _, _) => d.clone(),
            (None, false, false) => {
                if !self.target_given {
                    self.notes.push(
                        "sysbench would connect to MySQL on localhost as sbtest; fairbench uses --target (default sqlite://fairbench.db): add --db-driver=mysql for sysbench's default"
                            .into(),
                    );
                }
                return Ok(());
            }
            (None, false, true) => {
                return Err("--pgsql-* options without --db-driver=pgsql: sysbench would connect to MySQL and ignore them; add --db-driver=pgsql".into())
            }
            (None, true, _) => "mysql".into(),
        };
        if self.target_given {
            return Err(
                "give the server either as --target or as sysbench's --db-driver/--mysql-*/--pgsql-* options, not both"
                    .into(),
            );
        }
        let mut field: std::collections::BTreeMap<String, Option<String>> = Default::default();
        for (d, name, value) in std::mem::take(&mut self.conn.options) {
            if d != driver {
                self.ignored.push(format!("--{d}-{name}"));
            } else if name == "ignore-errors" {
                self.flag("ignore-errors", value.as_deref());
            } else if name == "storage-engine" || name == "table-engine" {
                self.flag("mysql-storage-engine", value.as_deref());
            } else {
                field.insert(name, value);
            }
        }
        let get = |k: &str| field.get(k).cloned().flatten();
        let (scheme, default_port) = if driver == "mysql" { ("mysql", "3306") } else { ("postgres", "5432") };
        let host = get("host").unwrap_or_else(|| "localhost".into());
        let port = get("port").unwrap_or_else(|| default_port.into());
        if host.contains(',') || port.contains(',') {
            return Err(format!(
                "several --{driver}-host/--{driver}-port values: fairbench runs against one server; run one fairbench per server"
            ));
        }
        if port.parse::<u16>().is_err() {
            return Err(format!("--{driver}-port={port} is not a port number"));
        }
        const PART: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.');
        let encode = |s: &str| utf8_percent_encode(s, PART).to_string();
        let user = encode(&get("user").unwrap_or_else(|| "sbtest".into()));
        let password = get("password").filter(|p| !p.is_empty()).map(|p| format!(":{}", encode(&p)));
        let db = encode(&get("db").unwrap_or_else(|| "sbtest".into()));
        let mut query = Vec::new();
        let mut socket = get("socket");
        // libmysqlclient reads `localhost` as its default unix socket.
        if driver == "mysql" && host == "localhost" && socket.is_none() {
            socket = DEFAULT_MYSQL_SOCKETS.iter().find(|p| std::path::Path::new(p).exists()).map(|p| p.to_string());
            self.notes.push(match &socket {
                Some(s) => format!(
                    "--mysql-host=localhost means the unix socket {s}, as libmysqlclient reads it (--mysql-host=127.0.0.1 for TCP)"
                ),
                None => "no MySQL unix socket found for localhost: connecting over TCP".into(),
            });
        }
        if let Some(s) = socket {
            query.push(format!("socket={}", encode(&s)));
        }
        if field.contains_key("ssl") && boolean("mysql-ssl", get("ssl").as_deref()).unwrap_or(false) {
            query.push("tls=require".into());
        }
        let query = if query.is_empty() { String::new() } else { format!("?{}", query.join("&")) };
        args.push(format!("--target={scheme}://{user}{}@{host}:{port}/{db}{query}", password.unwrap_or_default()));
        Ok(())
    }

    /// Where fairbench's defaults differ from sysbench 1.0.20's, said once each.
    fn differences(&mut self, command: &str) {
        if command != "run" {
            return;
        }
        let defaults = self.has("sysbench-defaults");
        if !self.rand_type_given && !defaults {
            self.notes.push(
                "ids are drawn uniformly; sysbench 1.0.20 draws them from its `special` distribution (1% of ids get 75% of draws): add --rand-type=special or --sysbench-defaults to match"
                    .into(),
            );
        }
        if !self.format_given {
            self.flags.push(("format".into(), Some("sysbench".into())));
            self.notes.push(
                "report in sysbench's format (--format=text for fairbench's own, with commit latency and the audit)"
                    .into(),
            );
        }
    }
}

/// fairbench's command nearest to a mistyped first word (`runn`, `prepar`).
fn nearest_command(word: &str) -> Option<&'static str> {
    OWN_COMMANDS
        .iter()
        .copied()
        .filter(|c| strsim::damerau_levenshtein(word, c) <= 2 && word.len() > 2)
        .min_by_key(|c| strsim::damerau_levenshtein(word, c))
}

/// libmysqlclient's compiled-in socket paths (Debian/Ubuntu first).
const DEFAULT_MYSQL_SOCKETS: [&str; 3] = ["/run/mysqld/mysqld.sock", "/var/run/mysqld/mysqld.sock", "/tmp/mysql.sock"];

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
    let same = |f: &str| Some(format!("fairbench: --{f}"));
    match name.as_str() {
        "num-threads" => same("threads"),
        "max-requests" => same("events"),
        "max-time" => same("time"),
        "tx-rate" => same("rate"),
        "warmup-time" => same("warmup"),
        "db-ps-mode" => same("ps=on|off"),
        "oltp-tables-count" => same("tables"),
        "mysql-table-engine" => same("mysql-storage-engine"),
        "db-driver" | "mysql-host" | "mysql-port" | "mysql-user" | "mysql-password" | "mysql-db" | "mysql-socket" => {
            Some("fairbench takes the server as a URL: --target mysql://user:pass@host:port/db, or write the line in sysbench's order, `fairbench oltp_read_write --mysql-host=... run`".into())
        }
        n if n.starts_with("pgsql-") => Some("fairbench takes the server as a URL: --target postgres://user:pass@host:port/db".into()),
        n if n.starts_with("oltp-") => {
            let bare = &n["oltp-".len()..];
            super::Cli::command()
                .find_subcommand("run")
                .is_some_and(|c| c.get_arguments().any(|a| a.get_long() == Some(bare)))
                .then(|| format!("fairbench: --{bare}"))
        }
        "verbosity" | "histogram" | "percentile" => None,
        _ => None,
    }
}

#[cfg(test)]
mod tests;
