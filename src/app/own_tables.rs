//! fairbench's own bookkeeping tables, which no workload declares: the shard barrier's
//! (`fairbench_shards`) and the HA probes' (`fairbench_probe`, `fairbench_heartbeat`).
//! Cleanup drops them when they carry fairbench's mark and no run uses them: a probe
//! writes its table continuously (rows added while cleanup watches it for a moment), a
//! sharded run has a start without its end (until it is two days old: then it died).

use crate::db::{Connection, Database};
use crate::model::TableDef;
use crate::prepare::PrepareError;
use std::sync::Arc;
use std::time::Duration;

/// Each table as fairbench creates it, and the mark (its comment, or SQLite's CREATE text)
/// it gives it.
const OWN: [(fn() -> TableDef, &str); 3] = [
    (crate::shard::barrier::table, crate::shard::barrier::MARKER),
    (crate::probe::probe_table, crate::probe::MARKER),
    (crate::probe::heartbeat_table, crate::probe::MARKER),
];
/// How long cleanup watches a probe's table for new rows.
const WATCH: Duration = Duration::from_millis(1500);
/// A sharded run started this long ago without ending died: its rows are not in use.
const RUN_AT_MOST_US: i64 = 2 * 86_400 * 1_000_000;

/// What became of fairbench's own tables.
#[derive(Default)]
pub struct OwnTables {
    pub dropped: Vec<String>,
    /// Left, and why (a run uses it).
    pub in_use: Vec<(String, String)>,
}

/// Drops fairbench's own tables no run uses, under the prepare lock.
pub fn cleanup_all<D: Database>(db: Arc<D>) -> Result<OwnTables, PrepareError> {
    crate::local_runtime().block_on(async {
        let mut conn = db.connect().await?;
        crate::prepare::lock(&mut conn).await?;
        cleanup(&*db, &mut conn).await
    })
}

async fn cleanup<D: Database>(db: &D, conn: &mut D::Conn) -> Result<OwnTables, PrepareError> {
    let mut out = OwnTables::default();
    let existing = conn.tables("fairbench_").await?;
    for (table, marker) in OWN {
        let table = table();
        let name = table.name.as_str();
        let Some(t) = existing.iter().find(|t| t.name == name) else { continue };
        let ours = t.definition == marker || db.create_table_sql(&table, marker).first() == Some(&t.definition);
        if !ours {
            continue;
        }
        let busy = match name {
            "fairbench_shards" => shards_running(db, conn).await?,
            _ => probe_writing(conn, name).await?,
        };
        match busy {
            Some(why) => out.in_use.push((name.to_string(), why)),
            None => {
                conn.simple(&format!("DROP TABLE {name}")).await?;
                out.dropped.push(name.to_string());
            }
        }
    }
    Ok(out)
}

/// A probe adds rows to its table as it runs: rows added while cleanup watched.
async fn probe_writing(conn: &mut impl Connection, name: &str) -> Result<Option<String>, PrepareError> {
    let sql = format!("SELECT count(*) FROM {name}");
    let count = |rows: Vec<Vec<Option<String>>>| rows.first().and_then(|r| r.first().cloned().flatten());
    let before = count(conn.text_rows(&sql).await?);
    tokio::time::sleep(WATCH).await;
    let after = count(conn.text_rows(&sql).await?);
    Ok((before != after).then(|| {
        format!("a probe is writing to it ({} rows added in {} s)", diff(&before, &after), WATCH.as_secs_f64())
    }))
}

fn diff(before: &Option<String>, after: &Option<String>) -> i64 {
    let n = |v: &Option<String>| v.as_deref().and_then(|s| s.parse::<i64>().ok()).unwrap_or(0);
    n(after) - n(before)
}

