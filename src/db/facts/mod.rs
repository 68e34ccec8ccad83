//! Each product's settings read as shared facts (model::facts): one file per family. A
//! flavour of a family (MySQL 8's redo settings, Aurora MySQL, TiDB) is handled in its
//! family's file.

pub mod mysql;
pub mod postgres;
pub mod sqlite;

use crate::model::{Dialect, ServerFacts};
use std::collections::BTreeMap;

/// The facts of a server as its driver reads them from `vars`; for results written before
/// the drivers recorded facts, read again from the variables the result kept.
pub fn of(driver: Dialect, product: &str, vars: &BTreeMap<String, String>) -> ServerFacts {
    match driver {
        Dialect::Mysql => mysql::facts(product, vars),
        Dialect::Postgres => postgres::facts(product, vars),
        Dialect::Sqlite => sqlite::facts(product, vars),
    }
}

pub use crate::model::conditions::OS_PAGE_CACHE;

/// Settings by what they change: each group with its setting names, exact or as prefixes
/// ending in `_`.
type Groups<'a> = &'a [(&'a str, &'a [&'a str])];

/// The group of each of `vars` that one of `groups` names (model::ServerFacts::setting_groups).
fn setting_groups(vars: &BTreeMap<String, String>, groups: Groups) -> BTreeMap<String, String> {
    let named =
        |name: &str, list: &[&str]| list.iter().any(|p| name == *p || (p.ends_with('_') && name.starts_with(p)));
    vars.keys()
        .filter_map(|k| groups.iter().find(|(_, list)| named(k, list)).map(|(g, _)| (k.clone(), g.to_string())))
        .collect()
}

/// The named settings that exist, as reported (the evidence behind a fact).
fn settings(vars: &BTreeMap<String, String>, names: &[&str]) -> BTreeMap<String, String> {
    names.iter().filter_map(|n| vars.get(*n).map(|v| (n.to_string(), v.clone()))).collect()
}

/// `ON`, `1`, `true`, `yes` (any case).
fn is_on(v: &str) -> bool {
    matches!(v.to_ascii_lowercase().as_str(), "on" | "1" | "true" | "yes")
}

/// `REPEATABLE-READ`, `repeatable read` -> `repeatable read`.
fn isolation(v: &str) -> String {
    v.to_ascii_lowercase().replace(['-', '_'], " ")
}

/// The settings among `names` whose values `bad` judges to switch durability off.
fn culprits(
    vars: &BTreeMap<String, String>,
    names: &[&str],
    bad: impl Fn(&str, &str) -> bool,
) -> BTreeMap<String, String> {
    names.iter().filter_map(|n| vars.get(*n).filter(|v| bad(n, v)).map(|v| (n.to_string(), v.clone()))).collect()
}

/// Settings as a server reports them, for tests.
#[cfg(test)]
fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_grouped_by_what_they_change() {
        let names = [
            "innodb_flush_log_at_trx_commit",
            "innodb_buffer_pool_size",
            "innodb_log_file_size",
            "innodb_redo_log_capacity",
            "query_cache_size",
            "server_id",
            "max_connections",
            "character_set_server",
            "gtid_binlog_pos",
        ];
        let mysql = of(Dialect::Mysql, "MySQL", &vars(&names.map(|n| (n, "1"))));
        let expect = [
            "durability",
            "memory/cache",
            "logging/redo",
            "logging/redo",
            "memory/cache",
            "replication",
            "connections",
            "other variables",
            "volatile",
        ];
        for (name, group) in names.iter().zip(expect) {
            assert_eq!(mysql.setting_group(name), group, "{name}");
        }
        let names = ["synchronous_commit", "max_wal_size", "synchronous_standby_names", "shared_buffers", "DateStyle"];
        let pg = of(Dialect::Postgres, "PostgreSQL", &vars(&names.map(|n| (n, "on"))));
        let expect = ["durability", "logging/redo", "replication", "memory/cache", "other variables"];
        for (name, group) in names.iter().zip(expect) {
            assert_eq!(pg.setting_group(name), group, "{name}");
        }
        // A setting one family knows means nothing to another.
        assert_eq!(pg.setting_group("innodb_flush_log_at_trx_commit"), "other variables");
        let sqlite = of(Dialect::Sqlite, "SQLite", &vars(&[("page_count", "10"), ("synchronous", "2")]));
        assert_eq!(sqlite.setting_group("page_count"), "volatile");
        assert_eq!(sqlite.setting_group("synchronous"), "durability");
    }
}
