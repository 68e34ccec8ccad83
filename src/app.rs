//! The commands: flags -> plan -> prepare/run -> result document -> report. The only module
//! that prints, apart from the report formats it calls.

use crate::cli::{CleanupArgs, Cli, Command, PrepareArgs, RunArgs, TargetArgs};
use crate::db::{Connection as _, Database, TargetUrl};
use crate::prepare::{self, PreparePlan};
use crate::report::{IntervalPrinter, JsonReport, Report, ReportOptions, TextReport};
use crate::result::{self, ResultDocument};
use crate::runner;
use crate::with_database;
use crate::workload::Workload;
use crate::{audit, conditions};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// An error for the user: one line, and the exit code it maps to.
#[derive(Debug)]
pub struct Failure {
    pub message: String,
    pub code: u8,
}

impl Failure {
    /// Bad input, unreachable or misconfigured target (exit 2).
    pub fn input(message: impl Into<String>) -> Self {
        Failure { message: message.into(), code: 2 }
    }
}

impl From<crate::db::DbError> for Failure {
    fn from(e: crate::db::DbError) -> Self {
        Failure::input(e.to_string())
    }
}

impl From<String> for Failure {
    fn from(s: String) -> Self {
        Failure::input(s)
    }
}

pub fn run(cli: Cli) -> Result<ExitCode, Failure> {
    match cli.command {
        Command::Audit(args) => audit_cmd(&args),
        Command::List => {
            print!("{}", list());
            Ok(ExitCode::SUCCESS)
        }
        Command::Prepare(args) => {
            let target = target(&args.target)?;
            with_database!(&target, |db| prepare_cmd(db, &args, &target))
        }
        Command::Cleanup(args) => {
            let target = target(&args.target)?;
            with_database!(&target, |db| cleanup_cmd(db, &args))
        }
        Command::Run(args) => {
            let target = target(&args.target)?;
            with_database!(&target, |db| run_cmd(db, &args, &target, false))
        }
        Command::Bench(args) => {
            let target = target(&args.target)?;
            with_database!(&target, |db| run_cmd(db, &args, &target, true))
        }
    }
}

fn target(args: &TargetArgs) -> Result<TargetUrl, Failure> {
    TargetUrl::parse(&args.target, |k| std::env::var(k).ok()).map_err(Failure::input)
}

fn prepare_cmd<D: Database>(db: Arc<D>, args: &PrepareArgs, target: &TargetUrl) -> Result<ExitCode, Failure> {
    let plan = PreparePlan {
        workload: args.workload.workload()?,
        oltp: args.workload.oltp(),
        distribution: args.workload.distribution()?,
        threads: args.threads.max(1),
        seed: args.workload.seed(),
        overwrite: args.overwrite,
    };
    plan.oltp.validate()?;
    create_if_missing(target)?;
    do_prepare(db, &plan, target)?;
    Ok(ExitCode::SUCCESS)
}

/// SQLite: prepare creates the file (other targets need an existing database).
fn create_if_missing(target: &TargetUrl) -> Result<(), Failure> {
    if target.dialect == crate::db::Dialect::Sqlite {
        crate::db::sqlite::SqliteDatabase::new(target)?.create_if_missing()?;
    }
    Ok(())
}

