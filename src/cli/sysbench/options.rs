//! sysbench 1.0.20's options, one row each, and what fairbench does with them.
//!
//! The rows are read from sysbench's own source at tag 1.0.20: src/sysbench.c (general),
//! src/sb_logger.c (--verbosity, --percentile, --histogram), src/sb_rand.c (random numbers),
//! src/db_driver.c (--db-*), src/drivers/mysql and src/drivers/pgsql (connections),
//! src/lua/oltp_common.lua (the oltp scripts), plus the deprecated and 0.4/0.5 spellings
//! sysbench lines still carry. An option not listed here is fairbench's own or unknown.

use super::{boolean, required, Line, Refusal};

/// What fairbench does with one sysbench option.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Rule {
    /// The value, under fairbench's name.
    Value(&'static str),
    /// The value under fairbench's name; sysbench's 0 means off, so 0 adds nothing.
    ZeroIsOff(&'static str),
    /// on/off, under fairbench's name.
    Switch(&'static str),
    /// A fairbench flag without a value, given when the option is on.
    Flag(&'static str),
    /// One of sysbench's words, as fairbench's value: (sysbench, fairbench) pairs.
    Choice(&'static str, &'static [(&'static str, &'static str)]),
    /// Nothing fairbench measures depends on it: accepted and listed in a note.
    Ignored,
    /// Refused: `--name` followed by this text, which names what to do instead.
    Refused(&'static str),
    /// Refused on run; prepare and cleanup have no use for it and ignore it, as sysbench does.
    RunOnlyRefused(&'static str),
    /// Refused when on (sysbench's default, off, is fairbench's behaviour).
    RefusedIfOn(&'static str),
    /// A connection option of the driver it names: resolved into `--target`.
    Connection,
    /// Read by the line itself (`--test`, `--db-driver`, 0.5's `--oltp-read-only`...).
    Line,
}

/// One sysbench option: its names (the first is sysbench 1.0.20's; later ones are its
/// deprecated aliases and older spellings) and its rule.
pub(super) struct SysbenchOption {
    pub names: &'static [&'static str],
    pub rule: Rule,
    /// An oltp script option, which sysbench 0.5 spelled `--oltp-NAME` too.
    pub oltp: bool,
}

const fn row(names: &'static [&'static str], rule: Rule) -> SysbenchOption {
    SysbenchOption { names, rule, oltp: false }
}

const fn oltp(names: &'static [&'static str], rule: Rule) -> SysbenchOption {
    SysbenchOption { names, rule, oltp: true }
}

const OFF_0_4: &str = " is a sysbench 0.4 option with no 1.0 equivalent: sysbench 1.0's oltp_read_write / oltp_read_only / oltp_point_select replace the 0.4 oltp modes";
const AFTER_1_0_20: &str =
    " is an option of sysbench after 1.0.20; fairbench implements 1.0.20 (see `fairbench run --help`)";
pub(super) const REPORT_CHECKPOINTS: &str =
    ": fairbench has no report checkpoints; every --report-interval window is kept in the result's timeline";
const REDSHIFT: &str = ": fairbench has no Redshift variant of the oltp workloads";

pub(super) const OPTIONS: &[SysbenchOption] = &[
    // src/sysbench.c, with its deprecated aliases.
    row(&["threads", "num-threads"], Rule::Value("threads")),
    row(&["events", "max-requests"], Rule::Value("events")),
    row(&["time", "max-time"], Rule::Value("time")),
    row(&["rate", "tx-rate"], Rule::ZeroIsOff("rate")),
    row(&["report-interval"], Rule::ZeroIsOff("report-interval")),
    row(&["test"], Rule::Line),
    row(&["help"], Rule::Flag("help")),
    row(&["version"], Rule::Flag("version")),
    row(&["debug", "validate", "thread-stack-size", "forced-shutdown"], Rule::Ignored),
    row(&["report-checkpoints"], Rule::RunOnlyRefused(REPORT_CHECKPOINTS)),
    row(&["config-file"], Rule::Refused(": give the options on the command line")),
    // src/sb_logger.c
    row(&["verbosity"], Rule::Ignored),
    row(&["percentile"], Rule::Value("percentile")),
    row(&["histogram"], Rule::Flag("histogram")),
    // src/sb_rand.c (and 0.4/0.5's --oltp-dist-*)
    row(&["rand-type", "oltp-dist-type"], Rule::Value("rand-type")),
    row(&["rand-spec-iter", "oltp-dist-iter"], Rule::Value("rand-spec-iter")),
    row(&["rand-spec-pct", "oltp-dist-pct"], Rule::Value("rand-spec-pct")),
    row(&["rand-spec-res", "oltp-dist-res"], Rule::Value("rand-spec-res")),
    row(&["rand-seed"], Rule::Value("rand-seed")),
    row(&["rand-pareto-h"], Rule::Value("rand-pareto-h")),
    // 0.4/0.5: seed from the clock, which fairbench does unless --rand-seed is given.
    row(&["rand-init"], Rule::Ignored),
    // src/db_driver.c
    row(&["db-driver"], Rule::Line),
    row(&["db-ps-mode"], Rule::Choice("ps", &[("auto", "on"), ("disable", "off")])),
    row(&["db-debug"], Rule::Ignored),
    // src/drivers/mysql/drv_mysql.c (--mysql-table-engine: 0.5's storage engine)
    row(
        &[
            "mysql-host",
            "mysql-port",
            "mysql-socket",
            "mysql-user",
            "mysql-password",
            "mysql-db",
            "mysql-ssl",
            "mysql-ignore-errors",
            "mysql-table-engine",
        ],
        Rule::Connection,
    ),
    row(
        &["mysql-ssl-cipher"],
        Rule::Refused(
            ": fairbench negotiates TLS with rustls and does not pick ciphers; drop the option (TLS: --mysql-ssl=on)",
        ),
    ),
    row(
        &["mysql-compression"],
        Rule::RefusedIfOn(
            "=on: fairbench does not compress the protocol; drop it (results with and without compression differ)",
        ),
    ),
    row(&["mysql-debug"], Rule::Ignored),
    row(
        &["mysql-dry-run"],
        Rule::RefusedIfOn(
            ": fairbench has no dry-run driver; its client cost per event is measured in every run (result: client_cost)",
        ),
    ),
    // src/drivers/pgsql/drv_pgsql.c (--pgsql-ignore-errors: sysbench after 1.0.20)
    row(&["pgsql-host", "pgsql-port", "pgsql-user", "pgsql-password", "pgsql-db", "pgsql-ignore-errors"], Rule::Connection),
    // src/lua/oltp_common.lua
    oltp(&["tables", "tables-count"], Rule::Value("tables")),
    oltp(&["table-size"], Rule::Value("table-size")),
    oltp(&["range-size"], Rule::Value("range-size")),
    oltp(&["point-selects"], Rule::Value("point-selects")),
    oltp(&["simple-ranges"], Rule::Value("simple-ranges")),
    oltp(&["sum-ranges"], Rule::Value("sum-ranges")),
    oltp(&["order-ranges"], Rule::Value("order-ranges")),
    oltp(&["distinct-ranges"], Rule::Value("distinct-ranges")),
    oltp(&["index-updates"], Rule::Value("index-updates")),
    oltp(&["non-index-updates"], Rule::Value("non-index-updates")),
    oltp(&["delete-inserts"], Rule::Value("delete-inserts")),
    oltp(&["range-selects"], Rule::Switch("range-selects")),
    oltp(&["auto-inc"], Rule::Switch("auto-inc")),
    oltp(&["skip-trx"], Rule::Switch("skip-trx")),
    oltp(&["secondary"], Rule::Switch("secondary")),
    oltp(&["create-secondary"], Rule::Switch("create-secondary")),
    oltp(&["mysql-storage-engine"], Rule::Connection),
    oltp(&["pgsql-variant"], Rule::Refused(REDSHIFT)),
    // sysbench after 1.0.20, which fairbench implements too.
    row(&["warmup-time"], Rule::Value("warmup")),
    row(&["rand-zipfian-exp"], Rule::Value("rand-zipfian-exp")),
    row(&["thread-init-timeout", "luajit-cmd"], Rule::Ignored),
    row(&["create-table-options", "reconnect"], Rule::Refused(AFTER_1_0_20)),
    // sysbench 0.4/0.5's oltp options.
    row(&["oltp-read-only", "oltp-write-only"], Rule::Line),
    row(
        &[
            "oltp-test-mode",
            "oltp-nontrx-mode",
            "oltp-connect-delay",
            "oltp-user-delay-min",
            "oltp-user-delay-max",
            "oltp-reconnect-mode",
            "oltp-sp-name",
            "oltp-order-by-pk",
        ],
        Rule::Refused(OFF_0_4),
    ),
];

/// The row of `name` (`-` for `_`), also as 0.5's `--oltp-NAME` of an oltp script option.
pub(super) fn lookup(name: &str) -> Option<&'static SysbenchOption> {
    let named = |n: &str| OPTIONS.iter().find(|o| o.names.contains(&n));
    named(name).or_else(|| name.strip_prefix("oltp-").and_then(named).filter(|o| o.oltp))
}

impl Line {
    /// One `--name[=value]`, name with `_` read as `-`: the table's rule, or fairbench's own.
    pub(super) fn option(&mut self, name: &str, value: Option<&str>) -> Result<(), Refusal> {
        let Some(row) = lookup(name) else { return self.pass_through(name, value) };
        match row.rule {
            Rule::Value(f) => self.value(f, name, value),
            Rule::ZeroIsOff(f) => match required(name, value)? {
                "0" => Ok(()),
                v => self.value(f, name, Some(v)),
            },
            Rule::Switch(f) => {
                let on = boolean(name, value)?;
                self.flag(f, Some(if on { "on" } else { "off" }));
                Ok(())
            }
            Rule::Flag(f) => {
                if boolean(name, value)? {
                    self.flag(f, None);
                }
                Ok(())
            }
            Rule::Choice(f, words) => {
                let v = required(name, value)?;
                match words.iter().find(|(s, _)| *s == v) {
                    Some((_, ours)) => self.value(f, name, Some(ours)),
                    None => {
                        let list: Vec<String> = words.iter().map(|(s, o)| format!("{s} (--{f}={o})")).collect();
                        Err(format!("--{name}={v}: use {}", list.join(" or ")))
                    }
                }
            }
            Rule::Ignored => {
                self.ignored.push(format!("--{name}"));
                Ok(())
            }
            Rule::Refused(why) => Err(format!("--{name}{why}")),
            Rule::RunOnlyRefused(why) => {
                self.run_only_refusal.get_or_insert(format!("--{name}{why}"));
                self.ignored.push(format!("--{name}"));
                Ok(())
            }
            Rule::RefusedIfOn(why) => match boolean(name, value)? {
                false => Ok(()),
                true => Err(format!("--{name}{why}")),
            },
            Rule::Connection => self.connection_option(name, value),
            Rule::Line => self.line_option(name, value),
        }
    }

    fn connection_option(&mut self, name: &str, value: Option<&str>) -> Result<(), Refusal> {
        let (driver, field) = name.split_once('-').unwrap_or((name, ""));
        if field == "ssl" {
            boolean(name, value)?;
        } else {
            required(name, value)?;
        }
        self.conn.options.push((driver.to_string(), field.to_string(), value.map(str::to_string)));
        Ok(())
    }

    fn line_option(&mut self, name: &str, value: Option<&str>) -> Result<(), Refusal> {
        match name {
            "test" => self.test = Some(required(name, value)?.to_string()),
            "db-driver" => match required(name, value)? {
                d @ ("mysql" | "pgsql") => self.conn.driver = Some(d.to_string()),
                d => {
                    return Err(format!(
                        "--db-driver={d}: fairbench speaks mysql and pgsql (and sqlite:// through --target)"
                    ))
                }
            },
            "oltp-read-only" => self.legacy_read_only = Some(boolean(name, value)?),
            "oltp-write-only" => self.legacy_write_only = Some(boolean(name, value)?),
            _ => return self.pass_through(name, value),
        }
        Ok(())
    }
}

/// fairbench's name for a sysbench option that fairbench spells differently.
pub(super) fn renamed(name: &str) -> Option<String> {
    let row = lookup(name)?;
    let ours = match row.rule {
        Rule::Value(f) | Rule::ZeroIsOff(f) | Rule::Switch(f) | Rule::Flag(f) => f.to_string(),
        Rule::Choice(f, words) => {
            format!("{f}={}", words.iter().map(|(_, o)| *o).collect::<Vec<_>>().join("|"))
        }
        _ => return None,
    };
    (ours != name).then_some(ours)
}

impl SysbenchOption {
    /// Whether the option takes a value (so `--name VALUE`, in fairbench's grammar, is one).
    pub(super) fn takes_value(&self, name: &str) -> bool {
        match self.rule {
            Rule::Value(_) | Rule::ZeroIsOff(_) | Rule::Choice(..) => true,
            Rule::Connection => !name.ends_with("-ssl"),
            Rule::Line => matches!(name, "test" | "db-driver"),
            _ => false,
        }
    }
}
