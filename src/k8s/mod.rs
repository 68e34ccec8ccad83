//! `fairbench k8s job`: the Kubernetes Indexed Job that runs one command as N shards, built
//! from typed objects (objects.rs) and written as YAML. No I/O here.
//!
//! Every pod of the Job runs the same command with `--shard N`; each reads its index from
//! JOB_COMPLETION_INDEX (set by Kubernetes) and the run's shard key from the Job's uid.

mod objects;

use objects::{
    Affinity, Capabilities, Container, EnvVar, EnvVarSource, Job, JobSpec, LabelSelector, ObjectFieldSelector,
    ObjectMeta, PodAffinityTerm, PodAntiAffinity, PodSpec, PodTemplateSpec, ResourceRequirements, SeccompProfile,
    SecretKeySelector, SecurityContext,
};
use std::collections::BTreeMap;

/// Where each shard writes its result (the log carries it too, between the markers).
pub const RESULT_PATH: &str = "/tmp/fairbench-result.json";

/// The label every fairbench pod carries, and the one naming its Job.
pub const NAME_LABEL: &str = "app.kubernetes.io/name";
pub const JOB_LABEL: &str = "fairbench/job";

/// Kubernetes refuses an Indexed Job with more completions than this.
pub const MAX_SHARDS: u32 = 100_000;

/// Why no Job is written: a request the API server would refuse, or a command the pods
/// could not run as shards.
#[derive(Debug, thiserror::Error)]
pub enum K8sError {
    #[error("--shards {0} is not between 1 and {MAX_SHARDS}")]
    ShardCount(u32),
    #[error("{flag} {value:?} is not a Kubernetes name: lowercase letters, digits and -, at most 63, starting and ending with a letter or digit")]
    NotALabel { flag: String, value: String },
    #[error("{flag} {value:?} is not a Kubernetes name: lowercase letters, digits, - and ., at most 253")]
    NotASubdomain { flag: String, value: String },
    #[error("--image {0:?} is not an image reference")]
    NotAnImage(String),
    #[error("{flag} {value:?} is not a positive Kubernetes quantity (e.g. 2, 500m, 1Gi)")]
    NotAQuantity { flag: String, value: String },
    #[error("cannot write the manifest: {0}")]
    Manifest(serde_norway::Error),
    #[error("no command after --: give bench, run or prepare and its options, e.g. `-- bench oltp_read_write --target mysql://USER@HOST:3306/DB`")]
    NoCommand,
    #[error("the command after -- is {0:?}: a Job runs bench, run or prepare")]
    NotAJobCommand(String),
    #[error("a Job runs bench, run or prepare, not {0}")]
    ParsedAsOtherCommand(String),
    #[error("{0} is set by the Job (every pod gets --shard N, and run and bench --print-result --out {RESULT_PATH}): leave it out")]
    SetByTheJob(String),
    #[error("{flag} is refused: the pods take the password from the Secret {secret} (key password), never from the manifest")]
    PasswordFlag { flag: String, secret: String },
    #[error("the --target URL carries a password (user:pass@), which the manifest would show: give mysql://USER@HOST:PORT/DB and put the password in the Secret {0}")]
    PasswordInTarget(String),
    /// clap's or the sysbench translation's message, already in one line.
    #[error("the options of {command}: {message}")]
    Options { command: String, message: String },
    #[error("--help and --version are not options a Job can run (see `fairbench {0} --help`)")]
    HelpOrVersion(String),
    #[error("give the database with --target mysql://USER@HOST:PORT/DB or postgres://... after {command}{}", if *.from_env { " (the pods do not see this shell's FAIRBENCH_TARGET)" } else { "" })]
    NoTarget { command: String, from_env: bool },
    /// The target URL's own error (db::url's; this room knows no database).
    #[error("{0}")]
    Target(Box<dyn std::error::Error + Send + Sync>),
    #[error("--target is a SQLite file, which pods cannot share: shards need a server (mysql:// or postgres://)")]
    SqliteTarget,
}

/// What the Job runs, as the user asked for it (the inner options already validated).
#[derive(Clone, Debug)]
pub struct JobRequest {
    pub name: String,
    pub namespace: Option<String>,
    pub shards: u32,
    pub image: String,
    /// The Secret holding the database password under the key `password`.
    pub secret: String,
    pub cpu: String,
    pub memory: String,
    /// bench, run or prepare.
    pub command: String,
    pub options: Vec<String>,
}

impl JobRequest {
    /// The container's arguments: the command as given, then what makes it a shard (and, for
    /// a command that writes a result, the result on stdout for `kubectl logs`).
    pub fn args(&self) -> Vec<String> {
        let mut args = vec![self.command.clone()];
        args.extend(self.options.iter().cloned());
        args.extend(["--shard".into(), self.shards.to_string()]);
        if self.command != "prepare" {
            args.extend(["--print-result".into(), "--out".into(), RESULT_PATH.into()]);
        }
        args
    }

