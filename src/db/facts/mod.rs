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

/// The OS page cache's name among a server's data caches: what the host's available RAM
/// holds of the files a server reads through the OS.
pub const OS_PAGE_CACHE: &str = "os_page_cache";

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
