//! What fairbench prints where: completions and the manual generated from the flag
//! definitions, --quiet, prepare's progress when stderr is not a terminal (CI logs), and
//! sysbench lines with the run's options on every command, in both word orders.

mod common;
use common::*;

fn out(args: &[&str]) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let o = fairbench_in(dir.path(), &args.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    assert!(o.status.success(), "{args:?}: {}", text(&o));
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn completions_and_the_manual_come_from_the_flag_definitions() {
    let (bash, _) = out(&["completions", "bash"]);
    assert!(bash.contains("prepare") && bash.contains("--threads") && bash.contains("--allow-foreign-tables"));
    let script = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(script.path(), &bash).unwrap();
    let check = std::process::Command::new("bash").arg("-n").arg(script.path()).output().unwrap();
    assert!(check.status.success(), "bash -n: {}", text(&check));
    assert!(out(&["completions", "zsh"]).0.starts_with("#compdef fairbench"));
    assert!(out(&["completions", "fish"]).0.contains("-l threads"));
    let (man, _) = out(&["man"]);
    assert!(man.contains(".TH fairbench 1") && man.contains("completions"), "{man}");
    let (run, _) = out(&["man", "run"]);
    assert!(run.contains(".TH fairbench-run 1") && run.contains("threads") && run.contains("percentile"));
    let dir = tempfile::tempdir().unwrap();
    let o = fairbench_in(dir.path(), &["man".into(), "nosuch".into()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("the commands are prepare, run"));
}

#[test]
fn sqlite_quiet_keeps_only_the_report() {
    let db = TestDb::new(Kind::Sqlite);
    let o = db.fairbench(&["prepare", "oltp_point_select", "--table-size=500", "-q"]);
    assert!(o.status.success() && o.stderr.is_empty(), "{}", text(&o));
    let o =
        db.fairbench(&["run", "oltp_point_select", "--table-size=500", "--time=1", "--report-interval=1", "--quiet"]);
    assert!(o.status.success() && o.stderr.is_empty(), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("SQL statistics"));
    // A sysbench line too: its notes are left out, its report stays.
    let target = format!("--target={}", db.url);
    let args = ["oltp_point_select", "--table-size=500", "--time=1", "-q", &target, "run"];
    let o = fairbench_in(db.dir.path(), &args.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    assert!(o.status.success() && o.stderr.is_empty(), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("total number of events:"));
}

#[test]
fn sqlite_piped_prepare_shows_it_is_moving() {
    let db = TestDb::new(Kind::Sqlite);
    let o = db.fairbench(&["prepare", "oltp_read_only", "--tables=2", "--table-size=20000"]);
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    // Not a terminal: plain lines, whole-number rates, the phase named.
    let line = err.lines().find(|l| l.starts_with("prepare: ")).unwrap_or_else(|| panic!("{err}"));
    assert!(line.contains("40,000/40,000 rows (100%)") && line.contains("building indexes"), "{line}");
    assert!(!line.contains('.'), "whole numbers: {line}");
    assert!(!err.contains('\r'), "no bar redraws in a log: {err:?}");
}

/// The report opens with the lines a person reads first; classes without statements are
/// left out; the wide per-query table comes with --verbose.
#[test]
fn sqlite_report_opens_with_a_summary() {
    let db = TestDb::new(Kind::Sqlite);
    assert!(db.fairbench(&["prepare", "oltp_point_select", "--table-size=500", "-q"]).status.success());
    let o = db.fairbench(&["run", "oltp_point_select", "--table-size=500", "--time=2", "--warmup=1"]);
    assert!(o.status.success(), "{}", text(&o));
    let report = String::from_utf8_lossy(&o.stdout).into_owned();
    let head: Vec<&str> = report.lines().take(6).collect();
    assert!(head[0].starts_with("fairbench ") && head[0].contains("oltp_point_select on SQLite"), "{head:?}");
    assert!(head[1].contains("events/s (events, autocommit)") && head[1].contains("queries/s"), "{head:?}");
    assert!(head[2].contains("per event p50") && head[2].contains(" (closed loop"), "{head:?}");
    assert!(head[3].contains("0 retried, 0 reconnects"), "{head:?}");
    assert!(head[4].contains("coefficient of variation"), "{head:?}");
    assert!(head[5].contains("audit:") && head[5].contains(" finding"), "{head:?}");
    // Counted nouns agree with their count.
    assert!(report.contains("\nload:         1 client, closed loop"), "{report}");
    assert!(report.contains("\ndataset:      1 table, 500 rows"), "{report}");
    assert!(!report.contains("(s)"), "{report}");
    let classes: Vec<&str> = report
        .lines()
        .skip_while(|l| !l.starts_with("Latency by class"))
        .skip(2)
        .take_while(|l| !l.starts_with("percentiles:"))
        .map(|l| l.split_whitespace().next().unwrap_or(""))
        .collect();
    assert_eq!(classes, ["event", "total", "read"], "{report}");
    assert!(!report.contains("Per query (times"));
    let o = db.fairbench(&["run", "oltp_point_select", "--table-size=500", "--time=1", "--verbose"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("Per query (times in microseconds"), "{}", text(&o));
}

/// sysbench's connection options for `db`, as a sysbench line names a server.
fn sysbench_connection(db: &TestDb) -> Vec<String> {
    let url = url::Url::parse(&db.url).unwrap();
    let (driver, prefix) = if db.kind == Kind::Mysql { ("mysql", "--mysql-") } else { ("pgsql", "--pgsql-") };
    vec![
        format!("--db-driver={driver}"),
        format!("{prefix}host={}", url.host_str().unwrap()),
        format!("{prefix}port={}", url.port().unwrap()),
        format!("{prefix}user={}", url.username()),
        format!("{prefix}password={}", url.password().unwrap_or("")),
        format!("{prefix}db={}", db.name),
    ]
}

/// One command of a line with the run's options on every command: it succeeds and says once
/// which options it ignored.
fn runs_with_one_note(db: &TestDb, args: Vec<String>, command: &str, ignored: &[&str]) -> String {
    let o = fairbench_in(db.dir.path(), &args);
    assert!(o.status.success(), "{args:?}: {}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    let notes: Vec<&str> = err.lines().filter(|l| l.starts_with(&format!("note: ignored for {command}"))).collect();
    assert_eq!(notes.len(), 1, "{command}: one note of what is ignored: {err}");
    for option in ignored {
        assert!(notes[0].contains(option), "{command}: {option} in {}", notes[0]);
    }
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// sysbench 1.0.20's --percentile=0: `percentile stats: disabled` in place of the percentile.
fn shows_no_percentile(out: &str) {
    assert!(out.contains("         percentile stats:               disabled\n"), "{out}");
    assert!(!out.contains("th percentile:"), "{out}");
}

/// --db-ps-mode=disable: the run sent plain-text queries, as its result records.
fn plain_text_queries(db: &TestDb, result: &str) {
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(db.dir.path().join(result)).unwrap()).unwrap();
    assert_eq!(doc["target"]["statements"], "text", "{}", doc["target"]);
}

/// Lines sysbench 1.0.20 accepts with the run's options (and its logging and deprecated ones)
/// on prepare, run and cleanup, in sysbench's word order and in fairbench's.
fn sysbench_options_on_every_command_in_both_orders(kind: Kind) {
    let db = TestDb::new(kind);
    let shared = "--db-ps-mode=disable --verbosity=3 --debug=off --percentile=0 --threads=2 --tables=1 \
                  --table_size=200 --report-interval=1 --time=2";
    let sysbench_order = |command: &str| {
        let mut args: Vec<String> = ["--test=oltp_read_write", "oltp_read_write"].map(String::from).to_vec();
        args.extend(shared.split_whitespace().map(String::from));
        args.extend(sysbench_connection(&db));
        args.push(command.into());
        args
    };
    runs_with_one_note(&db, sysbench_order("prepare"), "prepare", &["--verbosity", "--time", "--percentile"]);
    assert_eq!(db.count("sbtest1"), 200);
    let mut run = sysbench_order("run");
    run.insert(1, format!("--out={}", db.dir.path().join("a.json").display()));
    let out = runs_with_one_note(&db, run, "run", &["--verbosity", "--debug"]);
    shows_no_percentile(&out);
    plain_text_queries(&db, "a.json");
    assert!(out.contains("[ 1s ] thds: 2"), "{out}");
    runs_with_one_note(&db, sysbench_order("cleanup"), "cleanup", &["--threads", "--report-interval"]);
    assert!(db.tables().is_empty(), "{:?}", db.tables());

    let own_order = |command: &str| {
        let mut args: Vec<String> = vec![command.into(), "oltp_read_write".into()];
        // fairbench's grammar: `--threads 2` is one option.
        args.extend(shared.replace("--threads=2", "--threads 2").split_whitespace().map(String::from));
        args.extend(sysbench_connection(&db));
        args
    };
    runs_with_one_note(&db, own_order("prepare"), "prepare", &["--verbosity", "--time", "--report-interval"]);
    assert_eq!(db.count("sbtest1"), 200);
    let mut run = own_order("run");
    run.push("--format=sysbench".into());
    run.push(format!("--out={}", db.dir.path().join("b.json").display()));
    shows_no_percentile(&runs_with_one_note(&db, run, "run", &["--verbosity", "--debug"]));
    plain_text_queries(&db, "b.json");
    runs_with_one_note(&db, own_order("cleanup"), "cleanup", &["--threads", "--time", "--percentile"]);
    assert!(db.tables().is_empty(), "{:?}", db.tables());
}

#[test]
fn mariadb_sysbench_options_on_every_command_in_both_orders() {
    sysbench_options_on_every_command_in_both_orders(Kind::Mysql);
}

#[test]
fn postgres_sysbench_options_on_every_command_in_both_orders() {
    sysbench_options_on_every_command_in_both_orders(Kind::Postgres);
}

/// sysbench 1.0's own word orders, as published lines write them (test name or options
/// first, the command last), on the embedded default target.
#[test]
fn sqlite_sysbench_word_orders_run_as_sysbench_runs_them() {
    let dir = tempfile::tempdir().unwrap();
    let line = |l: &str| {
        let o = fairbench_in(dir.path(), &l.split_whitespace().map(str::to_string).collect::<Vec<_>>());
        assert!(o.status.success(), "{l}: {}", text(&o));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    line("--threads=1 --tables=3 oltp_point_select prepare");
    let report = line("--threads=2 --tables=3 --time=1 oltp_point_select run");
    assert!(report.contains("total number of events:"), "{report}");
    line("--tables=3 oltp_point_select cleanup");
    line("oltp_read_write --tables=1 --table-size=1000 prepare");
    let report = line("oltp_read_write --tables=1 --table-size=1000 --time=1 run");
    assert!(report.contains("transactions:"), "{report}");
}

/// Output piped into a reader that has stopped (`fairbench schema | head -1`) ends quietly
/// with SIGPIPE's status, not as a bug.
#[test]
fn a_reader_that_stops_is_not_an_internal_error() {
    let mut child = std::process::Command::new(bin())
        .arg("schema")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // the reader is gone before anything is written
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(141), "{}", text(&o));
    assert!(o.stderr.is_empty(), "{}", text(&o));
}
