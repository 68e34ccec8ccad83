use super::*;

fn line(s: &str) -> Vec<String> {
    std::iter::once("fairbench").chain(s.split_whitespace()).map(str::to_string).collect()
}

fn ok(s: &str) -> Translation {
    translate(&line(s)).unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn refused(s: &str) -> String {
    translate(&line(s)).expect_err(s)
}

#[test]
fn fairbench_lines_are_not_sysbench_lines() {
    assert!(!is_sysbench_line(&line("run oltp_read_write --threads 8")));
    assert!(!is_sysbench_line(&line("--help")));
    assert!(!is_sysbench_line(&line("-q list")));
    assert!(!is_sysbench_line(&line("--quiet sandbox ls")));
    assert!(is_sysbench_line(&line("oltp_read_write --threads=8 run")));
    assert!(is_sysbench_line(&line("--threads=8 oltp_read_write run")));
}

#[test]
fn options_anywhere_command_last_aliases_and_underscores() {
    let t = ok("--num-threads=8 /usr/share/sysbench/oltp_read_write.lua --table_size=1000 --max-time=60 --max-requests=0 --db-driver=mysql --mysql-host=10.0.0.5 --mysql-user=sb --mysql-db=bench run");
    assert_eq!(
        t.args,
        [
            "fairbench",
            "run",
            "oltp_read_write",
            "--target=mysql://sb@10.0.0.5:3306/bench",
            "--threads=8",
            "--table-size=1000",
            "--time=60",
            "--events=0",
            "--format=sysbench"
        ]
    );
}

#[test]
fn a_later_option_wins_as_in_sysbench() {
    let t = ok("oltp_point_select --events=5 --max-requests=9 --time=0 run");
    assert!(t.args.contains(&"--events=9".to_string()) && !t.args.contains(&"--events=5".to_string()), "{:?}", t.args);
}

#[test]
fn passwords_and_odd_characters_are_percent_encoded() {
    let t = ok("oltp_read_only --db-driver=pgsql --pgsql-user=me --pgsql-password=p@ss:w/rd --pgsql-db=x run");
    assert!(t.args.contains(&"--target=postgres://me:p%40ss%3Aw%2Frd@localhost:5432/x".to_string()), "{:?}", t.args);
}

#[test]
fn the_driver_not_chosen_is_ignored_with_a_note() {
    let t = ok("oltp_read_only --mysql-host=h --db-driver=pgsql --pgsql-host=p --mysql-ignore-errors=all run");
    assert!(t.args.iter().any(|a| a.starts_with("--target=postgres://sbtest@p:5432/sbtest")), "{:?}", t.args);
    assert!(!t.args.iter().any(|a| a.starts_with("--ignore-errors")));
    assert!(t.notes.iter().any(|n| n.contains("--mysql-host") && n.contains("--mysql-ignore-errors")), "{:?}", t.notes);
}

#[test]
fn shared_options_on_prepare_and_cleanup_are_ignored_with_a_note() {
    let t = ok("oltp_read_write --tables=4 --threads=4 --time=60 --db-driver=mysql --mysql-host=127.0.0.1 cleanup");
    assert_eq!(t.args[1..4], ["cleanup", "oltp_read_write", "--target=mysql://sbtest@127.0.0.1:3306/sbtest"]);
    assert!(t.args.contains(&"--tables=4".to_string()));
    assert!(t
        .notes
        .iter()
        .any(|n| n.contains("ignored for cleanup") && n.contains("--threads") && n.contains("--time")));
    // sysbench's cleanup drops sbtest1..--tables, one table by default.
    assert!(ok("oltp_read_write cleanup").args.contains(&"--tables=1".to_string()));
    let p = ok("oltp_read_write --tables=4 --threads=4 --time=60 prepare");
    assert!(p.args.contains(&"--threads=4".to_string()) && !p.args.contains(&"--time=60".to_string()));
}

#[test]
fn sysbench_zero_values_mean_off() {
    let t = ok("oltp_read_write --rate=0 --report-interval=0 --events=0 run");
    assert!(!t.args.iter().any(|a| a.starts_with("--rate") || a.starts_with("--report-interval")), "{:?}", t.args);
    assert!(t.args.contains(&"--events=0".to_string()));
}

#[test]
fn ps_mode_histogram_percentile_and_switches() {
    let t = ok("oltp_read_write --db-ps-mode=disable --histogram --percentile=99 --skip_trx --range-selects=off run");
    for a in ["--ps=off", "--histogram", "--percentile=99", "--skip-trx=on", "--range-selects=off"] {
        assert!(t.args.contains(&a.to_string()), "{a} in {:?}", t.args);
    }
}

#[test]
fn differences_are_stated_once_each() {
    let t = ok("oltp_read_write run");
    assert!(t.notes.iter().any(|n| n.contains("special")), "{:?}", t.notes);
    assert!(t.notes.iter().any(|n| n.contains("sysbench's format")));
    assert!(t.notes.iter().any(|n| n.contains("MySQL on localhost")));
    let quiet = ok("oltp_read_write --rand-type=special --target=sqlite://x.db --format=text run");
    assert!(quiet.notes.is_empty(), "{:?}", quiet.notes);
    assert!(!ok("oltp_read_write --sysbench-defaults run").notes.iter().any(|n| n.contains("special")));
}

#[test]
fn legacy_lines_are_translated_or_refused_naming_the_equivalent() {
    let t = ok("--test=tests/db/oltp.lua --oltp_tables_count=32 --mysql-user=root --mysql_table_engine=InnoDB --num-threads=16 --oltp-table-size=5000 --rand-type=pareto --rand-init=on --report-interval=10 --mysql-host=HOST --mysql-db=sbtest --max-time=7200 --max-requests=0 run");
    for a in [
        "oltp_read_write",
        "--tables=32",
        "--table-size=5000",
        "--threads=16",
        "--time=7200",
        "--ps=off",
        "--mysql-storage-engine=InnoDB",
    ] {
        assert!(t.args.contains(&a.to_string()), "{a} in {:?}", t.args);
    }
    assert!(ok("--test=oltp.lua --oltp-read-only=on run").args.contains(&"oltp_read_only".to_string()));
    assert!(refused("--test=oltp --oltp-table-size=10 run").contains("oltp_read_write"));
    assert!(refused("--test=tests/db/select.lua run").contains("oltp_point_select"));
    assert!(refused("--test=oltp --oltp-test-mode=complex run").contains("oltp_read_write"));
    assert!(refused("tests/db/oltp.lua --mysql-table-engine=myisam run").contains("LOCK TABLES"));
}

#[test]
fn every_refusal_is_one_line_that_names_what_to_do() {
    for (l, names) in [
        ("cpu run", "no equivalent"),
        ("oltp_read_write --mysql-ssl-cipher=AES run", "--mysql-ssl=on"),
        ("oltp_read_write --mysql-compression=on run", "compress"),
        ("oltp_read_write --mysql-dry-run run", "client_cost"),
        ("oltp_read_write --report-checkpoints=10 run", "--report-interval"),
        ("oltp_read_write prewarm", "--warmup-time"),
        ("oltp_read_write --pgsql-host=x run", "--db-driver=pgsql"),
        ("oltp_read_write --mysql-host=a,b run", "one server"),
        ("oltp_read_write --db-driver=mysql --target=mysql://x@y/z run", "not both"),
        ("oltp_read_write --no-such=1 run", "not a sysbench 1.0.20 option"),
        ("oltp_read_write", "a command is required"),
        ("oltp_read_write run 8", "--name=value"),
        ("oltp_read_write --db-driver=oracle run", "mysql and pgsql"),
        ("bulk_insert.lua run", "workload file"),
        ("oltp_read_write --threads run", "--threads=VALUE"),
        ("oltp_read_wirte run", "did you mean oltp_read_write?"),
        ("runn oltp_read_write", "did you mean `fairbench run ...`?"),
    ] {
        let e = refused(l);
        assert!(e.contains(names) && !e.contains('\n'), "{l}: {e}");
    }
}

#[test]
fn help_and_version() {
    assert_eq!(ok("oltp_read_write help").args, ["fairbench", "list", "--show", "oltp_read_write"]);
    assert_eq!(ok("--version").args, ["fairbench", "--version"]);
}

#[test]
fn fairbench_spellings_are_named_for_sysbench_options() {
    assert_eq!(equivalent("--num-threads").as_deref(), Some("fairbench: --threads"));
    assert_eq!(equivalent("--oltp-table-size=5").as_deref(), Some("fairbench: --table-size"));
    assert!(equivalent("--pgsql-host").unwrap().contains("postgres://"));
    assert!(equivalent("--mysql-user").unwrap().contains("mysql://"));
}

#[test]
fn sysbench_defaults_apply_all_at_once() {
    use crate::model::Dialect;
    let run = |line: &str| {
        let cli = <crate::cli::Cli as clap::Parser>::try_parse_from(line.split_whitespace()).unwrap();
        let crate::cli::Command::Run(r) = cli.command else { panic!("{line}") };
        let r = crate::model::RunRequest::from(&r);
        let plan = r.plan(Dialect::Sqlite, r.workload.builtin(Dialect::Sqlite).unwrap()).unwrap();
        (plan.distribution.kind.name(), plan.stop.time.map(|t| t.as_secs()), r.format().to_string())
    };
    assert_eq!(run("fairbench run oltp_read_write --events=100"), ("uniform", None, "text".into()));
    assert_eq!(
        run("fairbench run oltp_read_write --events=100 --sysbench-defaults"),
        ("special", Some(10), "sysbench".into())
    );
    // Each default gives way to what is given.
    assert_eq!(
        run("fairbench run oltp_read_write --sysbench-defaults --rand-type=pareto --time=0 --events=5 --format=json"),
        ("pareto", None, "json".into())
    );
}

/// A value each option of the table accepts (sysbench's own kind of value).
fn sample(name: &str) -> &'static str {
    match name {
        "test" => "oltp_read_write",
        "db-driver" => "mysql",
        "db-ps-mode" => "disable",
        "rand-type" | "oltp-dist-type" => "special",
        "rand-pareto-h" => "0.2",
        "rand-zipfian-exp" => "0.8",
        n if n.ends_with("-host") => "127.0.0.1",
        n if n.ends_with("-port") => "3307",
        n if n.ends_with("-socket") => "/tmp/mysql.sock",
        n if n.ends_with("-engine") => "InnoDB",
        n if n.ends_with("-ignore-errors") => "all",
        n if n.ends_with("-ssl") || n.ends_with("-compression") || n.ends_with("-dry-run") => "on",
        n if n.ends_with("-only") || ["range-selects", "auto-inc", "skip-trx", "secondary"].contains(&n) => "on",
        n if n.ends_with("-secondary") || n == "histogram" || n == "debug" || n == "validate" => "on",
        _ => "2",
    }
}

