//! High-availability probes: a writer that keeps writing through a failover and records
//! every attempt ([`failover`]), and heartbeats written on a primary and read on its replicas
//! ([`lag`]). Each probe writes only tables of its own (`fairbench_probe`,
//! `fairbench_heartbeat`), marked as fairbench's like every table it creates, and measures an
//! outage instead of failing on it. What a node is (durability, replication) comes from its
//! driver (`Database::server_facts`).

mod alongside;
pub mod check;
pub mod discover;
mod ending;
pub mod failover;
mod failover_probe;
pub mod faults;
mod host;
pub mod lag;
mod lag_probe;
mod nodes;
mod orchestrate;
pub mod roles;
pub mod servers;
pub mod session;
pub mod stream;
pub mod timing;
pub mod verdict;
mod verify;

pub use host::{Host, Notice, Probed};
pub use orchestrate::run;
pub use verify::{look_again, verify};

use crate::db::{Connection, Database, DbError};
use crate::model::ha::NodeRecord;
use crate::model::{ColumnDef, ColumnType, TableDef};
use std::time::{Duration, Instant, SystemTime};

/// The whole comment of a probe's table: fairbench created it and may write it.
pub const MARKER: &str = "fairbench:probe:v1";

#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("{context}: {source}")]
    Db { context: String, source: DbError },
    #[error("{0}")]
    Refused(String),
    #[error("cannot write the probe's record beside {}: {source}", .path.display())]
    Files { path: std::path::PathBuf, source: std::io::Error },
    #[error(transparent)]
    StartDocument(#[from] crate::model::ResultFileError),
    #[error("the probe's record read back: {0}")]
    ReadBack(#[from] crate::timeline::record::ReadRecordError),
    #[error("the probe's statement: {0}")]
    Statement(crate::recorder::record::CountsError),
    #[error("the probe's record holds no ledger of its writes (a bug in fairbench)")]
    NoLedger,
    #[error("the probe's result: {0}")]
    Build(#[from] crate::result::BuildError),
    #[error(transparent)]
    Target(#[from] crate::db::UrlError),
    #[error(transparent)]
    Connect(#[from] DbError),
    #[error(transparent)]
    Fault(#[from] crate::sandbox::SandboxError),
    #[error("--node {0}: a node of the same database as --target (one kind)")]
    NodeOfAnotherKind(String),
    #[error("--fault acts on a sandbox, and none has a node at {host}:{port}: name it with --sandbox (exec 'COMMAND' @T steps need none)")]
    NoSandboxAt { host: String, port: u16 },
    #[error("cannot start the probe's thread: {0}")]
    Thread(std::io::Error),
    #[error("the probe's thread failed (a bug in fairbench)")]
    ThreadFailed,
    #[error("the probe's workload left no result (a bug in fairbench)")]
    NoWorkloadResult,
    #[error("probe verify makes no new result")]
    VerifyMakesNoResult,
    #[error("{} holds no failover probe (ha.failover)", .0.display())]
    NotFailover(std::path::PathBuf),
    #[error("name the nodes to look on with --target")]
    NoNodes,
}

pub(crate) fn at(context: impl Into<String>) -> impl FnOnce(DbError) -> ProbeError {
    let context = context.into();
    move |source| ProbeError::Db { context, source }
}

/// Time zero of a probe: every time it records is microseconds since then.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    pub start: Instant,
    pub started_at: SystemTime,
}

impl Clock {
    pub fn now() -> Clock {
        Clock { start: Instant::now(), started_at: SystemTime::now() }
    }

    pub fn us(&self, t: Instant) -> u64 {
        t.saturating_duration_since(self.start).as_micros() as u64
    }

    pub fn elapsed_us(&self) -> u64 {
        self.us(Instant::now())
    }

    /// When the probe started, as a wall-clock time, plus `us`.
    pub fn wall_us(&self, us: u64) -> SystemTime {
        self.started_at + Duration::from_micros(us)
    }
}

/// A random id for one probe's rows, so runs sharing a table never mix: positive and at most
/// 2^53 - 1, the largest integer every JSON reader keeps exact.
pub fn run_id() -> i64 {
    let nanos = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default().as_nanos() as u64;
    let mixed = nanos.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ ((std::process::id() as u64) << 20);
    (mixed & ((1 << 53) - 1)).max(1) as i64
}

fn column(name: &str, ty: ColumnType) -> ColumnDef {
    ColumnDef { name: name.into(), ty, generated: false }
}

/// The failover writer's rows: one per attempt that reached a server.
pub fn probe_table() -> TableDef {
    TableDef {
        name: "fairbench_probe".into(),
        columns: vec![
            column("run_id", ColumnType::BigInt),
            column("seq", ColumnType::BigInt),
            column("client_us", ColumnType::BigInt),
            column("server_time", ColumnType::Varchar(40)),
            column("session_id", ColumnType::BigInt),
        ],
        primary_key: vec!["run_id".into(), "seq".into()],
        indexes: Vec::new(),
    }
}

/// The lag probe's heartbeats.
pub fn heartbeat_table() -> TableDef {
    TableDef {
        name: "fairbench_heartbeat".into(),
        columns: vec![
            column("run_id", ColumnType::BigInt),
            column("seq", ColumnType::BigInt),
            column("client_us", ColumnType::BigInt),
        ],
        primary_key: vec!["run_id".into(), "seq".into()],
        indexes: Vec::new(),
    }
}

/// Creates `table` unless it exists; an existing one must be fairbench's (its whole comment,
/// or SQLite's whole CREATE text, is `marker`), else fairbench refuses to write it. Several
/// writers arriving together (shards, probes) race to create it: the loser's CREATE fails, or
/// it sees the table between the winner's CREATE and the comment that marks it; so a failure
/// is looked at again for up to two seconds before it stands.
pub async fn ensure_table<D: Database>(
    db: &D,
    conn: &mut D::Conn,
    table: &TableDef,
    marker: &str,
) -> Result<(), ProbeError> {
    let mut tries = 0;
    loop {
        match create_or_check(db, conn, table, marker).await {
            Err(_) if tries < 10 => tries += 1,
            done => return done,
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn create_or_check<D: Database>(
    db: &D,
    conn: &mut D::Conn,
    table: &TableDef,
    marker: &str,
) -> Result<(), ProbeError> {
    let create = db.create_table_sql(table, marker);
    let existing = conn.tables(&table.name).await.map_err(at(format!("cannot list tables named {}", table.name)))?;
    if let Some(t) = existing.iter().find(|t| t.name == table.name) {
        if t.definition == marker || create.first() == Some(&t.definition) {
            return Ok(());
        }
        return Err(ProbeError::Refused(format!(
            "table {} exists and fairbench did not create it: fairbench writes only its own tables (use another database)",
            table.name
        )));
    }
    for sql in &create {
        conn.simple(sql).await.map_err(at(format!("cannot create {}", table.name)))?;
    }
    Ok(())
}

/// A node as it describes itself: product, role, what its settings mean for durability and
/// replication. An unreachable node is recorded as such.
pub async fn describe<D: Database>(db: &D, name: &str, url: String, timeout: Duration) -> NodeRecord {
    let mut node = NodeRecord {
        name: name.into(),
        url,
        unreachable: None,
        product: String::new(),
        version: String::new(),
        role: String::new(),
        facts: None,
        settings: Default::default(),
    };
    match tokio::time::timeout(timeout, read_node(db, &mut node)).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => node.unreachable = Some(e.to_string()),
        Err(_) => node.unreachable = Some(format!("no answer within {} s", timeout.as_secs())),
    }
    node
}

async fn read_node<D: Database>(db: &D, node: &mut NodeRecord) -> Result<(), DbError> {
    let mut conn = db.connect().await?;
    let info = conn.server_info().await?;
    let vars = conn.variables().await?;
    node.role = conn.replication_role().await?;
    let facts = db.server_facts(&info.product, &vars);
    node.settings = vars
        .iter()
        .filter(|(k, _)| matches!(facts.setting_group(k), "durability" | "replication"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    node.facts = Some(facts);
    node.product = info.product;
    node.version = info.version;
    Ok(())
}

/// Adds one to `map[key]`.
pub(crate) fn count(map: &mut std::collections::BTreeMap<String, u64>, key: String) {
    *map.entry(key).or_default() += 1;
}

/// A fixed-rate schedule for one writer: slots exactly 1/rate apart. A slot missed while an
/// attempt hung is skipped (counted), never caught up in a burst, so an outage does not end
/// in a flood that the server would have to absorb.
pub struct Pacer {
    interval: Duration,
    next: Instant,
    end: Instant,
    /// The slot being served.
    slot: Instant,
    /// timerfd-based: tokio's timer rounds up to the next millisecond. Made at the first
    /// wait, inside the runtime it needs; `Err` when it could not be (tokio's timer then).
    timer: Option<Result<crate::runner::timer::PreciseTimer, ()>>,
    /// Slots that started more than 1 ms after their time.
    pub late: u64,
    /// Slots skipped because an earlier attempt was still running.
    pub skipped: u64,
    /// How late each slot started.
    pub delays: crate::stats::LatencyHistogram,
    /// Each acknowledged write's latency from its slot's time (open-loop latency).
    pub from_slot: crate::stats::LatencyHistogram,
    /// Slots that began later than `stall_after`: (their time, when they began).
    pub late_spans: Vec<(Instant, Instant)>,
    stall_after: Duration,
    /// How late the current slot started; slots skipped already reported ([`Pacer::done`]).
    last_delay: Duration,
    reported_skips: u64,
}

impl Pacer {
    pub fn new(rate: f64, end: Instant) -> Pacer {
        let now = Instant::now();
        Pacer {
            interval: Duration::from_secs_f64(1.0 / rate),
            next: now,
            end,
            slot: now,
            timer: None,
            late: 0,
            skipped: 0,
            delays: Default::default(),
            from_slot: Default::default(),
            late_spans: Vec::new(),
            stall_after: timing::threshold(rate),
            last_delay: Duration::ZERO,
            reported_skips: 0,
        }
    }

    /// Waits for the next slot; false when the schedule or the probe has ended.
    pub async fn wait(&mut self, stop: &dyn Fn() -> bool) -> bool {
        let now = Instant::now();
        while self.next + self.interval <= now {
            self.next += self.interval;
            self.skipped += 1;
        }
        if self.next >= self.end || !self.sleep_until(self.next, stop).await {
            return false;
        }
        let delay = Instant::now().saturating_duration_since(self.next);
        self.delays.record(delay);
        self.last_delay = delay;
        if delay > Duration::from_millis(1) {
            self.late += 1;
        }
        if delay > self.stall_after {
            self.late_spans.push((self.next, self.next + delay));
        }
        self.slot = self.next;
        self.next += self.interval;
        true
    }

    /// The current slot's write, which began at `began`, ended now (`error`: why it was not
    /// acknowledged), as the probe's record takes it.
    pub fn done(&mut self, began: Instant, error: Option<String>) -> stream::WriteDone {
        let dropped_before = self.skipped - self.reported_skips;
        self.reported_skips = self.skipped;
        let at = Instant::now();
        stream::WriteDone { at, service: at - began, waited: self.last_delay, dropped_before, error }
    }

    /// The current slot's write was acknowledged now.
    pub fn acknowledged(&mut self) {
        self.from_slot.record(self.slot.elapsed());
    }

    async fn sleep_until(&mut self, until: Instant, stop: &dyn Fn() -> bool) -> bool {
        let timer = self.timer.get_or_insert_with(|| crate::runner::timer::PreciseTimer::new().map_err(|_| ()));
        let Ok(timer) = timer.as_mut() else { return sleep_until(until, stop).await };
        loop {
            if stop() {
                return false;
            }
            let wake = until.min(Instant::now() + Duration::from_millis(50));
            if timer.sleep_until(wake).await.is_err() {
                return sleep_until(until, stop).await;
            }
            if wake == until {
                return !stop();
            }
        }
    }
}

/// Sleeps until `until` or until `stop` says so (looked at every 50 ms).
pub(crate) async fn sleep_until(until: Instant, stop: &dyn Fn() -> bool) -> bool {
    loop {
        let now = Instant::now();
        if stop() {
            return false;
        }
        if now >= until {
            return true;
        }
        tokio::time::sleep((until - now).min(Duration::from_millis(50))).await;
    }
}
