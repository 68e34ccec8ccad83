//! The live status line: on a terminal (a pseudo-terminal from `script`) a run shows its
//! phase and a time left that counts down, repeats and sweeps show which part of how many
//! and the job's time left, and the line is cleared before the report; piped or with
//! --quiet nothing is added.

mod common;
use common::*;
use std::process::Command;

fn prepared_sqlite() -> TestDb {
    let db = TestDb::new(Kind::Sqlite);
    let p = db.fairbench(&["prepare", "oltp_point_select", "--table-size=1000"]);
    assert!(p.status.success(), "{}", text(&p));
    db
}

/// Runs fairbench with `args` on a pseudo-terminal; what the terminal received.
fn on_terminal(db: &TestDb, args: &[&str]) -> String {
    // A terminal wide enough for the whole line (a narrow one cuts its end).
    on_terminal_sized(db, "rows 50 cols 250", args)
}

/// [`on_terminal`] on a terminal of `size` (`stty`'s words).
fn on_terminal_sized(db: &TestDb, size: &str, args: &[&str]) -> String {
    let mut line = vec![bin().display().to_string()];
    line.extend(args.iter().map(|a| a.to_string()));
    line.push(format!("--target={}", db.url));
    let o = Command::new("script")
        .args(["-q", "-e", "-f", "-c", &format!("stty {size}; {}", line.join(" ")), "/dev/null"])
        .current_dir(db.dir.path())
        .output()
        .expect("script (util-linux) runs");
    let screen = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{screen}{}", String::from_utf8_lossy(&o.stderr));
    screen
}

/// Every drawing of the status line, in order (each ends where the next redraw begins).
fn drawings(screen: &str) -> Vec<&str> {
    screen
        .split(['\r', '\n'])
        .map(|l| l.trim_start_matches("\x1b[2K"))
        .filter(|l| ["starting [", "warmup [", "measuring [", "collecting ["].iter().any(|p| l.starts_with(p)))
        .collect()
}

/// `..., 3 s left | ...` -> 3.
fn left_s(drawing: &str) -> u64 {
    let (head, _) = drawing.split_once(" s left").unwrap_or_else(|| panic!("no time left in {drawing:?}"));
    head.rsplit(' ').next().unwrap().parse().unwrap()
}

#[test]
fn sqlite_terminal_shows_the_phase_and_a_time_left_that_counts_down() {
    let db = prepared_sqlite();
    let screen = on_terminal(&db, &["run", "oltp_point_select", "--table-size=1000", "--time=4", "--warmup=1"]);
    let drawn = drawings(&screen);
    let phases = |p: &str| drawn.iter().filter(|d| d.starts_with(p)).count();
    assert!(phases("warmup [") >= 1 && phases("measuring [") >= 3 && phases("collecting [") >= 1, "{drawn:#?}");
    let left: Vec<u64> = drawn.iter().map(|d| left_s(d)).collect();
    assert!(left.windows(2).all(|w| w[1] <= w[0]), "time left went up: {left:?}");
    assert_eq!(left.first(), Some(&5), "{left:?}");
    assert_eq!(left.last(), Some(&0), "{left:?}");
    assert!(drawn.iter().any(|d| d.contains(" tps ") && d.contains(" p99 ")), "{drawn:#?}");
    assert!(drawn.iter().all(|d| d.contains("0 errors 0 reconnects")), "{drawn:#?}");
    // The line is erased before the report, which then reads as when piped.
    let last = screen.rfind("collecting [").unwrap();
    let report =
        last + screen[last..].find("fairbench 0.1.0: oltp_point_select on SQLite").expect("the report follows");
    assert!(screen[last..report].contains("\r\x1b[2K"), "{:?}", &screen[last..]);
    assert!(!screen[report..].contains("\x1b[2K"), "drawn over the report");
}

/// A terminal that reports its columns but 0 rows still gets the whole line (it was cut at
/// 80 columns, where the usual reading of the size gives up).
#[test]
fn sqlite_a_terminal_of_zero_rows_gets_its_whole_width() {
    let db = prepared_sqlite();
    let screen =
        on_terminal_sized(&db, "rows 0 cols 250", &["run", "oltp_point_select", "--table-size=1000", "--time=2"]);
    let drawn = drawings(&screen);
    let measuring: Vec<&&str> = drawn.iter().filter(|d| d.starts_with("measuring [")).collect();
    assert!(!measuring.is_empty(), "{drawn:#?}");
    assert!(measuring.iter().all(|d| d.trim_end().ends_with("reconnects") && d.len() > 80), "{measuring:#?}");
}

#[test]
fn sqlite_repeats_and_sweeps_show_the_part_and_the_jobs_time_left() {
    let db = prepared_sqlite();
    let screen = on_terminal(&db, &["run", "oltp_point_select", "--table-size=1000", "--time=2", "--repeat=2"]);
    let drawn = drawings(&screen);
    assert!(drawn.iter().any(|d| d.contains("| repeat 1 of 2, job ~")), "{drawn:#?}");
    let last_part: Vec<&&str> = drawn.iter().filter(|d| d.contains("| repeat 2 of 2")).collect();
    assert!(!last_part.is_empty(), "{drawn:#?}");
    // The last part: the job ends with it.
    assert!(last_part.iter().all(|d| d.contains(&format!("job ~{} s left", left_s(d)))), "{last_part:#?}");

    let screen = on_terminal(&db, &["sweep", "oltp_point_select", "--threads=1,2", "--table-size=1000", "--time=1"]);
    let drawn = drawings(&screen);
    assert!(drawn.iter().any(|d| d.contains("| 1 of 2: sweep: 1 client on 1 table of 1000 rows, job ~")), "{drawn:#?}");
    assert!(
        drawn.iter().any(|d| d.contains("| 2 of 2: sweep: 2 clients on 1 table of 1000 rows, job ~")),
        "{drawn:#?}"
    );
}

#[test]
fn sqlite_quiet_or_piped_adds_nothing() {
    let db = prepared_sqlite();
    let screen = on_terminal(&db, &["run", "--quiet", "oltp_point_select", "--table-size=1000", "--time=2"]);
    assert!(drawings(&screen).is_empty() && !screen.contains('\x1b'), "{screen:?}");

    let o = db.fairbench(&["run", "oltp_point_select", "--table-size=1000", "--time=2", "--repeat=2"]);
    assert!(o.status.success(), "{}", text(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!stderr.contains(['\r', '\x1b']), "{stderr:?}");
    let expected = [
        "fairbench 0.1.0: oltp_point_select on SQLite",
        "repeat 1 of 2",
        "Threads started!",
        "repeat 2 of 2",
        "Threads started!",
        "Result saved to fairbench-results/oltp_point_select-",
    ];
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), expected.len(), "{stderr}");
    assert!(lines.iter().zip(expected).all(|(l, e)| l.starts_with(e)), "{stderr}");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(!stdout.contains(['\r', '\x1b']) && stdout.starts_with("fairbench 0.1.0: "), "{stdout}");
}
