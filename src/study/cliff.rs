//! The cache cliff: along a numeric axis (a data size, a cache size), the neighbouring
//! cells where the data stops fitting in the cache, and what throughput did there. A study
//! that sweeps the data size past the buffer pool is about this point; a reader should not
//! have to find it on a chart.

use crate::model::study::{CacheCliff, CellFigures, StudyCell};

/// Every cliff: for each numeric axis, each line of cells that differ only on it, in the
/// axis's order, each step from a cell that fits to one that does not.
pub fn cliffs(cells: &[StudyCell], figures: &[CellFigures]) -> Vec<CacheCliff> {
    let axes: Vec<&str> = cells.first().map_or(vec![], |c| c.values.iter().map(|v| v.axis.as_str()).collect());
    let mut out = Vec::new();
    for axis in axes {
        let number = |c: &StudyCell| c.value(axis).and_then(|v| v.parse::<f64>().ok());
        if cells.iter().any(|c| number(c).is_none()) {
            continue;
        }
        let mut lines: Vec<(String, Vec<&StudyCell>)> = Vec::new();
        for c in cells {
            let at = c.describe(&[axis]);
            match lines.iter_mut().find(|(a, _)| *a == at) {
                Some((_, line)) => line.push(c),
                None => lines.push((at, vec![c])),
            }
        }
        for (at, mut line) in lines {
            line.sort_by(|a, b| number(a).unwrap_or(0.0).total_cmp(&number(b).unwrap_or(0.0)));
            let fig = |c: &StudyCell| figures.iter().find(|f| f.cell == c.id);
            for pair in line.windows(2) {
                let (Some(a), Some(b)) = (fig(pair[0]), fig(pair[1])) else { continue };
                let (Some(ra), Some(rb), Some(cache)) = (a.cache_ratio, b.cache_ratio, &b.cache) else { continue };
                if crate::model::conditions::is_cache_cliff(ra, rb) {
                    out.push(CacheCliff {
                        axis: axis.to_string(),
                        at: at.clone(),
                        cache: cache.clone(),
                        cells: [a.cell.clone(), b.cell.clone()],
                        values: [pair[0], pair[1]].map(|c| c.value(axis).unwrap_or_default().to_string()),
                        cache_ratios: [ra, rb],
                        tps: [a.tps, b.tps],
                    });
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::study::AxisValue;
    use crate::model::RunStatus;

    fn cell(id: &str, target: &str, size: &str) -> StudyCell {
        let v = |axis: &str, value: &str| AxisValue { axis: axis.into(), value: value.into() };
        StudyCell {
            target_kind: String::new(),
            id: id.into(),
            target: target.into(),
            settings: vec![],
            workload: "w".into(),
            values: vec![v("target", target), v("workload", "w"), v("table_size", size)],
            run: String::new(),
            probe: None,
            faults: None,
        }
    }

    fn fig(id: &str, ratio: f64, tps: f64) -> CellFigures {
        CellFigures {
            cell: id.into(),
            completed: 1,
            planned: 1,
            not_run: 0,
            status: Some(RunStatus::Completed),
            rounds: vec![],
            tps: Some(tps),
            tps_interval: None,
            p99_us: None,
            p99_interval: None,
            findings: vec![],
            cost: None,
            cache_ratio: Some(ratio),
            cache: Some("innodb_buffer_pool_size".into()),
            probes: vec![],
        }
    }

    #[test]
    fn the_step_where_the_data_stops_fitting_is_named_per_line_of_cells() {
        // Listed out of order: the axis's order decides the neighbours.
        let cells = [
            cell("c01", "a", "1000000"),
            cell("c02", "a", "1000"),
            cell("c03", "a", "10000"),
            cell("c04", "b", "1000"),
        ];
        let figures = [fig("c01", 8.0, 300.0), fig("c02", 0.1, 3000.0), fig("c03", 0.9, 2800.0), fig("c04", 0.1, 10.0)];
        let found = cliffs(&cells, &figures);
        assert_eq!(found.len(), 1, "{found:?}");
        let c = &found[0];
        assert_eq!(
            (c.cells.clone(), c.values.clone()),
            (["c03".into(), "c01".into()], ["10000".into(), "1000000".into()])
        );
        assert_eq!(
            c.describe(),
            "target=a workload=w: the data fits innodb_buffer_pool_size at table_size=10000 (0.90x) and not at table_size=1000000 (8.00x); tps 2800.0 -> 300.0 (-89.3%)"
        );
    }
}
