//! The lab against a fake bench (no server): the order of runs and prepares, resume after
//! an interruption, failed runs kept or retried, rounds rerun, `--again`.

use super::*;
use crate::model::RunStatus::{Completed, Failed, Interrupted};
use std::cell::RefCell;

/// Two URL targets, two points, two repeats: c01 (a) and c02 (b) at threads=1, c03 and c04
/// at threads=2.
const FILE: &str = r#"
    [study]
    title = "t"
    repeats = 2
    time_s = 1
    [targets.a]
    url = "sqlite://a.db"
    [targets.b]
    url = "sqlite://b.db"
    [[workloads]]
    name = "oltp_read_only"
    [matrix]
    threads = [1, 2]
"#;

#[derive(Debug, thiserror::Error)]
#[error("the fake refused: {0}")]
struct Refused(String);

/// Logs what it is asked to do; each run writes its result (as the real one does) with
/// the status `ends` gives it, completed by default.
struct Fake<'a> {
    plan: &'a StudyPlan,
    log: Vec<String>,
    said: RefCell<Vec<String>>,
    ends: BTreeMap<(String, u32), RunStatus>,
    /// Ctrl-C pressed once this many runs were measured.
    stop_after: Option<usize>,
    /// A node whose dataset cannot be prepared.
    unpreparable: Option<&'static str>,
    measured: usize,
}

impl<'a> Fake<'a> {
    fn new(plan: &'a StudyPlan) -> Fake<'a> {
        let (log, said, ends) = (vec![], RefCell::default(), BTreeMap::new());
        Fake { plan, log, said, ends, stop_after: None, unpreparable: None, measured: 0 }
    }

    fn id(&self, cell: &Cell) -> String {
        cell_id(self.plan.cells.iter().position(|c| std::ptr::eq(c, cell)).expect("a cell of the plan"))
    }
}

impl Bench for Fake<'_> {
    type Error = Refused;

    fn expect_runs(&mut self, runs: u32) {
        self.log.push(format!("expect {runs}"));
    }

    fn prepare(&mut self, cell: &Cell, site: &Site, fresh: bool) -> Result<(), Refused> {
        self.log.push(format!("prepare {}{}", self.id(cell), if fresh { " fresh" } else { "" }));
        match self.unpreparable == Some(site.nodes[0].as_str()) {
            true => Err(Refused(site.nodes[0].clone())),
            false => Ok(()),
        }
    }

    fn measure(&mut self, cell: &Cell, repeat: u32, site: &Site, out: &Path) -> Result<ResultDocument, Refused> {
        let id = self.id(cell);
        self.log.push(format!("measure {id} r{repeat}"));
        self.measured += 1;
        let mut doc: ResultDocument =
            serde_json::from_str(include_str!("../../audit/testdata/mariadb_loopback.json")).unwrap();
        doc.conditions.server.identity = Some(format!("fake {}", site.nodes[0]));
        doc.conditions.run.status = self.ends.get(&(id, repeat)).copied().unwrap_or(Completed);
        if doc.conditions.run.status == Failed {
            doc.conditions.run.failure = Some("the server went away".into());
        }
        doc.write(out).unwrap();
        Ok(doc)
    }

    fn say(&self, line: &str) {
        self.said.borrow_mut().push(line.to_string());
    }

    fn catch_interrupts(&self) {}

    fn interrupted(&self) -> bool {
        self.stop_after.is_some_and(|n| self.measured >= n)
    }
}

struct Setup {
    file: StudyFile,
    plan: StudyPlan,
    dir: tempfile::TempDir,
}

fn setup() -> Setup {
    let file: StudyFile = toml::from_str(FILE).unwrap();
    let plan = StudyPlan::of(&file);
    Setup { file, plan, dir: tempfile::tempdir().unwrap() }
}

