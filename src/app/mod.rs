//! The commands: flags -> plan -> prepare/run -> result document -> report. The only module
//! that prints, apart from the report formats it calls.

mod check;

use crate::cli::{CleanupArgs, Cli, Command, PrepareArgs, RunArgs, TargetArgs, WorkloadArgs};
use crate::collector::{Collector, Progress};
use crate::db::{Connection as _, Database, DbError, Dialect, TargetUrl, UrlError};
use crate::model::{
    IntervalStats, ResultDocument, ResultFileError, RunStatus, ServerConditions, StatementMode, TableSize,
};
use crate::plan::{ConfigError, RunPlan, WorkloadPlan};
use crate::prepare::{self, PrepareError, PreparePlan};
use crate::report::{IntervalPrinter, JsonReport, Report, ReportOptions, SysbenchReport, TextReport};
use crate::runner::{self, RunError};
use crate::with_database;
use crate::workload::schema::Ownership;
use crate::workload::{self, Workload};
use crate::{audit, conditions, result};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// Everything a command can fail with. The exit code is decided here, from the type.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Target(#[from] UrlError),
    #[error(transparent)]
    Db(#[from] DbError),
    #[error(transparent)]
    Prepare(#[from] PrepareError),
    #[error(transparent)]
    Run(#[from] RunError),
    #[error(transparent)]
    ResultFile(#[from] ResultFileError),
}

impl Error {
    /// 2: bad input, unreachable or misconfigured target; 1: measured work was lost
    /// (a result could not be written); 130: interrupted before measuring.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Run(RunError::Interrupted) => 130,
            Error::ResultFile(ResultFileError::Write { .. }) => 1,
            _ => 2,
        }
    }
}

/// A panic is a bug: it becomes one line, never a backtrace. Panics in worker and loader
/// threads are reported by the run or prepare they break (status failed, non-zero exit).
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let name = std::thread::current().name().unwrap_or("").to_string();
        if name.starts_with("fairbench-") {
            return;
        }
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic".into());
        let at = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        eprintln!("error: internal error (a bug in fairbench, please report it): {}{at}", msg.replace('\n', " "));
    }));
}

pub fn run(cli: Cli) -> Result<ExitCode, Error> {
    match cli.command {
        Command::Audit(args) => audit_cmd(&args),
        Command::Check(args) => check::check_cmd(&args),
        Command::Schema => {
            println!("{}", serde_json::to_string_pretty(&crate::model::json_schema()).expect("schema serializes"));
            Ok(ExitCode::SUCCESS)
        }
        Command::List(args) => {
            print!("{}", list(args.show.as_deref())?);
            Ok(ExitCode::SUCCESS)
        }
        Command::Prepare(args) => {
            let target = target(&args.target)?;
            with_database!(&target, &connect_options(&args.target), |db| prepare_cmd(db, &args, &target))
        }
        Command::Cleanup(args) => {
            let target = target(&args.target)?;
            with_database!(&target, &connect_options(&args.target), |db| cleanup_cmd(db, &args, &target))
        }
        Command::Run(args) => {
            let target = target(&args.target)?;
            with_database!(&target, &connect_options(&args.target), |db| run_cmd(db, &args, &target, false))
        }
        Command::Bench(args) => {
            let target = target(&args.target)?;
            with_database!(&target, &connect_options(&args.target), |db| run_cmd(db, &args, &target, true))
        }
    }
}

/// How connections are opened: deadlines, packet limit, cleartext consent.
fn connect_options(args: &TargetArgs) -> crate::db::ConnectOptions {
    crate::db::ConnectOptions {
        connect_timeout: args.connect.connect_timeout,
        max_packet: args.connect.max_packet,
        allow_cleartext_password: args.connect.allow_cleartext_password,
        prepared_statements: args.ps,
    }
}

/// The target URL; a password not in the URL comes from --password-file, then
/// FAIRBENCH_PASSWORD, then MYSQL_PWD / PGPASSWORD.
fn target(args: &TargetArgs) -> Result<TargetUrl, Error> {
    let file = args.password_file.as_deref();
    Ok(TargetUrl::parse_with_password_file(&args.target, file, |k| std::env::var(k).ok()).map_err(UrlError)?)
}

/// The workload named on the command line: a built-in, or a file compiled for `dialect`.
fn workload_plan(args: &WorkloadArgs, dialect: Dialect) -> Result<WorkloadPlan, Error> {
    if !workload::file::is_file(&args.workload) {
        return Ok(args.builtin(dialect)?);
    }
    let f = workload::file::load(std::path::Path::new(&args.workload), dialect, &args.set).map_err(ConfigError)?;
    Ok(WorkloadPlan::File(Arc::new(f)))
}

