//! A study keeps its datasets' history across an interruption and across runs of the study:
//! a cell whose workload inserts rows runs its round again from the first repeat after an
//! interruption (each repeat starting from the rows the one before it left), every repeat
//! names the server it ran on, and `--again` adds a round whose spread the report shows.

mod common;
use common::study::Lab;
use common::*;
use serde_json::Value;
use std::io::BufRead;

/// oltp_insert on SQLite (exact row counts) and on a MariaDB sandbox, 3 repeats of 2 s.
const INSERTS: &str = r#"
[study]
title = "Inserts"
repeats = 3
time_s = 2
warmup_s = 0
seed = 11

[targets.lite]
url = "sqlite://lite.db"

[targets.maria]
sandbox = "mariadb"
set = ["innodb_buffer_pool_size=32M"]

[[workloads]]
name = "oltp_insert"
options = { tables = 1, table_size = 100, threads = 1 }
"#;

fn study(lab: &Lab, extra: &[&str]) -> std::process::Output {
    lab.command(&[&["study", "run", "s.toml", "--out", "out"], extra].concat()).output().unwrap()
}

/// Every run's (cell, round, repeat, rows at start, rows at end, server), the rows from
/// its result (and the study document's rows at start checked against them).
fn runs_of(lab: &Lab) -> Vec<(String, u64, u64, u64, u64, String)> {
    let doc = lab.document("out");
    let rows = |v: &Value| v.as_array().unwrap().iter().map(|t| t["rows"].as_u64().unwrap()).sum::<u64>();
    let each = doc["runs"].as_array().unwrap().iter().map(|r| {
        let file = r["file"].as_str().unwrap().trim_start_matches("runs/");
        let dataset = &lab.result("out", file)["conditions"]["dataset"];
        assert_eq!(r["rows_at_start"]["rows"].as_u64(), Some(rows(&dataset["tables_at_start"])), "{r}");
        (
            r["cell"].as_str().unwrap().to_string(),
            r["round"].as_u64().unwrap(),
            r["repeat"].as_u64().unwrap(),
            rows(&dataset["tables_at_start"]),
            rows(&dataset["tables_at_end"]),
            r["server"].as_str().unwrap_or("").to_string(),
        )
    });
    each.collect()
}

/// Each cell's repeats of one round start where the one before ended, the first from the
/// rows prepared.
fn assert_history(runs: &[(String, u64, u64, u64, u64, String)], cell: &str, round: u64, prepared: Option<u64>) {
    let mine: Vec<_> = runs.iter().filter(|r| r.0 == cell && r.1 == round).collect();
    assert_eq!(mine.len(), 3, "{runs:?}");
    if let Some(rows) = prepared {
        assert_eq!(mine[0].3, rows, "{cell} round {round} starts on the prepared rows: {runs:?}");
    }
    for pair in mine.windows(2) {
        assert!(pair[0].4 > pair[0].3, "{cell}: a repeat inserts rows: {runs:?}");
        assert_eq!(pair[1].3, pair[0].4, "{cell} repeat {} starts where {} ended: {runs:?}", pair[1].2, pair[0].2);
    }
}

#[test]
fn an_interrupted_insert_study_reruns_its_cells_from_the_first_repeat_and_again_adds_a_round() {
    let lab = Lab::new(INSERTS);

    // Interrupted (Ctrl-C) while the sandbox's cell measures its repeat 2: SQLite's cell has
    // run 2 repeats, the sandbox's 1.
    let mut child = lab
        .command(&["study", "run", "s.toml", "--out", "out"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let (mut line, mut at_repeat_2) = (String::new(), false);
    while !(at_repeat_2 && line.contains("Threads started!")) {
        line.clear();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "the study ended before maria's repeat 2");
        at_repeat_2 |= line.contains("maria oltp_insert repeat 2");
    }
    // SAFETY: signals our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    std::io::copy(&mut stderr, &mut std::io::sink()).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", text(&o));
    let report = String::from_utf8_lossy(&o.stdout);
    // The cells' status words agree with the runs listed.
    assert!(report.contains("2/3 (1 not run)") && report.contains("1/3 (1 interrupted, 1 not run)"), "{report}");
    assert!(!report.contains("running"), "{report}");

    // Another round is refused while this one is unfinished, naming the fix.
    let o = study(&lab, &["--again"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.trim().lines().count() == 1 && err.contains("has 3 runs to do") && err.contains("without --again"),
        "{err}"
    );

    // Resumed: both cells run again from repeat 1, each repeat on the rows the last left.
    let o = study(&lab, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let report = String::from_utf8_lossy(&o.stdout).into_owned();
    let doc = lab.document("out");
    let reruns: Vec<String> = doc["reruns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| format!("{} {} {} {}", r["cell"], r["from_repeat"], r["cleared"], r["why"]))
        .collect();
    assert_eq!(
        reruns,
        ["\"c01\" 1 [1,2] \"its workload inserts rows\"", "\"c02\" 1 [1] \"its workload inserts rows\""]
    );
    assert!(
        report.contains("c01 round 1: rerun from repeat 1 after an interruption: its workload inserts rows"),
        "{report}"
    );
    let runs = runs_of(&lab);
    assert_history(&runs, "c01", 1, Some(100));
    assert_history(&runs, "c02", 1, None);
    // Each repeat names its server: SQLite its file, the sandbox its server id, port and
    // when this study built it; the report lists them.
    assert!(
        runs.iter().filter(|r| r.0 == "c01").all(|r| r.5.starts_with("file ") && r.5.ends_with("lite.db")),
        "{runs:?}"
    );
    let maria: Vec<&String> = runs.iter().filter(|r| r.0 == "c02").map(|r| &r.5).collect();
    assert!(maria[0].starts_with("server_id ") && maria[0].contains(", sandbox built "), "{maria:?}");
    assert!(maria.iter().all(|s| s == &maria[0]), "one sandbox for the resumed round: {maria:?}");
    assert!(report.contains("Repeats, run by run") && report.contains(maria[0].as_str()), "{report}");
    assert!(report.contains("intervals are within one run of the study; run it again with --again"), "{report}");

    // Again: a second round of every cell, repeats 4-6, on a fresh dataset and a sandbox
    // built anew; the report gives each cell's spread between the rounds.
    let o = study(&lab, &["--again"]);
    assert!(o.status.success(), "{}", text(&o));
    let report = String::from_utf8_lossy(&o.stdout).into_owned();
    let runs = runs_of(&lab);
    assert_eq!(runs.len(), 12, "{runs:?}");
    let round_2: Vec<(String, u64)> = runs.iter().filter(|r| r.1 == 2).map(|r| (r.0.clone(), r.2)).collect();
    assert_eq!(round_2.iter().filter(|r| r.0 == "c01").map(|r| r.1).collect::<Vec<_>>(), [4, 5, 6], "{runs:?}");
    assert_history(&runs, "c01", 2, Some(100));
    assert_history(&runs, "c02", 2, None);
    let again = &runs.iter().find(|r| r.0 == "c02" && r.1 == 2).unwrap().5;
    assert_ne!(again, maria[0], "round 2 ran on a sandbox built anew");
    assert!(report.contains("2 runs of the study"), "{report}");
    for cell in ["c01", "c02"] {
        let line =
            report.lines().find(|l| l.trim_start().starts_with(&format!("{cell} 2 rounds; median tps by round")));
        assert!(line.is_some_and(|l| l.contains(": spread ")), "{cell}: {report}");
    }
    assert!(report.contains("6/6"), "{report}");
    assert!(lab.sandboxes().is_empty(), "{:?}", lab.sandboxes());
}