fn do_prepare<D: Database>(db: Arc<D>, plan: &PreparePlan, target: &TargetUrl) -> Result<(), Failure> {
    let rows = plan.workload.rows_to_load(&plan.oltp);
    let transport = db.transport();
    let bar = indicatif::ProgressBar::new(rows * plan.oltp.tables as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} rows  {per_sec}  ETA {eta}")
            .expect("valid template"),
    );
    let mut announced = false;
    let outcome = prepare::prepare(db, plan, &mut |done, total| {
        // Announced once the tables are checked, so a refusal stays a single line.
        if !announced {
            announced = true;
            bar.suspend(|| {
                eprintln!(
                    "Preparing {} table(s) of {rows} rows for {} on {} ({transport})",
                    plan.oltp.tables,
                    plan.workload.name(),
                    target.redacted(),
                );
                if rows == 0 && plan.oltp.table_size > 0 {
                    eprintln!(
                        "note: {} with --auto-inc=off prepares EMPTY tables, as sysbench does",
                        plan.workload.name()
                    );
                }
            });
        }
        bar.set_length(total);
        bar.set_position(done);
    });
    bar.finish_and_clear();
    let outcome = outcome?;
    eprintln!(
        "Prepared {} table(s), {} rows in {:.1} s ({:.0} rows/s, {} loader(s))",
        outcome.tables,
        outcome.rows,
        outcome.seconds,
        outcome.rows as f64 / outcome.seconds.max(1e-9),
        outcome.loaders
    );
    Ok(())
}

fn cleanup_cmd<D: Database>(db: Arc<D>, _args: &CleanupArgs) -> Result<ExitCode, Failure> {
    let out = prepare::cleanup(db)?;
    for t in &out.dropped {
        eprintln!("Dropped table {t}");
    }
    if out.dropped.is_empty() {
        eprintln!("No table created by fairbench to drop");
    }
    for t in &out.foreign {
        eprintln!("warning: left {t} alone: fairbench did not create it");
    }
    Ok(ExitCode::SUCCESS)
}

fn run_cmd<D: Database>(db: Arc<D>, args: &RunArgs, target: &TargetUrl, bench: bool) -> Result<ExitCode, Failure> {
    let plan = args.plan(db.dialect())?;
    if bench {
        create_if_missing(target)?;
    }
    let rt = crate::local_runtime();
    let mut admin = rt.block_on(db.connect())?;
    let (present, missing) = rt.block_on(prepare::table_status(&mut admin, &plan.oltp))?;
    if !missing.is_empty() {
        if bench && present.is_empty() {
            let pplan = PreparePlan {
                workload: plan.workload,
                oltp: plan.oltp.clone(),
                distribution: plan.distribution.clone(),
                threads: args.prepare_threads.unwrap_or(plan.threads).max(1),
                seed: plan.rand_seed,
                overwrite: false,
            };
            do_prepare(db.clone(), &pplan, target)?;
        } else {
            return Err(Failure::input(format!(
                "table {} does not exist in {}: run `fairbench prepare {} --target {}{}` first",
                missing[0],
                target.redacted(),
                plan.workload.name(),
                target.redacted(),
                if plan.oltp.tables > 1 { format!(" --tables {}", plan.oltp.tables) } else { String::new() }
            )));
        }
    }
    if plan.workload.writes() {
        if let Some(t) = present.iter().find(|t| !t.created_by_fairbench) {
            return Err(Failure::input(format!(
                "{} writes, and table {} was not created by fairbench: fairbench modifies only tables it created (prepare them with fairbench)",
                plan.workload.name(),
                t.name
            )));
        }
    }
    let server = rt.block_on(admin.server_info())?;
    let transport = db.transport();
    let table_names: Vec<String> = plan.oltp.table_names().collect();
    let declared = plan.workload.rows_to_load(&plan.oltp);
    let server_conditions = rt.block_on(conditions::server(&mut admin, target.dialect, &transport, server))?;
    let tables_at_start = rt.block_on(admin.table_sizes(&table_names, declared))?;
    drop(admin);

    let out_path = args.out.clone().unwrap_or_else(|| default_out(plan.workload));
    eprintln!(
        "fairbench {}: {} on {} {} via {transport}; {} clients, {}; distribution {}",
        env!("CARGO_PKG_VERSION"),
        plan.workload.name(),
        server_conditions.product,
        server_conditions.version,
        plan.threads,
        match plan.stop {
            s if s.time.is_some() && s.events.is_some() =>
                format!("{} s or {} events", s.time.unwrap().as_secs(), s.events.unwrap()),
            s if s.time.is_some() => format!("{} s", s.time.unwrap().as_secs()),
            s if s.events.is_some() => format!("{} events", s.events.unwrap()),
            _ => "until Ctrl-C".into(),
        },
        plan.distribution.describe()
    );
    let mut printer = IntervalPrinter::new(std::io::stderr(), plan.percentile);
    let outcome = runner::run(db.clone(), &plan, &mut printer).map_err(Failure::input)?;
    // The dataset after the run; a server that went away leaves it unknown.
    let tables_at_end = rt
        .block_on(async {
            let mut conn = db.connect().await?;
            conn.table_sizes(&table_names, declared).await
        })
        .unwrap_or_default();
    let mut doc = result::build::document(result::build::Inputs {
        plan: &plan,
        target,
        transport,
        begin_sql: db.begin_sql(plan.workload.writes()),
        server: server_conditions,
        tables_at_start,
        tables_at_end,
        outcome,
    });
    doc.audit = audit::audit(&doc);
    // Saved before printing: whatever happens next, the measurements are on disk.
    if let Some(dir) = out_path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| Failure::input(format!("cannot create {}: {e}", dir.display())))?;
    }
    doc.write(&out_path)?;
    let opts = ReportOptions { percentile: plan.percentile };
    if args.format == "json" {
        println!("{}", JsonReport.render(&doc, &opts));
    } else {
        print!("{}", TextReport.render(&doc, &opts));
        print!("\n{}", audit::render(&doc.audit));
    }
    eprintln!("Result saved to {}", out_path.display());
    let run = &doc.conditions.run;
    Ok(match run.status.as_str() {
        "completed" => ExitCode::SUCCESS,
        "interrupted" => ExitCode::from(130),
        _ => {
            eprintln!("error: {}", run.failure.as_deref().unwrap_or("the run failed"));
            ExitCode::from(1)
        }
    })
}

