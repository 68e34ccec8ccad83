//! `fairbench k8s ...`: manifests that run fairbench on Kubernetes (docs/kubernetes.md).

use crate::k8s::K8sError;
use clap::{Args, Subcommand};

#[derive(Args, Debug, Clone)]
pub struct K8sArgs {
    #[command(subcommand)]
    pub command: K8sCommand,
}

#[derive(Subcommand, Debug, Clone)]
pub enum K8sCommand {
    /// Print an Indexed Job (YAML) that runs `bench`, `run` or `prepare` as --shards pods on
    /// different nodes, started together: `fairbench k8s job --shards 3 --image IMAGE --
    /// bench oltp_read_write --target mysql://USER@HOST:3306/DB`. The password comes from
    /// a Secret, never from the manifest.
    Job(JobArgs),
}

#[derive(Args, Debug, Clone)]
pub struct JobArgs {
    /// Pods (shards), each on a node of its own: the Job's completions and parallelism.
    #[arg(long, value_name = "N")]
    pub shards: u32,
    /// The fairbench container image (built from the repository's Containerfile).
    #[arg(long)]
    pub image: String,
    /// The Job's name, also its pods' `fairbench/job` label.
    #[arg(long, default_value = "fairbench")]
    pub name: String,
    /// The namespace (default: kubectl's current one).
    #[arg(long)]
    pub namespace: Option<String>,
    /// The Secret whose key `password` holds the database password (default: NAME-db).
    #[arg(long)]
    pub secret: Option<String>,
    /// CPU of each pod, requested and limited alike (guaranteed QoS).
    #[arg(long, default_value = "2")]
    pub cpu: String,
    /// Memory of each pod, requested and limited alike.
    #[arg(long, default_value = "1Gi")]
    pub memory: String,
    /// After `--`: bench, run or prepare and its options, as on a command line.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// The options of the `run`, `bench` or `prepare` the pods will run, parsed as fairbench
/// parses them in the pod (sysbench's spelled as `run` translates them): the target they
/// give (never from the environment) and the workload.
pub fn pod_run(command: &str, options: &[String]) -> Result<(String, String), K8sError> {
    use clap::parser::ValueSource;
    use clap::{CommandFactory, FromArgMatches};
    let mut argv = vec!["fairbench".to_string(), command.to_string()];
    argv.extend(options.iter().cloned());
    if super::sysbench::is_sysbench_line(&argv) {
        argv = super::sysbench::translate(&argv)
            .map_err(|message| K8sError::Options { command: command.into(), message })?
            .args;
    }
    let matches = super::Cli::command().try_get_matches_from(&argv).map_err(|e| clap_line(command, &e))?;
    let given = matches.subcommand().and_then(|(_, sub)| sub.value_source("targets"));
    if given != Some(ValueSource::CommandLine) {
        return Err(K8sError::NoTarget { command: command.into(), from_env: given == Some(ValueSource::EnvVariable) });
    }
    let cli = super::Cli::from_arg_matches(&matches).map_err(|e| clap_line(command, &e))?;
    match &cli.command {
        super::Command::Bench(a) | super::Command::Run(a) => {
            Ok((a.target.target().into(), a.workload.workload.clone()))
        }
        super::Command::Prepare(a) => Ok((a.target.target().into(), a.workload.workload.clone())),
        _ => Err(K8sError::ParsedAsOtherCommand(command.into())),
    }
}

/// clap's message in one line: its first line, the names it lists, its tip.
fn clap_line(command: &str, e: &clap::Error) -> K8sError {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        return K8sError::HelpOrVersion(command.into());
    }
    let rendered = e.to_string();
    let mut lines = rendered.lines().map(str::trim).filter(|l| !l.is_empty());
    let mut text = lines.next().unwrap_or("invalid options").trim_start_matches("error: ").to_string();
    let rest: Vec<&str> = lines.take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more")).collect();
    if text.ends_with(':') {
        text = format!(
            "{text} {}",
            rest.iter().filter(|l| !l.starts_with("tip:")).cloned().collect::<Vec<_>>().join(", ")
        );
    }
    if let Some(tip) = rest.iter().find(|l| l.starts_with("tip:")) {
        text = format!("{text} ({tip})");
    }
    K8sError::Options { command: command.into(), message: text }
}
