//! The server's own figures over time (`intervals[].server`): one chart per kind of figure
//! and unit (I/O reads and writes per second, redo bytes per second, checkpoint age in
//! bytes...), each figure its driver follows a line.

use super::chart::{sig, Axis, Series};
use crate::model::{IntervalStats, ResultDocument, SampledFigure};
use serde_json::Value;

/// (id, title, y axis, series) of each chart, in the order the driver lists its figures.
pub fn charts(d: &ResultDocument, iv: &[&IntervalStats], t: &[Value]) -> Vec<(String, String, Axis, Vec<Series>)> {
    let figures = d.conditions.server.sampled();
    let present = |f: &&SampledFigure| iv.iter().any(|i| i.server.contains_key(&f.key));
    let mut groups: Vec<((&str, String), Vec<&SampledFigure>)> = Vec::new();
    for f in figures.iter().filter(present) {
        let unit = if f.is_rate() { format!("{} per second", f.unit) } else { f.unit.clone() };
        let key = (f.group.as_str(), unit);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, list)) => list.push(f),
            None => groups.push((key, vec![f])),
        }
    }
    groups
        .into_iter()
        .enumerate()
        .map(|(n, ((group, unit), list))| {
            let series = list
                .iter()
                .enumerate()
                .map(|(color, f)| {
                    let y = iv.iter().map(|i| i.server.get(&f.key).map_or(Value::Null, |v| sig(*v, 4))).collect();
                    Series::line(&f.label, t.to_vec(), y, color)
                })
                .collect();
            let title = format!("Server, {group}: {unit} (read about once a second)");
            (format!("server-{n}"), title, Axis::new(&unit, "linear", "num"), series)
        })
        .collect()
}
