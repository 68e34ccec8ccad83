//! Cost per million transactions of a cell from its target's prices: compute, storage and
//! provisioned IOPS by the hour over the transactions an hour holds at the cell's
//! throughput; I/O by the requests per transaction the server itself counted in each
//! measured interval (the counters its driver names as I/O requests). Two totals, side by
//! side: without per-request I/O (a month's fixed bill over its transactions, as the
//! Percona 2015 seed priced each side) and with it (as the service bills).

use crate::model::study::{CellCost, Prices};
use crate::model::{Metric, ResultDocument};

/// Hours in a billing month (AWS's 730).
const HOURS_PER_MONTH: f64 = 730.0;
const GIB: f64 = (1u64 << 30) as f64;

/// None when the cell ran no transactions.
pub fn cost(p: &Prices, doc: &ResultDocument) -> Option<CellCost> {
    let tps = doc.metric(&Metric::Tps).filter(|t| *t > 0.0)?;
    let per_million = |per_hour: f64| per_hour / (tps * 3600.0) * 1e6;
    let compute = per_million(p.compute_per_hour);
    let (gb, storage_basis) = match p.storage_gb {
        Some(gb) => (gb, format!("provisioned {gb} GB")),
        None => {
            let gib = doc.conditions.dataset.total_bytes as f64 / GIB;
            (gib, format!("dataset {gib:.3} GiB"))
        }
    };
    let month_without_io =
        p.compute_per_hour * HOURS_PER_MONTH + gb * p.storage_per_gb_month + p.provisioned_iops * p.per_iops_month;
    let storage = per_million(gb * p.storage_per_gb_month / HOURS_PER_MONTH);
    let provisioned_iops = per_million(p.provisioned_iops * p.per_iops_month / HOURS_PER_MONTH);
    let per_transaction = io_requests_per_transaction(doc);
    let io = per_transaction.map(|r| r * p.io_per_million);
    let total_without_io = compute + storage + provisioned_iops;
    Some(CellCost {
        currency: p.currency.clone(),
        total: total_without_io + io.unwrap_or(0.0),
        total_without_io,
        month_without_io,
        storage_basis,
        compute,
        storage,
        io,
        provisioned_iops,
        io_requests_per_transaction: per_transaction,
    })
}

/// The server's I/O requests over the transactions of the measured intervals it was
/// sampled in (a rate times the interval's length, summed over the driver's I/O counters).
pub fn io_requests_per_transaction(doc: &ResultDocument) -> Option<f64> {
    let keys = &doc.conditions.server.facts.as_ref()?.io_requests;
    let (mut requests, mut transactions) = (0.0, 0u64);
    for i in doc.intervals.iter().filter(|i| !i.warmup) {
        let rates: Vec<f64> = keys.iter().filter_map(|k| i.server.get(k).copied()).collect();
        if rates.is_empty() {
            continue;
        }
        requests += rates.iter().sum::<f64>() * i.duration_s;
        transactions += i.event.count;
    }
    (transactions > 0).then(|| requests / transactions as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_part_is_its_hourly_price_over_an_hours_transactions() {
        // A real run's result (a MariaDB run over 127.0.0.1), its figures set to round ones.
        let mut d: ResultDocument =
            serde_json::from_str(include_str!("../audit/testdata/mariadb_loopback.json")).expect("fixture parses");
        d.stats.get_mut("event").expect("events").qps = 1000.0;
        d.intervals.clear();
        d.conditions.server.facts = None;
        d.conditions.dataset.total_bytes = 1 << 30;
        let p = Prices {
            currency: "USD".into(),
            compute_per_hour: 3.6,
            storage_per_gb_month: 730.0,
            storage_gb: None,
            io_per_million: 0.2,
            provisioned_iops: 1000.0,
            per_iops_month: 0.73,
        };
        let c = cost(&p, &d).expect("transactions ran");
        // 1000 tps: 3.6 M transactions an hour.
        assert!((c.compute - 1.0).abs() < 1e-9, "{c:?}");
        assert!((c.storage - 1.0 / 3.6).abs() < 1e-9, "{c:?}");
        assert!((c.provisioned_iops - 1.0 / 3.6).abs() < 1e-9, "{c:?}");
        assert_eq!(c.io, None, "no server counters: no I/O part");
        assert_eq!(c.storage_basis, "dataset 1.000 GiB");
        assert!((c.total - c.total_without_io).abs() < 1e-12, "{c:?}");
        let mut i = crate::model::IntervalStats { duration_s: 2.0, ..Default::default() };
        i.event.count = 2000;
        let mut warm = i.clone();
        warm.warmup = true;
        warm.server.insert("Innodb_data_writes/s".into(), 1e6);
        d.intervals.push(warm);
        i.server.insert("Innodb_data_writes/s".into(), 3000.0);
        d.intervals.push(i);
        d.conditions.server.facts =
            Some(crate::model::ServerFacts { io_requests: vec!["Innodb_data_writes/s".into()], ..Default::default() });
        let c = cost(&p, &d).unwrap();
        assert!((c.io_requests_per_transaction.unwrap() - 3.0).abs() < 1e-9, "{c:?}");
        // 3 requests a transaction, 3 M requests a million of them, at 0.2 a million.
        assert!((c.io.unwrap() - 0.6).abs() < 1e-9, "{c:?}");
        assert!((c.total - c.total_without_io - 0.6).abs() < 1e-9, "both totals, I/O apart: {c:?}");
    }

    #[test]
    fn a_provisioned_volume_is_priced_whatever_the_dataset_and_the_month_as_the_seed_did() {
        let mut d: ResultDocument =
            serde_json::from_str(include_str!("../audit/testdata/mariadb_loopback.json")).expect("fixture parses");
        d.stats.get_mut("event").expect("events").qps = 1548.649;
        d.conditions.dataset.total_bytes = 1 << 20;
        // The seed's Aurora: $277.40 a month of compute, 400 GB at $0.10 (its "$311.40"
        // has compute at $271.40: 311.40 / 1548.649 tps is its 0.2010785 "ops cost").
        let p = Prices {
            currency: "USD".into(),
            compute_per_hour: 271.40 / 730.0,
            storage_per_gb_month: 0.10,
            storage_gb: Some(400.0),
            io_per_million: 0.2,
            provisioned_iops: 0.0,
            per_iops_month: 0.0,
        };
        let c = cost(&p, &d).expect("transactions ran");
        assert_eq!(c.storage_basis, "provisioned 400 GB");
        assert!((c.month_without_io - 311.40).abs() < 1e-9, "{c:?}");
        assert!((c.month_without_io / 1548.649 - 0.2010785).abs() < 1e-6, "the seed's ops cost");
        let per_million = 311.40 / (1548.649 * 3600.0 * HOURS_PER_MONTH) * 1e6;
        assert!((c.total_without_io - per_million).abs() < 1e-9, "{c:?}");
    }
}
