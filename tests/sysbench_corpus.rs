//! sysbench command lines from sysbench's own test suite, the studies in the brief and public
//! benchmark scripts, with `sysbench` replaced by `fairbench`: each one runs with sysbench's
//! meaning, is translated (an older sysbench's script), or is refused in one line naming
//! what to use. A dozen of them are then run by the sysbench 1.0.20 binary and by fairbench on
//! MariaDB and PostgreSQL and compared: tables, rows, threads, events and the server's counters.
//!
//! Shell variables of a source are filled in with plain values (host, user, sizes); nothing
//! else of a line is changed. Sources:
//! - sb-tests: akopytov/sysbench tag 1.0.20, `tests/t/<file>` with `tests/include/script_oltp_common.sh`
//!   (`$ARGS` expanded: `${SBTEST_SCRIPTDIR}` = /usr/share/sysbench, `$SBTEST_MYSQL_ARGS` =
//!   `--mysql-user=root --mysql-db=sbtest`).
//! - seed-000 / seed-004: the studies in `../shared/seeds/` (000_b7cb6c0859bc2a79.txt lines 265-274,
//!   004_3ce2c4ba97c65a6b.txt line 79).
//! - public: public GitHub files found by the code search of the workplace's library, named by
//!   what they are and the index id of the file (the search tool's `read_file` id).

