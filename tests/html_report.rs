//! `fairbench report` (one offline HTML file) opened in headless Chromium: a single result
//! (closed loop with repeats and thresholds, and open loop), a comparison of the two, and a
//! sweep, all from small real runs on SQLite. Each page must load with no console error, no
//! uncaught exception, no CSP violation and no network request, and draw exactly the charts
//! it should, each with data; a screenshot of each is kept in target/test-artifacts/.
//! Also `fairbench export --csv`: rows and values round-trip against the result file.
//!
//! Needs /usr/bin/chromium (scripts/test.sh installs it when absent); without it these tests
//! fail rather than skip.

mod common;

use common::*;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CHROMIUM: &str = "/usr/bin/chromium";

fn chromium() -> &'static str {
    assert!(
        Path::new(CHROMIUM).exists(),
        "{CHROMIUM} is missing: the HTML report tests open each report in headless Chromium. Install it with \
         `apt-get install -y chromium` (scripts/test.sh installs it when absent)"
    );
    CHROMIUM
}

/// Runs Chromium with `args` (plus a fresh profile and no background traffic), killing it
/// after two minutes; returns its stdout and stderr.
fn run_chromium(profile: &Path, args: &[String]) -> (String, String) {
    let mut cmd = Command::new(chromium());
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-extensions",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--virtual-time-budget=5000",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .args(args)
    .stdin(Stdio::null());
    let dir = tempfile::tempdir().unwrap();
    let (out_path, err_path) = (dir.path().join("stdout"), dir.path().join("stderr"));
    cmd.stdout(std::fs::File::create(&out_path).unwrap()).stderr(std::fs::File::create(&err_path).unwrap());
    let mut child = cmd.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium {args:?} did not finish in 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    (std::fs::read_to_string(out_path).unwrap(), std::fs::read_to_string(err_path).unwrap())
}

/// What a page did in Chromium.
struct Opened {
    /// Attributes of `<body>` after the scripts ran.
    body: BTreeMap<String, String>,
    dom: String,
    /// Console lines (any level) and uncaught exceptions from the page.
    console: Vec<String>,
    /// URLs the page itself requested (the browser's own background requests left out).
    page_requests: Vec<String>,
}

/// Opens `html` headless: the DOM after 5 s of virtual time, the console and the net log;
/// then a screenshot to target/test-artifacts/NAME.png.
fn open(html: &Path, name: &str) -> Opened {
    let profile = tempfile::tempdir().unwrap();
    let net_log = profile.path().join("net-log.json");
    let url = format!("file://{}", html.display());
    let (dom, stderr) = run_chromium(
        &profile.path().join("dom"),
        &[
            "--enable-logging=stderr".into(),
            "--v=0".into(),
            format!("--log-net-log={}", net_log.display()),
            "--dump-dom".into(),
            url.clone(),
        ],
    );
    let console =
        stderr.lines().filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught")).map(str::to_string).collect();
    let page_requests = page_requests(&std::fs::read_to_string(&net_log).expect("chromium wrote no net log"));

    let artifacts = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let shot = artifacts.join(format!("{name}.png"));
    let _ = std::fs::remove_file(&shot);
    run_chromium(
        &profile.path().join("shot"),
        &[format!("--screenshot={}", shot.display()), "--window-size=1400,3000".into(), url],
    );
    assert!(shot.metadata().map(|m| m.len() > 10_000).unwrap_or(false), "no screenshot at {}", shot.display());
    Opened { body: body_attributes(&dom), dom, console, page_requests }
}

/// The attributes of the first `<body ...>` tag of a serialized DOM.
fn body_attributes(dom: &str) -> BTreeMap<String, String> {
    let start = dom.find("<body").expect("no <body> in the DOM");
    let tag = &dom[start + 5..start + dom[start..].find('>').unwrap()];
    let mut out = BTreeMap::new();
    let mut rest = tag.trim_start();
    while let Some(eq) = rest.find("=\"") {
        let name = rest[..eq].trim().to_string();
        let after = &rest[eq + 2..];
        let end = after.find('"').unwrap();
        out.insert(name, after[..end].replace("&quot;", "\"").replace("&amp;", "&"));
        rest = after[end + 1..].trim_start();
    }
    out
}

