//! `compare --under-test NAME`: the difference the comparison is about. A server setting
//! (`innodb_flush_log_at_trx_commit`), a run option (`threads`), or a whole server:
//! `product`, `version`, `target`. That difference is reported as the comparison's
//! subject, not as a finding, and does not undermine claims; every other difference still
//! does.

use crate::model::comparison::Difference;
use crate::model::Finding;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Subject {
    /// A setting or option by its name in the conditions.
    Setting(String),
    /// Different products: the product, its version, and each product's own settings
    /// (a variable only one side has). Settings both have must still agree.
    Product,
    /// One product in different versions: the version, and settings only one has.
    Version,
    /// Different servers altogether: everything about the server and how it was reached.
    Target,
}

impl Subject {
    pub fn parse(name: &str) -> Subject {
        match name {
            "product" => Subject::Product,
            "version" => Subject::Version,
            "target" => Subject::Target,
            setting => Subject::Setting(setting.to_string()),
        }
    }

    pub fn name(&self) -> &str {
        match self {
            Subject::Setting(s) => s,
            Subject::Product => "product",
            Subject::Version => "version",
            Subject::Target => "target",
        }
    }

    /// Whether the difference is (part of) what is under test.
    pub fn covers(&self, d: &Difference) -> bool {
        let (variable, one_sided) = (d.is_variable(), d.one_sided());
        match self {
            // The workload under test is its whole group: its name, options, statements.
            Subject::Setting(name) if name == "workload" => d.group == "workload",
            Subject::Setting(name) => d.key == *name,
            Subject::Product => (d.group == "server" && ["product", "version"].contains(&d.key.as_str())) || one_sided,
            Subject::Version => (d.group == "server" && d.key == "version") || one_sided,
            Subject::Target => d.group == "server" || variable || d.group == "transport",
        }
    }

    /// Whether a side's own audit finding comes from the setting under test alone (a
    /// `durability-off` whose only evidence is `innodb_flush_log_at_trx_commit`): then it
    /// is the subject too. A whole-server subject explains none: durability, for one,
    /// must still be the same.
    pub fn explains(&self, f: &Finding) -> bool {
        let Subject::Setting(name) = self else { return false };
        // log_bin=ON is context for sync_binlog's evidence, not a cause of its own.
        let mut causes = f.evidence.keys().filter(|k| *k != "log_bin").peekable();
        causes.peek().is_some() && causes.all(|k| k == name)
    }
}

impl Subject {
    /// Whether what is under test is the dataset's size (`table_size`, `tables`): its
    /// sides ran on different datasets on purpose.
    pub fn sizes_dataset(&self) -> bool {
        matches!(self, Subject::Setting(s) if ["table_size", "table-size", "tables"].contains(&s.as_str()))
    }

    /// Whether the sides' durability in effect differs only by the setting under test: what
    /// else switches durability off is the same on every side (a binary log left unsynced
    /// on both sides of an A/B of innodb_flush_log_at_trx_commit is no difference). Then a
    /// durability difference between the sides is the subject.
    pub fn explains_durability(&self, sides: &[&crate::model::Durability]) -> bool {
        let Subject::Setting(name) = self else { return false };
        // The binary log's and the journal's state are context for their settings.
        let rest = |d: &crate::model::Durability| -> Vec<(String, String)> {
            let other = |k: &String| k != name && !["log_bin", "journal_mode"].contains(&k.as_str());
            d.off_because.iter().filter(|(k, _)| other(k)).map(|(k, v)| (k.clone(), v.clone())).collect()
        };
        sides.first().is_some_and(|first| sides.iter().all(|d| rest(d) == rest(first)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Severity;

    fn diff(group: &str, key: &str, a: Option<&str>, b: Option<&str>) -> Difference {
        Difference::new(group, key, vec![a.map(Into::into), b.map(Into::into)])
    }

    #[test]
    fn a_setting_covers_its_own_difference_only() {
        let s = Subject::parse("innodb_flush_log_at_trx_commit");
        assert!(s.covers(&diff("durability", "innodb_flush_log_at_trx_commit", Some("1"), Some("0"))));
        assert!(!s.covers(&diff("durability", "sync_binlog", Some("1"), Some("0"))));
        let threads = Subject::parse("threads");
        assert!(threads.covers(&diff("run", "threads", Some("8"), Some("16"))));
        // A study's `vary = "workload"`: every difference of the workloads is the subject.
        let workload = Subject::parse("workload");
        assert!(workload.covers(&diff("workload", "name", Some("oltp_insert"), Some("oltp_write_only"))));
        assert!(workload.covers(&diff("workload", "statements", Some("1"), Some("4"))));
        assert!(!workload.covers(&diff("run", "threads", Some("8"), Some("16"))));
    }

    #[test]
    fn a_durability_difference_is_the_subject_when_only_the_tested_setting_differs() {
        let off = |pairs: &[(&str, &str)]| crate::model::Durability {
            off_because: pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            ..Default::default()
        };
        let s = Subject::parse("innodb_flush_log_at_trx_commit");
        let unsynced = [("sync_binlog", "0"), ("log_bin", "ON")];
        // Both sides leave the binary log unsynced: only the tested setting differs.
        let a = off(&unsynced);
        let b = off(&[unsynced[0], unsynced[1], ("innodb_flush_log_at_trx_commit", "0")]);
        assert!(s.explains_durability(&[&a, &b]));
        assert!(s.explains_durability(&[&off(&[]), &off(&[("innodb_flush_log_at_trx_commit", "2")])]));
        // One side also leaves the binary log unsynced: that is another difference.
        let c = off(&[("innodb_flush_log_at_trx_commit", "0")]);
        assert!(!s.explains_durability(&[&a, &c]));
        assert!(!Subject::parse("threads").explains_durability(&[&a, &b]));
    }

    #[test]
    fn a_product_covers_each_products_own_settings_not_shared_ones() {
        let p = Subject::parse("product");
        assert!(p.covers(&diff("server", "product", Some("MariaDB"), Some("PostgreSQL"))));
        assert!(p.covers(&diff("durability", "fsync", None, Some("on"))));
        assert!(!p.covers(&diff("memory/cache", "shared_buffers", Some("1"), Some("2"))));
        assert!(!p.covers(&diff("dataset", "rows", Some("1"), Some("2"))));
        assert!(!p.covers(&diff("client host", "cores", Some("2"), Some("4"))));
        assert!(Subject::parse("target").covers(&diff("transport", "driver", Some("mysql"), Some("postgres"))));
    }

    #[test]
    fn the_setting_under_test_explains_the_audit_findings_it_alone_causes() {
        let finding = |keys: &[&str]| Finding {
            id: "durability-off".into(),
            severity: Severity::Critical,
            title: String::new(),
            evidence: keys.iter().map(|k| (k.to_string(), serde_json::json!("0"))).collect(),
            advice: String::new(),
        };
        let s = Subject::parse("sync_binlog");
        assert!(s.explains(&finding(&["sync_binlog", "log_bin"])));
        assert!(!s.explains(&finding(&["sync_binlog", "innodb_flush_log_at_trx_commit"])));
        assert!(!Subject::Product.explains(&finding(&["fsync"])));
    }
}
