//! Resuming: a study directory's plan against the file's plan now. A run already made
//! belongs to the cell it was planned for; if the file no longer plans that cell the same
//! way, its results would answer another question, so the study is refused, naming what
//! changed.

use crate::model::study::{CellRerun, StudyPlanRecord, StudyRun};

/// What changed between the plan a directory holds and the file's, in words; empty when
/// nothing did.
pub fn changes(old: &StudyPlanRecord, new: &StudyPlanRecord) -> Vec<String> {
    let mut out = Vec::new();
    let mut field = |name: &str, was: String, now: String| {
        if was != now {
            out.push(format!("{name} was {was}, now {now}"));
        }
    };
    field("repeats", old.repeats.to_string(), new.repeats.to_string());
    field("order", old.order.clone(), new.order.clone());
    field("warmup_s", old.warmup_s.to_string(), new.warmup_s.to_string());
    field("time_s", old.time_s.to_string(), new.time_s.to_string());
    field("seed", old.seed.to_string(), new.seed.to_string());
    let before = out.len();
    let (mut gone, mut changed) = (Vec::new(), Vec::new());
    for cell in &old.cells {
        match new.cells.iter().find(|c| c.values == cell.values) {
            None => gone.push(format!("{} ({})", cell.id, cell.describe(&[]))),
            Some(now) => {
                let (was, is) = (own_words(&cell.run, &cell.settings), own_words(&now.run, &now.settings));
                if was != is {
                    let lost: Vec<&str> = was.iter().filter(|w| !is.contains(w)).map(|w| w.as_str()).collect();
                    let added: Vec<&str> = is.iter().filter(|w| !was.contains(w)).map(|w| w.as_str()).collect();
                    changed.push(format!(
                        "{} ({}): [{}] -> [{}]",
                        cell.id,
                        cell.describe(&[]),
                        lost.join(" "),
                        added.join(" ")
                    ));
                }
            }
        }
    }
    let added: Vec<String> =
        new.cells.iter().filter(|c| !old.cells.iter().any(|o| o.values == c.values)).map(|c| c.describe(&[])).collect();
    for (what, cells) in [("no longer planned", gone), ("changed", changed), ("new", added)] {
        if !cells.is_empty() {
            let more = cells.len().saturating_sub(2);
            let mut shown = cells.into_iter().take(2).collect::<Vec<_>>().join(", ");
            if more > 0 {
                shown += &format!(" and {more} more");
            }
            out.push(format!("cells {what}: {shown}"));
        }
    }
    let ids = |p: &StudyPlanRecord| p.cells.iter().map(|c| (c.id.clone(), c.values.clone())).collect::<Vec<_>>();
    if out.len() == before && ids(old) != ids(new) {
        out.push("the cells' order changed".into());
    }
    out
}

/// The rounds of cells whose workload changes its tables' row count (`changes_rows` gives
/// its words, `inserts rows`) that ran in part: each such round's runs that had run are
/// cleared (status none), so the round runs again from its first repeat on a freshly
/// prepared dataset, the rows each repeat starts from as in an uninterrupted study. A
/// repeat that ran before the interruption stood on the dataset as it was then; the one
/// that runs after it would start from a dataset that is gone (a sandbox is rebuilt) or
/// that the interrupted repeat changed halfway.
pub fn rerun_partial(runs: &mut [StudyRun], changes_rows: impl Fn(&str) -> Option<String>) -> Vec<CellRerun> {
    let mut rounds: Vec<(String, u32)> = runs.iter().map(|r| (r.cell.clone(), r.round)).collect();
    rounds.sort();
    rounds.dedup();
    let mut out = Vec::new();
    for (cell, round) in rounds {
        let Some(why) = changes_rows(&cell) else { continue };
        let mine = |r: &&mut StudyRun| r.cell == cell && r.round == round;
        let these: Vec<&mut StudyRun> = runs.iter_mut().filter(|r| mine(r)).collect();
        let ran = these.iter().filter(|r| r.status.is_some()).count();
        if ran == 0 || ran == these.len() {
            continue;
        }
        let mut cleared = Vec::new();
        let mut first = u32::MAX;
        for r in these {
            first = first.min(r.repeat);
            if r.status.is_some() {
                cleared.push(r.repeat);
            }
            *r = StudyRun::planned(r.cell.clone(), r.repeat, r.round, r.file.clone());
        }
        cleared.sort();
        out.push(CellRerun { cell, round, from_repeat: first, cleared, why });
    }
    out
}

