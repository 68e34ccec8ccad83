//! Whether a workload changes how many rows its tables hold: a study that resumes such a
//! workload must run its repeats again from the first (the dataset's history matters).

use super::{Program, Times};

impl Program {
    /// `inserts rows`, `deletes rows` or `inserts and deletes rows` when some transaction
    /// sends INSERTs and DELETEs in unequal (or drawn) numbers; None when its row counts
    /// stay as prepared (sysbench's delete+insert pairs put back the row they take).
    pub fn row_change(&self) -> Option<&'static str> {
        let (mut inserts, mut deletes) = (false, false);
        for t in &self.transactions {
            // Fixed counts per transaction, and whether a drawn count sends any.
            let (mut added, mut taken) = ((0u64, false), (0u64, false));
            for step in t.steps.iter().filter(|s| !s.repeat.never()) {
                for s in &t.statements[step.first..step.first + step.count] {
                    let verb = s.sql.split_whitespace().next().unwrap_or("").to_ascii_uppercase();
                    let counter = match verb.as_str() {
                        "INSERT" | "REPLACE" => &mut added,
                        "DELETE" => &mut taken,
                        _ => continue,
                    };
                    match step.repeat {
                        Times::Fixed(n) => counter.0 += n as u64,
                        Times::Drawn(_) => counter.1 = true,
                    }
                }
            }
            if added.0 != taken.0 || added.1 || taken.1 {
                inserts |= added.0 > 0 || added.1;
                deletes |= taken.0 > 0 || taken.1;
            }
        }
        match (inserts, deletes) {
            (true, true) => Some("inserts and deletes rows"),
            (true, false) => Some("inserts rows"),
            (false, true) => Some("deletes rows"),
            (false, false) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::model::Dialect;
    use crate::workload::{builtin, OltpOptions, Workload};

    #[test]
    fn inserts_and_deletes_change_rows_and_sysbench_pairs_do_not() {
        let o = OltpOptions::default();
        let change = |w| builtin::program(w, &o, Dialect::Mysql).unwrap().row_change();
        assert_eq!(change(Workload::OltpInsert), Some("inserts rows"));
        assert_eq!(change(Workload::OltpDelete), Some("deletes rows"));
        for w in [Workload::OltpReadWrite, Workload::OltpWriteOnly, Workload::OltpReadOnly, Workload::OltpUpdateIndex] {
            assert_eq!(change(w), None, "{w:?}");
        }
        // Recipes: money transfers log each transfer (inserts); YCSB C only reads.
        let recipe = |name: &str| {
            let f = crate::workload::file::load(std::path::Path::new(name), Dialect::Mysql, &[]).unwrap();
            f.program.row_change()
        };
        assert_eq!(recipe("xfer"), Some("inserts rows"));
        assert_eq!(recipe("ycsb-c"), None);
    }
}