impl Setup {
    /// `study run` once with `fake`; `rows`: cells that change their rows.
    fn run(&self, fake: &mut Fake, options: (bool, bool), rows: &[&str]) -> Result<Ran, StudyDirError> {
        let shown = self.plan.cells.iter().map(|_| "run oltp_read_only".to_string()).collect();
        let row_changes = rows.iter().map(|c| (c.to_string(), "its workload inserts rows".to_string())).collect();
        let path = Path::new("t.toml");
        let study = Study { file: &self.file, plan: &self.plan, path, shown, row_changes };
        let (again, retry_failed) = options;
        run(&study, &LabOptions { dir: self.dir.path().to_path_buf(), again, retry_failed }, fake)
    }

    /// Each run of the saved document: `c01 r1 completed`.
    fn saved(&self) -> Vec<String> {
        let doc = dir::load(self.dir.path()).unwrap().unwrap();
        doc.runs.iter().map(|r| format!("{} r{} {}", r.cell, r.repeat, outcome_line(r))).collect()
    }
}

const PLAIN: (bool, bool) = (false, false);

#[test]
fn runs_go_point_by_point_in_plan_order_each_point_prepared_once_per_target() {
    let s = setup();
    let mut fake = Fake::new(&s.plan);
    let ran = s.run(&mut fake, PLAIN, &[]).unwrap();
    assert!(!ran.interrupted && ran.all_completed());
    #[rustfmt::skip]
    assert_eq!(fake.log, [
        "expect 8",
        "prepare c01", "measure c01 r1", "prepare c02", "measure c02 r1", "measure c01 r2", "measure c02 r2",
        "prepare c03", "measure c03 r1", "prepare c04", "measure c04 r1", "measure c03 r2", "measure c04 r2",
    ]);
    assert!(s.saved().iter().all(|r| r.ends_with(" completed")), "{:?}", s.saved());
    // Each run's history is read from its result.
    let doc = dir::load(s.dir.path()).unwrap().unwrap();
    assert!(doc.runs.iter().all(|r| r.tps.is_some() && r.rows_at_start.is_some()), "{:?}", doc.runs);
    assert_eq!(
        (doc.runs[0].server.as_deref(), doc.runs[1].server.as_deref()),
        (Some("fake sqlite://a.db"), Some("fake sqlite://b.db"))
    );
    assert!(fake.said.borrow().contains(&format!("study: 8 of 8 runs to do in {}", s.dir.path().display())));
}

#[test]
fn a_resumed_study_measures_only_the_runs_not_done() {
    let s = setup();
    let mut first = Fake::new(&s.plan);
    first.stop_after = Some(3);
    let ran = s.run(&mut first, PLAIN, &[]).unwrap();
    assert!(ran.interrupted && !ran.all_completed());
    assert_eq!(first.log.iter().filter(|l| l.starts_with("measure")).count(), 3, "{:?}", first.log);
    let done = s.saved().iter().filter(|r| r.ends_with(" completed")).count();
    assert_eq!(done, 3, "{:?}", s.saved());
    let mut second = Fake::new(&s.plan);
    assert!(s.run(&mut second, PLAIN, &[]).unwrap().all_completed());
    #[rustfmt::skip]
    assert_eq!(second.log, [
        "expect 5",
        "prepare c02", "measure c02 r2",
        "prepare c03", "measure c03 r1", "prepare c04", "measure c04 r1", "measure c03 r2", "measure c04 r2",
    ]);
}

#[test]
fn a_run_interrupted_midway_stops_the_study_and_runs_again_on_resume() {
    let s = setup();
    let mut first = Fake::new(&s.plan);
    first.ends.insert(("c02".into(), 1), Interrupted);
    let ran = s.run(&mut first, PLAIN, &[]).unwrap();
    assert!(ran.interrupted);
    assert_eq!(first.log, ["expect 8", "prepare c01", "measure c01 r1", "prepare c02", "measure c02 r1"]);
    assert_eq!(s.saved()[..2], ["c01 r1 completed", "c02 r1 interrupted"]);
    let mut second = Fake::new(&s.plan);
    s.run(&mut second, PLAIN, &[]).unwrap();
    assert_eq!(second.log[..5], ["expect 7", "prepare c02", "measure c02 r1", "prepare c01", "measure c01 r2"]);
}