/// A cell's run line and settings as words, without what the header decides (named once
/// as the header's own change).
fn own_words(run: &str, settings: &[String]) -> Vec<String> {
    let header = ["--time=", "--warmup=", "--rand-seed="];
    let words = run.split(' ').filter(|w| !header.iter().any(|h| w.starts_with(h))).map(String::from);
    words.chain(settings.iter().map(|s| format!("set:{s}"))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::study::{AxisValue, StudyCell};
    use crate::model::RunStatus;

    fn cell(id: &str, threads: &str, run: &str) -> StudyCell {
        StudyCell {
            target_kind: String::new(),
            id: id.into(),
            target: "a".into(),
            settings: vec![],
            workload: "w".into(),
            values: vec![AxisValue { axis: "threads".into(), value: threads.into() }],
            run: run.into(),
            probe: None,
            faults: None,
        }
    }

    fn plan(cells: Vec<StudyCell>) -> StudyPlanRecord {
        StudyPlanRecord { repeats: 2, order: "interleaved".into(), warmup_s: 1, time_s: 5, seed: 1, cells }
    }

    fn runs(statuses: &[(&str, u32, u32, Option<RunStatus>)]) -> Vec<StudyRun> {
        let run = |&(cell, repeat, round, status): &(&str, u32, u32, Option<RunStatus>)| StudyRun {
            status,
            tps: status.map(|_| 100.0),
            ..StudyRun::planned(cell.into(), repeat, round, format!("runs/{cell}-r{repeat}.json"))
        };
        statuses.iter().map(run).collect()
    }

    #[test]
    fn a_round_that_changes_rows_and_ran_in_part_runs_again_from_its_first_repeat() {
        use RunStatus::{Completed, Failed};
        let mut all = runs(&[
            ("c01", 1, 1, Some(Completed)),
            ("c02", 1, 1, Some(Completed)),
            ("c01", 2, 1, Some(Completed)),
            ("c02", 2, 1, Some(Completed)),
            ("c01", 3, 1, None),
            ("c02", 3, 1, None),
            ("c01", 4, 2, Some(Failed)),
            ("c01", 5, 2, None),
        ]);
        let inserts = |cell: &str| (cell == "c01").then(|| "its workload inserts rows".to_string());
        let reruns = rerun_partial(&mut all, inserts);
        assert_eq!(reruns.len(), 2, "{reruns:?}");
        assert_eq!((reruns[0].round, reruns[0].from_repeat, reruns[0].cleared.clone()), (1, 1, vec![1, 2]));
        assert_eq!((reruns[1].round, reruns[1].from_repeat, reruns[1].cleared.clone()), (2, 4, vec![4]));
        assert!(reruns[0]
            .describe()
            .starts_with("rerun from repeat 1 after an interruption: its workload inserts rows"));
        let status = |cell: &str, repeat: u32| all.iter().find(|r| r.cell == cell && r.repeat == repeat).unwrap();
        assert!([1, 2, 3, 4, 5].iter().all(|&k| status("c01", k).status.is_none() && status("c01", k).tps.is_none()));
        // A cell whose rows stay as they are keeps what it ran.
        assert_eq!(status("c02", 2).status, Some(Completed));
        // A round all run, or not run at all, stays as it is.
        let mut done = runs(&[("c01", 1, 1, Some(Completed)), ("c01", 2, 1, Some(Completed)), ("c01", 3, 2, None)]);
        assert!(rerun_partial(&mut done, inserts).is_empty());
    }

    #[test]
    fn every_change_is_named_and_an_equal_plan_has_none() {
        let old = plan(vec![cell("c01", "1", "run w --threads=1"), cell("c02", "4", "run w --threads=4")]);
        assert!(changes(&old, &old.clone()).is_empty());
        let mut new = plan(vec![cell("c01", "1", "run w --threads=1 --tables=2"), cell("c02", "8", "run w")]);
        new.time_s = 10;
        let said = changes(&old, &new);
        assert_eq!(
            said,
            [
                "time_s was 5, now 10",
                "cells no longer planned: c02 (threads=4)",
                "cells changed: c01 (threads=1): [] -> [--tables=2]",
                "cells new: threads=8",
            ]
        );
        let swapped = plan(vec![cell("c01", "4", "run w --threads=4"), cell("c02", "1", "run w --threads=1")]);
        assert_eq!(changes(&old, &swapped), ["the cells' order changed"]);
    }
}
