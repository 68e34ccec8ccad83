//! `fairbench study plan`: a study file read, checked and planned (cells, the order of the
//! runs, the sandboxes it starts, the time it takes), connecting nowhere.

mod common;
use common::study::Lab;
use common::*;

fn plan(dir: &std::path::Path, text: &str) -> std::process::Output {
    std::fs::write(dir.join("s.toml"), text).unwrap();
    fairbench_in(dir, &["study", "plan", "s.toml"].map(String::from))
}

const STUDY: &str = r#"
[study]
title = "Durability on and off"
question = "Does the vendor template's speed come from skipping fsync?"
repeats = 2
warmup_s = 5
time_s = 30

[targets.template]
sandbox = "mariadb"
set = ["sync_binlog=0"]

[targets.local]
url = "mysql://bench:s3cret@127.0.0.1:3306/study"

[[workloads]]
name = "oltp_read_write"
options = { tables = 4 }

[matrix]
threads = [8, 64]
"set.innodb_flush_log_at_trx_commit" = [0, 1]
"#;

#[test]
fn a_study_is_planned_point_by_point_with_every_target_interleaved() {
    let dir = tempfile::tempdir().unwrap();
    let o = plan(dir.path(), STUDY);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    for line in [
        "Study: Durability on and off (s.toml)",
        "  template: a mariadb sandbox with sync_binlog=0, innodb_flush_log_at_trx_commit=0",
        "  template: a mariadb sandbox with sync_binlog=0, innodb_flush_log_at_trx_commit=1",
        "  local: mysql://bench:***@127.0.0.1:3306/study",
        "Workloads:",
        "  oltp_read_write (tables=4)",
        "Cells: 6, 2 runs each, interleaved point by point: 12 runs",
        "Started and removed: 2 sandboxes; datasets prepared: 3",
        "Time: 12 runs x (5 s warmup + 30 s) = 7.0 min of running, plus preparing and starting sandboxes",
        "     1  local  oltp_read_write  threads=8  repeat 1/2",
        "     2  template (set.innodb_flush_log_at_trx_commit=0)  oltp_read_write  threads=8  repeat 1/2",
        "     4  local  oltp_read_write  threads=8  repeat 2/2",
        "    12  template (set.innodb_flush_log_at_trx_commit=1)  oltp_read_write  threads=64  repeat 2/2",
    ] {
        assert!(out.lines().any(|l| l == line), "missing {line:?} in:\n{out}");
    }
    assert!(!out.contains("s3cret"), "{out}");
}

#[test]
fn a_study_file_that_is_not_one_is_refused_naming_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    for (change, says) in [
        (STUDY.replace("repeats = 2", "repeat = 2"), "unknown field `repeat`"),
        (STUDY.replace("threads = [8, 64]", "clients = [8, 64]"), "matrix axis \"clients\" is neither a run option"),
        (STUDY.replace("threads = [8, 64]", "threads = [\"eight\"]"), "matrix axis \"threads\" takes numbers"),
        (
            STUDY.replace("sandbox = \"mariadb\"", "sandbox = \"mariadb\"\nurl = \"mysql://x\""),
            "has both url and sandbox",
        ),
        (
            STUDY
                .replace("url = \"mysql://bench:s3cret@127.0.0.1:3306/study\"", "url = \"mysql://x\"\nset = [\"a=1\"]"),
            "only a sandbox fairbench starts takes set",
        ),
        (STUDY.replace("time_s = 30", ""), "missing field `time_s`"),
        (
            STUDY.replace("tables = 4", "tabels = 4"),
            "workload \"oltp_read_write\": study: unexpected argument '--tabels'",
        ),
        (STUDY.replace("sandbox = \"mariadb\"", "sandbox = \"oracle\""), "unknown engine \"oracle\""),
        (format!("{STUDY}\n[[workloads]]\nname = \"oltp_read_write\"\n"), "runs twice under one name: give each a label"),
        (
            STUDY.replace("options = { tables = 4 }", "options = { tables = 4 }\nprobe = \"lag\""),
            "probes replica lag, and target \"local\" has no replica",
        ),
        (
            STUDY.replace("options = { tables = 4 }", "options = { tables = 4 }\nfaults = { local = \"kill primary @5s\" }"),
            "faults.local: faults act on a sandbox fairbench starts",
        ),
        (
            STUDY.replace("options = { tables = 4 }", "options = { tables = 4 }\nfaults = { template = \"kill replica1 @5s\" }"),
            "faults.template: no node \"replica1\" (its nodes: primary)",
        ),
        (
            STUDY.replace("options = { tables = 4 }", "options = { tables = 4 }\nfaults = { template = \"kill primary @35s\" }"),
            "kill primary at 35.000 s is past each run's end (warmup_s + time_s = 35 s)",
        ),
        (
            format!("{STUDY}\n[[claims]]\nsays = \"x\"\ncheck = \"lost==0\"\n"),
            "no workload runs the probe that measures lost",
        ),
        (
            STUDY.replace("options = { tables = 4 }", "options = { tables = 4 }\nprobe = \"failover\"")
                + "\n[[claims]]\nsays = \"x\"\ncheck = \"downtime<=0.5x\"\nsubject = \"local\"\nbaseline = \"template\"\n",
            "downtime is judged on each run against a bound",
        ),
    ] {
        let o = plan(dir.path(), &change);
        assert_eq!(o.status.code(), Some(2), "{says}: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        assert!(err.contains(says) && err.contains("s.toml"), "{says}: {err}");
    }
}

