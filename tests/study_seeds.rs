//! Every study in studies/ says what of its seed it reproduces, and by what, and what it
//! drops, and why; each reproduced point is covered by a cell or a claim of its plan.
//! Reads the files, needs no server.

use fairbench::study::{seed_cover, StudyFile};
use std::path::{Path, PathBuf};

fn studies() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("studies");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
}

/// Each study file that loads and has a `[seed]` (the seeded file count checked apart).
fn seeded() -> (Vec<(String, StudyFile)>, Vec<String>) {
    let (mut files, mut problems) = (Vec::new(), Vec::new());
    for path in studies() {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        match StudyFile::load(&path) {
            Ok(f) if f.seed.is_some() => files.push((name, f)),
            Ok(_) => {}
            Err(e) => problems.push(e.to_string()),
        }
    }
    (files, problems)
}

#[test]
fn every_seeded_study_loads_and_covers_each_reproduced_point() {
    let (files, mut problems) = seeded();
    for (name, file) in &files {
        if file.seed.as_ref().unwrap().reproduced.is_empty() {
            problems.push(format!("{name}: [seed] reproduces no point of its seed"));
        }
        problems.extend(seed_cover::uncovered(file).into_iter().map(|p| format!("{name}: {p}")));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_study_in_studies_has_a_seed() {
    let (files, _) = seeded();
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(studies().len(), 5, "the five studies of issue 62");
    assert_eq!(names.len(), studies().len(), "studies with a [seed]: {names:?}");
}

fn load(text: &str) -> Result<StudyFile, String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.toml");
    std::fs::write(&path, text).unwrap();
    StudyFile::load(&path).map_err(|e| e.to_string())
}

const STUDY: &str = r#"
[study]
title = "t"
time_s = 10

[seed]
source = "A seed (2023)"
reproduced = [
  { point = "durability off", by = ["target:template", "claim:off"] },
  { point = "binary log synced", by = ["axis:set.sync_binlog=1"] },
]
dropped = [{ point = "250 tables", why = "2 cores" }]

[targets.stock]
sandbox = "mariadb"

[targets.template]
sandbox = "mariadb"
set = ["innodb_flush_log_at_trx_commit=0"]

[[workloads]]
name = "oltp_write_only"

[matrix]
"set.sync_binlog" = [0, 1]

[[claims]]
id = "off"
says = "5x"
check = "tps>=5x"
baseline = "stock"
subject = "template"
"#;

#[test]
fn a_seed_whose_points_name_what_the_file_has_is_accepted_and_covered() {
    let file = load(STUDY).unwrap();
    assert!(seed_cover::uncovered(&file).is_empty(), "{:?}", seed_cover::uncovered(&file));
    let record = file.seed.unwrap().record();
    assert_eq!(record.reproduced[0].by, ["target:template", "claim:off"]);
    assert_eq!(record.dropped[0].why, "2 cores");
}

#[test]
fn a_seed_that_says_less_than_it_must_is_refused_in_one_line_naming_the_point() {
    let cases = [
        (STUDY.replace(r#", by = ["axis:set.sync_binlog=1"]"#, ""), "\"binary log synced\" has no `by`"),
        (STUDY.replace("claim:off", "claim:of"), "by \"claim:of\" names nothing in the file (it has off)"),
        (STUDY.replace("target:template", "target:tmpl"), "names nothing in the file (it has stock, template)"),
        (STUDY.replace("sync_binlog=1\"", "sync_binlog=2\""), "names nothing in the file (it has 0, 1)"),
        (STUDY.replace("target:template", "host:x"), "is not target:NAME, workload:LABEL, claim:ID or axis:NAME=VALUE"),
        (STUDY.replace(r#", why = "2 cores""#, ""), "dropped point \"250 tables\" has no `why`"),
        (STUDY.replace("subject = \"template\"\n", "subject = \"template\"\n[[claims]]\nid = \"off\"\nsays = \"again\"\ncheck = \"tps>=1x\"\nbaseline = \"stock\"\nsubject = \"template\"\n"), "claim \"again\": id \"off\" is another claim's"),
    ];
    for (text, expected) in cases {
        let e = load(&text).expect_err(expected);
        assert!(e.contains(expected), "{e}\nexpected: {expected}");
        assert!(e.contains("s.toml"), "the file named: {e}");
        assert!(!e.contains('\n'), "one line: {e}");
    }
}

#[test]
fn a_claim_named_by_the_seed_that_judges_no_cell_is_uncovered() {
    let narrowed =
        STUDY.replace("subject = \"template\"\n", "subject = \"template\"\nwhere = { \"set.sync_binlog\" = [0] }\n");
    assert_eq!(seed_cover::uncovered(&load(&narrowed).unwrap()), Vec::<String>::new());
    // Its `where` keeps only the baseline's cells: no pair to compare.
    let empty = STUDY.replace("subject = \"template\"\n", "subject = \"template\"\nwhere = { target = [\"stock\"] }\n");
    assert_eq!(seed_cover::uncovered(&load(&empty).unwrap()), ["\"durability off\": by claim:off covers no cell"]);
}

#[test]
fn a_study_refuses_a_sandbox_without_the_binary_log_where_replication_needs_it() {
    let off = STUDY.replace("set = [\"innodb_flush_log_at_trx_commit=0\"]", "set = [\"log_bin=OFF\"]");
    assert!(load(&off).is_ok(), "a single server runs without the binary log");
    let replicas = off.replace("set = [\"log_bin=OFF\"]", "set = [\"log_bin=OFF\"]\nreplicas = 1");
    let e = load(&replicas).unwrap_err();
    assert!(e.contains("target \"template\"") && e.contains("replicas read the primary's binary log"), "{e}");
    let axis = STUDY.replace("\"set.sync_binlog\" = [0, 1]", "\"set.log_bin\" = [\"OFF\", \"binlog\"]");
    let e = load(&axis).unwrap_err();
    assert!(e.contains("log_bin takes OFF (no binary log) or ON"), "{e}");
}

#[test]
fn a_workload_misspelt_where_a_claim_names_it_rightly_is_pointed_at() {
    let text = STUDY
        .replace("name = \"oltp_write_only\"", "name = \"oltp_write_onyl\"")
        .replace("subject = \"template\"\n", "subject = \"template\"\nwhere = { workload = [\"oltp_write_only\"] }\n");
    let e = load(&text).unwrap_err();
    assert!(
        e.contains(r#"where workload = "oltp_write_only": the study's workload values are oltp_write_onyl ("oltp_write_onyl" is close: one of the two is misspelt)"#),
        "{e}"
    );
}