/// Every sysbench option, in both word orders and on every command: translated into flags
/// clap accepts, ignored with one note, or refused in one line naming it; never dropped silently.
#[test]
fn every_option_in_both_orders_on_every_command() {
    use options::{Rule, OPTIONS, REPORT_CHECKPOINTS};
    for row in OPTIONS.iter().filter(|r| !r.names.contains(&"help") && !r.names.contains(&"version")) {
        for name in row.names {
            let driver = match name.split('-').next() {
                Some("pgsql") => "--db-driver=pgsql",
                _ => "--db-driver=mysql",
            };
            let option = format!("--{name}={}", sample(name));
            for command in ["prepare", "run", "cleanup"] {
                let sysbench_order = format!("oltp_read_write {driver} {option} {command}");
                let own_order = format!("{command} oltp_read_write {driver} {option}");
                for l in [sysbench_order, own_order] {
                    let args = line(&l);
                    assert!(is_sysbench_line(&args), "{l}");
                    let t = match (translate(&args), row.rule) {
                        (Err(e), rule)
                            if matches!(rule, Rule::Refused(_) | Rule::RefusedIfOn(_))
                                || (rule == Rule::RunOnlyRefused(REPORT_CHECKPOINTS) && command == "run")
                                || (rule == Rule::Line && name.starts_with("oltp-")) =>
                        {
                            assert!(e.contains(&format!("--{name}")) && !e.contains('\n'), "{l}: {e}");
                            continue;
                        }
                        (r, _) => r.unwrap_or_else(|e| panic!("{l}: {e}")),
                    };
                    let parsed = <crate::cli::Cli as clap::Parser>::try_parse_from(&t.args);
                    assert!(
                        parsed.is_ok(),
                        "{l} -> {:?}: {}",
                        t.args,
                        parsed.err().map(|e| e.to_string()).unwrap_or_default()
                    );
                    let baseline = translate(&line(&l.replace(&option, ""))).unwrap();
                    assert!(t.args != baseline.args || t.notes != baseline.notes, "{l}: --{name} changed nothing");
                    assert!(t.notes.iter().filter(|n| n.starts_with("ignored for")).count() <= 1, "{l}: {:?}", t.notes);
                }
            }
        }
    }
}

