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
