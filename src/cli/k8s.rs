//! `fairbench k8s ...`: manifests that run fairbench on Kubernetes (docs/kubernetes.md).

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
