//! Commands suggested in messages, written so they work as printed: the user's workload, the
//! options that shape its tables and the target (its password shown as `***`).

use crate::db::TargetUrl;
use crate::plan::WorkloadPlan;
use crate::workload::OltpOptions;

/// `fairbench prepare ...` for these tables; `overwrite` when some are there already.
pub fn prepare(workload: &WorkloadPlan, target: &TargetUrl, overwrite: bool) -> String {
    let mut cmd = format!("fairbench prepare {}", workload_words(workload));
    if overwrite {
        cmd.push_str(" --overwrite");
    }
    format!("{cmd} --target {}", target.redacted())
}

/// `fairbench cleanup ...` that drops exactly these tables (fairbench's only).
pub fn cleanup(workload: &WorkloadPlan, target: &TargetUrl) -> String {
    match workload {
        WorkloadPlan::Sysbench { oltp, .. } => {
            format!("fairbench cleanup --tables {} --target {}", oltp.tables, target.redacted())
        }
        WorkloadPlan::File(f) => format!("fairbench cleanup {} --target {}", f.path, target.redacted()),
    }
}

/// The workload and the options that decide its tables, as the user would type them.
fn workload_words(workload: &WorkloadPlan) -> String {
    match workload {
        WorkloadPlan::Sysbench { workload, oltp, .. } => format!("{}{}", workload.name(), shape_flags(oltp)),
        WorkloadPlan::File(f) => {
            let sets: String = f
                .overrides
                .iter()
                .map(|(k, v)| format!(" --set {k}={}", crate::workload::program::scalar_text(v)))
                .collect();
            format!("{}{sets}", f.path)
        }
    }
}

/// The options that shape sbtest tables, where they differ from the defaults.
fn shape_flags(o: &OltpOptions) -> String {
    let d = OltpOptions::default();
    let mut s = String::new();
    if o.tables != d.tables {
        s += &format!(" --tables {}", o.tables);
    }
    if o.table_size != d.table_size {
        s += &format!(" --table-size {}", o.table_size);
    }
    let switch = |name: &str, on: bool| format!(" --{name}={}", if on { "on" } else { "off" });
    if o.auto_inc != d.auto_inc {
        s += &switch("auto-inc", o.auto_inc);
    }
    if o.secondary != d.secondary {
        s += &switch("secondary", o.secondary);
    }
    if o.create_secondary != d.create_secondary {
        s += &switch("create-secondary", o.create_secondary);
    }
    if !o.mysql_storage_engine.eq_ignore_ascii_case(&d.mysql_storage_engine) {
        s += &format!(" --mysql-storage-engine {}", o.mysql_storage_engine);
    }
    s
}
