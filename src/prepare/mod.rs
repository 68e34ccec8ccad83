//! prepare and cleanup: create and load `sbtest<n>` tables (here) or a workload file's
//! tables ([`tables`]) in parallel; drop only ours.

mod bulk;
mod parts;
pub mod sharded;
pub mod tables;

use crate::db::{Connection, Database, DbError, TableInfo};
use crate::model::SbtestShape;
use crate::random::{DistributionSpec, Rng};
use crate::workload::schema::{self, Ownership, RowBatcher};
use crate::workload::{OltpOptions, Workload};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A validated prepare.
#[derive(Clone, Debug)]
pub struct PreparePlan {
    pub workload: Workload,
    pub oltp: OltpOptions,
    pub distribution: DistributionSpec,
    pub threads: u32,
    pub seed: u64,
    pub overwrite: bool,
    /// Load through [`Connection::bulk_load`] in parts of [`parts::PART_ROWS`] rows, each
    /// drawn from its own random stream (as `--shard` does); else sysbench's INSERTs.
    pub bulk: bool,
}

/// What is prepared: sysbench's tables, or a workload file's.
#[derive(Clone)]
pub enum Tables {
    Sbtest(PreparePlan),
    File(Arc<crate::workload::program::Program>, tables::LoadOptions),
}

/// Why prepare or cleanup stopped.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    /// fairbench will not touch what is there (bad input: exit 2).
    #[error("{0}")]
    Refused(String),
    /// A table is there already and --overwrite was not given (bad input: exit 2); the
    /// caller words the commands that go on.
    #[error("table {table} already exists: run `fairbench cleanup` first, or prepare with --overwrite")]
    Exists { table: String },
    /// A bug or the OS stopped a loader: the tables are left marked as loading.
    #[error("prepare failed: {0}; the tables stay marked incomplete (prepare again with --overwrite)")]
    Internal(String),
    /// The database failed; `context` names the table or step.
    #[error("{context}{source}")]
    Db { context: String, source: DbError },
}

impl From<DbError> for PrepareError {
    fn from(source: DbError) -> Self {
        PrepareError::Db { context: String::new(), source }
    }
}

/// Whose `sbtest<n>` table is: its whole comment is one of fairbench's marks (MySQL,
/// PostgreSQL), or its whole CREATE text is one this driver generates (SQLite). Never a
/// substring.
pub fn ownership<D: Database>(db: &D, name: &str, definition: &str) -> Ownership {
    match definition {
        schema::MARKER => return Ownership::Complete,
        schema::MARKER_LOADING | schema::MARKER_LEGACY => return Ownership::Incomplete,
        _ => {}
    }
    let Some(n) = name.strip_prefix("sbtest").and_then(|n| n.parse::<u32>().ok()) else {
        return Ownership::Foreign;
    };
    // The shapes whose CREATE text differs (SQLite ignores --auto-inc and the engine).
    for secondary in [false, true] {
        let shape = SbtestShape { auto_inc: true, secondary, engine: "innodb".into() };
        let created = |mark| db.sbtest_create_sql(n, &shape, mark).into_iter().next();
        if created(schema::MARKER).as_deref() == Some(definition) {
            return Ownership::Complete;
        }
        if created(schema::MARKER_LEGACY).as_deref() == Some(definition) {
            return Ownership::Incomplete;
        }
    }
    Ownership::Foreign
}

pub(crate) fn at(context: impl Into<String>) -> impl FnOnce(DbError) -> PrepareError {
    let context = context.into();
    move |source| PrepareError::Db { context, source }
}

fn busy() -> PrepareError {
    PrepareError::Refused(
        "another fairbench prepare or cleanup is working on this database: wait for it to finish".into(),
    )
}

