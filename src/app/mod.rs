//! The commands: flags -> plan -> prepare/run -> result document -> report. The only module
//! that prints, apart from the report formats it calls.

mod ab;
mod check;
mod combine;
mod compare;
mod error;
mod k8s;
mod live;
mod own_tables;
mod probe;
mod recover;
mod report;
mod rerun;
mod run;
mod sandbox;
mod shard;
mod study;
mod sweep;
mod tables;
mod term;
mod verify;
use run::run_cmd;
use tables::{bulk, cleanup_cmd, do_prepare, prepare_cmd, prepared_checks, LoadMeter, LoadSettings};

use crate::audit;
use crate::cli::{Cli, Command};
use crate::db::follow::FollowPrimary;
use crate::db::{Database, DbError, Dialect, TargetUrl, UrlError};
pub use crate::measure::DatasetError;
use crate::model::{ResultDocument, ResultFileError};
use crate::model::{RunRequest, TargetRequest, WorkloadRequest};
use crate::plan::{PlanError, WorkloadPlan};
use crate::prepare::PrepareError;
use crate::runner::RunError;
use crate::with_database;
use crate::workload::{self, Workload};
pub use error::{OutputError, UsageError};
use std::process::ExitCode;
use std::sync::Arc;

/// Everything a command can fail with. The exit code is decided here, from the type.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Flags(#[from] crate::cli::FlagError),
    #[error(transparent)]
    Usage(#[from] UsageError),
    #[error(transparent)]
    Dataset(#[from] DatasetError),
    #[error(transparent)]
    Output(#[from] OutputError),
    #[error(transparent)]
    Refused(#[from] crate::measure::Refusal),
    #[error(transparent)]
    Recover(#[from] crate::recover::RecoverError),
    #[error(transparent)]
    Target(#[from] UrlError),
    #[error(transparent)]
    WorkloadFile(#[from] workload::file::LoadError),
    #[error(transparent)]
    WorkloadOptions(#[from] workload::OptionsError),
    #[error(transparent)]
    Generator(#[from] workload::generate::DrawError),
    #[error(transparent)]
    Db(#[from] DbError),
    #[error(transparent)]
    Prepare(#[from] PrepareError),
    #[error(transparent)]
    Run(#[from] RunError),
    #[error(transparent)]
    ResultFile(#[from] ResultFileError),
    #[error(transparent)]
    Sandbox(#[from] crate::sandbox::SandboxError),
    #[error(transparent)]
    Probe(#[from] crate::probe::ProbeError),
    #[error(transparent)]
    Shard(#[from] crate::shard::BarrierError),
    #[error(transparent)]
    Metrics(#[from] crate::metrics::MetricsError),
    #[error("cannot combine: {0}")]
    Combine(#[from] crate::combine::CombineError),
    #[error("k8s job: {0}")]
    K8s(#[from] crate::k8s::K8sError),
    #[error(transparent)]
    LogRecord(#[from] combine::LogRecordError),
    #[error(transparent)]
    Record(#[from] crate::timeline::record::ReadRecordError),
    #[error(transparent)]
    Study(#[from] crate::study::StudyFileError),
    #[error(transparent)]
    StudyCheck(#[from] crate::study::check::CheckError),
    #[error(transparent)]
    StudyDir(#[from] crate::study::dir::StudyDirError),
    #[error("cannot build the result from the run's record: {0}")]
    Build(#[from] crate::result::BuildError),
    #[error("{}: {why}", .result.display())]
    NotRerunnable { result: std::path::PathBuf, why: crate::cli::Unrepeatable },
}

impl Error {
    /// 2: bad input, unreachable or misconfigured target; 1: measured work was lost
    /// (a result could not be written); 130: interrupted before measuring.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Run(RunError::Interrupted) => 130,
            Error::ResultFile(ResultFileError::Write { .. }) | Error::Build(_) => 1,
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
        // Output piped into a reader that stopped (`| head`): not a bug. Anything measured was
        // saved before it printed; end as a program killed by SIGPIPE does.
        if msg.starts_with("failed printing to stdout") && msg.contains("Broken pipe") {
            std::process::exit(141);
        }
        let at = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        eprintln!("error: internal error (a bug in fairbench, please report it): {}{at}", msg.replace('\n', " "));
    }));
}

/// --quiet: informational lines on stderr are left out (the report, warnings and errors stay).
pub(crate) static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// An informational line on stderr, unless --quiet.
pub(crate) fn say(line: std::fmt::Arguments<'_>) {
    if !QUIET.load(std::sync::atomic::Ordering::Relaxed) {
        eprintln!("{line}");
    }
}

pub(crate) fn quiet() -> bool {
    QUIET.load(std::sync::atomic::Ordering::Relaxed)
}

pub fn run(cli: Cli) -> Result<ExitCode, Error> {
    QUIET.store(cli.quiet, std::sync::atomic::Ordering::Relaxed);
    match cli.command {
        Command::Audit(args) => audit_cmd(&args),
        Command::Compare(args) => compare::compare_cmd(&args),
        Command::Ab(args) => ab::ab_cmd(&args),
        Command::Sweep(args) => sweep::sweep_cmd(&args),
        Command::Report(args) => report::report_cmd(&args),
        Command::Export(args) => report::export_cmd(&args),
        Command::Show(args) => report::show_cmd(&args),
        Command::Combine(args) => combine::combine_cmd(&args),
        Command::Recover(args) => recover::recover_cmd(&args),
        Command::Rerun(args) => rerun::rerun_cmd(&args),
        Command::Check(args) => check::check_cmd(&args),
        // A bad --with is bad input: refused here, before any server is touched.
        Command::Probe(args) => probe::probe_cmd(&args.request()?),
        Command::Sandbox(args) => sandbox::sandbox_cmd(&args),
        Command::Study(args) => study::study_cmd(&args),
        Command::K8s(args) => k8s::k8s_cmd(&args),
        Command::Schema => {
            println!("{}", serde_json::to_string_pretty(&crate::model::json_schema()).expect("schema serializes"));
            Ok(ExitCode::SUCCESS)
        }
        Command::List(args) => {
            print!("{}", list(args.show.as_deref())?);
            Ok(ExitCode::SUCCESS)
        }
        Command::Completions(args) => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(args.shell, &mut cmd, "fairbench", &mut std::io::stdout());
            Ok(ExitCode::SUCCESS)
        }
        Command::Man(args) => {
            print!("{}", man_page(args.command.as_deref())?);
            Ok(ExitCode::SUCCESS)
        }
        Command::Prepare(args) => {
            let args = crate::model::PrepareRequest::from(&args);
            let target = target(&args.target)?;
            // Loaders announce LOCAL INFILE only when they may use it.
            let options = crate::db::ConnectOptions { local_infile: bulk(&args), ..connect_options(&args.target) };
            with_database!(&target, &options, |db| prepare_cmd(db, &args, &target))
        }
        Command::Cleanup(args) => {
            let target = target(&(&args.target).into())?;
            with_database!(&target, &connect_options(&(&args.target).into()), |db| cleanup_cmd(db, &args, &target))
        }
        Command::Verify(args) => {
            let target = target(&(&args.target).into())?;
            with_database!(&target, &connect_options(&(&args.target).into()), |db| verify::verify_cmd(
                &*db, &args, &target
            ))
        }
        Command::Run(args) => run_or_bench(&RunRequest::from(&args), false),
        Command::Bench(args) => run_or_bench(&RunRequest { bench: true, ..RunRequest::from(&args) }, true),
    }
}

fn run_or_bench(args: &RunRequest, bench: bool) -> Result<ExitCode, Error> {
    let urls = targets(&args.target)?;
    let options = connect_options(&args.target);
    with_database!(&urls[0], &options, |db| run_cmd(follow(db, &urls, &options)?, args, &urls, bench))
}

/// How connections are opened: deadlines, packet limit, cleartext consent.
fn connect_options(args: &TargetRequest) -> crate::db::ConnectOptions {
    crate::db::ConnectOptions {
        connect_timeout: std::time::Duration::from_secs_f64(args.connect.connect_timeout),
        max_packet: args.connect.max_packet,
        allow_cleartext_password: args.connect.allow_cleartext_password,
        prepared_statements: args.ps,
        local_infile: false,
    }
}

/// The target URL; a password not in the URL comes from --password-file, then
/// FAIRBENCH_PASSWORD, then MYSQL_PWD / PGPASSWORD.
fn target(args: &TargetRequest) -> Result<TargetUrl, Error> {
    if args.targets.len() > 1 {
        return Err(UsageError::OneTarget.into());
    }
    parse_target(args.target(), args)
}

fn parse_target(raw: &str, args: &TargetRequest) -> Result<TargetUrl, Error> {
    let file = args.password_file.as_deref();
    Ok(TargetUrl::parse_with_password_file(raw, file, |k| std::env::var(k).ok())?)
}

/// run and bench: every --target, all servers of one kind.
fn targets(args: &TargetRequest) -> Result<Vec<TargetUrl>, Error> {
    let urls = TargetUrl::parse_nodes(&args.targets, args.password_file.as_deref())?;
    if urls.len() > 1 && urls[0].embedded() {
        return Err(UsageError::MixedNodes.into());
    }
    Ok(urls)
}

/// The nodes of `urls` as one target whose connections go to the node that takes writes
/// (one URL: that server, as it is).
pub(super) fn follow<D: Database>(
    first: Arc<D>,
    urls: &[TargetUrl],
    options: &crate::db::ConnectOptions,
) -> Result<Arc<FollowPrimary<D>>, Error> {
    let mut nodes = vec![first];
    for u in &urls[1..] {
        nodes.push(Arc::new(D::open(u, options)?));
    }
    Ok(Arc::new(FollowPrimary::new(nodes, urls.iter().map(TargetUrl::redacted).collect())))
}

/// The workload named on the command line: a built-in, or a file compiled for `dialect`.
fn workload_plan(args: &WorkloadRequest, dialect: Dialect) -> Result<WorkloadPlan, Error> {
    crate::measure::workload_plan(args, dialect)
}

/// The roff manual page of fairbench, or of one of its commands, from the flag definitions.
fn man_page(command: Option<&str>) -> Result<String, Error> {
    let top = <Cli as clap::CommandFactory>::command();
    let cmd = match command {
        None => top,
        Some(name) => {
            let known: Vec<String> = top.get_subcommands().map(|c| c.get_name().to_string()).collect();
            let sub = top
                .find_subcommand(name)
                .cloned()
                .ok_or_else(|| UsageError::NoSuchCommand { name: name.to_string(), known })?;
            // clap names take &'static str: the page's name is leaked once per process.
            sub.name(&*Box::leak(format!("fairbench-{name}").into_boxed_str()))
        }
    };
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd).render(&mut out).map_err(OutputError::Manual)?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Reads a result file; one written before the drivers recorded the server's facts gets
/// them from the settings it kept, so audit and compare judge every result the same way.
fn read_result(path: &std::path::Path) -> Result<ResultDocument, ResultFileError> {
    ResultDocument::read(path).map(with_facts)
}

fn with_facts(mut doc: ResultDocument) -> ResultDocument {
    let s = &mut doc.conditions.server;
    if s.facts.is_none() {
        s.facts = Some(crate::db::facts::of(doc.target.driver, &s.product, &s.variables));
    }
    doc
}

fn audit_cmd(args: &crate::cli::AuditArgs) -> Result<ExitCode, Error> {
    let doc = read_result(&args.result)?;
    let findings = audit::audit(&doc);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&findings).expect("findings serialize"));
    } else {
        print!("{}", crate::report::findings("Audit", &findings));
    }
    Ok(ExitCode::SUCCESS)
}

fn list(show: Option<&str>) -> Result<String, Error> {
    use crate::workload::recipes;
    if let Some(name) = show {
        if let Some(text) = recipes::find(name) {
            return Ok(text.to_string());
        }
        let w = Workload::parse(name).ok_or_else(|| UsageError::NotAWorkloadOrRecipe { name: name.to_string() })?;
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

#[cfg(test)]
mod tests {
    use super::{list, man_page, target, targets, Error, TargetRequest, UsageError};

    fn nodes(urls: &[&str]) -> TargetRequest {
        TargetRequest { targets: urls.iter().map(|u| u.to_string()).collect(), ..Default::default() }
    }

    #[test]
    fn the_commands_refusals_are_typed() {
        let two = nodes(&["mysql://root@127.0.0.1:3306/a", "mysql://root@127.0.0.1:3307/a"]);
        assert!(matches!(target(&two), Err(Error::Usage(UsageError::OneTarget))));
        let mixed = nodes(&["mysql://root@127.0.0.1:3306/a", "postgres://u@127.0.0.1:5432/a"]);
        assert!(matches!(targets(&mixed), Err(Error::Target(crate::db::UrlError::MixedNodes))));
        let e = list(Some("oltp_nosuch")).unwrap_err();
        assert!(matches!(&e, Error::Usage(UsageError::NotAWorkloadOrRecipe { name }) if name == "oltp_nosuch"));
        let e = man_page(Some("runn")).unwrap_err();
        assert!(
            matches!(&e, Error::Usage(UsageError::NoSuchCommand { known, .. }) if known.iter().any(|k| k == "run"))
        );
        assert!(e.to_string().starts_with("no command \"runn\": the commands are "), "{e}");
    }
}
