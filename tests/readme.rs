//! Every command line the README shows works: each is parsed as written, then run in order
//! against databases of the test's own — its server (10.0.0.5, db1, an RDS host, PgBouncer)
//! replaced by the test server of the same kind, its sizes and durations made small. Only
//! the TLS example is not run (the test servers have no TLS): it is parsed.

mod common;
use common::*;

/// The README's command lines (continuations joined), in order, from "Set up" and "Examples".
fn readme_lines() -> Vec<String> {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let start = text.find("## Set up").unwrap();
    let end = text[start..].find("\nCommands:").map(|e| start + e).unwrap();
    let mut lines = Vec::new();
    let mut pending = String::new();
    for raw in text[start..end].lines() {
        let line = raw.trim();
        if pending.is_empty() && !line.contains("fairbench ") || line.starts_with('#') {
            continue;
        }
        pending.push_str(line.trim_end_matches('\\').trim());
        pending.push(' ');
        if !line.ends_with('\\') {
            // The set-up line builds, then runs ./target/release/fairbench.
            let cmd = pending.trim().rsplit("&& ").next().unwrap().to_string();
            let cmd = cmd.replacen("./target/release/fairbench", "fairbench", 1);
            if cmd.starts_with("fairbench ") {
                lines.push(cmd);
            }
            pending.clear();
        }
    }
    lines
}

/// Shell words: spaces separate, '...' quotes.
fn words(line: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    for c in line.chars() {
        match c {
            '\'' => quoted = !quoted,
            ' ' if !quoted => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The value of `--name=v` or `--name v` at `i`, and how many words it takes.
fn flag_value<'a>(w: &'a [String], i: usize, name: &str) -> Option<(&'a str, usize)> {
    let word = &w[i];
    if let Some(v) = word.strip_prefix(&format!("{name}=")) {
        return Some((v, 1));
    }
    (word == name).then(|| (w.get(i + 1).map(String::as_str).unwrap_or(""), 2))
}

/// The line's server replaced by the test's, sizes and durations made small.
fn for_test(w: &[String], mysql: &TestDb, pg: &TestDb) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 1; // after "fairbench"
    let sysbench_line = fairbench::cli::sysbench::is_sysbench_line(w);
    let mut driver = None;
    while i < w.len() {
        // A number, or a sweep's list of them, each made at most `max`.
        let small = |v: &str, max: u64| {
            v.split(',')
                .map(|p| p.parse::<u64>().map(|n| n.min(max).to_string()).unwrap_or(p.to_string()))
                .collect::<Vec<_>>()
                .join(",")
        };
        if let Some((v, n)) = flag_value(w, i, "--target") {
            let db = if v.starts_with("mysql") { mysql } else { pg };
            out.push(format!("--target={}", db.url));
            i += n;
            continue;
        }
        if w[i].starts_with("--mysql-") || w[i].starts_with("--pgsql-") {
            i += 1; // the connection options, replaced below
            continue;
        }
        if let Some(d) = w[i].strip_prefix("--db-driver=") {
            driver = Some(d.to_string());
        }
        let mut replaced = false;
        for (name, max) in
            [("--time", 1), ("--table-size", 1000), ("--table_size", 1000), ("--threads", 16), ("--repeat", 3)]
        {
            if let Some((v, n)) = flag_value(w, i, name) {
                out.push(format!("{name}={}", small(v, max)));
                i += n;
                replaced = true;
                break;
            }
        }
        if replaced {
            continue;
        }
        if let Some((_, n)) = flag_value(w, i, "--warmup") {
            i += n;
            continue;
        }
        if w[i].ends_with(".toml") && !w[i].starts_with('/') {
            out.push(format!("{}/{}", env!("CARGO_MANIFEST_DIR"), w[i]));
            i += 1;
            continue;
        }
        if let Some((v, n)) = flag_value(w, i, "--set") {
            let (k, val) = v.split_once('=').unwrap();
            out.push(format!("--set={k}={}", small(val, 1000)));
            i += n;
            continue;
        }
        out.push(w[i].clone());
        i += 1;
    }
    // A run of the default length (10 s) is made short too.
    let runs =
        matches!(out.first().map(String::as_str), Some("run" | "bench")) || out.last().is_some_and(|c| c == "run");
    if runs && !out.iter().any(|a| a.starts_with("--time")) {
        out.insert(1, "--time=1".into());
    }
    if sysbench_line {
        let db = if driver.as_deref() == Some("pgsql") { pg } else { mysql };
        let url = url::Url::parse(&db.url).unwrap();
        let prefix = if db.kind == Kind::Mysql { "--mysql-" } else { "--pgsql-" };
        let command = out.pop().unwrap();
        for (k, v) in [
            ("host", url.host_str().unwrap().to_string()),
            ("port", url.port().unwrap().to_string()),
            ("user", url.username().to_string()),
            ("password", url.password().unwrap_or("").to_string()),
            ("db", db.name.clone()),
        ] {
            out.push(format!("{prefix}{k}={v}"));
        }
        out.push(command);
    }
    out
}

#[test]
fn every_readme_command_line_works() {
    let lines = readme_lines();
    assert!(lines.len() >= 15, "{lines:?}");
    let (mysql, pg) = (TestDb::new(Kind::Mysql), TestDb::new(Kind::Postgres));
    let dir = tempfile::tempdir().unwrap();
    for line in &lines {
        let w = words(line);
        // As written: parsed (and, for sysbench lines, translated) without error.
        let args = if fairbench::cli::sysbench::is_sysbench_line(&w) {
            fairbench::cli::sysbench::translate(&w).unwrap_or_else(|e| panic!("{line}: {e}")).args
        } else {
            w.clone()
        };
        if let Err(e) = <fairbench::cli::Cli as clap::Parser>::try_parse_from(&args) {
            panic!("{line}: {e}");
        }
        if line.contains("tls=verify") {
            continue;
        }
        let args = for_test(&w, &mysql, &pg);
        // A run of a line that writes to someone else's tables needs sysbench's to exist:
        // fairbench's sbtest tables of the examples before go first.
        if line.contains("--allow-foreign-tables") {
            assert!(fairbench_in(dir.path(), &["cleanup".into(), format!("--target={}", mysql.url)]).status.success());
            let sb = ["oltp_write_only", "--tables=1", "--table-size=1000", "--db-driver=mysql"];
            let url = url::Url::parse(&mysql.url).unwrap();
            let o = std::process::Command::new("sysbench")
                .args(sb)
                .arg(format!("--mysql-host={}", url.host_str().unwrap()))
                .arg(format!("--mysql-port={}", url.port().unwrap()))
                .arg(format!("--mysql-user={}", url.username()))
                .arg(format!("--mysql-password={}", url.password().unwrap_or("")))
                .arg(format!("--mysql-db={}", mysql.name))
                .args(["--mysql-storage-engine=innodb", "prepare"])
                .output()
                .unwrap();
            assert!(o.status.success(), "sysbench prepare: {}", text(&o));
        }
        let o = fairbench_in(dir.path(), &args);
        // compare exits 4 when a claim is not supported: the README's claims are examples.
        let claims_judged = args.first().is_some_and(|c| c == "compare")
            && o.status.code() == Some(4)
            && String::from_utf8_lossy(&o.stdout).contains("Claims:");
        assert!(o.status.success() || claims_judged, "README line {line}\nran as {args:?}:\n{}", text(&o));
        eprintln!("README line ran: {line}");
    }
}
