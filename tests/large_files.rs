//! Result files far larger than usual (a long run's timeline) are read in bounded memory:
//! `audit`, `compare` and `report` stay within three times the file's size plus a fixed
//! base. Reading through a serde_json::Value first cost over four times the file.

mod common;
use common::*;
use serde_json::Value;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

/// Peak RSS the process needs whatever it reads (binary, runtime, a small document).
const BASE_KB: i64 = 48 * 1024;

/// Writes a valid result document of about `bytes` to `path`, from a real small one: its
/// timeline repeated with consecutive start times. Streamed, so that this process stays
/// small: a child's peak RSS counts what it inherited from its parent at exec.
fn grow(small: &Value, bytes: usize, path: &Path) -> u64 {
    let mut doc = small.clone();
    doc["intervals"] = Value::Array(Vec::new());
    let text = serde_json::to_string_pretty(&doc).unwrap();
    let (head, tail) = text.split_once("\"intervals\": []").expect("an intervals field");
    let intervals = small["intervals"].as_array().unwrap();
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    write!(out, "{head}\"intervals\": [").unwrap();
    let (mut written, mut i) = (0, 0);
    while written < bytes {
        let mut iv = intervals[i % intervals.len()].clone();
        iv["from_s"] = Value::from(i as f64);
        let one = serde_json::to_string(&iv).unwrap();
        write!(out, "{}{one}", if i == 0 { "" } else { "," }).unwrap();
        written += one.len() + 1;
        i += 1;
    }
    write!(out, "]{tail}").unwrap();
    out.flush().unwrap();
    std::fs::metadata(path).unwrap().len()
}

/// Runs fairbench with `args` in `dir`; its exit code, stderr and own peak RSS (wait4).
#[allow(clippy::zombie_processes)] // reaped by wait4, which also gives its peak RSS
fn measured(dir: &Path, args: &[&str]) -> (Option<i32>, String, i64) {
    let child =
        Command::new(bin()).args(args).current_dir(dir).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let pid = child.id() as libc::pid_t;
    let mut stderr = child.stderr.unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut s);
        s
    });
    let (mut status, mut usage) = (0, unsafe { std::mem::zeroed::<libc::rusage>() });
    // SAFETY: valid pointers to locals; the child is ours and waited for only here.
    assert_eq!(unsafe { libc::wait4(pid, &mut status, 0, &mut usage) }, pid);
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    (code, reader.join().unwrap(), usage.ru_maxrss)
}

#[test]
fn large_result_files_are_read_in_bounded_memory() {
    let db = TestDb::new(Kind::Sqlite);
    assert!(db.fairbench(&["prepare", "oltp_point_select", "--table-size=1000"]).status.success());
    let small = db.run_json(&["run", "oltp_point_select", "--table-size=1000", "--time=3"]);
    let dir = db.dir.path();
    let (big, small_path) = (dir.join("big.json"), dir.join("small.json"));
    let file_kb = grow(&small, 50 << 20, &big) as i64 / 1024;
    std::fs::write(&small_path, serde_json::to_string_pretty(&small).unwrap()).unwrap();
    let bound = 3 * file_kb + BASE_KB;
    let (big, small_path) = (big.to_str().unwrap(), small_path.to_str().unwrap());
    for args in [
        &["audit", big][..],
        &["compare", big, small_path],
        &["report", big, "-o", dir.join("report.html").to_str().unwrap()],
    ] {
        let (code, stderr, peak_kb) = measured(dir, args);
        assert!(code == Some(0) || (args[0] == "compare" && code == Some(1)), "{args:?}: {code:?}\n{stderr}");
        eprintln!("{}: peak RSS {} MB for a {} MB file", args[0], peak_kb / 1024, file_kb / 1024);
        assert!(peak_kb <= bound, "{}: peak RSS {peak_kb} KB over {bound} KB (3 x {file_kb} KB + base)", args[0]);
    }
}