/// URLs of the net log's requests made for a page opened from a file: those whose network
/// isolation key, initiator or site for cookies is the file:// page. The browser's own
/// requests (component updates, time sync) carry none of these.
fn page_requests(net_log: &str) -> Vec<String> {
    let log: Value = serde_json::from_str(net_log)
        .or_else(|_| serde_json::from_str(&format!("{}]}}", net_log.trim_end().trim_end_matches(','))))
        .expect("net log is JSON");
    let mut urls: BTreeMap<u64, BTreeSet<String>> = BTreeMap::new();
    let mut from_page: BTreeSet<u64> = BTreeSet::new();
    for e in log["events"].as_array().unwrap() {
        let (Some(id), Some(params)) = (e["source"]["id"].as_u64(), e.get("params")) else { continue };
        if let Some(u) = params["url"].as_str() {
            urls.entry(id).or_default().insert(u.to_string());
        }
        let page = |k: &str| params[k].as_str().is_some_and(|v| v.contains("file://") || v == "null");
        if page("network_isolation_key") || page("initiator") || page("site_for_cookies") {
            from_page.insert(id);
        }
    }
    from_page.iter().flat_map(|id| urls.get(id).into_iter().flatten().cloned()).collect()
}

/// Every check a loaded report must pass; `charts` is the exact number it must draw.
fn assert_loads_offline(html: &Path, name: &str, charts: usize) -> Opened {
    let page = std::fs::read_to_string(html).unwrap();
    assert_no_remote_references(&page, name);
    let o = open(html, name);
    assert!(o.console.is_empty(), "{name}: console output or uncaught exception:\n{}", o.console.join("\n"));
    assert_eq!(o.body.get("data-js-errors").map(String::as_str), Some("[]"), "{name}: JS errors");
    assert_eq!(o.body.get("data-csp-violations").map(String::as_str), Some("[]"), "{name}: CSP violations");
    let offsite: Vec<&String> =
        o.page_requests.iter().filter(|u| !(u.starts_with("file:") || u.starts_with("data:"))).collect();
    assert!(offsite.is_empty(), "{name}: the page made network requests: {offsite:?}");
    let n = |k: &str| o.body.get(k).and_then(|v| v.parse::<usize>().ok());
    assert_eq!(n("data-charts-expected"), Some(charts), "{name}: charts in the page's data");
    assert_eq!(n("data-charts-rendered"), Some(charts), "{name}: charts drawn (body: {:?})", o.body);
    assert_eq!(n("data-charts-with-data"), Some(charts), "{name}: charts with data");
    assert_eq!(o.dom.matches("<canvas id=\"chart-").count(), charts, "{name}: canvases");
    o
}

/// No `src=`, `href=`, `url(` or `@import` that points at http(s) or a protocol-relative URL.
fn assert_no_remote_references(page: &str, name: &str) {
    let lower = page.to_lowercase();
    for attr in ["src=", "href=", "url(", "@import"] {
        for (i, _) in lower.match_indices(attr) {
            let target = lower[i + attr.len()..].trim_start_matches([' ', '"', '\'']);
            assert!(
                !(target.starts_with("http:") || target.starts_with("https:") || target.starts_with("//")),
                "{name}: remote reference: {}",
                &page[i..(i + 80).min(page.len())]
            );
        }
    }
    assert!(page.contains("http-equiv=\"Content-Security-Policy\""), "{name}: no CSP");
}

