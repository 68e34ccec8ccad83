//! The measured phase against a real (embedded) database, with a measuring thread held up.

use super::*;
use crate::db::sqlite::SqliteDatabase;
use crate::plan::WorkloadPlan;
use crate::recorder::sink::Tick;
use clap::Parser;

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

#[test]
fn a_late_measuring_thread_does_not_lengthen_the_measured_phase() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("one.toml");
    std::fs::write(
        &file,
        "[workload]\nname = \"one\"\n[[transactions]]\nname = \"one\"\n  [[transactions.statements]]\n  name = \"one\"\n  sql = \"SELECT 1\"\n",
    )
    .unwrap();
    let db_path = dir.path().join("one.db");
    let url = format!("sqlite://{}", db_path.display());
    let argv = ["fairbench", "run", file.to_str().unwrap(), "--target", &url, "--time", "2", "--threads", "2"];
    let crate::cli::Command::Run(args) = crate::cli::Cli::try_parse_from(argv).unwrap().command else { unreachable!() };
    let target = crate::db::url::TargetUrl::parse(&url, |_| None).unwrap();
    let db = SqliteDatabase::new(&target).unwrap();
    db.create_if_missing().unwrap();
    let workload = crate::workload::file::load(&file, crate::model::Dialect::Sqlite, &[]).unwrap();
    let plan = args.plan(crate::model::Dialect::Sqlite, WorkloadPlan::File(Arc::new(workload))).unwrap();

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
