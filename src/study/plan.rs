//! A study's cells and the order of its runs. A cell is one workload at one point of the
//! matrix on one target (a sandbox target once per combination of its settings); each runs
//! `repeats` times. Runs go point by point, so a dataset is prepared once per point and
//! target; within a point, interleaved (A B A B ...) or in an order drawn from the seed.

use super::file::{setting_axis, value_text, Order, StudyFile};
use crate::model::study::{StudyCell, StudyPlanRecord};
use crate::random::Rng;

/// One axis value: `threads=8`, `set.innodb_log_file_size=2G`.
pub use crate::model::study::AxisValue as Value;

/// What a study runs.
#[derive(Clone, Debug)]
pub struct StudyPlan {
    /// Every target instance: a URL target, or a sandbox target with one combination of
    /// its matrix settings (each started once for the whole study).
    pub instances: Vec<Instance>,
    pub cells: Vec<Cell>,
    /// Every run in order: a cell and its repeat (1-based).
    pub runs: Vec<(usize, u32)>,
    /// Datasets prepared: one per instance, workload and data size.
    pub datasets: usize,
    /// Seconds of warmup and measuring over all runs.
    pub run_s: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instance {
    pub target: String,
    /// The matrix's settings for it (none for a URL target).
    pub settings: Vec<Value>,
    /// Whether fairbench starts it (a sandbox).
    pub sandbox: bool,
}

#[derive(Clone, Debug)]
pub struct Cell {
    pub instance: usize,
    pub workload: usize,
    /// The run options of its point.
    pub point: Vec<Value>,
}

/// Every combination of the axes' values, the first axis slowest.
fn product(axes: &[(&String, &Vec<toml::Value>)]) -> Vec<Vec<Value>> {
    let mut points = vec![Vec::new()];
    for (axis, values) in axes {
        points = points
            .into_iter()
            .flat_map(|p| {
                values.iter().map(move |v| {
                    let mut q = p.clone();
                    q.push(Value { axis: axis.to_string(), value: value_text(v) });
                    q
                })
            })
            .collect();
    }
    points
}

impl StudyPlan {
    pub fn of(file: &StudyFile) -> StudyPlan {
        let (settings, options): (Vec<_>, Vec<_>) = file.matrix.iter().partition(|(a, _)| setting_axis(a).is_some());
        let mut instances = Vec::new();
        for (name, t) in &file.targets {
            let combos = if t.sandbox.is_some() { product(&settings) } else { vec![Vec::new()] };
            for chosen in combos {
                instances.push(Instance { target: name.clone(), settings: chosen, sandbox: t.sandbox.is_some() });
            }
        }
        let points = product(&options);
        let mut rng = Rng::seeded(file.study.seed.unwrap_or(1));
        let (mut cells, mut runs) = (Vec::new(), Vec::new());
        for workload in 0..file.workloads.len() {
            for point in &points {
                let first = cells.len();
                for instance in 0..instances.len() {
                    cells.push(Cell { instance, workload, point: point.clone() });
                }
                let mut these: Vec<(usize, u32)> =
                    (1..=file.study.repeats).flat_map(|r| (first..cells.len()).map(move |c| (c, r))).collect();
                if file.study.order == Order::Random {
                    shuffle(&mut these, &mut rng);
                }
                runs.extend(these);
            }
        }
        let size = |p: &Vec<Value>| -> Vec<String> {
            p.iter().filter(|v| v.axis == "table_size" || v.axis == "tables").map(|v| v.value.clone()).collect()
        };
        let mut distinct: Vec<Vec<String>> = points.iter().map(size).collect();
        distinct.sort();
        distinct.dedup();
        let datasets = instances.len() * file.workloads.len() * distinct.len();
        let run_s = runs.len() as u64 * (file.study.warmup_s as u64 + file.study.time_s);
        StudyPlan { instances, cells, runs, datasets, run_s }
    }
}

impl StudyPlan {
    /// A cell's value on every axis: its target, workload, settings and point.
    pub fn values(&self, file: &StudyFile, cell: &Cell) -> Vec<Value> {
        let instance = &self.instances[cell.instance];
        let mut values = vec![
            Value { axis: "target".into(), value: instance.target.clone() },
            Value { axis: "workload".into(), value: file.workloads[cell.workload].label().to_string() },
        ];
        values.extend(instance.settings.iter().cloned());
        values.extend(cell.point.iter().cloned());
        values
    }