fn report(dir: &Path, files: &[&Path], out: &Path) {
    let mut args: Vec<String> = vec!["report".into()];
    args.extend(files.iter().map(|f| f.display().to_string()));
    args.extend(["-o".into(), out.display().to_string()]);
    let o = fairbench_in(dir, &args);
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn sqlite_single_and_comparison_reports_load_offline_with_their_charts() {
    chromium();
    let (a, b) = (TestDb::new(Kind::Sqlite), TestDb::new(Kind::Sqlite));
    let (a_json, b_json) = (a.dir.path().join("a.json"), b.dir.path().join("b.json"));
    for db in [&a, &b] {
        let o = db.fairbench(&["prepare", "oltp_read_write", "--table-size=500"]);
        assert!(o.status.success(), "{}", text(&o));
    }
    // A: closed loop, 3 repeats, one threshold met and one failed (exit code 3, result saved).
    let run_a = spawn_run(
        &a,
        &[
            "run",
            "oltp_read_write",
            "--table-size=500",
            "--time=4",
            "--warmup=1",
            "--repeat=3",
            "--threshold=p99<60s",
            "--threshold=tps>=1e12",
        ],
        &a_json,
    );
    // B: open loop at 300 events/s, 11 s: enough seconds for interval estimates.
    let run_b = spawn_run(
        &b,
        &["run", "oltp_read_write", "--table-size=500", "--time=11", "--warmup=1", "--rate=300"],
        &b_json,
    );
    let oa = run_a.wait_with_output().unwrap();
    assert_eq!(oa.status.code(), Some(3), "{}", text(&oa));
    let doc_b = finish(run_b, &b_json);
    assert!(doc_b["open_loop"].is_object());

    let dir = tempfile::tempdir().unwrap();
    let (single, open_loop, compare) =
        (dir.path().join("single.html"), dir.path().join("open.html"), dir.path().join("compare.html"));
    // A file name that is markup: it must stay text.
    let hostile = dir.path().join("a<img src=x onerror=alert(1)>.json");
    std::fs::copy(&a_json, &hostile).unwrap();
    report(dir.path(), &[&hostile], &single);
    report(dir.path(), &[&b_json], &open_loop);
    report(dir.path(), &[&a_json, &b_json], &compare);

    let (s, o, c) = std::thread::scope(|scope| {
        // Each with one chart of the SQLite file's own figures (pages over time).
        let s = scope.spawn(|| assert_loads_offline(&single, "report-single", 11));
        let o = scope.spawn(|| assert_loads_offline(&open_loop, "report-open-loop", 13));
        let c = scope.spawn(|| assert_loads_offline(&compare, "report-compare", 5));
        (s.join().unwrap(), o.join().unwrap(), c.join().unwrap())
    });

    // One result: the audit before the first chart; repeats, thresholds, conditions.
    assert!(!s.dom.contains("<img") && s.dom.contains("a&lt;img src=x onerror=alert(1)&gt;.json"));
    let audit = s.dom.find("<h2>Audit").expect("audit section");
    assert!(audit < s.dom.find("<canvas").unwrap(), "the audit comes first");
    for text in ["<h2>Repeats</h2>", "median", ">pass<", ">FAIL<", "Server variables", "class=\"filter\""] {
        assert!(s.dom.contains(text), "single report lacks {text}");
    }
    assert!(o.dom.contains("open loop at 300 events/s"));
    assert!(s.dom.contains("Server, io: pages (read about once a second)"), "no chart of the server's figures");
    // The comparison: ratios with their intervals and readings, the unfair loop models.
    assert!(c.dom.contains("loop-model-differs") && c.dom.contains("sev-critical"));
    assert!(c.dom.contains("x ["), "no ratio with an interval in the comparison");
    assert!(c.dom.contains("Conditions that differ"));
}

#[test]
fn sqlite_sweep_report_loads_offline_with_its_charts() {
    chromium();
    let db = TestDb::new(Kind::Sqlite);
    let out = db.dir.path().join("sweep.json");
    let o = db.fairbench(&[
        "sweep",
        "oltp_point_select",
        "--threads=1,2",
        "--table-size=200,400",
        "--time=2",
        &format!("--out={}", out.display()),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let html = db.dir.path().join("sweep.html");
    report(db.dir.path(), &[&out], &html);
    let s = assert_loads_offline(&html, "report-sweep", 6);
    assert!(s.dom.contains("Sweep table") && s.dom.contains("data vs cache"));
}

/// The net-log check above is not vacuous: a page that loads a remote image is caught.
#[test]
fn the_network_check_sees_a_page_request() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("remote.html");
    std::fs::write(&page, "<!doctype html><img src=\"http://fairbench-canary.invalid/x.png\">").unwrap();
    let o = open(&page, "canary");
    assert!(
        o.page_requests.iter().any(|u| u.contains("fairbench-canary.invalid")),
        "the request was not seen: {:?}",
        o.page_requests
    );
    let _ = std::fs::remove_file(Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-artifacts/canary.png"));
}

/// RFC 4180 records (quoted fields may hold commas, quotes and line breaks).
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let (mut rows, mut row, mut field) = (vec![], vec![], String::new());
    let (mut quoted, mut chars) = (false, text.chars().peekable());
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') if field.is_empty() => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut field)),
            (false, '\n') => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => field.push(c),
        }
    }
    assert!(!quoted && field.is_empty() && row.is_empty(), "CSV does not end with a complete record");
    rows
}