/// How prepare loads, whatever the workload.
struct LoadSettings {
    threads: u32,
    seed: u64,
    distribution: crate::random::DistributionSpec,
    overwrite: bool,
}

fn prepare_cmd<D: Database>(db: Arc<D>, args: &PrepareArgs, target: &TargetUrl) -> Result<ExitCode, Error> {
    let workload = workload_plan(&args.workload, target.dialect)?;
    if let Some(o) = workload.oltp() {
        o.validate().map_err(ConfigError)?;
    }
    let settings = LoadSettings {
        threads: args.threads.max(1),
        seed: args.workload.seed(),
        distribution: args.workload.distribution()?,
        overwrite: args.overwrite,
    };
    db.create_if_missing()?;
    do_prepare(db, &workload, &settings, target)?;
    Ok(ExitCode::SUCCESS)
}

fn do_prepare<D: Database>(
    db: Arc<D>,
    workload: &WorkloadPlan,
    settings: &LoadSettings,
    target: &TargetUrl,
) -> Result<(), Error> {
    let transport = db.transport();
    let tables = workload.table_names();
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} rows  {per_sec}  ETA {eta}")
            .expect("valid template"),
    );
    let mut announced = false;
    let mut progress = |done, total| {
        // Announced once the tables are checked, so a refusal stays a single line.
        if !announced {
            announced = true;
            bar.suspend(|| {
                eprintln!(
                    "Preparing {} table(s) ({}) for {} on {} ({transport})",
                    tables.len(),
                    tables.join(", "),
                    workload.name(),
                    target.redacted(),
                );
                if let WorkloadPlan::Sysbench { workload, oltp, .. } = workload {
                    if workload.rows_to_load(oltp) == 0 && oltp.table_size > 0 {
                        eprintln!(
                            "note: {} with --auto-inc=off prepares EMPTY tables, as sysbench does",
                            workload.name()
                        );
                    }
                }
            });
        }
        bar.set_length(total);
        bar.set_position(done);
    };
    let outcome = match workload {
        WorkloadPlan::Sysbench { workload, oltp, .. } => {
            let plan = PreparePlan {
                workload: *workload,
                oltp: oltp.clone(),
                distribution: settings.distribution.clone(),
                threads: settings.threads,
                seed: settings.seed,
                overwrite: settings.overwrite,
            };
            prepare::prepare(db, &plan, &mut progress)
        }
        WorkloadPlan::File(f) => {
            let opts = prepare::tables::LoadOptions {
                threads: settings.threads,
                seed: settings.seed,
                distribution: settings.distribution.clone(),
                overwrite: settings.overwrite,
            };
            prepare::tables::prepare(db, &f.program, &opts, &mut progress)
        }
    };
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

