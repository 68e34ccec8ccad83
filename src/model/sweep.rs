//! `fairbench sweep`: one workload run at every combination of client counts and data sizes
//! (the studies' data-size sweeps, from in memory to larger than the cache). Every point is
//! a full result; the summary names where throughput stopped growing.

use super::ResultDocument;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub const SWEEP_SCHEMA_NAME: &str = "fairbench.sweep";
pub const SWEEP_SCHEMA_VERSION: u32 = 1;

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct SweepDocument {
    pub schema: String,
    pub schema_version: u32,
    pub fairbench_version: String,
    pub workload: String,
    /// The target URL, password replaced by `***`.
    pub target: String,
    /// The values swept, as given.
    pub threads: Vec<u32>,
    pub tables: Vec<u32>,
    pub table_sizes: Vec<u64>,
    /// In the order run: data sizes ascending, client counts ascending within each.
    pub points: Vec<SweepPoint>,
    /// Per data size: the point where adding clients stopped paying.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub saturation: Vec<Saturation>,
    /// Per client count: the step in data size where the data outgrew the largest cache.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cache_cliffs: Vec<CacheCliff>,
}

/// Where the dataset stopped fitting in the server's largest cache, and what that did to
/// throughput (the studies' "in memory" vs "larger than the cache").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CacheCliff {
    pub threads: u32,
    /// The cache, by the server's name for it (`innodb_buffer_pool_size`, ...).
    pub cache: String,
    pub cache_bytes: u64,
    /// The largest data size that fit, and the next one (tables x rows per table, bytes).
    pub fits: (u32, u64, u64),
    pub exceeds: (u32, u64, u64),
    pub tps_fits: f64,
    pub tps_exceeds: f64,
    pub reason: String,
}

/// The cache cliff of one client count's points (ascending data sizes): the first step
/// from a dataset within the largest cache to one beyond it.
pub fn cache_cliff(points: &[&SweepPoint]) -> Option<CacheCliff> {
    fn dataset(p: &SweepPoint) -> &super::DatasetConditions {
        &p.result.conditions.dataset
    }
    points.windows(2).find_map(|w| {
        let (name, ra, rb) = dataset(w[0]).cache_cliff_to(dataset(w[1]))?;
        let cache = dataset(w[1]).largest_cache()?.1;
        let (a, b) = (dataset(w[0]).working_set_bytes(), dataset(w[1]).working_set_bytes());
        let tps = |p: &SweepPoint| p.result.stats.get("event").map_or(0.0, |s| s.qps);
        let (before, after) = (tps(w[0]), tps(w[1]));
        let change = if before > 0.0 { format!("{:+.1}%", (after / before - 1.0) * 100.0) } else { "-".into() };
        Some(CacheCliff {
            threads: w[0].threads,
            cache: name.to_string(),
            cache_bytes: cache,
            fits: (w[0].tables, w[0].table_size, a),
            exceeds: (w[1].tables, w[1].table_size, b),
            tps_fits: before,
            tps_exceeds: after,
            reason: format!(
                "at {} the data grew from {:.2}x to {:.2}x {name}: events/s {before:.1} -> {after:.1} ({change})",
                super::plural(w[0].threads as u64, "client"),
                ra,
                rb
            ),
        })
    })
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct SweepPoint {
    pub threads: u32,
    pub tables: u32,
    pub table_size: u64,
    /// The point's full result.
    pub result: ResultDocument,
}

/// Where throughput stopped growing while latency kept rising.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Saturation {
    pub tables: u32,
    pub table_size: u64,
    /// The last client count whose throughput the next one did not beat by 10% while its
    /// p99 latency rose by 20% or more.
    pub threads: u32,
    pub tps: f64,
    pub reason: String,
}

/// The saturation point of one data size's points (ascending client counts): the first
/// step that adds clients but less than 10% throughput while p99 rises by 20% or more.
pub fn saturation(points: &[&SweepPoint]) -> Option<Saturation> {
    let metric = |p: &SweepPoint, class: &str| p.result.stats.get(class).map(|s| (s.qps, s.p99_us));
    points.windows(2).find_map(|w| {
        let ((tps0, p99_0), (tps1, p99_1)) = (metric(w[0], "event")?, metric(w[1], "event")?);
        let gain = if tps0 > 0.0 { tps1 / tps0 - 1.0 } else { return None };
        let rise = if p99_0 > 0.0 { p99_1 / p99_0 - 1.0 } else { return None };
        (gain < 0.10 && rise >= 0.20).then(|| Saturation {
            tables: w[0].tables,
            table_size: w[0].table_size,
            threads: w[0].threads,
            tps: tps0,
            reason: format!(
                "from {} to {} throughput changed {:+.1}% while p99 latency rose {:+.1}%",
                w[0].threads,
                super::plural(w[1].threads as u64, "client"),
                gain * 100.0,
                rise * 100.0
            ),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A point of `bytes` of data whose caches are SQLite's: its own page cache (2 MB) and
    /// the OS page cache (8 GiB available).
    fn point(table_size: u64, bytes: u64, tps: f64) -> SweepPoint {
        let mut result: ResultDocument =
            serde_json::from_str(include_str!("../audit/testdata/mariadb_loopback.json")).expect("fixture parses");
        let ds = &mut result.conditions.dataset;
        ds.total_bytes = bytes;
        ds.cache = [("cache_size".into(), 2_048_000), ("os_page_cache".into(), 8 << 30)].into();
        result.stats.get_mut("event").expect("event stats").qps = tps;
        SweepPoint { threads: 1, tables: 1, table_size, result }
    }

    #[test]
    fn the_cache_cliff_is_where_the_data_outgrows_the_largest_cache_that_holds_it() {
        // Past SQLite's own 2 MB cache the data is still in the OS page cache: no cliff.
        let (a, b) = (point(1_000, 1 << 20, 900.0), point(30_000, 7 << 20, 850.0));
        assert_eq!(cache_cliff(&[&a, &b]), None);
        let c = point(40_000_000, 9 << 30, 90.0);
        let cliff = cache_cliff(&[&a, &b, &c]).expect("past the OS page cache");
        assert_eq!((cliff.cache.as_str(), cliff.cache_bytes), ("os_page_cache", 8 << 30));
        assert_eq!((cliff.fits.1, cliff.exceeds.1), (30_000, 40_000_000));
        assert!(
            cliff.reason.starts_with("at 1 client the data grew from 0.00x to 1.12x os_page_cache"),
            "{}",
            cliff.reason
        );
    }
}