fn export(dir: &Path, file: &Path, what: Option<&str>) -> Vec<Vec<String>> {
    let mut args = vec!["export".to_string(), file.display().to_string(), "--csv".into()];
    if let Some(w) = what {
        args.push(format!("--what={w}"));
    }
    let o = fairbench_in(dir, &args);
    assert!(o.status.success(), "{}", text(&o));
    parse_csv(&String::from_utf8(o.stdout).unwrap())
}

fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(m) => m.iter().for_each(|(k, v)| flatten(&format!("{prefix}.{k}"), v, out)),
        Value::Array(a) => a.iter().enumerate().for_each(|(i, v)| flatten(&format!("{prefix}.{i}"), v, out)),
        Value::String(s) => out.push((prefix.into(), s.clone())),
        Value::Null => out.push((prefix.into(), String::new())),
        v => out.push((prefix.into(), v.to_string())),
    }
}

#[test]
fn sqlite_csv_exports_round_trip() {
    let (closed, open) = (TestDb::new(Kind::Sqlite), TestDb::new(Kind::Sqlite));
    let (c_json, o_json) = (closed.dir.path().join("c.json"), open.dir.path().join("o.json"));
    let runs = [
        spawn_run(&closed, &["bench", "oltp_read_write", "--table-size=300", "--time=2", "--warmup=1"], &c_json),
        spawn_run(&open, &["bench", "oltp_read_write", "--table-size=300", "--time=2", "--rate=200"], &o_json),
    ];
    let [rc, ro] = runs;
    let docs = [(finish(rc, &c_json), &c_json, 6usize), (finish(ro, &o_json), &o_json, 7)];
    let dir = tempfile::tempdir().unwrap();
    for (doc, file, classes) in &docs {
        // Intervals: one row per second and class (event_service too in open loop).
        let rows = export(dir.path(), file, None);
        let intervals = doc["intervals"].as_array().unwrap();
        assert_eq!(rows[0][0], "from_s");
        assert_eq!(rows.len() - 1, intervals.len() * classes, "{}", file.display());
        for (n, row) in rows[1..].iter().enumerate() {
            assert_eq!(row.len(), rows[0].len());
            let (i, class) = (&intervals[n / classes], &row[4]);
            let per_s: f64 = row[6].parse().unwrap();
            assert!((per_s - i[class]["per_s"].as_f64().unwrap()).abs() < 1e-6, "{class} per_s at row {n}");
            assert_eq!(row[2], i["warmup"].to_string());
        }
        // Statements: one row per class, statement kind and transaction.
        let rows = export(dir.path(), file, Some("statements"));
        let expected: Vec<(String, String)> =
            [("class", "stats"), ("statement", "statements"), ("transaction", "transactions")]
                .iter()
                .flat_map(|(kind, key)| {
                    doc[*key].as_object().unwrap().keys().map(move |k| (kind.to_string(), k.clone()))
                })
                .collect();
        let got: Vec<(String, String)> = rows[1..].iter().map(|r| (r[0].clone(), r[1].clone())).collect();
        assert_eq!(got, expected);
        // Conditions: key,value records, quoted where needed, equal to the file's values.
        let rows = export(dir.path(), file, Some("conditions"));
        assert_eq!(rows[0], ["key", "value"]);
        assert!(rows.iter().all(|r| r.len() == 2), "a conditions row is not key,value");
        let mut expected = vec![];
        flatten("target", &doc["target"], &mut expected);
        flatten("conditions", &doc["conditions"], &mut expected);
        let got: Vec<(String, String)> = rows[1..].iter().map(|r| (r[0].clone(), r[1].clone())).collect();
        assert_eq!(got, expected);
        assert!(got.iter().any(|(_, v)| v.contains(',')), "no value with a comma was exercised");
    }
}

