//! The measured phase against a real (embedded) database, with a measuring thread held up.

use super::*;
use crate::db::sqlite::SqliteDatabase;
use crate::plan::WorkloadPlan;
use crate::recorder::sink::Tick;

/// A sink whose first tick holds the measuring thread for `hold`, as a starved thread on an
/// overloaded host is held; it keeps each tick's end and event count.
struct Holding {
    hold: Duration,
    held: bool,
    start: Option<Instant>,
    /// Each tick's (due, until).
    ticks: Vec<(Instant, Instant)>,
}

impl Sink for Holding {
    fn started(&mut self, start: Instant, _: Duration, _: Duration) {
        self.start = Some(start);
    }
    fn tick(&mut self, t: &Tick<'_>) {
        if !self.held {
            self.held = true;
            std::thread::sleep(self.hold);
        }
        self.ticks.push((t.due, t.until));
    }
}

/// A one-statement workload file on a fresh SQLite file in `dir`, planned with `options`.
fn one_statement(dir: &std::path::Path, sql: &str, options: &[&str]) -> (SqliteDatabase, RunPlan) {
    let file = dir.join("one.toml");
    let toml = format!(
        "[workload]\nname = \"one\"\n[[transactions]]\nname = \"one\"\n  [[transactions.statements]]\n  name = \"one\"\n  sql = \"{sql}\"\n"
    );
    std::fs::write(&file, toml).unwrap();
    let url = format!("sqlite://{}", dir.join("one.db").display());
    let mut argv = vec!["fairbench", "run", file.to_str().unwrap(), "--target", &url];
    argv.extend_from_slice(options);
    let (args, _) = crate::cli::parse_request(&argv.iter().map(|s| s.to_string()).collect::<Vec<_>>(), "test").unwrap();
    let target = crate::db::url::TargetUrl::parse(&url, |_| None).unwrap();
    let db = SqliteDatabase::new(&target).unwrap();
    db.create_if_missing().unwrap();
    let workload = crate::workload::file::load(&file, crate::model::Dialect::Sqlite, &[]).unwrap();
    let plan = args.plan(crate::model::Dialect::Sqlite, WorkloadPlan::File(Arc::new(workload))).unwrap();
    (db, plan)
}

#[test]
fn a_late_measuring_thread_does_not_lengthen_the_measured_phase() {
    let dir = tempfile::tempdir().unwrap();
    let (db, plan) = one_statement(dir.path(), "SELECT 1", &["--time", "2", "--threads", "2"]);

    // Held from the first tick (1 s) to 3.5 s: 1.5 s past the end of the 2 s.
    let mut sink = Holding { hold: Duration::from_millis(2500), held: false, start: None, ticks: Vec::new() };
    let outcome = run(Arc::new(db), &plan, &mut sink).unwrap();

    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(outcome.measured_s, 2.0, "measured time ends at the deadline, not when it was noticed");
    let counted: u64 = outcome.per_client.iter().map(|c| c.events).sum();
    assert!(counted > 0);
    // The last window is due at the deadline (it holds the events in flight then, to their
    // end), and none is due after it.
    let end = sink.start.unwrap() + Duration::from_secs(2);
    let (due, until) = *sink.ticks.last().unwrap();
    assert!(due == end && until >= end, "{due:?} {until:?} {end:?}");
    assert!(sink.ticks.iter().all(|(due, _)| *due <= end), "a window due after the end");
}

/// The warmup ends between events: the measured phase starts once no warmup event is in
/// flight, its deadline counts from there, and the events the collector measured are
/// exactly the ones the clients counted as measured (none spans the boundary).
#[test]
fn the_warmup_ends_between_events() {
    let dir = tempfile::tempdir().unwrap();
    // A 2 ms event: one in flight at the warmup's end is all but certain.
    let sql = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20000) SELECT count(*) FROM c";
    let (db, plan) = one_statement(dir.path(), sql, &["--warmup", "1", "--time", "1", "--threads", "3"]);
    let (statements, transactions) = (plan.workload.statements(), plan.workload.transactions());
    let mut collector = crate::collector::Collector::new(&statements, &transactions, false, 3, None);

    let outcome = run(Arc::new(db), &plan, &mut collector).unwrap();

    assert_eq!(outcome.status, RunStatus::Completed);
    let end = outcome.warmup_end.clone().expect("a warmup's end is recorded");
    assert_eq!(end.events_in_flight, 0);
    assert!(end.pause_ms >= 0.0 && end.pause_ms < 1000.0, "{end:?}");
    assert_eq!(outcome.measured_s, 1.0, "--time counts from the measured start");
    let counted: u64 = outcome.per_client.iter().map(|c| c.events).sum();
    let collected = collector.finish();
    let measured = collected.entries.iter().filter(|e| !e.stats.warmup).map(|e| e.stats.event.count).sum::<u64>();
    assert!(counted > 10, "{counted}");
    assert_eq!(measured, counted, "the measured totals hold exactly the events counted as measured");
    assert!(collected.entries.iter().any(|e| e.stats.warmup) && collected.entries.iter().any(|e| !e.stats.warmup));
}