/// A small study: SQLite and a MariaDB sandbox in two settings, two data sizes, 2 repeats
/// of 6 s (12 measured seconds per cell: enough for intervals from the runs' seconds).
/// Its claims are far from their bounds, so their verdicts do not depend on the machine.
const SMALL: &str = r#"
[study]
title = "Small"
repeats = 2
time_s = 6
seed = 7

[targets.lite]
url = "sqlite://lite.db"

[targets.maria]
sandbox = "mariadb"
set = ["innodb_buffer_pool_size=32M"]

[[workloads]]
name = "oltp_read_write"
options = { tables = 1 }

[matrix]
table_size = [100, 1000]
"set.innodb_flush_log_at_trx_commit" = [0, 1]

[[claims]]
says = "flushing the log at each commit costs less than 5x"
check = "tps>=0.2x"
vary = "set.innodb_flush_log_at_trx_commit"
baseline = 0
subject = 1

[[claims]]
says = "the sandbox is 50 times faster than SQLite"
check = "tps>=50x"
baseline = "lite"
subject = "maria"

[[claims]]
says = "p99 stays under 10 s on the small tables"
check = "p99<10s"
where = { table_size = [100] }

[prices.maria]
compute_per_hour = 3.6
io_per_million = 0.2
"#;

/// Each claim's verdict, and each of its checks' cells and verdicts; the first claim's
/// (durable against relaxed MariaDB under a shared host's load) only its checks' cells, as its
/// verdict is the host's disk's to give, not the study's.
fn verdicts(doc: &serde_json::Value) -> Vec<String> {
    let claims = doc["claims"].as_array().unwrap();
    claims
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let word = |v: &serde_json::Value| if i == 0 { "-".to_string() } else { v.as_str().unwrap().to_string() };
            let checks: Vec<String> = c["checks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|k| {
                    let base = k["baseline_cell"].as_str().unwrap_or("-");
                    format!("{base}/{}:{}", k["cell"].as_str().unwrap(), word(&k["verdict"]))
                })
                .collect();
            format!("{} {} [{}]", c["says"], word(&c["verdict"]), checks.join(" "))
        })
        .collect()
}