/// Takes fairbench's exclusive lock on the database, or refuses: another prepare or cleanup
/// holds it. A server releases a closed session's lock when it has processed the close,
/// which can be just after the next command connects: a lock still held is tried again for
/// up to two seconds before refusing.
pub(crate) async fn lock(conn: &mut impl Connection) -> Result<(), PrepareError> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    while !conn.try_exclusive_lock().await? {
        if std::time::Instant::now() >= deadline {
            return Err(busy());
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    Ok(())
}

pub struct PrepareOutcome {
    pub tables: u32,
    pub rows: u64,
    pub seconds: f64,
    pub loaders: u32,
}

/// Which of the workload's tables exist: (present, missing).
pub async fn table_status<C: Connection>(
    conn: &mut C,
    o: &OltpOptions,
) -> Result<(Vec<TableInfo>, Vec<String>), DbError> {
    let existing = conn.tables("sbtest").await?;
    let mut present = Vec::new();
    let mut missing = Vec::new();
    for name in o.table_names() {
        match existing.iter().find(|t| t.name == name) {
            Some(t) => present.push(t.clone()),
            None => missing.push(name),
        }
    }
    Ok((present, missing))
}

/// Creates and loads the tables; `progress(rows_loaded, rows_total)` is called from this
/// thread about five times a second.
pub fn prepare<D: Database>(
    db: Arc<D>,
    plan: &PreparePlan,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<PrepareOutcome, PrepareError> {
    let rt = crate::local_runtime();
    // Held until prepare returns: a second prepare or cleanup of this database is refused.
    let mut admin = rt.block_on(db.connect())?;
    rt.block_on(lock(&mut admin))?;
    let (present, _) = rt.block_on(table_status(&mut admin, &plan.oltp))?;
    rt.block_on(drop_ours(&mut admin, &owners(&*db, present), plan.overwrite, ""))?;
    if plan.bulk && !db.single_writer() {
        return bulk::prepare(db, &mut admin, &rt, plan, progress);
    }

    let rows_per_table = plan.workload.rows_to_load(&plan.oltp);
    let total = rows_per_table * plan.oltp.tables as u64;
    // SQLite has one writer at a time: more loaders would only queue on its lock.
    let loaders = if db.single_writer() { 1 } else { plan.threads.clamp(1, plan.oltp.tables) };
    let started = Instant::now();
    let work = Loaders::new(loaders, total);
    let loaded = work.loaded.clone();
    let plan_shared = plan.clone();
    work.run(progress, move |l, rt, fail| {
        let (db, plan, loaded) = (db.clone(), plan_shared.clone(), loaded.clone());
        rt.block_on(async move {
            let mut conn = db.connect().await?;
            let single_writer = db.single_writer();
            if single_writer {
                // One transaction for every table: another prepare waits for the file's
                // write lock and then finds them complete, or none of them.
                conn.simple(db.begin_sql(true)).await?;
                let (present, _) = table_status(&mut conn, &plan.oltp).await?;
                if let Some(t) = present.first() {
                    return Err(PrepareError::Refused(format!(
                        "table {} was created by another prepare meanwhile: run one prepare at a time",
                        t.name
                    )));
                }
            }
            // sysbench's split: loader l takes tables l+1, l+1+loaders, ...
            for table in (l + 1..=plan.oltp.tables).step_by(loaders as usize) {
                load_table(&*db, &mut conn, &plan, table, rows_per_table, &loaded, fail).await?;
            }
            if single_writer {
                conn.simple("COMMIT").await?;
            }
            Ok::<(), PrepareError>(())
        })
    })?;
    Ok(PrepareOutcome { tables: plan.oltp.tables, rows: total, seconds: started.elapsed().as_secs_f64(), loaders })
}

/// Loader threads, each with its own runtime and connection, and what they report: rows
/// loaded so far and the first failure (the others then stop).
pub(crate) struct Loaders {
    count: u32,
    total: u64,
    /// Rows drawn so far (progress), and rows inserted (fewer when a table keeps only some).
    pub loaded: Arc<AtomicU64>,
    pub inserted: Arc<AtomicU64>,
}

type LoaderBody =
    dyn Fn(u32, &crate::LocalRuntime, &Mutex<Option<PrepareError>>) -> Result<(), PrepareError> + Send + Sync;

impl Loaders {
    pub fn new(count: u32, total: u64) -> Self {
        Loaders { count, total, loaded: Arc::new(AtomicU64::new(0)), inserted: Arc::new(AtomicU64::new(0)) }
    }

    /// Runs `body(loader, runtime, failure)` on each loader thread and reports progress
    /// from this one until all have ended; the first error wins. Returns the rows the
    /// bodies counted in `inserted`.
    pub fn run(
        self,
        progress: &mut dyn FnMut(u64, u64),
        body: impl Fn(u32, &crate::LocalRuntime, &Mutex<Option<PrepareError>>) -> Result<(), PrepareError>
            + Send
            + Sync
            + 'static,
    ) -> Result<u64, PrepareError> {
        let body: Arc<LoaderBody> = Arc::new(body);
        let failure: Arc<Mutex<Option<PrepareError>>> = Arc::new(Mutex::new(None));
        let mut handles = Vec::new();
        for l in 0..self.count {
            let (body, fail) = (body.clone(), failure.clone());
            let spawned = std::thread::Builder::new().name(format!("fairbench-loader-{l}")).spawn(move || {
                let rt = crate::local_runtime();
                if let Err(e) = body(l, &rt, &fail) {
                    crate::lock(&fail).get_or_insert(e);
                }
            });
            match spawned {
                Ok(h) => handles.push(h),
                Err(e) => {
                    crate::lock(&failure)
                        .get_or_insert(PrepareError::Internal(format!("cannot start a loader thread: {e}")));
                    break;
                }
            }
        }
        while !handles.iter().all(|h| h.is_finished()) {
            progress(self.loaded.load(Ordering::Relaxed), self.total);
            std::thread::sleep(Duration::from_millis(200));
        }
        for h in handles {
            if h.join().is_err() {
                crate::lock(&failure).get_or_insert(PrepareError::Internal("a loader thread crashed".into()));
            }
        }
        progress(self.loaded.load(Ordering::Relaxed), self.total);
        let first = crate::lock(&failure).take();
        match first {
            Some(e) => Err(e),
            None => Ok(self.inserted.load(Ordering::Relaxed)),
        }
    }
}

async fn load_table<D: Database>(
    db: &D,
    conn: &mut D::Conn,
    plan: &PreparePlan,
    table: u32,
    rows: u64,
    loaded: &AtomicU64,
    failure: &Mutex<Option<PrepareError>>,
) -> Result<(), PrepareError> {
    create_sbtest(db, conn, plan, table).await?;
    if plan.bulk {
        // SQLite: the same parts as the servers load, in this loader's transaction.
        for part in parts::table_parts(table, rows) {
            bulk::load_part(conn, plan, table, part, loaded).await?;
        }
        return finish_sbtest(db, conn, plan, table).await;
    }
    // Autocommit per statement (as sysbench); SQLite runs inside the loader's transaction.
    load_sbtest_rows(conn, plan, table, (1, rows, 0), loaded, Some(failure)).await?;
    finish_sbtest(db, conn, plan, table).await
}

/// Creates `sbtest<n>`, marked loading where the mark can change later.
pub(super) async fn create_sbtest<D: Database>(
    db: &D,
    conn: &mut D::Conn,
    plan: &PreparePlan,
    n: u32,
) -> Result<(), PrepareError> {
    let name = format!("sbtest{n}");
    let first = if db.comment_sql(&name, schema::MARKER).is_some() { schema::MARKER_LOADING } else { schema::MARKER };
    for sql in db.sbtest_create_sql(n, &plan.oltp.shape(), first) {
        conn.simple(&sql).await.map_err(at(format!("prepare failed: {name}: ")))?;
    }
    Ok(())
}

/// Rows `first ..= last` of `sbtest<n>` from random stream `part` (part 0 is the stream of
/// the whole table: an unsplit prepare loads every row from it), counted in `loaded`;
/// stops quietly once another loader reports a `failure`.
pub(super) async fn load_sbtest_rows<C: Connection>(
    conn: &mut C,
    plan: &PreparePlan,
    n: u32,
    (first, last, part): (u64, u64, u64),
    loaded: &AtomicU64,
    failure: Option<&Mutex<Option<PrepareError>>>,
) -> Result<(), PrepareError> {
    if plan.bulk {
        let part = parts::Part { table: n, first, last, number: part };
        return bulk::load_part(conn, plan, n, part, loaded).await;
    }
    let dist = plan.distribution.sampler();
    let mut rng = Rng::for_client(plan.seed, 1_000_000 + n as u64 + (part << 32));
    let mut batcher = RowBatcher::new(n, &plan.oltp, &dist);
    let mut next = first;
    while next <= last {
        if failure.is_some_and(|f| crate::lock(f).is_some()) {
            return Ok(()); // another loader failed: its error is reported
        }
        let (sql, after) = batcher.next_statement(&mut rng, next, last);
        conn.simple(&sql).await.map_err(at(format!("prepare failed: sbtest{n}: ")))?;
        loaded.fetch_add(after - next, Ordering::Relaxed);
        next = after;
    }
    Ok(())
}

/// The secondary index and statistics once every row is in, and last the mark of a
/// complete table: only then may `run` measure it.
pub(super) async fn finish_sbtest<D: Database>(
    db: &D,
    conn: &mut D::Conn,
    plan: &PreparePlan,
    n: u32,
) -> Result<(), PrepareError> {
    let name = format!("sbtest{n}");
    // The bulk path writes the ids: an identity must move past them (PostgreSQL's SERIAL).
    let ids = if plan.bulk && plan.oltp.auto_inc { db.after_load_sql(&id_column(&name)) } else { Vec::new() };
    let index = plan.oltp.create_secondary.then(|| schema::create_k_index(n));
    let marks = db.analyze_sql(&name).into_iter().chain(db.comment_sql(&name, schema::MARKER));
    for sql in ids.into_iter().chain(index).chain(marks) {
        conn.simple(&sql).await.map_err(at(format!("prepare failed: {name}: ")))?;
    }
    Ok(())
}

/// `table`'s generated id column, as [`Database::after_load_sql`] takes it.
fn id_column(table: &str) -> crate::model::TableDef {
    let id = crate::model::ColumnDef { name: "id".into(), ty: crate::model::ColumnType::Integer, generated: true };
    crate::model::TableDef {
        name: table.into(),
        columns: vec![id],
        primary_key: vec!["id".into()],
        indexes: Vec::new(),
    }
}

/// Each sbtest table there with whose it is.
pub(super) fn owners<D: Database>(db: &D, present: Vec<TableInfo>) -> Vec<(String, Ownership)> {
    present
        .into_iter()
        .map(|t| {
            let owner = ownership(db, &t.name, &t.definition);
            (t.name, owner)
        })
        .collect()
}

/// Refuses a table fairbench did not create (`whose`: what more its refusal says it was not
/// created from), or any table without --overwrite; drops the rest.
pub(super) async fn drop_ours<C: Connection>(
    conn: &mut C,
    present: &[(String, Ownership)],
    overwrite: bool,
    whose: &str,
) -> Result<(), PrepareError> {
    if let Some((name, _)) = present.iter().find(|(_, o)| *o == Ownership::Foreign) {
        return Err(PrepareError::Refused(format!(
            "table {name} already exists and was not created by fairbench{whose}: fairbench never drops or loads tables it did not create; use another database"
        )));
    }
    if let Some((name, _)) = present.first() {
        if !overwrite {
            return Err(PrepareError::Exists { table: name.clone() });
        }
    }
    for (name, _) in present {
        conn.simple(&schema::drop_table(name)).await.map_err(at(format!("cannot drop {name}: ")))?;
    }
    Ok(())
}

/// What cleanup did.
#[derive(Default)]
pub struct CleanupOutcome {
    pub dropped: Vec<String>,
    /// Tables left alone because fairbench did not create them.
    pub foreign: Vec<String>,
}

/// Drops the `sbtest<n>` tables fairbench created (`up_to`: only n <= N); never any other
/// table.
pub fn cleanup<D: Database>(db: Arc<D>, up_to: Option<u32>) -> Result<CleanupOutcome, PrepareError> {
    let rt = crate::local_runtime();
    rt.block_on(async {
        let mut conn = db.connect().await?;
        lock(&mut conn).await?;
        let tables = conn.tables("sbtest").await?;
        let mut out = CleanupOutcome::default();
        for t in tables {
            let number = t
                .name
                .strip_prefix("sbtest")
                .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|n| n.parse::<u32>().ok());
            if number.is_none_or(|n| up_to.is_some_and(|max| n > max)) {
                continue;
            }
            if ownership(&*db, &t.name, &t.definition) != Ownership::Foreign {
                conn.simple(&schema::drop_table(&t.name)).await.map_err(at(format!("cannot drop {}: ", t.name)))?;
                out.dropped.push(t.name);
            } else {
                out.foreign.push(t.name);
            }
        }
        Ok(out)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::{mysql::MysqlDatabase, sqlite::SqliteDatabase, ConnectOptions, TargetUrl};

    fn url(s: &str) -> TargetUrl {
        TargetUrl::parse(s, |_| None).unwrap()
    }

    #[test]
    fn ownership_is_the_whole_marker_never_a_substring() {
        use Ownership::*;
        let mysql = MysqlDatabase::new(&url("mysql://u@h/db"), &ConnectOptions::default()).unwrap();
        for comment in [schema::MARKER, schema::MARKER_LOADING, "NOT created by fairbench", ""] {
            let expected = match comment {
                schema::MARKER => Complete,
                schema::MARKER_LOADING => Incomplete,
                _ => Foreign,
            };
            assert_eq!(ownership(&mysql, "sbtest1", comment), expected, "{comment:?}");
        }
        assert_eq!(ownership(&mysql, "sbtest1", &format!("{} (copy)", schema::MARKER)), Foreign);
        let sqlite = SqliteDatabase::new(&url("sqlite:///tmp/fairbench-unit.db")).unwrap();
        let shape = OltpOptions::default().shape();
        let created = sqlite.sbtest_create_sql(3, &shape, schema::MARKER).remove(0);
        assert_eq!(ownership(&sqlite, "sbtest3", &created), Complete);
        assert_eq!(ownership(&sqlite, "sbtest4", &created), Foreign, "another table's text");
        let lookalike = created.replace("pad CHAR(60)", "pad CHAR(60) DEFAULT 'NOT created by fairbench'");
        assert_eq!(ownership(&sqlite, "sbtest3", &lookalike), Foreign);
        let secondary = OltpOptions { secondary: true, ..Default::default() }.shape();
        let created = sqlite.sbtest_create_sql(2, &secondary, schema::MARKER).remove(0);
        assert_eq!(ownership(&sqlite, "sbtest2", &created), Complete);
    }

    /// SQLite's CREATE text is the ownership mark of tables prepared by every earlier
    /// fairbench: it must stay byte for byte what it was.
    #[test]
    fn sqlite_sbtest_text_never_changes() {
        let sqlite = SqliteDatabase::new(&url("sqlite:///tmp/fairbench-unit.db")).unwrap();
        let text = sqlite.sbtest_create_sql(1, &OltpOptions::default().shape(), schema::MARKER).remove(0);
        assert_eq!(
            text,
            "CREATE TABLE sbtest1( /* fairbench:sbtest:v1 */\n  id INTEGER NOT NULL PRIMARY KEY,\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL\n)"
        );
    }
}