#[test]
fn a_failed_run_is_kept_and_runs_again_only_with_retry_failed() {
    let s = setup();
    let mut first = Fake::new(&s.plan);
    first.ends.insert(("c03".into(), 1), Failed);
    let ran = s.run(&mut first, PLAIN, &[]).unwrap();
    assert!(!ran.interrupted && !ran.all_completed());
    assert!(s.saved().contains(&"c03 r1 failed: the server went away".to_string()), "{:?}", s.saved());
    let mut kept = Fake::new(&s.plan);
    assert!(!s.run(&mut kept, PLAIN, &[]).unwrap().all_completed());
    assert_eq!(kept.log, ["expect 0"]);
    let mut retried = Fake::new(&s.plan);
    assert!(s.run(&mut retried, (false, true), &[]).unwrap().all_completed());
    assert_eq!(retried.log, ["expect 1", "prepare c03", "measure c03 r1"]);
}

#[test]
fn a_round_that_changes_rows_and_ran_in_part_runs_again_from_its_first_repeat_on_a_fresh_dataset() {
    let s = setup();
    let mut first = Fake::new(&s.plan);
    first.stop_after = Some(2);
    s.run(&mut first, PLAIN, &["c01"]).unwrap();
    assert_eq!(first.log[1], "prepare c01 fresh");
    let mut second = Fake::new(&s.plan);
    s.run(&mut second, PLAIN, &["c01"]).unwrap();
    #[rustfmt::skip]
    assert_eq!(second.log[..6], [
        "expect 7", "prepare c01 fresh", "measure c01 r1", "measure c01 r2", "prepare c02", "measure c02 r2",
    ]);
    let doc = dir::load(s.dir.path()).unwrap().unwrap();
    assert_eq!(doc.reruns.len(), 1);
    assert_eq!((doc.reruns[0].cell.as_str(), doc.reruns[0].cleared.clone()), ("c01", vec![1]));
}

#[test]
fn a_target_whose_dataset_cannot_be_prepared_fails_its_runs_and_the_others_go_on() {
    let s = setup();
    let mut fake = Fake::new(&s.plan);
    fake.unpreparable = Some("sqlite://b.db");
    let ran = s.run(&mut fake, PLAIN, &[]).unwrap();
    assert!(!ran.interrupted);
    let measured: Vec<&String> = fake.log.iter().filter(|l| l.starts_with("measure")).collect();
    assert!(measured.iter().all(|l| l.contains("c01") || l.contains("c03")) && measured.len() == 4, "{measured:?}");
    let why = "failed: preparing the dataset failed: the fake refused: sqlite://b.db";
    assert_eq!(s.saved()[1], format!("c02 r1 {why}"));
    assert_eq!(s.saved()[7], format!("c04 r2 {why}"));
}

#[test]
fn again_adds_a_round_once_the_last_is_done_and_is_refused_before() {
    let s = setup();
    let mut first = Fake::new(&s.plan);
    first.stop_after = Some(3);
    s.run(&mut first, PLAIN, &[]).unwrap();
    let refused = s.run(&mut Fake::new(&s.plan), (true, false), &[]).err().expect("refused");
    assert!(matches!(refused, StudyDirError::Unfinished { round: 1, todo: 5, .. }), "{refused}");
    s.run(&mut Fake::new(&s.plan), PLAIN, &[]).unwrap();
    let mut again = Fake::new(&s.plan);
    s.run(&mut again, (true, false), &[]).unwrap();
    assert_eq!(again.log[..3], ["expect 8", "prepare c01", "measure c01 r3"]);
    assert_eq!(again.log.last().unwrap(), "measure c04 r4");
    assert_eq!(s.saved().len(), 16);
}