#[test]
fn fairbench_order_with_sysbench_options() {
    let t = ok("prepare oltp_read_write --table_size=100 --db-ps-mode=disable");
    assert_eq!(t.args, ["fairbench", "prepare", "oltp_read_write", "--table_size=100", "--ps=off"]);
    assert!(t.notes.is_empty(), "fairbench's order keeps fairbench's defaults, unsaid: {:?}", t.notes);
    // fairbench's `--threads 4` grammar; the run's options on cleanup are ignored in one note.
    let c = ok("cleanup oltp_read_write --threads 4 --time=5 --report-interval 10 --rate=10 --verbosity=5 --tables 2");
    assert_eq!(c.args, ["fairbench", "cleanup", "oltp_read_write", "--tables", "2"]);
    assert_eq!(c.notes, ["ignored for cleanup (nothing fairbench measures depends on them): --verbosity, --threads, --time, --report-interval, --rate"]);
    // --threads is meaningful on prepare (parallel loaders): kept as fairbench reads it.
    let p = ok("prepare oltp_read_write --threads 4 --time=60 --debug");
    assert_eq!(p.args[..5], ["fairbench", "prepare", "oltp_read_write", "--threads", "4"]);
    assert!(p.notes.iter().any(|n| n.contains("--time") && n.contains("--debug")), "{:?}", p.notes);
    let r = ok("run oltp_read_write --threads 8 --db-driver=pgsql --pgsql-host=db --pgsql-user=me --percentile=0");
    assert!(r.args.contains(&"--target=postgres://me@db:5432/sbtest".to_string()), "{:?}", r.args);
    assert!(r.args.contains(&"--percentile=0".to_string()) && r.args.contains(&"8".to_string()));
    assert!(
        !r.args.iter().any(|a| a.starts_with("--format") || a.starts_with("--time")),
        "no sysbench defaults: {:?}",
        r.args
    );
    assert!(refused("run oltp_read_write --target sqlite://x.db --mysql-host=h").contains("not both"));
    assert!(refused("run oltp_read_write --db-ps-mode=never").contains("auto (--ps=on) or disable (--ps=off)"));
}