/// A sharded run under way: a shard started a measured phase (`start-N`) and did not end it
/// (`end-N`), less than two days ago on the database's clock.
async fn shards_running<D: Database>(db: &D, conn: &mut D::Conn) -> Result<Option<String>, PrepareError> {
    let now = format!("SELECT {}", db.clock_sql().epoch_us);
    let now_us = conn.text_rows(&now).await?.first().and_then(|r| r.first().cloned().flatten());
    let now_us: i64 = now_us.and_then(|v| v.parse::<f64>().ok()).map_or(0, |v| v as i64);
    let sql = format!(
        "SELECT s.run_key FROM fairbench_shards s WHERE s.phase LIKE 'start-%' AND s.phase NOT LIKE '%:go' \
         AND s.at_us > {} AND NOT EXISTS (SELECT 1 FROM fairbench_shards e WHERE e.run_key = s.run_key \
         AND e.shard = s.shard AND e.phase = REPLACE(s.phase, 'start-', 'end-'))",
        now_us - RUN_AT_MOST_US
    );
    let rows = conn.text_rows(&sql).await?;
    Ok(rows
        .first()
        .and_then(|r| r.first().cloned().flatten())
        .map(|key| format!("the sharded run {key:?} has not ended")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::sqlite::SqliteDatabase;
    use crate::db::TargetUrl;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    /// A probe's table is left while rows arrive and dropped once they stop; a sharded run
    /// without its end keeps the barrier's table; a table of that name fairbench did not
    /// mark is never touched.
    #[test]
    fn own_tables_go_when_no_run_uses_them() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("own.db").display());
        let db = Arc::new(SqliteDatabase::new(&TargetUrl::parse(&url, |_| None).unwrap()).unwrap());
        db.create_if_missing().unwrap();
        let rt = crate::local_runtime();
        let mut conn = rt.block_on(db.connect()).unwrap();
        rt.block_on(crate::probe::ensure_table(&*db, &mut conn, &crate::probe::probe_table(), crate::probe::MARKER))
            .unwrap();
        let writing = Arc::new(AtomicBool::new(true));
        let writer = {
            let (db, writing) = (db.clone(), writing.clone());
            std::thread::spawn(move || {
                let rt = crate::local_runtime();
                let mut conn = rt.block_on(db.connect()).unwrap();
                let mut seq = 0;
                while writing.load(Ordering::SeqCst) {
                    seq += 1;
                    let sql = format!("INSERT INTO fairbench_probe VALUES (1, {seq}, 0, '', 0)");
                    rt.block_on(conn.simple(&sql)).unwrap();
                    std::thread::sleep(Duration::from_millis(100));
                }
            })
        };
        let out = rt.block_on(cleanup(&*db, &mut conn)).unwrap();
        assert!(out.dropped.is_empty());
        assert_eq!(out.in_use.len(), 1);
        assert!(out.in_use[0].1.starts_with("a probe is writing to it"), "{:?}", out.in_use);
        writing.store(false, Ordering::SeqCst);
        writer.join().unwrap();
        let out = rt.block_on(cleanup(&*db, &mut conn)).unwrap();
        assert_eq!(out.dropped, ["fairbench_probe"]);

        let barrier = crate::shard::barrier::table();
        rt.block_on(crate::probe::ensure_table(&*db, &mut conn, &barrier, crate::shard::barrier::MARKER)).unwrap();
        let now = "CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER)";
        let start = format!("INSERT INTO fairbench_shards VALUES ('k', 0, 'start-1', {now}, '')");
        rt.block_on(conn.simple(&start)).unwrap();
        let out = rt.block_on(cleanup(&*db, &mut conn)).unwrap();
        assert_eq!(out.in_use, [("fairbench_shards".to_string(), "the sharded run \"k\" has not ended".to_string())]);
        let end = format!("INSERT INTO fairbench_shards VALUES ('k', 0, 'end-1', {now}, '')");
        rt.block_on(conn.simple(&end)).unwrap();
        assert_eq!(rt.block_on(cleanup(&*db, &mut conn)).unwrap().dropped, ["fairbench_shards"]);

        rt.block_on(conn.simple("CREATE TABLE fairbench_heartbeat (x INTEGER)")).unwrap();
        let out = rt.block_on(cleanup(&*db, &mut conn)).unwrap();
        assert!(out.dropped.is_empty() && out.in_use.is_empty(), "not fairbench's: left alone");
    }
}
