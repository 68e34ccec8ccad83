//! Resuming: a study directory's plan against the file's plan now. A run already made
//! belongs to the cell it was planned for; if the file no longer plans that cell the same
//! way, its results would answer another question, so the study is refused, naming what
//! changed.

use crate::model::study::StudyPlanRecord;

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