/// The chart data a page embeds (#fb-data).
fn page_data(html: &Path) -> Value {
    let page = std::fs::read_to_string(html).unwrap();
    let tag = "id=\"fb-data\">";
    let start = page.find(tag).expect("chart data") + tag.len();
    serde_json::from_str(&page[start..start + page[start..].find("</script>").unwrap()]).unwrap()
}

/// `--repeat 3`: the COMMIT scatter holds every repeat's samples, one series per repeat, each
/// on its repeat's own seconds of the one time axis (they once all restarted at 0).
#[test]
fn sqlite_every_repeat_scatters_on_its_own_seconds() {
    let db = TestDb::new(Kind::Sqlite);
    assert!(db.fairbench(&["prepare", "oltp_read_write", "--table-size=500"]).status.success());
    let result = db.dir.path().join("repeats.json");
    let out = format!("--out={}", result.display());
    let o = db.fairbench(&["run", "oltp_read_write", "--table-size=500", "--time=2", "--warmup=1", "--repeat=3", &out]);
    assert!(o.status.success(), "{}", text(&o));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&result).unwrap()).unwrap();
    // The result: each repeat's points inside their own second (a sample's clock is read
    // just before the swap that ends the previous one, never half a second before).
    let mut in_file: BTreeMap<u64, usize> = BTreeMap::new();
    for i in doc["intervals"].as_array().unwrap() {
        let (from, to) =
            (i["from_s"].as_f64().unwrap(), i["from_s"].as_f64().unwrap() + i["duration_s"].as_f64().unwrap());
        let points = i["scatter"]["points"].as_array().unwrap();
        *in_file.entry(i["repeat"].as_u64().unwrap()).or_default() += points.len();
        for p in points {
            let x = p[0].as_f64().unwrap();
            assert!(x > from - 0.5 && x <= to + 1e-6, "sample at {x} s in the second {from}..{to}");
        }
    }
    assert_eq!(in_file.keys().copied().collect::<Vec<_>>(), [1, 2, 3]);

    let html = db.dir.path().join("repeats.html");
    report(db.dir.path(), &[&result], &html);
    let data = page_data(&html);
    let scatter = data["charts"].as_array().unwrap().iter().find(|c| c["id"] == "scatter").expect("scatter chart");
    let mut ranges = vec![];
    for (k, s) in scatter["series"].as_array().unwrap().iter().enumerate() {
        let repeat = k as u64 + 1;
        assert_eq!(s["label"], format!("COMMIT latency, repeat {repeat}"));
        let x = match s["xref"].as_u64() {
            Some(at) => &data["xs"][at as usize],
            None => &s["x"],
        };
        let x: Vec<f64> = x.as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        assert_eq!(x.len(), in_file[&repeat], "repeat {repeat}: the page draws every sample of the result");
        ranges.push((x.iter().copied().fold(f64::INFINITY, f64::min), x.iter().copied().fold(0.0, f64::max)));
    }
    assert_eq!(ranges.len(), 3, "{scatter}");
    // One axis: each repeat's samples after the one before.
    for w in ranges.windows(2) {
        assert!(w[0].0 < w[0].1 && w[0].1 <= w[1].0, "{ranges:?}");
    }
    let marks: Vec<&str> = scatter["marks"].as_array().unwrap().iter().map(|m| m["label"].as_str().unwrap()).collect();
    assert_eq!(marks, ["repeat 2", "repeat 3"]);
    eprintln!("scatter points per repeat, result and page: {in_file:?}; x ranges {ranges:?}");
}

