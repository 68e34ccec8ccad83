//! A study's conditions recorded once per target: what every cell of the target shares
//! (server, durability, caches, host, ...) and, per cell, what it has otherwise (the matrix's
//! setting, its dataset). The run and workload groups are left out: a cell's run options
//! and workload are its values already.

use crate::compare::diff::conditions;
use crate::model::comparison::Difference;
use crate::model::study::{ConditionGroups, StudyCell, TargetConditions};
use crate::model::ResultDocument;
use std::collections::BTreeMap;

/// Groups a cell's values already say.
const CELL_VALUES: [&str; 2] = ["run", "workload"];

/// Each target's conditions (in the order of its first cell) over its cells with a result.
pub fn by_target(cells: &[StudyCell], docs: &[Option<&ResultDocument>]) -> Vec<TargetConditions> {
    let mut targets: Vec<&str> = Vec::new();
    for c in cells {
        if !targets.contains(&c.target.as_str()) {
            targets.push(&c.target);
        }
    }
    targets
        .into_iter()
        .filter_map(|t| {
            let own: Vec<(&str, &ResultDocument)> = cells
                .iter()
                .zip(docs)
                .filter(|(c, _)| c.target == t)
                .filter_map(|(c, d)| d.map(|d| (c.id.as_str(), d)))
                .collect();
            (!own.is_empty()).then(|| one_target(t, &own))
        })
        .collect()
}

fn one_target(target: &str, cells: &[(&str, &ResultDocument)]) -> TargetConditions {
    type Key = (String, String);
    let maps: Vec<BTreeMap<Key, String>> = cells
        .iter()
        .map(|(_, d)| conditions(d).into_iter().filter(|((g, _), _)| !CELL_VALUES.contains(&g.as_str())).collect())
        .collect();
    let mut keys: Vec<&Key> = maps.iter().flat_map(|m| m.keys()).collect();
    keys.sort();
    keys.dedup();
    let mut out = TargetConditions { target: target.to_string(), compared: cells.len() as u32, ..Default::default() };
    let put = |groups: &mut ConditionGroups, (g, k): &Key, v: &str| {
        groups.entry(g.clone()).or_default().insert(k.clone(), v.to_string());
    };
    for key in keys {
        let values: Vec<Option<String>> = maps.iter().map(|m| m.get(key).cloned()).collect();
        let same = values.iter().all(|v| *v == values[0]) || Difference::new(&key.0, &key.1, values.clone()).negligible;
        match (same, &values[0]) {
            (true, Some(v)) => put(&mut out.common, key, v),
            _ => {
                for ((cell, _), v) in cells.iter().zip(&values) {
                    let groups = out.cells.entry(cell.to_string()).or_default();
                    put(groups, key, v.as_deref().unwrap_or("(absent)"));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(id: &str) -> StudyCell {
        StudyCell {
            target_kind: String::new(),
            id: id.into(),
            target: "maria".into(),
            settings: vec![],
            workload: "oltp_read_write".into(),
            values: vec![],
            run: String::new(),
            probe: None,
            faults: None,
        }
    }

    #[test]
    fn a_target_whose_cells_all_agree_counts_every_cell_read() {
        let d: ResultDocument = serde_json::from_str(include_str!("../audit/testdata/mariadb_loopback.json")).unwrap();
        let cells = [cell("c01"), cell("c02"), cell("c03")];
        let t = by_target(&cells, &[Some(&d), Some(&d), None]);
        assert_eq!((t[0].compared, t[0].cells.len()), (2, 0), "two cells had a result, alike");
    }
}