fn audit_cmd(args: &crate::cli::AuditArgs) -> Result<ExitCode, Failure> {
    let doc = ResultDocument::read(&args.result)?;
    let findings = audit::audit(&doc);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&findings).expect("findings serialize"));
    } else {
        print!("{}", audit::render(&findings));
    }
    Ok(ExitCode::SUCCESS)
}

fn default_out(w: Workload) -> PathBuf {
    let stamp = result::rfc3339(std::time::SystemTime::now()).replace([':', '-'], "").replace('.', "-");
    PathBuf::from("fairbench-results").join(format!("{}-{}.json", w.name(), stamp.trim_end_matches('Z')))
}

fn list() -> String {
    let mut s = String::from("Workloads (sysbench 1.0 OLTP, statement-exact):\n");
    for w in Workload::ALL {
        s.push_str(&format!("  {:<24}{}\n", w.name(), w.description()));
    }
    s.push_str(
        "\nWorkload options (defaults as sysbench; underscore spellings accepted):\n\
         \x20 --tables=1 --table-size=10000 --range-size=100 --point-selects=10 --simple-ranges=1\n\
         \x20 --sum-ranges=1 --order-ranges=1 --distinct-ranges=1 --index-updates=1 --non-index-updates=1\n\
         \x20 --delete-inserts=1 --range-selects=on --skip-trx=off --auto-inc=on --secondary=off\n\
         \x20 --create-secondary=on --mysql-storage-engine=innodb\n\
         Random ids: --rand-type=uniform|gaussian|special|pareto|zipfian (default uniform; sysbench 1.0.20 defaults to special)\n\
         \x20 --rand-spec-iter=12 --rand-spec-pct=1 --rand-spec-res=75 --rand-pareto-h=0.2 --rand-zipfian-exp=0.8 --rand-seed=0\n\
         Run options: --threads --time --events --warmup --report-interval --percentile --percentiles --out --ignore-errors\n\
         See `fairbench run --help`.\n",
    );
    s
}