mod common;
use common::*;
use fairbench::cli::{Cli, Command};
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Outcome {
    /// Runs with sysbench's meaning; the facts the parsed line must have.
    Runs(&'static str),
    /// An older sysbench's line, rewritten (said in a note); the facts after rewriting.
    Translated(&'static str),
    /// Refused; the error names this.
    Refused(&'static str),
}
use Outcome::*;

struct Case {
    source: &'static str,
    line: &'static str,
    outcome: Outcome,
}

const CORPUS: &[Case] = &[
    // --- sysbench 1.0.20's own tests ---
    Case {
        source: "sb-tests script_oltp_read_write_mysql.t (single-threaded prepare)",
        line: "sysbench /usr/share/sysbench/oltp_read_write.lua --db-driver=mysql --mysql-storage-engine=myisam --mysql-user=root --mysql-db=sbtest --tables=8 --threads=1 --threads=1 prepare",
        outcome: Runs("command=prepare workload=oltp_read_write threads=1 tables=8 table_size=10000 engine=myisam"),
    },
    Case {
        source: "sb-tests script_oltp_read_write_mysql.t (run)",
        line: "sysbench --events=100 /usr/share/sysbench/oltp_read_write.lua --db-driver=mysql --mysql-storage-engine=myisam --mysql-user=root --mysql-db=sbtest --tables=8 --threads=2 --threads=1 run",
        outcome: Runs("command=run workload=oltp_read_write threads=1 events=100 time=10 tables=8 format=sysbench ps=true"),
    },
    Case {
        source: "sb-tests script_oltp_read_write_mysql.t (cleanup)",
        line: "sysbench /usr/share/sysbench/oltp_read_write.lua --db-driver=mysql --mysql-storage-engine=myisam --mysql-user=root --mysql-db=sbtest --tables=8 --threads=1 --threads=1 cleanup",
        outcome: Runs("command=cleanup cleanup_tables=8"),
    },
    Case {
        source: "sb-tests script_oltp_common.sh (--create-secondary=off before the script)",
        line: "sysbench --create-secondary=off /usr/share/sysbench/oltp_point_select.lua --db-driver=mysql --mysql-user=root --mysql-db=sbtest --tables=1 prepare",
        outcome: Runs("command=prepare workload=oltp_point_select create_secondary=false tables=1"),
    },
    Case {
        source: "sb-tests script_oltp_common.sh (--auto-inc=off --verbosity=1)",
        line: "sysbench /usr/share/sysbench/oltp_insert.lua --db-driver=mysql --mysql-user=root --mysql-db=sbtest --tables=1 --auto-inc=off --verbosity=1 run",
        outcome: Runs("command=run workload=oltp_insert auto_inc=false time=10 threads=1"),
    },
    Case {
        source: "sb-tests script_oltp_point_select_pgsql.t (run)",
        line: "sysbench --events=100 /usr/share/sysbench/oltp_point_select.lua --db-driver=pgsql --pgsql-user=sbtest --pgsql-db=sbtest --tables=8 --threads=2 run",
        outcome: Runs("command=run workload=oltp_point_select target=postgres://sbtest@localhost:5432/sbtest threads=2 events=100 tables=8"),
    },
    Case {
        source: "sb-tests script_oltp_delete_mysql.t (prewarm)",
        line: "sysbench /usr/share/sysbench/oltp_delete.lua --db-driver=mysql --mysql-user=root --mysql-db=sbtest --tables=8 --threads=2 prewarm",
        outcome: Refused("--warmup-time"),
    },
    Case {
        source: "sb-tests script_oltp_help.t",
        line: "sysbench /usr/share/sysbench/oltp_read_write.lua help",
        outcome: Runs("command=list show=oltp_read_write"),
    },
    Case {
        source: "sb-tests opt_report_interval.t",
        line: "sysbench /usr/share/sysbench/oltp_read_write.lua --db-driver=mysql --mysql-dry-run --time=3 --events=0 --report-interval=1 run",
        outcome: Refused("no dry-run driver"),
    },
    Case {
        source: "sb-tests opt_report_checkpoints.t",
        line: "sysbench /usr/share/sysbench/oltp_read_write.lua --db-driver=mysql --mysql-dry-run=off --time=3 --events=0 --report-checkpoints=1,2 run",
        outcome: Refused("--report-interval"),
    },
    Case {
        source: "sb-tests opt_histogram.t (a custom Lua script)",
        line: "sysbench --histogram /tmp/histogram.lua --events=2 --threads=2 run",
        outcome: Refused("workload file"),
    },
    Case { source: "sb-tests opt_rate.t", line: "sysbench --rate=2000000000 cpu run --verbosity=1", outcome: Refused("no equivalent") },
    Case {
        source: "sb-tests script_select_random_mysql.t",
        line: "sysbench /usr/share/sysbench/select_random_points.lua --db-driver=mysql --mysql-user=root --mysql-db=sbtest --tables=8 run",
        outcome: Refused("workload file"),
    },
    // --- the studies ---
    Case {
        source: "seed-000 line 265 (prepare of the write test; ./$2 = oltp_insert.lua)",
        line: "sysbench ./oltp_insert.lua --tables=250 --table-size=25000 --threads=250 --auto-inc=off prepare",
        outcome: Runs("command=prepare workload=oltp_insert tables=250 table_size=25000 threads=250 auto_inc=false"),
    },
    Case {
        source: "seed-000 line 272 (one of 800 clients)",
        line: "sysbench ./oltp_insert.lua --tables=250 --table-size=25000 --threads=20 --time=86400 --range_selects=off --db-ps-mode=disable --skip_trx=off --auto-inc=off --mysql-ignore-errors=all run",
        outcome: Runs("command=run workload=oltp_insert threads=20 time=86400 ps=false range_selects=false skip_trx=false ignore_errors=all"),
    },
    Case {
        source: "seed-004 line 79 (sysbench 0.5, Aurora 2015)",
        line: "sysbench --test=tests/db/oltp.lua --oltp_tables_count=32 --mysql-user=root --mysql_table_engine=InnoDB --num-threads=16 --oltp-table-size=5000000 --rand-type=pareto --rand-init=on --report-interval=10 --mysql-host=HOST --mysql-db=sbtest --max-time=7200 --max-requests=0 run",
        outcome: Translated("command=run workload=oltp_read_write target=mysql://root@HOST:3306/sbtest tables=32 table_size=5000000 threads=16 time=7200 events=0 rand_type=pareto report_interval=10 ps=false engine=InnoDB"),
    },
    // --- public scripts and documentation ---
    Case {
        source: "public: PostgreSQL tuning notes, markdown (id 54090251434)",
        line: "sysbench oltp_read_write --db-driver=pgsql --tables=10 --table-size=1000000 --threads=32 --time=300 run",
        outcome: Runs("command=run target=postgres://sbtest@localhost:5432/sbtest tables=10 table_size=1000000 threads=32 time=300"),
    },
    Case {
        source: "public: MySQL vs PostgreSQL laptop comparison, markdown (id 16209772853)",
        line: "sysbench oltp_read_write --db-driver=mysql --mysql-db=dbtest --threads=16 --events=100000 --mysql-user=root --mysql-password=YOUR_PASSWORD run",
        outcome: Runs("command=run target=mysql://root@localhost:3306/dbtest threads=16 events=100000 time=10"),
    },
    Case {
        source: "public: MySQL vs PostgreSQL laptop comparison, markdown (id 16209772853)",
        line: "sysbench oltp_read_write --db-driver=pgsql --pgsql-db=sbtest --pgsql-user=example_user --pgsql-password=example_password prepare",
        outcome: Runs("command=prepare target=postgres://example_user@localhost:5432/sbtest tables=1 table_size=10000"),
    },
    Case {
        source: "public: MySQL vs PostgreSQL laptop comparison, markdown (id 16209772853)",
        line: "sysbench oltp_read_write --db-driver=pgsql --pgsql-db=sbtest --threads=16 --events=100000 --pgsql-user=example_user --pgsql-password=example_password run",
        outcome: Runs("command=run target=postgres://example_user@localhost:5432/sbtest threads=16 events=100000"),
    },
    Case {
        source: "public: Kubernetes operator benchmark script, shell (id 12465775009)",
        line: "sysbench oltp_read_write --db-driver=pgsql --pgsql-host=pg.example --pgsql-port=5432 --pgsql-user=postgres --pgsql-password=secret --pgsql-db=bench --tables=4 prepare",
        outcome: Runs("command=prepare target=postgres://postgres@pg.example:5432/bench tables=4"),
    },
    Case {
        source: "public: Coroot docs, MySQL instrumentation overhead (id 69096660369)",
        line: "sysbench oltp_read_write --mysql-db=tenant_001 --tables=100 --table-size=10000 --threads=5 --rate=5 --time=0 --db-ps-mode=disable run",
        outcome: Runs("command=run target=mysql://sbtest@localhost:3306/tenant_001 tables=100 threads=5 rate=5 time=0 ps=false"),
    },
    Case {
        source: "public: Coroot docs, Postgres instrumentation overhead (id 69096660369)",
        line: "sysbench oltp_read_write --db-driver=pgsql --pgsql-db=tenant_001 --tables=100 --table-size=10000 --threads=5 --rate=8 --time=0 --db-ps-mode=disable run",
        outcome: Runs("command=run target=postgres://sbtest@localhost:5432/tenant_001 rate=8 time=0 ps=false"),
    },
    Case {
        source: "public: PostgreSQL benchmark how-to, markdown (id 30776140043)",
        line: "sysbench oltp_read_write --db-driver=pgsql --pgsql-db=sysbench_test --pgsql-host=52.66.63.7 --pgsql-port=5432 --pgsql-user=deepak --pgsql-password=password123 --tables=1 --table-size=4000000 prepare",
        outcome: Runs("command=prepare target=postgres://deepak@52.66.63.7:5432/sysbench_test table_size=4000000"),
    },
    Case {
        source: "public: cloud MySQL comparison script, shell (id 39745215845)",
        line: "sysbench oltp_point_select --mysql-host=10.0.0.7 --mysql-port=3306 --mysql-user=root --mysql-password=pw --mysql-db=sbtest --tables=16 --table-size=1000000 --report-interval=5 --time=300 --threads=64 --max-requests=0 --percentile=99 --mysql-ignore-errors=all --range_selects=off --rand-type=uniform --auto_inc=off run",
        outcome: Runs("command=run workload=oltp_point_select target=mysql://root@10.0.0.7:3306/sbtest tables=16 threads=64 time=300 events=0 percentile=99 ignore_errors=all rand_type=uniform report_interval=5"),
    },
    Case {
        source: "public: TiDB-style quick start, markdown (id 6721924421)",
        line: "sysbench oltp_point_select --mysql-host=127.0.0.1 --mysql-user=root --mysql-password=pass --tables=1 --table-size=10000 --db-ps-mode=disable prepare",
        outcome: Runs("command=prepare target=mysql://root@127.0.0.1:3306/sbtest table_size=10000"),
    },
    Case {
        source: "public: Linux performance notes, markdown (id 57001117751)",
        line: "sysbench oltp_read_only --mysql-host=localhost --mysql-user=root --mysql-db=sbtest --table-size=10000000 --tables=10 --threads=32 --time=300 run",
        outcome: Runs("command=run workload=oltp_read_only tables=10 table_size=10000000 threads=32 time=300"),
    },
    Case {
        source: "public: container benchmark notes, markdown (id 23979643448): a missing space",
        line: "sysbench oltp_point_select --mysql-host=mysql_container --mysql-user=testuser --mysql-password=testpassword --mysql-db=testdb --tables=10 --table-size=100000--threads=32 --time=30 --report-interval=10 --histogram run",
        outcome: Refused("100000--threads=32"),
    },
    Case {
        source: "public: container benchmark notes, markdown (id 23979643448)",
        line: "sysbench oltp_read_only --mysql-host=mysql_container --mysql-user=testuser --mysql-password=testpassword --mysql-db=testdb --threads=32 --time=30 --report-interval=10 --tables=10 --table-size=100000 run",
        outcome: Runs("command=run target=mysql://testuser@mysql_container:3306/testdb threads=32 time=30 report_interval=10 tables=10"),
    },
    Case {
        source: "public: storage engine test harness, Python (id 41598760157)",
        line: "sysbench oltp_read_only --db-driver=mysql --mysql-user=root --threads=8 --mysql-socket=/tmp/build/socket --tables=5 --table-size=1000000 prepare",
        outcome: Runs("command=prepare target=mysql://root@localhost:3306/sbtest?socket=%2Ftmp%2Fbuild%2Fsocket threads=8 tables=5"),
    },
    Case {
        source: "public: CI test of a MySQL image, Go (id 51923316077)",
        line: "sysbench oltp_read_write --mysql-socket=/run/mysqld/mysqld.sock --mysql-user=root --db-driver=mysql --tables=4 --table-size=1000 prepare",
        outcome: Runs("command=prepare target=mysql://root@localhost:3306/sbtest?socket=%2Frun%2Fmysqld%2Fmysqld.sock tables=4 table_size=1000"),
    },
    Case {
        source: "public: engine benchmark script, shell (id 31666912757)",
        line: "sysbench /usr/share/sysbench/oltp_insert.lua --mysql-storage-engine=innodb --table-size=100000 --tables=4 --mysql-db=test --mysql-user=root --db-driver=mysql --mysql-socket=/data/socket.sock prepare",
        outcome: Runs("command=prepare workload=oltp_insert engine=innodb tables=4 table_size=100000"),
    },
    Case {
        source: "public: RAID comparison article, markdown (id 1289559258): sysbench 0.4",
        line: "sysbench --test=oltp --db-driver=mysql --mysql-user=root --mysql-password=0ps.123 --mysql-table-engine=innodb --mysql-host=127.0.0.1 --mysql-port=3306 --mysql-socket=/var/run/mysqld/mysqld.sock --mysql-db=test --oltp-table-size=1000000 prepare",
        outcome: Refused("oltp_read_write"),
    },
    Case {
        source: "public: sysbench how-to, markdown (id 11991108842): sysbench 0.4",
        line: "sysbench --test=oltp --oltp-table-size=10000 --mysql-db=test --mysql-user=root --mysql-password=password --oltp-read-only=off --db-driver=mysql --mysql-socket=/var/run/mysqld/mysqld.sock run",
        outcome: Refused("oltp_read_write"),
    },
    Case {
        source: "public: YugabyteDB docs, sysbench fork options (id 4772883339 / 22977490104)",
        line: "sysbench oltp_insert --tables=10 --table-size=100000 --range_key_partitioning=true --serial_cache_size=1000 --db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port=5433 --pgsql-user=yugabyte --pgsql-db=yugabyte --threads=64 --time=120 --warmup-time=120 run",
        outcome: Refused("--range-key-partitioning"),
    },
    Case {
        source: "public: skew benchmark script, shell (id 3049970409; --rand-type=zipfian needs sysbench after 1.0.20)",
        line: "sysbench oltp_read_write --db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port=5432 --pgsql-user=postgres --pgsql-db=bench --tables=4 --table-size=10000 --threads=8 --time=60 --warmup-time=2 --validate=false --range_selects=off --index_updates=0 --non_index_updates=4 --delete_inserts=0 --point_selects=16 --rand-type=zipfian --rand-zipfian-exp=0.9 run",
        outcome: Runs("command=run warmup=2 rand_type=zipfian range_selects=false threads=8 time=60"),
    },
    Case {
        source: "public: ERMIA engine script, shell (id 14390052587)",
        line: "sysbench oltp_read_write --mysql-ignore-errors=1180,1030,1412,1213 --innodb_percentage=50 --create_secondary=off --rand-type=uniform --tables=8 --range_selects=off --table_size=10000 --mysql_storage_engine=ERMIA --mysql-db=dbtest --db-driver=mysql --mysql-socket=/dev/shm/u/mysql/mysqld.sock --threads=8 --non_index_updates=10 --time=60 --report-interval=1 run",
        outcome: Refused("--innodb-percentage"),
    },
];

/// The line's arguments, `sysbench` replaced by `fairbench`.
fn argv(line: &str) -> Vec<String> {
    let mut words: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    assert_eq!(words[0], "sysbench");
    words[0] = "fairbench".into();
    words
}

/// What the parsed line does, as `key=value` facts (targets without their password).
fn facts(args: &[String]) -> Result<(BTreeMap<String, String>, Vec<String>), String> {
    let t = fairbench::cli::sysbench::translate(args)?;
    // fairbench prints a flag error's first line (src/main.rs).
    let cli = <Cli as clap::Parser>::try_parse_from(&t.args)
        .map_err(|e| e.to_string().lines().next().unwrap_or_default().to_string())?;
    let mut f = BTreeMap::new();
    let mut put = |k: &str, v: String| {
        f.insert(k.to_string(), v);
    };
    let opt = |v: Option<u64>| v.map(|n| n.to_string()).unwrap_or_else(|| "none".into());
    match &cli.command {
        Command::Run(r) | Command::Bench(r) => {
            put("command", "run".into());
            put("workload", r.workload.workload.clone());
            put("target", without_password(r.target.target()));
            put("threads", r.threads.to_string());
            put("time", opt(r.time));
            put("events", opt(r.events));
            put("rate", r.rate.map(|x| x.to_string()).unwrap_or_else(|| "none".into()));
            put("ps", r.target.ps.to_string());
            put(
                "report_interval",
                r.report_interval.map(|d| d.as_secs_f64().to_string()).unwrap_or_else(|| "none".into()),
            );
            put("warmup", r.warmup.to_string());
            put("percentile", r.percentile.to_string());
            put("ignore_errors", r.ignore_errors.join(","));
            put("format", fairbench::model::RunRequest::from(r).format().to_string());
            workload_facts(&mut put, &r.workload);
        }
        Command::Prepare(p) => {
            put("command", "prepare".into());
            put("workload", p.workload.workload.clone());
            put("target", without_password(p.target.target()));
            put("threads", p.threads.to_string());
            workload_facts(&mut put, &p.workload);
        }
        Command::Cleanup(c) => {
            put("command", "cleanup".into());
            put("target", without_password(c.target.target()));
            put("cleanup_tables", opt(c.tables.map(u64::from)));
        }
        Command::List(l) => {
            put("command", "list".into());
            put("show", l.show.clone().unwrap_or_default());
        }
        other => return Err(format!("unexpected command {other:?}")),
    }
    Ok((f, t.notes))
}

fn workload_facts(put: &mut dyn FnMut(&str, String), w: &fairbench::cli::WorkloadArgs) {
    put("tables", w.tables.to_string());
    put("table_size", w.table_size.to_string());
    put("auto_inc", w.auto_inc.to_string());
    put("skip_trx", w.skip_trx.to_string());
    put("range_selects", w.range_selects.to_string());
    put("create_secondary", w.create_secondary.to_string());
    put("engine", w.mysql_storage_engine.clone());
    put("rand_type", w.rand_type.clone().unwrap_or_else(|| "default".into()));
}

fn without_password(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => {
            let user = &url[s + 3..at];
            let user = user.split(':').next().unwrap_or(user);
            format!("{}{user}{}", &url[..s + 3], &url[at..])
        }
        _ => url.to_string(),
    }
}

#[test]
fn every_line_runs_as_sysbench_means_it_is_translated_or_is_refused_naming_what_to_use() {
    assert!(CORPUS.len() >= 30, "{} lines", CORPUS.len());
    let (mut runs, mut translated, mut refused) = (0, 0, 0);
    for case in CORPUS {
        let args = argv(case.line);
        assert!(fairbench::cli::sysbench::is_sysbench_line(&args), "{}", case.source);
        let got = facts(&args);
        let expected = match (case.outcome, &got) {
            (Refused(names), Err(e)) => {
                assert!(e.contains(names), "{}: the refusal should name {names:?}: {e}", case.source);
                assert!(!e.contains('\n'), "{}: one line: {e}", case.source);
                refused += 1;
                continue;
            }
            (Refused(_), Ok((f, _))) => panic!("{}: should be refused, runs as {f:?}", case.source),
            (_, Err(e)) => panic!("{}: refused: {e}", case.source),
            (Runs(facts), Ok((_, notes))) => {
                assert!(!notes.iter().any(|n| n.contains("(sysbench 0.5)")), "{}", case.source);
                runs += 1;
                facts
            }
            (Translated(facts), Ok((_, notes))) => {
                assert!(notes.iter().any(|n| n.contains("(sysbench 0.5)")), "{}: the translation is said", case.source);
                translated += 1;
                facts
            }
        };
        let (f, _) = got.unwrap();
        for fact in expected.split_whitespace() {
            let (k, v) = fact.split_once('=').unwrap();
            // A target may end in the socket found on this machine (`localhost`).
            let got = f.get(k).map(String::as_str).unwrap_or("(absent)");
            let same = if k == "target" { got.starts_with(v) } else { got == v };
            assert!(same, "{}: {k} is {got}, expected {v}", case.source);
        }
        // A password given on the line never reaches a message or the facts.
        for secret in ["YOUR_PASSWORD", "example_password", "secret", "password123", "testpassword"] {
            if case.line.contains(secret) {
                assert!(!f.values().any(|v| v.contains(secret)), "{}", case.source);
            }
        }
    }
    eprintln!("corpus: {runs} run as written, {translated} translated, {refused} refused naming the equivalent");
    assert!(runs >= 20 && translated >= 1 && refused >= 8);
}

// --- The same lines run by sysbench 1.0.20 and by fairbench, on databases of their own ---

/// Lines of the corpus (or, for prepare, the prepare of a corpus run line) with what makes
/// them small enough for a test appended (sysbench reads a later option over an earlier one),
/// and their connection options replaced by the test server's. Writers run on one thread, as
/// sysbench's own tests do, so that no deadlock retry changes the counts.
const RUN_BOTH: &[(&str, &str)] = &[
    ("sysbench /usr/share/sysbench/oltp_read_write.lua --db-driver=mysql --mysql-storage-engine=myisam --tables=8 --threads=2 --threads=1 --events=100 run", "--table-size=1000"),
    ("sysbench --create-secondary=off /usr/share/sysbench/oltp_point_select.lua --db-driver=mysql --tables=1 run", "--events=300 --threads=2"),
    ("sysbench ./oltp_insert.lua --tables=250 --table-size=25000 --threads=250 --auto-inc=off prepare", "--tables=3 --threads=3"),
    ("sysbench oltp_point_select --mysql-port=3306 --tables=16 --table-size=1000000 --report-interval=5 --time=300 --threads=64 --max-requests=0 --percentile=99 --mysql-ignore-errors=all --range_selects=off --rand-type=uniform --auto_inc=off run", "--tables=2 --table-size=1000 --events=400 --threads=8"),
    ("sysbench oltp_read_only --mysql-host=localhost --mysql-db=sbtest --table-size=10000000 --tables=10 --threads=32 --time=300 run", "--tables=2 --table-size=1000 --events=300 --threads=4"),
    ("sysbench oltp_read_write --db-driver=mysql --mysql-db=dbtest --threads=16 --events=100000 run", "--table-size=1000 --events=200 --threads=1"),
    ("sysbench oltp_read_write --mysql-db=tenant_001 --tables=100 --table-size=10000 --threads=5 --rate=5 --time=0 --db-ps-mode=disable run", "--tables=2 --table-size=1000 --rate=0 --events=200 --threads=1"),
    ("sysbench /usr/share/sysbench/oltp_update_non_index.lua --db-driver=mysql --tables=2 --threads=1 --events=300 run", "--table-size=1000"),
    // Limited by time, not events: the durations are compared instead of the counts.
    ("sysbench oltp_point_select --mysql-port=3306 --tables=16 --table-size=1000000 --report-interval=5 --time=300 --threads=64 --max-requests=0 --percentile=99 --mysql-ignore-errors=all --range_selects=off --rand-type=uniform --auto_inc=off run", "--tables=1 --table-size=1000 --time=2 --threads=4"),
    ("sysbench --events=100 /usr/share/sysbench/oltp_point_select.lua --db-driver=pgsql --tables=8 --threads=2 run", "--table-size=1000"),
    ("sysbench oltp_read_write --db-driver=pgsql --threads=16 --events=100000 run", "--table-size=1000 --events=200 --threads=1"),
    ("sysbench oltp_read_write --db-driver=pgsql --tables=10 --table-size=1000000 --threads=32 --time=300 run", "--tables=2 --table-size=500 --events=150 --threads=1"),
    ("sysbench oltp_read_write --db-driver=pgsql --tables=4 prepare", "--table-size=2000"),
];

/// The line for one tool: connection options replaced by `db`'s, the reduction appended,
/// the command last.
fn for_server(line: &str, extra: &str, command: &str, db: &TestDb) -> Vec<String> {
    let url = url::Url::parse(&db.url).unwrap();
    let (driver, prefix) = match db.kind {
        Kind::Mysql => ("mysql", "--mysql-"),
        _ => ("pgsql", "--pgsql-"),
    };
    let conn = ["host", "port", "user", "password", "db", "socket"];
    let mut words: Vec<String> = line
        .split_whitespace()
        .skip(1)
        .filter(|w| !conn.iter().any(|c| w.starts_with(&format!("{prefix}{c}="))) && !COMMANDS.contains(w))
        .map(str::to_string)
        .collect();
    words.extend(extra.split_whitespace().map(str::to_string));
    words.push(format!("--db-driver={driver}"));
    words.push(format!("{prefix}host={}", url.host_str().unwrap()));
    words.push(format!("{prefix}port={}", url.port().unwrap()));
    words.push(format!("{prefix}user={}", url.username()));
    words.push(format!("{prefix}password={}", url.password().unwrap_or("")));
    words.push(format!("{prefix}db={}", db.name));
    words.push(command.to_string());
    words
}

const COMMANDS: [&str; 3] = ["prepare", "run", "cleanup"];

fn sysbench(dir: &std::path::Path, args: &[String]) -> std::process::Output {
    // A script the study ran from its own directory is the packaged one.
    let args = args.iter().map(|a| match a.strip_prefix("./") {
        Some(script) if script.ends_with(".lua") => format!("/usr/share/sysbench/{script}"),
        _ => a.clone(),
    });
    std::process::Command::new("sysbench")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("sysbench is installed by scripts/test.sh")
}

/// The number after `label` in sysbench-format output.
fn number_after(out: &str, label: &str) -> Option<f64> {
    let line = out.lines().find(|l| l.trim_start().starts_with(label))?;
    line[line.find(label)? + label.len()..].split_whitespace().next()?.trim_end_matches('s').parse().ok()
}

/// Rows per table, sorted by name.
fn table_rows(db: &TestDb) -> Vec<(String, i64)> {
    db.tables().into_iter().map(|t| (t.clone(), db.count(&t))).collect()
}

/// What the server counted of the workload's statements: MariaDB's statement counters
/// (server-wide; the caller runs one tool at a time), PostgreSQL's row counters of the
/// database once every other session of it has ended (a backend reports its counts as it
/// exits, before it leaves pg_stat_activity).
fn server_counts(db: &TestDb) -> BTreeMap<String, i64> {
    match db.kind {
        Kind::Mysql => {
            let all = mysql_counters();
            ["Com_select", "Com_insert", "Com_update", "Com_delete", "Com_begin", "Com_commit", "Com_rollback", "Com_stmt_execute"]
                .iter()
                .map(|k| (k.to_string(), all.get(*k).copied().unwrap_or(0)))
                .collect()
        }
        _ => rt().block_on(async {
            let (c, conn) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls).await.unwrap();
            tokio::spawn(conn);
            let others = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()";
            for _ in 0..300 {
                if c.query_one(others, &[]).await.unwrap().get::<_, i64>(0) == 0 {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            c.batch_execute("SELECT pg_stat_clear_snapshot()").await.unwrap();
            let r = c
                .query_one(
                    "SELECT COALESCE(sum(n_tup_ins), 0)::bigint, COALESCE(sum(n_tup_upd), 0)::bigint, COALESCE(sum(n_tup_del), 0)::bigint FROM pg_stat_user_tables",
                    &[],
                )
                .await
                .unwrap();
            BTreeMap::from([
                ("n_tup_ins".to_string(), r.get::<_, i64>(0)),
                ("n_tup_upd".to_string(), r.get(1)),
                ("n_tup_del".to_string(), r.get(2)),
            ])
        }),
    }
}

fn delta(before: &BTreeMap<String, i64>, after: &BTreeMap<String, i64>) -> BTreeMap<String, i64> {
    after.iter().map(|(k, v)| (k.clone(), v - before.get(k).copied().unwrap_or(0))).collect()
}

/// One line through both tools: prepare (when the line runs), the line, then cleanup;
/// tables, rows, threads, events and counters compared at each step.
fn same_as_sysbench(line: &str, extra: &str, kind: Kind) -> String {
    let (theirs, ours) = (TestDb::new(kind), TestDb::new(kind));
    let command = line.split_whitespace().last().unwrap();
    let run = |db: &TestDb, cmd: &str, tool: &str| {
        let args = for_server(line, extra, cmd, db);
        let o = if tool == "sysbench" {
            sysbench(db.dir.path(), &args)
        } else {
            let mut args = args;
            if cmd == "run" {
                args.insert(0, format!("--out={}", db.dir.path().join("result.json").display()));
            }
            fairbench_in(db.dir.path(), &args)
        };
        assert!(o.status.success(), "{tool} {cmd} of {line}:\n{}", text(&o));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    // Prepare: the same tables with the same rows.
    for (db, tool) in [(&theirs, "sysbench"), (&ours, "fairbench")] {
        run(db, "prepare", tool);
    }
    let rows = table_rows(&theirs);
    assert!(!rows.is_empty(), "{line}: sysbench prepared nothing");
    assert_eq!(table_rows(&ours), rows, "{line}: tables and rows after prepare");
    let mut summary = format!("{} tables, {} rows", rows.len(), rows.iter().map(|r| r.1).sum::<i64>());
    if command == "run" {
        let mut outs = Vec::new();
        let mut counted = Vec::new();
        for (db, tool) in [(&theirs, "sysbench"), (&ours, "fairbench")] {
            let before = server_counts(db);
            outs.push(run(db, "run", tool));
            counted.push(delta(&before, &server_counts(db)));
        }
        let events = |o: &str| number_after(o, "total number of events:").unwrap_or(-1.0) as i64;
        let by_time = extra.contains("--time=");
        if by_time {
            // Both stop at --time: the last events end just after it (a generous bound).
            let limit: f64 = extra.split("--time=").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
            for out in &outs {
                let total = number_after(out, "total time:").unwrap();
                assert!(total >= limit && total < limit + 1.5, "{line}: total time {total} s for --time={limit}");
            }
        } else {
            assert_eq!(events(&outs[1]), events(&outs[0]), "{line}: events");
        }
        let threads = number_after(&outs[0], "Number of threads:").unwrap() as u64;
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(ours.dir.path().join("result.json")).unwrap()).unwrap();
        assert_eq!(doc["conditions"]["run"]["threads"].as_u64(), Some(threads), "{line}: threads");
        assert_eq!(number_after(&outs[1], "ignored errors:"), Some(0.0), "{line}: a retry would change the counts");
        if by_time {
            let total = |o: &str| number_after(o, "total time:").unwrap();
            summary += &format!(", {threads} threads, total time {:.2} s vs {:.2} s", total(&outs[0]), total(&outs[1]));
        } else {
            assert_eq!(counted[1], counted[0], "{line}: the server's counts, fairbench vs sysbench");
            summary += &format!(", {threads} threads, {} events, counted {:?}", events(&outs[0]), counted[0]);
        }
    }
    // Cleanup: both leave nothing of sbtest behind.
    for (db, tool) in [(&theirs, "sysbench"), (&ours, "fairbench")] {
        run(db, "cleanup", tool);
    }
    assert_eq!(ours.tables(), theirs.tables(), "{line}: tables left after cleanup");
    summary
}

fn run_both(kind: Kind) {
    for (line, extra) in RUN_BOTH {
        if line.contains("--db-driver=pgsql") == (kind == Kind::Postgres) {
            let summary = same_as_sysbench(line, extra, kind);
            eprintln!("same as sysbench 1.0.20: {line} {extra}\n    {summary}");
        }
    }
    // In this function, not a test of its own: MariaDB's counters above are server-wide.
    sysbench_tables_are_written_only_when_allowed(kind);
    report_windows_are_sysbench_windows(kind);
}

/// `--report-interval`: sysbench 1.0.20's interval lines and fairbench's (sysbench's format,
/// the same line) end on the same seconds. --time is not a multiple of the interval: whether
/// sysbench prints a last line at exactly --time is a race between its threads. sysbench also
/// reports past --time when an event in flight at the end outlasts it (PostgreSQL's 1 s
/// deadlock_timeout once made it print "[ 6s ]"); fairbench's windows end with measured time.
fn report_windows_are_sysbench_windows(kind: Kind) {
    let line = "sysbench oltp_read_write --tables=1 --table-size=1000 --threads=2 --report-interval=2 --time=5 run";
    let labels = |tool: &str| {
        let db = TestDb::new(kind);
        let o = |cmd: &str| {
            let args = for_server(line, "", cmd, &db);
            let o =
                if tool == "sysbench" { sysbench(db.dir.path(), &args) } else { fairbench_in(db.dir.path(), &args) };
            assert!(o.status.success(), "{tool} {cmd}:\n{}", text(&o));
            o
        };
        o("prepare");
        let out = String::from_utf8_lossy(&o("run").stdout).into_owned();
        o("cleanup");
        let l: Vec<String> =
            out.lines().filter(|l| l.starts_with("[ ")).map(|l| l[..l.find(" ] ").unwrap() + 2].to_string()).collect();
        (l, out)
    };
    let (theirs, their_out) = labels("sysbench");
    let (ours, our_out) = labels("fairbench");
    let second = |l: &String| l.trim_start_matches("[ ").trim_end_matches("s ]").parse::<u64>().unwrap_or(u64::MAX);
    let within_time: Vec<String> = theirs.iter().filter(|l| second(l) <= 5).cloned().collect();
    assert_eq!(within_time, ["[ 2s ]", "[ 4s ]"], "sysbench:\n{their_out}");
    assert_eq!(ours, within_time, "fairbench:\n{our_out}");
    eprintln!("report windows as sysbench 1.0.20's: {line}\n    {}", ours.join(" "));
}

/// A/B on identical data: fairbench writes tables sysbench prepared only when told to, lists
/// them in the result, and its cleanup leaves them to sysbench's.
fn sysbench_tables_are_written_only_when_allowed(kind: Kind) {
    let db = TestDb::new(kind);
    let line = "sysbench oltp_write_only --tables=2 --table-size=500 --events=50 --threads=1 run";
    assert!(sysbench(db.dir.path(), &for_server(line, "", "prepare", &db)).status.success());
    let before = table_rows(&db);
    let o = fairbench_in(db.dir.path(), &for_server(line, "", "run", &db));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(err.contains("--allow-foreign-tables") && err.contains("not created by fairbench"), "{err}");
    let out = db.dir.path().join("ab.json");
    let mut args = for_server(line, "--allow-foreign-tables", "run", &db);
    args.insert(1, format!("--out={}", out.display()));
    let o = fairbench_in(db.dir.path(), &args);
    assert!(o.status.success(), "{}", text(&o));
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(doc["conditions"]["dataset"]["foreign_tables"], serde_json::json!(["sbtest1", "sbtest2"]));
    assert_eq!(doc["stats"]["event"]["count"], 50);
    assert_eq!(table_rows(&db), before, "a DELETE and an INSERT of the same id per event keep the rows");
    assert!(fairbench_in(db.dir.path(), &for_server(line, "", "cleanup", &db)).status.success());
    assert_eq!(db.tables(), ["sbtest1", "sbtest2"], "fairbench's cleanup leaves sysbench's tables");
    assert!(sysbench(db.dir.path(), &for_server(line, "", "cleanup", &db)).status.success());
    assert!(db.tables().is_empty());
}

#[test]
fn mariadb_lines_do_what_sysbench_does() {
    run_both(Kind::Mysql);
}

#[test]
fn postgres_lines_do_what_sysbench_does() {
    run_both(Kind::Postgres);
}