#[test]
fn test_option_in_both_orders() {
    let own = ok("run --test=oltp_point_select --time=1");
    assert_eq!(own.args[..3], ["fairbench", "run", "oltp_point_select"]);
    assert!(own.notes.iter().any(|n| n.contains("deprecated")));
    assert_eq!(ok("run oltp_read_write --test=oltp_read_write.lua").args[..3], ["fairbench", "run", "oltp_read_write"]);
    assert!(refused("run oltp_point_select --test=oltp_read_write").contains("one test name"));
    // sysbench reads `--test=NAME` and the same NAME as one test.
    let both = ok("oltp_read_write --test=/usr/share/sysbench/oltp_read_write.lua prepare");
    assert_eq!(both.args[1..3], ["prepare", "oltp_read_write"]);
}

#[test]
fn fairbench_lines_without_sysbench_options_stay_as_they_are() {
    for l in [
        "run oltp_read_write --threads 8 --time 5",
        "run --help",
        "cleanup oltp_read_write --tables 2",
        "compare a.json b.json",
    ] {
        assert!(!is_sysbench_line(&line(l)), "{l}");
    }
    assert!(is_sysbench_line(&line("run oltp_read_write --db_ps_mode=disable")));
    // fairbench's global --quiet in sysbench's order.
    assert!(ok("oltp_read_write --quiet run").args.contains(&"--quiet".to_string()));
    assert!(is_sysbench_line(&line("cleanup oltp_read_write --threads=4")));
}

#[test]
fn percentile_zero_is_passed_on_as_no_percentile() {
    let t = ok("oltp_read_write --percentile=0 --report-interval=1 run");
    assert!(t.args.contains(&"--percentile=0".to_string()), "{:?}", t.args);
    assert_eq!(t.notes.iter().filter(|n| n.contains("--percentile=0")).count(), 1, "{:?}", t.notes);
    let cli = <crate::cli::Cli as clap::Parser>::try_parse_from(&t.args).unwrap();
    let crate::cli::Command::Run(r) = cli.command else { panic!("{:?}", t.args) };
    let r = crate::model::RunRequest::from(&r);
    let plan =
        r.plan(crate::model::Dialect::Sqlite, r.workload.builtin(crate::model::Dialect::Sqlite).unwrap()).unwrap();
    assert_eq!(plan.percentile, 95.0, "interval lines keep a real percentile");
}

#[test]
fn a_fairbench_option_in_its_space_form_takes_the_next_word_in_sysbench_order() {
    // fairbench's own --target URL, in sysbench's word order: the URL is its value, `run` the command.
    let t = ok("oltp_read_write --target sqlite://x.db --threads=4 run");
    assert_eq!(t.args[1..4], ["run", "oltp_read_write", "--target=sqlite://x.db"], "{:?}", t.args);
    assert!(t.args.contains(&"--threads=4".to_string()), "{:?}", t.args);
    // A sysbench boolean without a value is on, and the next word stays the command.
    let t = ok("oltp_read_write --target=sqlite://x.db --skip-trx run");
    assert_eq!(t.args[1], "run", "{:?}", t.args);
}