fn cleanup_cmd<D: Database>(db: Arc<D>, args: &CleanupArgs, target: &TargetUrl) -> Result<ExitCode, Error> {
    let out = match args.workload.as_deref().filter(|w| workload::file::is_file(w)) {
        Some(path) => {
            let f = workload::file::load(std::path::Path::new(path), target.dialect, &[]).map_err(ConfigError)?;
            prepare::tables::cleanup(db, &f.program)?
        }
        None => prepare::cleanup(db, args.tables)?,
    };
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

/// What `run` reads before measuring.
struct Before {
    server: ServerConditions,
    tables: Vec<TableSize>,
    /// Tables present that fairbench did not create.
    foreign: Vec<String>,
}

fn run_cmd<D: Database>(db: Arc<D>, args: &RunArgs, target: &TargetUrl, bench: bool) -> Result<ExitCode, Error> {
    let workload = workload_plan(&args.workload, target.dialect)?;
    let plan = args.plan(db.dialect(), workload)?;
    runner::limits::check_clients(db.blocking(), plan.threads, plan.loop_model.is_open()).map_err(RunError::Limits)?;
    // Before any load: a result that cannot be written is found now, not after the run.
    let out_path = args.out.clone().unwrap_or_else(|| default_out(plan.workload.name()));
    check_out(&out_path, &plan)?;
    if bench {
        db.create_if_missing()?;
    }
    let before = check_dataset(db.clone(), args, &plan, target, bench)?;
    announce(&plan, &before.server, &db.transport(), args.target.ps);

    let every = plan.report_interval_s.unwrap_or(1);
    // sysbench's format: its interval lines on stdout, where its parsers read them.
    let mut progress = TerminalProgress(match args.format.as_str() {
        "sysbench" => {
            IntervalPrinter::sysbench(Box::new(std::io::stdout()) as Box<dyn std::io::Write>, plan.percentile, every)
        }
        _ => IntervalPrinter::new(Box::new(std::io::stderr()), plan.percentile, every),
    });
    let statements = plan.workload.statements();
    let transactions = plan.workload.transactions();
    let mut collector = Collector::new(
        &statements,
        &transactions,
        plan.loop_model.is_open(),
        plan.threads,
        plan.report_interval_s,
        &mut progress,
    )
    .window_percentiles(&plan.percentiles);
    let outcome = runner::run(db.clone(), &plan, &mut collector)?;
    let collected = collector.finish();

    // The dataset after the run; a server that went away leaves it unknown.
    let table_names = plan.workload.table_names();
    let declared = plan.workload.declared_rows();
    let limit = match outcome.status {
        RunStatus::Failed => runner::AFTER_FAILURE_TIMEOUT,
        _ => plan.admin_timeout,
    };
    let tables_at_end = runner::bounded(&crate::local_runtime(), limit, async {
        let mut conn = db.connect().await?;
        conn.table_sizes(&table_names, declared).await
    })
    .unwrap_or_default();
    let checks = runner::checks::run(&*db, &plan.workload.program().checks, limit);
    let setting = result::Setting {
        plan: &plan,
        dialect: target.dialect,
        redacted_url: target.redacted(),
        transport: db.transport(),
        begin_sql: [db.begin_sql(false), db.begin_sql(true)],
        new_row_id: db.new_row_id(),
        server: before.server,
        host: conditions::host::read(),
        command_line: crate::db::url::redact_args(std::env::args()),
        tables_at_start: before.tables,
        foreign_tables: before.foreign,
        statements: if args.target.ps { StatementMode::Prepared } else { StatementMode::Text },
        tables_at_end,
    };
    let mut doc = result::build(setting, outcome, collected);
    doc.checks = checks;
    doc.audit = audit::audit(&doc);
    save_and_print(&doc, &out_path, args)
}

/// The command that prepares `plan`'s tables, for messages.
fn prepare_hint(plan: &RunPlan, target: &TargetUrl, overwrite: bool) -> String {
    let mut cmd = match &plan.workload {
        WorkloadPlan::Sysbench { workload, oltp, .. } => {
            let tables = if oltp.tables > 1 { format!(" --tables {}", oltp.tables) } else { String::new() };
            format!("fairbench prepare {}{tables}", workload.name())
        }
        WorkloadPlan::File(f) => format!("fairbench prepare {}", f.path),
    };
    if overwrite {
        cmd.push_str(" --overwrite");
    }
    format!("{cmd} --target {}", target.redacted())
}

/// The tables exist (bench prepares them when all are missing) and may be written; then
/// the server's conditions and the dataset's size before the run.
fn check_dataset<D: Database>(
    db: Arc<D>,
    args: &RunArgs,
    plan: &RunPlan,
    target: &TargetUrl,
    bench: bool,
) -> Result<Before, Error> {
    let rt = crate::local_runtime();
    let mut admin = rt.block_on(db.connect())?;
    let server_at = format!("the server at {}", db.transport().address);
    let limit = plan.admin_timeout;
    let (present, missing) = match &plan.workload {
        WorkloadPlan::Sysbench { oltp, .. } => {
            let (present, missing) = runner::bounded_result(
                &rt,
                limit,
                &server_at,
                "reading its tables",
                prepare::table_status(&mut admin, oltp),
            )?;
            let owned = present.into_iter().map(|t| {
                let owner = prepare::ownership(&*db, &t.name, &t.definition);
                (t, owner)
            });
            (owned.collect::<Vec<_>>(), missing)
        }
        WorkloadPlan::File(f) => runner::bounded_result(
            &rt,
            limit,
            &server_at,
            "reading its tables",
            prepare::tables::status(&*db, &mut admin, &f.program),
        )?,
    };
    if !missing.is_empty() {
        if bench && present.is_empty() {
            let settings = LoadSettings {
                threads: args.prepare_threads.unwrap_or(plan.threads).max(1),
                seed: plan.rand_seed,
                distribution: plan.distribution.clone(),
                overwrite: false,
            };
            do_prepare(db.clone(), &plan.workload, &settings, target)?;
        } else {
            return Err(ConfigError(format!(
                "table {} does not exist in {}: run `{}` first",
                missing[0],
                target.redacted(),
                prepare_hint(plan, target, false)
            ))
            .into());
        }
    }
    // Only sysbench's own tables may be someone else's: a workload file's are fairbench's.
    let foreign_allowed = args.allow_foreign_tables && matches!(plan.workload, WorkloadPlan::Sysbench { .. });
    if args.allow_foreign_tables && !foreign_allowed {
        return Err(
            ConfigError("--allow-foreign-tables applies to the sysbench workloads' sbtest tables only".into()).into()
        );
    }
    let foreign = present.iter().filter(|(_, o)| *o == Ownership::Foreign).map(|(t, _)| t.name.clone()).collect();
    for (t, owner) in &present {
        match owner {
            Ownership::Complete => {}
            Ownership::Incomplete => {
                return Err(PrepareError::Refused(format!(
                    "table {} is not completely prepared (an interrupted prepare, or an older fairbench): rebuild it with `{}`",
                    t.name,
                    prepare_hint(plan, target, true)
                ))
                .into())
            }
            Ownership::Foreign if plan.workload.writes() && !foreign_allowed => {
                return Err(PrepareError::Refused(format!(
                    "{} writes, and table {} was not created by fairbench: fairbench modifies only tables it created (prepare them with fairbench, or give --allow-foreign-tables to write sbtest tables another tool prepared)",
                    plan.workload.name(),
                    t.name
                ))
                .into())
            }
            Ownership::Foreign => {}
        }
    }
    let info = runner::bounded_result(&rt, limit, &server_at, "reading its version", admin.server_info())?;
    let server = runner::bounded_result(
        &rt,
        limit,
        &server_at,
        "reading its settings",
        conditions::server(&*db, &mut admin, info),
    )?;
    let table_names = plan.workload.table_names();
    let rows = plan.workload.declared_rows();
    let tables =
        runner::bounded_result(&rt, limit, &server_at, "reading table sizes", admin.table_sizes(&table_names, rows))?;
    Ok(Before { server, tables, foreign })
}

fn announce(plan: &RunPlan, server: &ServerConditions, transport: &crate::model::Transport, ps: bool) {
    let stop = match (plan.stop.time, plan.stop.events) {
        (Some(t), Some(e)) => format!("{} s or {e} events", t.as_secs()),
        (Some(t), None) => format!("{} s", t.as_secs()),
        (None, Some(e)) => format!("{e} events"),
        (None, None) => "until Ctrl-C".into(),
    };
    eprintln!(
        "fairbench {}: {} on {} {} via {transport}{}; {} clients, {stop}; distribution {}",
        env!("CARGO_PKG_VERSION"),
        plan.workload.name(),
        server.product,
        server.version,
        if ps { "" } else { ", plain-text queries (--ps=off)" },
        plan.threads,
        plan.distribution.describe()
    );
}

/// The result file's directory exists (or is created), is writable, and has room for the
/// result of this plan (about 6 KB per measured second plus 1 MB).
fn check_out(out: &std::path::Path, plan: &RunPlan) -> Result<(), Error> {
    let fail = |path: &std::path::Path, e: std::io::Error| {
        Error::from(ConfigError(format!("cannot write the result to {}: {e} (choose another --out)", path.display())))
    };
    if std::fs::metadata(out).is_ok_and(|m| !m.is_file()) {
        return Ok(()); // a device or pipe (/dev/null): written in place
    }
    let dir = match out.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(d) => d.to_path_buf(),
        None => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(|e| fail(out, e))?;
    let probe = dir.join(format!(".fairbench-write-check-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| fail(out, e))?;
    let _ = std::fs::remove_file(&probe);
    let seconds = plan.stop.time.map(|t| t.as_secs()).unwrap_or(3600) + plan.warmup_s as u64;
    let needed = (1 << 20) + seconds.min(30 * 86_400) * 6_000;
    if let Some(free) = free_bytes(&dir) {
        if free < needed {
            return Err(ConfigError(format!(
                "{} has {} MB free; the result of this run needs about {} MB: free space or choose another --out",
                dir.display(),
                free >> 20,
                (needed >> 20).max(1)
            ))
            .into());
        }
    }
    Ok(())
}

fn free_bytes(dir: &std::path::Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs fills the struct we pass; the path is NUL-terminated.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    (unsafe { libc::statvfs(c.as_ptr(), &mut st) } == 0).then(|| st.f_bavail as u64 * st.f_frsize as u64)
}

/// Saved before printing: whatever happens next, the measurements are on disk. If `--out`
/// fails now (disk full, directory gone), the result goes to a fallback file.
fn save_and_print(doc: &ResultDocument, out_path: &std::path::Path, args: &RunArgs) -> Result<ExitCode, Error> {
    let saved_to = match doc.write(out_path) {
        Ok(()) => out_path.to_path_buf(),
        Err(first) => {
            let name =
                out_path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "result.json".into());
            let fallback = std::env::temp_dir().join(format!("fairbench-fallback-{}-{name}", std::process::id()));
            if doc.write(&fallback).is_err() {
                return Err(first.into());
            }
            eprintln!("warning: {first}; the result was saved to {} instead", fallback.display());
            fallback
        }
    };
    let opts = ReportOptions { percentile: args.percentile };
    match args.format.as_str() {
        "json" => println!("{}", JsonReport.render(doc, &opts)),
        "sysbench" => {
            print!("\n{}", SysbenchReport { histogram: args.histogram }.render(doc, &opts));
            if !doc.audit.is_empty() {
                eprintln!(
                    "audit: {} finding(s) about these numbers: fairbench audit {}",
                    doc.audit.len(),
                    saved_to.display()
                );
            }
        }
        _ => {
            print!("{}", TextReport.render(doc, &opts));
            if args.histogram {
                print!("\n{}", SysbenchReport::histogram_only(doc));
            }
            print!("\n{}", audit::render(&doc.audit));
        }
    }
    eprintln!("Result saved to {}", saved_to.display());
    let run = &doc.conditions.run;
    let failed_checks: Vec<&str> = doc.checks.iter().filter(|c| !c.passed).map(|c| c.name.as_str()).collect();
    Ok(match run.status {
        RunStatus::Completed if !failed_checks.is_empty() => {
            eprintln!("error: check failed: {} (see the result's checks)", failed_checks.join(", "));
            ExitCode::from(1)
        }
        RunStatus::Completed => ExitCode::SUCCESS,
        RunStatus::Interrupted => ExitCode::from(130),
        RunStatus::Failed => {
            eprintln!("error: {}", run.failure.as_deref().unwrap_or("the run failed"));
            ExitCode::from(1)
        }
    })
}

/// The terminal's view of a run: sysbench's "Threads started!" and interval lines.
struct TerminalProgress<W: std::io::Write>(IntervalPrinter<W>);

impl<W: std::io::Write> Progress for TerminalProgress<W> {
    fn started(&mut self) {
        self.0.started();
    }
    fn window(&mut self, s: &IntervalStats) {
        self.0.print(s);
    }
}

fn audit_cmd(args: &crate::cli::AuditArgs) -> Result<ExitCode, Error> {
    let doc = ResultDocument::read(&args.result)?;
    let findings = audit::audit(&doc);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&findings).expect("findings serialize"));
    } else {
        print!("{}", audit::render(&findings));
    }
    Ok(ExitCode::SUCCESS)
}