    /// The labels of the Job and of its pods (the anti-affinity selects on them).
    pub fn labels(&self) -> BTreeMap<String, String> {
        BTreeMap::from([(NAME_LABEL.to_string(), "fairbench".to_string()), (JOB_LABEL.to_string(), self.name.clone())])
    }

    /// The names, sizes and count, checked as the API server would check them, so a bad
    /// one fails here rather than at `kubectl apply`.
    pub fn validate(&self) -> Result<(), K8sError> {
        if self.shards < 1 || self.shards > MAX_SHARDS {
            return Err(K8sError::ShardCount(self.shards));
        }
        // The name is also a label value (at most 63 characters).
        dns_label("--name", &self.name)?;
        if let Some(ns) = &self.namespace {
            dns_label("--namespace", ns)?;
        }
        dns_subdomain("--secret", &self.secret)?;
        if self.image.is_empty() || self.image.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(K8sError::NotAnImage(self.image.clone()));
        }
        quantity("--cpu", &self.cpu)?;
        quantity("--memory", &self.memory)?;
        Ok(())
    }

    /// The Job object.
    fn job(&self) -> Job {
        let labels = self.labels();
        Job {
            api_version: "batch/v1",
            kind: "Job",
            metadata: ObjectMeta {
                labels: labels.clone(),
                name: Some(self.name.clone()),
                namespace: self.namespace.clone(),
            },
            spec: JobSpec {
                // A shard retried later would start outside the common start.
                backoff_limit: 0,
                completion_mode: "Indexed",
                completions: self.shards,
                // All shards at once: they wait for each other at the start barrier.
                parallelism: self.shards,
                template: PodTemplateSpec {
                    metadata: ObjectMeta { labels, ..Default::default() },
                    spec: self.pod_spec(),
                },
            },
        }
    }

    fn pod_spec(&self) -> PodSpec {
        // Requests = limits: guaranteed QoS, so a shard's CPU is its own.
        let resources = BTreeMap::from([("cpu", self.cpu.clone()), ("memory", self.memory.clone())]);
        PodSpec {
            affinity: self.one_shard_per_node(),
            containers: vec![Container {
                args: self.args(),
                env: self.env(),
                image: self.image.clone(),
                name: "fairbench",
                resources: ResourceRequirements { limits: resources.clone(), requests: resources },
                security_context: restricted(),
            }],
            restart_policy: "Never",
        }
    }

    /// Shards on different nodes: two on one node would share its CPU and network.
    fn one_shard_per_node(&self) -> Affinity {
        Affinity {
            pod_anti_affinity: PodAntiAffinity {
                required_during_scheduling_ignored_during_execution: vec![PodAffinityTerm {
                    label_selector: LabelSelector { match_labels: self.labels() },
                    topology_key: "kubernetes.io/hostname",
                }],
            },
        }
    }

    /// The password from the Secret; the shard key from the Job's uid, which every pod of
    /// one Job shares and a re-run Job does not.
    fn env(&self) -> Vec<EnvVar> {
        vec![
            EnvVar {
                name: "FAIRBENCH_PASSWORD",
                value_from: EnvVarSource {
                    secret_key_ref: Some(SecretKeySelector { key: "password", name: self.secret.clone() }),
                    ..Default::default()
                },
            },
            EnvVar {
                name: "FAIRBENCH_SHARD_KEY",
                value_from: EnvVarSource {
                    field_ref: Some(ObjectFieldSelector {
                        field_path: "metadata.labels['batch.kubernetes.io/controller-uid']",
                    }),
                    ..Default::default()
                },
            },
        ]
    }

    /// The command that creates the Secret from a file, so the password passes through
    /// neither fairbench nor a shell's history.
    pub fn secret_hint(&self) -> String {
        format!("kubectl create secret generic {} --from-file=password=PATH{}", self.secret, self.ns_flag())
    }

    /// The command that gathers every shard's marked result and combines them.
    pub fn collect_hint(&self) -> String {
        format!(
            "kubectl logs -l {JOB_LABEL}={name} --tail=-1 --max-log-requests={n}{ns} > {name}.log && fairbench combine {name}.log -o {name}.json",
            name = self.name,
            n = self.shards,
            ns = self.ns_flag()
        )
    }

    fn ns_flag(&self) -> String {
        self.namespace.as_ref().map(|ns| format!(" -n {ns}")).unwrap_or_default()
    }
}

/// Pod Security "restricted": the pods run where a namespace enforces it.
fn restricted() -> SecurityContext {
    SecurityContext {
        allow_privilege_escalation: false,
        capabilities: Capabilities { drop: vec!["ALL"] },
        run_as_non_root: true,
        seccomp_profile: SeccompProfile { kind: "RuntimeDefault" },
    }
}