#[test]
fn a_study_runs_end_to_end_and_resumes_after_a_kill_with_the_same_verdicts() {
    let lab = Lab::new(SMALL);
    // Uninterrupted.
    let o = lab.run("whole");
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let whole = lab.document("whole");
    assert_eq!(lab.completed("whole").len(), 12, "{out}");
    // Each target's k-th repeat draws the same streams; the next repeat, on the tables the
    // first changed, new ones.
    let seed = |f: &str| {
        let text = std::fs::read_to_string(lab.dir.path().join("whole/runs").join(f)).unwrap();
        serde_json::from_str::<serde_json::Value>(&text).unwrap()["conditions"]["run"]["rand_seed"].as_u64()
    };
    assert_eq!([seed("c01-r1.json"), seed("c02-r1.json"), seed("c01-r2.json")], [Some(7), Some(7), Some(8)]);
    // The verdicts lead the report.
    let first: Vec<&str> = out.lines().take(6).collect();
    assert!(first.iter().any(|l| l.starts_with("Verdicts (each claim is the question as its source put it")), "{out}");
    // Each verdict names what answered it: the sides as they ran, read from their results.
    let flush = whole["claims"][0]["verdict"].as_str().unwrap().to_uppercase();
    for (claim, verdict, sides) in [
        (
            "flushing the log at each commit costs less than 5x",
            flush.as_str(),
            "as run: on this host, 'maria' (MariaDB 1",
        ),
        ("the sandbox is 50 times faster than SQLite", "REFUTED", "mariadb sandbox) vs 'lite' (SQLite 3."),
        ("p99 stays under 10 s on the small tables", "SUPPORTED", "as run: on this host, 'lite' (SQLite 3."),
    ] {
        let at = out.lines().position(|l| l.trim_start() == format!("{verdict:<13} \"{claim}\""));
        let next = at.and_then(|i| out.lines().nth(i + 1)).unwrap_or_else(|| panic!("{claim}: {out}"));
        assert!(next.trim_start().starts_with("as run: ") && next.contains(sides), "{claim}: {next}");
    }
    let flush = whole["claims"][0]["as_run"].as_str().unwrap();
    assert!(flush.ends_with("mariadb sandbox), set.innodb_flush_log_at_trx_commit 1 vs 0"), "{flush}");
    // The setting pairs at each size; SQLite against both sandboxes at each size; the
    // small tables' three cells.
    let v = verdicts(&whole);
    assert!(v[0].contains("c02/c03:-") && v[0].contains("c05/c06:-"), "{v:?}");
    assert_eq!(whole["claims"][1]["checks"].as_array().unwrap().len(), 4, "{v:?}");
    assert_eq!(whole["claims"][2]["checks"].as_array().unwrap().len(), 3, "{v:?}");
    assert!(lab.sandboxes().is_empty(), "the study removes its sandboxes: {:?}", lab.sandboxes());
    // The priced target's cells cost what their throughput and the server's I/O say: a
    // durable COMMIT writes the redo log at least once (MariaDB counts it apart).
    for cell in whole["cells"].as_array().unwrap() {
        let id = cell["cell"].as_str().unwrap();
        let plan = whole["plan"]["cells"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap();
        if plan["target"] == "lite" {
            assert!(cell.get("cost").is_none(), "{cell}");
            continue;
        }
        let (cost, tps) = (&cell["cost"], cell["tps"].as_f64().unwrap());
        assert!((cost["compute"].as_f64().unwrap() - 1e6 / tps / 1000.0).abs() < 1e-6, "{cell}");
        let per_txn = cost["io_requests_per_transaction"].as_f64().expect("I/O counted");
        if plan["settings"].as_array().unwrap().iter().any(|s| s == "innodb_flush_log_at_trx_commit=1") {
            assert!(per_txn >= 1.0, "a durable commit writes the redo log: {cell}");
        }
        assert!((cost["io"].as_f64().unwrap() - per_txn * 0.2).abs() < 1e-9, "{cell}");
        // The two totals, side by side: without per-request I/O, and with it.
        let without = cost["total"].as_f64().unwrap() - cost["total_without_io"].as_f64().unwrap();
        assert!((without - cost["io"].as_f64().unwrap()).abs() < 1e-9, "{cell}");
        assert!(cost["storage_basis"].as_str().unwrap().starts_with("dataset "), "no storage_gb: {cell}");
    }
    assert!(out.contains("Cost per million transactions (USD), two models side by side:"), "{out}");
    assert!(out.contains("I/O excluded") && out.contains("I/O billed"), "{out}");
    // Conditions once per target: what its cells share, and per cell the matrix's setting
    // as each server reported it.
    let conditions = whole["conditions"].as_array().unwrap();
    let maria = conditions.iter().find(|t| t["target"] == "maria").expect("maria's conditions");
    assert_eq!(maria["common"]["server"]["product"], "MariaDB", "{maria}");
    assert_eq!(maria["common"]["memory/cache"]["innodb_buffer_pool_size"], "33554432", "{maria}");
    for cell in whole["plan"]["cells"].as_array().unwrap().iter().filter(|c| c["target"] == "maria") {
        let id = cell["id"].as_str().unwrap();
        let set = cell["settings"]
            .as_array()
            .unwrap()
            .iter()
            .find_map(|s| s.as_str()?.strip_prefix("innodb_flush_log_at_trx_commit="));
        let groups = maria["cells"][id].as_object().unwrap_or_else(|| panic!("{id}: {maria}"));
        let reported = groups.values().find_map(|g| g["innodb_flush_log_at_trx_commit"].as_str());
        assert_eq!(reported, set, "{id}: {maria}");
    }
    let lite = conditions.iter().find(|t| t["target"] == "lite").expect("lite's conditions");
    assert_eq!(lite["common"]["server"]["product"], "SQLite", "{lite}");
    assert!(out.contains("Conditions, once per target"), "{out}");
    // `study report` reads the same from the directory.
    let report = lab.command(&["study", "report", "whole", "--format", "json"]).output().unwrap();
    assert!(report.status.success(), "{}", text(&report));
    let reread: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    assert_eq!(verdicts(&reread), verdicts(&whole));

    // Killed once 4 runs have completed, then resumed.
    let mut child =
        lab.command(&["study", "run", "s.toml", "--out", "cut"]).stderr(std::process::Stdio::null()).spawn().unwrap();
    let start = std::time::Instant::now();
    while lab.completed("cut").len() < 4 {
        assert!(start.elapsed() < std::time::Duration::from_secs(240), "4 runs not completed within 240 s");
        assert!(child.try_wait().unwrap().is_none(), "the study ended before it was killed");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let kept = lab.completed("cut");
    let before: Vec<Vec<u8>> =
        kept.iter().map(|f| std::fs::read(lab.dir.path().join("cut/runs").join(f)).unwrap()).collect();
    let o = lab.run("cut");
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    let todo = format!("study: {} of 12 runs to do in cut", 12 - kept.len());
    assert!(err.lines().any(|l| l == todo), "expected {todo:?}: {err}");
    for (f, bytes) in kept.iter().zip(&before) {
        assert_eq!(&std::fs::read(lab.dir.path().join("cut/runs").join(f)).unwrap(), bytes, "{f} was run again");
    }
    assert_eq!(lab.completed("cut").len(), 12);
    assert_eq!(verdicts(&lab.document("cut")), verdicts(&whole));
    assert!(lab.sandboxes().is_empty(), "{:?}", lab.sandboxes());

    // A changed file is refused, naming the change; the directory is left as it was.
    std::fs::write(
        lab.dir.path().join("s.toml"),
        SMALL.replace("table_size = [100, 1000]", "table_size = [100, 2000]"),
    )
    .unwrap();
    let o = lab.run("cut");
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("cut holds a study whose plan differs from s.toml's")
            && err.contains("cells no longer planned: c04 (target=lite workload=oltp_read_write table_size=1000)")
            && err.contains("cells new: target=lite workload=oltp_read_write table_size=2000"),
        "{err}"
    );
    assert_eq!(lab.completed("cut").len(), 12);
}

/// A primary and its replica: the primary killed under load and the replica promoted, in
/// each of two runs; then replica lag under the same load.
const HA: &str = r#"
[study]
title = "HA"
repeats = 2
time_s = 8
seed = 3

[targets.pair]
sandbox = "mariadb"
replicas = 1
set = ["innodb_buffer_pool_size=32M"]

[[workloads]]
name = "oltp_read_write"
label = "failover"
options = { tables = 1, table_size = 100 }
probe = "failover"
faults = { pair = "kill primary @2s; promote replica1 @3s" }

[[workloads]]
name = "oltp_read_write"
label = "lag"
options = { tables = 1, table_size = 100 }
probe = "lag"

[[claims]]
says = "no acknowledged write lost"
check = "lost==0"

[[claims]]
says = "failover within a minute"
check = "downtime<60s"

[[claims]]
says = "lag under a minute"
check = "lag_max<60s"
"#;

#[test]
fn a_study_crashes_a_primary_in_each_run_on_a_fresh_sandbox_and_judges_its_probes_run_by_run() {
    let lab = Lab::new(HA);
    let o = lab.run("ha");
    assert!(o.status.success(), "{}", text(&o));
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(lab.completed("ha"), ["c01-r1.json", "c01-r2.json", "c02-r1.json", "c02-r2.json"], "{err}");
    // Each run's faults found the sandbox as it was made: the primary killed, the replica
    // promoted, in both; the sandbox rebuilt after each.
    assert_eq!(err.matches("the last run's faults changed it; it starts afresh").count(), 2, "{err}");
    let mut lost = 0;
    for f in ["c01-r1.json", "c01-r2.json"] {
        let d = lab.result("ha", f);
        let events: Vec<&str> =
            d["faults"]["events"].as_array().unwrap().iter().map(|e| e["outcome"].as_str().unwrap()).collect();
        assert_eq!(events, ["done", "done"], "{f}: {}", d["faults"]);
        let failover = &d["ha"]["failover"];
        assert!(failover["outages"].as_array().unwrap().iter().all(|o| o["to_us"].is_u64()), "{f}: writes resumed");
        assert!(failover["downtime_ms"].as_f64().unwrap() < 60_000.0, "{f}");
        lost += failover["verification"]["lost"].as_u64().expect("the promoted replica was read");
        // A kill and a promote on a healthy pair is a clean failover: a split brain here is
        // the probe misreading roles (CI once met a stale watcher reading that did).
        assert!(
            failover.get("split_brain").is_none(),
            "{f}: split brain on a clean promote: {}\nroles: {}\noutages: {}",
            failover["split_brain"],
            failover["roles"],
            failover["outages"]
        );
    }
    let doc = lab.document("ha");
    let verdict = |i: usize| doc["claims"][i]["verdict"].as_str().unwrap().to_string();
    assert_eq!(verdict(0), if lost == 0 { "supported" } else { "refuted" }, "{out}");
    // The downtime is the file's own promote step's: scheduled, so a claim on failover time
    // is not judged on it, and it is ranked only among scheduled downtimes.
    assert_eq!(verdict(1), "inconclusive", "{out}");
    let why = doc["claims"][1]["checks"][0]["reason"].as_str().unwrap();
    assert!(why.contains("scheduled by its own promote replica1"), "{why}");
    assert!(out.contains("\n  scheduled: pair (failover) "), "{out}");
    assert!(!out.contains("\n  detected: "), "{out}");
    assert_eq!(verdict(2), "supported", "{out}");
    let probes = |cell: usize| doc["cells"][cell]["probes"].as_array().unwrap().clone();
    assert_eq!(probes(0).len(), 2);
    for p in probes(0) {
        assert!(p["downtime_us"].as_f64().is_some(), "{p}");
        assert!(p["lost"].is_u64(), "{p}");
        assert_eq!(p["origin"], "scheduled", "{p}");
        assert!(p["verdict"].as_str().unwrap().contains("SCHEDULED (this run's own promote replica1 at "), "{p}");
    }
    assert!(probes(1).iter().all(|p| p["lag_max_us"].as_f64().is_some()), "{:?}", probes(1));
    assert!(out.contains("Probes, run by run"), "{out}");
    assert!(lab.sandboxes().is_empty(), "{:?}", lab.sandboxes());
}

#[test]
fn every_shipped_study_file_plans() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("studies");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).collect();
    files.retain(|p| p.extension().is_some_and(|e| e == "toml"));
    assert!(!files.is_empty());
    for f in files {
        let o = fairbench_in(&dir, &["study".into(), "plan".into(), f.display().to_string()]);
        assert!(o.status.success(), "{}: {}", f.display(), text(&o));
        let out = String::from_utf8_lossy(&o.stdout);
        let header = std::fs::read_to_string(&f).unwrap();
        assert!(header.starts_with("# \""), "{} starts with a header naming the original", f.display());
        assert!(out.contains("Order:"), "{out}");
        // The plan says, before anything runs, what of its seed the study redoes and drops.
        let (seed, kept, dropped) = (out.find("\nSeed: "), out.find("\n  Reproduced:"), out.find("\n  Dropped"));
        assert!(seed < kept && kept < dropped && seed.is_some(), "{}: {out}", f.display());
    }
}