    /// A cell as people read it: its target (with the matrix's settings: `template
    /// (set.x=0)`), its workload, its point (`threads=8 table_size=100`).
    pub fn label(&self, file: &StudyFile, cell: &Cell) -> [String; 3] {
        let words = |v: &[Value]| v.iter().map(|v| format!("{}={}", v.axis, v.value)).collect::<Vec<_>>().join(" ");
        let i = &self.instances[cell.instance];
        let target = match i.settings.is_empty() {
            true => i.target.clone(),
            false => format!("{} ({})", i.target, words(&i.settings)),
        };
        [target, file.workloads[cell.workload].label().to_string(), words(&cell.point)]
    }

    /// An instance's server settings, `NAME=VALUE`: the target's own, then the matrix's.
    pub fn settings(&self, file: &StudyFile, instance: usize) -> Vec<String> {
        let i = &self.instances[instance];
        let mut out = file.targets[&i.target].set.clone();
        out.extend(i.settings.iter().map(|v| format!("{}={}", v.axis.trim_start_matches("set."), v.value)));
        out
    }

    /// What resuming compares: the header and every cell, with `runs[i]` as cell i's run line.
    pub fn record(&self, file: &StudyFile, runs: Vec<String>) -> StudyPlanRecord {
        let s = &file.study;
        let cells = self
            .cells
            .iter()
            .zip(runs)
            .enumerate()
            .map(|(n, (cell, run))| StudyCell {
                id: cell_id(n),
                target: self.instances[cell.instance].target.clone(),
                target_kind: file.targets[&self.instances[cell.instance].target].kind(),
                settings: self.settings(file, cell.instance),
                workload: file.workloads[cell.workload].label().to_string(),
                values: self.values(file, cell),
                run,
                probe: file.workloads[cell.workload].probe.map(|p| p.name().to_string()),
                faults: file.workloads[cell.workload].faults.get(&self.instances[cell.instance].target).cloned(),
            })
            .collect();
        StudyPlanRecord {
            repeats: s.repeats,
            order: match s.order {
                Order::Interleaved => "interleaved".into(),
                Order::Random => "random".into(),
            },
            warmup_s: s.warmup_s,
            time_s: s.time_s,
            seed: s.seed.unwrap_or(1),
            cells,
        }
    }
}

/// `c01`, `c02`, ... (three digits past 99).
pub fn cell_id(n: usize) -> String {
    format!("c{:02}", n + 1)
}

/// Fisher-Yates, from the study's seed: the same file, the same order.
fn shuffle<T>(items: &mut [T], rng: &mut Rng) {
    for i in (1..items.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        items.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(text: &str) -> StudyPlan {
        StudyPlan::of(&toml::from_str(text).unwrap())
    }

    const TWO: &str = r#"
        [study]
        title = "t"
        repeats = 2
        time_s = 10
        warmup_s = 5
        [targets.a]
        sandbox = "mariadb"
        [targets.b]
        url = "sqlite://b.db"
        [[workloads]]
        name = "oltp_read_write"
        [matrix]
        threads = [1, 4]
        "set.sync_binlog" = [0, 1]
    "#;

    #[test]
    fn sandbox_targets_get_every_setting_and_runs_interleave_point_by_point() {
        let p = plan(TWO);
        let names: Vec<String> = p
            .instances
            .iter()
            .map(|i| format!("{}{:?}", i.target, i.settings.iter().map(|v| &v.value).collect::<Vec<_>>()))
            .collect();
        assert_eq!(names, ["a[\"0\"]", "a[\"1\"]", "b[]"]);
        // 2 points x 3 instances = 6 cells, each twice: A0 A1 B A0 A1 B for threads=1, then 4.
        assert_eq!(p.cells.len(), 6);
        let order: Vec<(usize, u32)> = p.runs.clone();
        assert_eq!(
            order,
            [(0, 1), (1, 1), (2, 1), (0, 2), (1, 2), (2, 2), (3, 1), (4, 1), (5, 1), (3, 2), (4, 2), (5, 2)]
        );
        assert_eq!(p.run_s, 12 * 15);
        assert_eq!(p.datasets, 3, "one data size: one dataset per instance");
    }

    #[test]
    fn a_random_order_stays_within_a_point_and_follows_the_seed() {
        let random = TWO.replace("time_s = 10", "time_s = 10\norder = \"random\"\nseed = 7");
        let (p, again) = (plan(&random), plan(&random));
        assert_eq!(p.runs, again.runs, "the same seed, the same order");
        assert!(p.runs[..6].iter().all(|(c, _)| *c < 3) && p.runs[6..].iter().all(|(c, _)| *c >= 3));
        assert_ne!(p.runs, plan(TWO).runs);
    }
}