fn default_out(name: &str) -> PathBuf {
    let stamp = crate::model::rfc3339(std::time::SystemTime::now()).replace([':', '-'], "").replace('.', "-");
    PathBuf::from("fairbench-results").join(format!("{name}-{}.json", stamp.trim_end_matches('Z')))
}

fn list(show: Option<&str>) -> Result<String, Error> {
    use crate::workload::recipes;
    if let Some(name) = show {
        if let Some(text) = recipes::find(name) {
            return Ok(text.to_string());
        }
        let w = Workload::parse(name).ok_or_else(|| {
            ConfigError(format!("{name:?} is neither a built-in workload nor a recipe (see `fairbench list`)"))
        })?;
        let params = crate::workload::builtin::params(w, &crate::workload::OltpOptions::default());
        let shown: Vec<String> =
            params.iter().map(|(k, v)| format!("{k}={}", crate::workload::program::scalar_text(v))).collect();
        let mut s = format!(
            "# {}: {}\n# The built-in definition below, compiled with (default flags): {}\n\n",
            w.name(),
            w.description(),
            shown.join(" ")
        );
        s.push_str(crate::workload::builtin::SYSBENCH);
        return Ok(s);
    }
    let mut s = String::from("Workloads (sysbench 1.0 OLTP, statement-exact):\n");
    for w in Workload::ALL {
        s.push_str(&format!("  {:<24}{}\n", w.name(), w.description()));
    }
    s.push_str("\nRecipes (workload files of published studies; `fairbench list --show NAME` prints one):\n");
    for (name, text) in recipes::RECIPES {
        s.push_str(&format!("  {name:<24}{}\n", recipes::description(text)));
    }
    s.push_str("  Your own: any PATH.toml (docs/workloads.md); --set NAME=VALUE overrides its [params].\n");
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
    Ok(s)
}