/// The same embedded database declared twice (an A/A design) beside another: the pair is the
/// study's noise floor, the other target is in no pair.
const AA: &str = r#"
[study]
title = "A/A"
repeats = 3
warmup_s = 0
time_s = 1
seed = 5

[targets.first]
url = "sqlite://aa.db"

[targets.again]
url = "sqlite://aa.db"

[targets.other]
url = "sqlite://other.db"

[[workloads]]
name = "oltp_point_select"
options = { tables = 1, table_size = 100 }

[[claims]]
says = "other is faster"
check = "tps>=1.01x"
baseline = "first"
subject = "other"
"#;

#[test]
fn two_targets_declared_alike_are_the_studys_noise_floor() {
    let lab = Lab::new(AA);
    let o = lab.run("aa");
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let doc = lab.document("aa");
    let noise = doc["noise"].as_array().unwrap_or_else(|| panic!("no noise floor: {out}"));
    assert_eq!(noise.len(), 1, "{noise:?}");
    // Targets in the file's order by name (again, first).
    assert_eq!(noise[0]["targets"], serde_json::json!(["again", "first"]), "{noise:?}");
    let ratio = &noise[0]["tps_ratio"];
    let (low, high) = (ratio["low"].as_f64().unwrap(), ratio["high"].as_f64().unwrap());
    assert!(low <= ratio["estimate"].as_f64().unwrap() && low > 0.0 && high >= low, "{ratio}");
    assert!(out.contains("\nNoise floor (A/A pairs, targets declared alike"), "{out}");
    assert!(out.contains("\n  'first' vs 'again' at workload=oltp_point_select: tps "), "{out}");
}
