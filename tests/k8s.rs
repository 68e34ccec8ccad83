//! `fairbench k8s job`: the Indexed Job it prints (read back as YAML), the same manifest
//! checked against Kubernetes' own API schemas offline, and its refusals. Needs no cluster
//! and no server; needs the PyPI package kubernetes-validate (scripts/test.sh installs it).

use serde_json::Value;
use std::process::{Command, Output};

const PASSWORD: &str = "s3cr3t-Pw";
const TARGET: &str = "mysql://sbtest@db.example:3306/sbtest";
/// The API version whose schemas the manifest (src/k8s/objects.rs) is checked against:
/// batch/v1 Job and core/v1 Pod, as Kubernetes 1.37 defines them.
const KUBERNETES_VERSION: &str = "1.37.0";

/// `fairbench k8s job ARGS` with a password in the environment, as a user's shell may have.
fn k8s_job(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fairbench"))
        .args(["k8s", "job"])
        .args(args)
        .env("FAIRBENCH_PASSWORD", PASSWORD)
        .env_remove("FAIRBENCH_TARGET")
        .output()
        .unwrap()
}

/// The 3-shard example of docs/kubernetes.md: (stdout, stderr).
fn example() -> (String, String) {
    let inner = ["bench", "oltp_read_write", "--target", TARGET, "--threads", "64", "--time", "60"];
    let mut args = vec!["--shards", "3", "--image", "registry.example/fairbench:0.1", "--"];
    args.extend(inner);
    let o = k8s_job(&args);
    let (out, err) = (String::from_utf8(o.stdout).unwrap(), String::from_utf8(o.stderr).unwrap());
    assert!(o.status.success(), "{err}");
    (out, err)
}

#[test]
fn the_job_runs_three_shards_on_three_nodes_with_the_password_from_the_secret() {
    let (out, err) = example();
    assert!(!out.contains(PASSWORD) && !err.contains(PASSWORD), "the password leaked:\n{out}\n{err}");
    let job: Value = serde_norway::from_str(&out).unwrap();
    assert_eq!(job["apiVersion"], "batch/v1");
    assert_eq!(job["kind"], "Job");
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    assert_eq!((spec["completions"].as_i64(), spec["parallelism"].as_i64()), (Some(3), Some(3)));
    assert_eq!(spec["backoffLimit"], 0);
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["restartPolicy"], "Never");
    let container = &pod["containers"][0];
    let args: Vec<&str> = container["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
    assert_eq!(args[..4], ["bench", "oltp_read_write", "--target", TARGET]);
    assert!(args.windows(2).any(|w| w == ["--shard", "3"]), "{args:?}");
    assert!(args.contains(&"--print-result") && args.windows(2).any(|w| w[0] == "--out"), "{args:?}");
    let env = container["env"].as_array().unwrap();
    let var = |name: &str| env.iter().find(|e| e["name"] == name).unwrap_or_else(|| panic!("no {name}: {env:?}"));
    let password = var("FAIRBENCH_PASSWORD");
    assert!(password.get("value").is_none(), "{password}");
    assert_eq!(password["valueFrom"]["secretKeyRef"]["name"], "fairbench-db");
    assert_eq!(password["valueFrom"]["secretKeyRef"]["key"], "password");
    let key = &var("FAIRBENCH_SHARD_KEY")["valueFrom"]["fieldRef"]["fieldPath"];
    assert_eq!(key, "metadata.labels['batch.kubernetes.io/controller-uid']");
    let resources = &container["resources"];
    assert_eq!(resources["requests"], resources["limits"]);
    assert_eq!((resources["limits"]["cpu"].as_str(), resources["limits"]["memory"].as_str()), (Some("2"), Some("1Gi")));
    let terms = &pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"];
    assert_eq!(terms[0]["topologyKey"], "kubernetes.io/hostname");
    let labels = &spec["template"]["metadata"]["labels"];
    assert_eq!(labels["fairbench/job"], "fairbench");
    assert_eq!(terms[0]["labelSelector"]["matchLabels"], *labels);
    assert_eq!(job["metadata"]["labels"], *labels);
    // How to create the Secret and how to collect the results, one line each.
    assert!(
        out.starts_with("# Create the Secret first: kubectl create secret generic fairbench-db --from-file=password=")
    );
    assert!(err.contains("kubectl create secret generic fairbench-db --from-file=password=PATH"), "{err}");
    let collect = "kubectl logs -l fairbench/job=fairbench --tail=-1 --max-log-requests=3 > fairbench.log \
                   && fairbench combine fairbench.log -o fairbench.json";
    assert!(err.contains(collect), "{err}");
}