/// A day at one-second intervals (what results kept before their timeline was bounded, and
/// what a day's streamed file holds) renders in Chromium like any report: every chart drawn
/// with data, each time axis from at most 1,000 buckets of 4 points, the page a few MB.
#[test]
fn sqlite_a_day_of_seconds_renders_from_buckets() {
    let db = TestDb::new(Kind::Sqlite);
    assert!(db.fairbench(&["prepare", "oltp_read_write", "--table-size=500"]).status.success());
    let mut doc = db.run_json(&["run", "oltp_read_write", "--table-size=500", "--time=3"]);
    // The run's first whole second, repeated over 86,400 seconds, with a stall at noon.
    let second = doc["intervals"][0].clone();
    let day: Vec<Value> = (0..86_400)
        .map(|s| {
            let mut i = second.clone();
            i["from_s"] = s.into();
            i["duration_s"] = 1.0.into();
            if let Some(points) = i["scatter"]["points"].as_array_mut() {
                points.truncate(1);
                points.iter_mut().for_each(|p| p[0] = (s as f64 + 0.5).into());
            }
            if s == 43_200 {
                i["event"]["count"] = 0.into();
                i["event"]["per_s"] = 0.0.into();
            }
            i
        })
        .collect();
    doc["intervals"] = Value::Array(day);
    doc["streamed"] = Value::Array(vec![]);
    let dir = tempfile::tempdir().unwrap();
    let (json, html) = (dir.path().join("day.json"), dir.path().join("day.html"));
    std::fs::write(&json, serde_json::to_vec(&doc).unwrap()).unwrap();
    report(dir.path(), &[&json], &html);
    let bytes = std::fs::metadata(&html).unwrap().len();
    let data = page_data(&html);
    let charts = data["charts"].as_array().unwrap();
    let started = Instant::now();
    assert_loads_offline(&html, "report-day", charts.len());
    println!("a day of seconds: {bytes} bytes of page, loaded and drawn by Chromium in {:?}", started.elapsed());
    assert!(bytes < 5_000_000, "{bytes} bytes");
    let longest = |c: &Value| -> usize {
        let xs = &data["xs"];
        c["series"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                s["xref"]
                    .as_u64()
                    .map_or(s["x"].as_array().unwrap().len(), |r| xs[r as usize].as_array().unwrap().len())
            })
            .max()
            .unwrap_or(0)
    };
    let tps = charts.iter().find(|c| c["id"] == "tps").unwrap();
    assert!(longest(tps) <= 4_000 && longest(tps) >= 1_000, "{} points", longest(tps));
    assert!(tps["title"].as_str().unwrap().contains("buckets of 86.399 s"), "{}", tps["title"]);
    assert!(tps["series"][0]["y"].as_array().unwrap().iter().any(|v| v.as_f64() == Some(0.0)), "the stall is drawn");
}

/// A study's report (`study report DIR --format html`, and the report.html `study run`
/// writes): loads offline with its charts (the ratio checks, and tps and p99 against the
/// swept client counts), and its verdicts come before any chart or table of cells.
#[test]
fn sqlite_study_report_loads_offline_with_its_verdicts_first() {
    chromium();
    let dir = tempfile::tempdir().unwrap();
    let study = r#"
[study]
title = "Two files"
repeats = 2
time_s = 6

[targets.a]
url = "sqlite://a.db"

[targets.b]
url = "sqlite://b.db"

[[workloads]]
name = "oltp_read_only"
options = { tables = 1, table_size = 200 }

[matrix]
threads = [1, 2]

[[claims]]
says = "b is no slower than a hundredth of a"
check = "tps>=0.01x"
baseline = "a"
subject = "b"
"#;
    std::fs::write(dir.path().join("s.toml"), study).unwrap();
    let o = fairbench_in(dir.path(), &["study", "run", "s.toml", "--out", "out"].map(String::from));
    assert!(o.status.success(), "{}", text(&o));
    let written = dir.path().join("out/report.html");
    let o = fairbench_in(dir.path(), &["study", "report", "out", "--format", "html"].map(String::from));
    assert!(o.status.success(), "{}", text(&o));
    let printed = dir.path().join("printed.html");
    std::fs::write(&printed, &o.stdout).unwrap();
    for (page, name) in [(&written, "study"), (&printed, "study-printed")] {
        let opened = assert_loads_offline(page, name, 3);
        let dom = &opened.dom;
        let verdicts = dom.find(">Verdicts</h2>").expect("a Verdicts section");
        // The claim as its source's question, quoted, then the sides as they ran.
        assert!(dom.contains("SUPPORTED</span> \u{201c}b is no slower than a hundredth of a"), "{name}");
        assert!(dom.contains("<p>as run: on this host, 'b' (SQLite 3."), "{name}");
        for later in ["<canvas", ">Cells</h2>", ">Runs</h2>"] {
            assert!(dom.find(later).is_some_and(|at| at > verdicts), "{name}: {later} before the verdicts");
        }
    }
}