/// The manifest: a comment naming the Secret to create, then the Job.
pub fn job_yaml(req: &JobRequest) -> Result<String, K8sError> {
    req.validate()?;
    let yaml = serde_norway::to_string(&req.job()).map_err(K8sError::Manifest)?;
    Ok(format!("# Create the Secret first: {}\n{yaml}", req.secret_hint()))
}

/// RFC 1123 label: what namespaces and label values (the Job's name) allow.
fn dns_label(flag: &str, s: &str) -> Result<(), K8sError> {
    let ok = !s.is_empty()
        && s.len() <= 63
        && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-');
    ok.then_some(()).ok_or_else(|| K8sError::NotALabel { flag: flag.into(), value: s.into() })
}

/// RFC 1123 subdomain: what Secret names allow.
fn dns_subdomain(flag: &str, s: &str) -> Result<(), K8sError> {
    let ok = !s.is_empty()
        && s.len() <= 253
        && s.split('.').all(|part| dns_label(flag, part).is_ok_and(|_| part.len() <= 63));
    ok.then_some(()).ok_or_else(|| K8sError::NotASubdomain { flag: flag.into(), value: s.into() })
}

/// A resource quantity as Kubernetes writes them: `2`, `500m`, `1.5`, `1Gi`, `512M`, `1e3`.
fn quantity(flag: &str, s: &str) -> Result<(), K8sError> {
    let digits_end = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (number, suffix) = s.split_at(digits_end);
    let number_ok = !number.is_empty() && number != "." && number.matches('.').count() <= 1;
    let exponent_ok = |e: &str| {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        !e.is_empty() && e.bytes().all(|b| b.is_ascii_digit())
    };
    let suffix_ok =
        matches!(suffix, "" | "m" | "k" | "M" | "G" | "T" | "P" | "E" | "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei")
            || suffix.strip_prefix(['e', 'E']).is_some_and(exponent_ok);
    (number_ok && suffix_ok && number.bytes().any(|b| b != b'0' && b != b'.'))
        .then_some(())
        .ok_or_else(|| K8sError::NotAQuantity { flag: flag.into(), value: s.into() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> JobRequest {
        JobRequest {
            name: "fairbench".into(),
            namespace: Some("bench".into()),
            shards: 3,
            image: "registry.example/fairbench:1".into(),
            secret: "fairbench-db".into(),
            cpu: "2".into(),
            memory: "1Gi".into(),
            command: "bench".into(),
            options: vec!["oltp_read_write".into(), "--threads".into(), "64".into()],
        }
    }

    #[test]
    fn args_end_with_what_makes_a_shard() {
        let args = request().args();
        assert_eq!(
            args,
            [
                "bench",
                "oltp_read_write",
                "--threads",
                "64",
                "--shard",
                "3",
                "--print-result",
                "--out",
                "/tmp/fairbench-result.json"
            ]
        );
    }

    #[test]
    fn the_yaml_is_the_typed_job() {
        let yaml = job_yaml(&request()).unwrap();
        assert!(yaml.starts_with("# Create the Secret first: kubectl create secret generic fairbench-db"));
        let doc: serde_json::Value = serde_norway::from_str(&yaml).unwrap();
        assert_eq!(doc["apiVersion"], "batch/v1");
        assert_eq!(doc["kind"], "Job");
        assert_eq!(doc["metadata"]["namespace"], "bench");
        assert_eq!(doc["spec"]["completionMode"], "Indexed");
        let pod = &doc["spec"]["template"]["spec"];
        assert_eq!(pod["containers"][0]["resources"]["requests"], pod["containers"][0]["resources"]["limits"]);
        let term = &pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0];
        assert_eq!(term["labelSelector"]["matchLabels"][JOB_LABEL], "fairbench");
        assert_eq!(doc["spec"]["template"]["metadata"]["labels"], term["labelSelector"]["matchLabels"]);
    }

    #[test]
    fn names_and_quantities_are_checked() {
        for (cpu, ok) in [("2", true), ("500m", true), ("1.5", true), ("1e3", true), ("0", false), ("2 cores", false)] {
            assert_eq!(quantity("--cpu", cpu).is_ok(), ok, "{cpu}");
        }
        for (mem, ok) in [("1Gi", true), ("512M", true), ("1GB", false), ("Gi", false), ("1..5Gi", false)] {
            assert_eq!(quantity("--memory", mem).is_ok(), ok, "{mem}");
        }
        assert!(dns_label("--name", "fb-1").is_ok());
        assert!(dns_label("--name", "Fb").is_err() && dns_label("--name", "-a").is_err());
        assert!(dns_label("--name", &"a".repeat(64)).is_err());
        assert!(dns_subdomain("--secret", "db.pw").is_ok() && dns_subdomain("--secret", "db..pw").is_err());
        let mut r = request();
        r.shards = 0;
        assert!(r.validate().unwrap_err().to_string().contains("--shards 0"));
    }
}