/// kubernetes-validate in strict mode (unknown fields fail): (passed, what it said).
fn validate(manifest: &str) -> (bool, String) {
    let probe = Command::new("python3").args(["-c", "import kubernetes_validate"]).output();
    assert!(
        probe.is_ok_and(|o| o.status.success()),
        "the Python package kubernetes-validate is missing: run scripts/test.sh (it installs it)"
    );
    let file = tempfile::Builder::new().suffix(".yaml").tempfile().unwrap();
    std::fs::write(file.path(), manifest).unwrap();
    let o = Command::new("python3")
        .args(["-m", "kubernetes_validate", "--strict", "--kubernetes-version", KUBERNETES_VERSION])
        .arg(file.path())
        .output()
        .unwrap();
    (o.status.success(), format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr)))
}

#[test]
fn the_manifest_passes_the_kubernetes_schemas_and_a_broken_one_does_not() {
    let (out, _) = example();
    let (passed, said) = validate(&out);
    assert!(passed && said.contains("passed"), "{said}");
    // The same check fails a misspelled field and a wrong type: it is not a rubber stamp.
    let misspelled = out.replace("completionMode:", "completionMod:");
    assert_ne!(misspelled, out);
    let (passed, said) = validate(&misspelled);
    assert!(!passed && said.contains("completionMod"), "{said}");
    let wrong_type = out.replace("backoffLimit: 0", "backoffLimit: none");
    assert_ne!(wrong_type, out);
    let (passed, said) = validate(&wrong_type);
    assert!(!passed, "{said}");
}

#[test]
fn refusals_are_one_line_and_exit_2() {
    let with_pw = format!("mysql://sbtest:{PASSWORD}@db.example:3306/sbtest");
    let mysql_pw = format!("--mysql-password={PASSWORD}");
    let cases: [(&[&str], &str); 16] = [
        (&["--", "bench", "oltp_read_write", "--target", &with_pw], "carries a password"),
        (&["--", "bench", "oltp_read_write", &format!("--target={with_pw}")], "carries a password"),
        (&["--", "run", "oltp_read_write", "--target", TARGET, "--password-file", "/pw"], "--password-file"),
        (&["--", "run", "oltp_read_write", "--target", TARGET, &mysql_pw], "--mysql-password"),
        (&["--", "run", "oltp_read_write", "--target", TARGET, "--pgsql-password", PASSWORD], "--pgsql-password"),
        (&["--", "bench", "oltp_read_write", "--target", "sqlite://fairbench.db"], "SQLite"),
        (&["--", "bench", "oltp_read_write"], "--target"),
        (&["--", "bench", "oltp_read_write", "--target", TARGET, "--shard", "2"], "--shard is set by the Job"),
        (&["--", "bench", "oltp_read_write", "--target", TARGET, "--shard-key=k"], "--shard-key is set"),
        (&["--", "run", "oltp_read_write", "--target", TARGET, "--print-result"], "--print-result is set"),
        (&["--", "run", "oltp_read_write", "--target", TARGET, "--out", "r.json"], "--out is set"),
        (&[], "no command after --"),
        (&["--", "cleanup", "--target", TARGET], "bench, run or prepare"),
        (&["--", "bench", "oltp_read_write", "--target", TARGET, "--thread", "4"], "'--thread'"),
        (&["--", "bench", "oltp_read_write", "--target", TARGET, "--threads", "four"], "'four'"),
        (&["--", "prepare", "oltp_read_write", "--target", TARGET, "--tables=x"], "--tables"),
    ];
    for (inner, why) in cases {
        let mut args = vec!["--shards", "3", "--image", "registry.example/fairbench:0.1"];
        args.extend(inner);
        refused(&args, why);
    }
    refused(&["--shards", "0", "--image", "x", "--", "bench", "oltp_read_write", "--target", TARGET], "--shards 0");
    refused(
        &["--shards", "2", "--image", "x", "--cpu", "2 cores", "--", "run", "oltp_insert", "--target", TARGET],
        "--cpu",
    );
}

fn refused(args: &[&str], why: &str) {
    let o = k8s_job(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(o.stdout.is_empty(), "{args:?}: printed a manifest");
    assert!(err.starts_with("error: ") && err.lines().count() == 1, "{args:?}: {err}");
    assert!(err.contains(why), "{args:?}: {err:?} does not say {why:?}");
    assert!(!err.contains(PASSWORD), "{args:?}: {err}");
}
