//! `--metrics-listen`: a real run serves OpenMetrics text while it lasts, and what a scrape
//! counted is exactly what the result records for the intervals closed by then.

mod common;
use common::*;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// `GET /metrics`; the body.
fn scrape(address: &str) -> String {
    let mut s = TcpStream::connect(address).unwrap();
    write!(s, "GET /metrics HTTP/1.0\r\nHost: {address}\r\n\r\n").unwrap();
    let mut reply = String::new();
    s.read_to_string(&mut reply).unwrap();
    assert!(reply.starts_with("HTTP/1.0 200") || reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(reply.to_ascii_lowercase().contains("content-type: application/openmetrics-text"), "{reply}");
    reply.split_once("\r\n\r\n").unwrap().1.to_string()
}

/// The value of the sample `name` whose labels include `labels` (`phase="warmup"`).
fn sample(text: &str, name: &str, labels: &str) -> u64 {
    let line = text
        .lines()
        .find(|l| l.starts_with(&format!("{name}{{")) && l.contains(labels))
        .unwrap_or_else(|| panic!("no {name} with {labels} in\n{text}"));
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

/// The scrape read by Prometheus's own Python client's OpenMetrics parser: for each
/// histogram sample of class `event`, its name, `le` and value (the parser refuses text
/// that is not valid OpenMetrics).
fn parsed_event_histogram(text: &str) -> Vec<(String, String, f64)> {
    let script = r#"
import sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
for family in text_string_to_metric_families(sys.stdin.read()):
    if family.name == "fairbench_latency_seconds":
        assert family.type == "histogram", family.type
        for s in family.samples:
            if s.labels.get("class") == "event":
                print(s.name, s.labels.get("le", "-"), s.value)
"#;
    let mut child = std::process::Command::new("python3")
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "the parser refused the scrape: {}\n{text}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: Vec<&str> = l.split(' ').collect();
            (v[0].to_string(), v[1].to_string(), v[2].parse().unwrap())
        })
        .collect()
}

#[test]
fn sqlite_a_scrape_during_the_run_matches_the_result() {
    let db = TestDb::new(Kind::Sqlite);
    let p = db.fairbench(&["prepare", "oltp_point_select", "--table-size=1000"]);
    assert!(p.status.success(), "{}", text(&p));
    let out = db.dir.path().join("r.json");
    let args =
        ["run", "oltp_point_select", "--table-size=1000", "--warmup=1", "--time=4", "--metrics-listen=127.0.0.1:0"];
    let mut child = spawn_run(&db, &args, &out);
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    let address = loop {
        line.clear();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "no metrics address announced");
        if let Some(rest) = line.strip_prefix("metrics: http://") {
            break rest.split('/').next().unwrap().to_string();
        }
    };
    // Scrape until three intervals (the warmup's and two measured) are in.
    let deadline = Instant::now() + Duration::from_secs(60);
    let text = loop {
        let text = scrape(&address);
        if sample(&text, "fairbench_intervals_total", "") >= 3 {
            break text;
        }
        assert!(Instant::now() < deadline, "{text}");
        std::thread::sleep(Duration::from_millis(100));
    };
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    let doc = finish(child, &out);
    let closed = sample(&text, "fairbench_intervals_total", "") as usize;
    let intervals = &doc["intervals"].as_array().unwrap()[..closed];
    let count = |warmup: bool| -> u64 {
        intervals.iter().filter(|i| i["warmup"] == warmup).map(|i| i["event"]["count"].as_u64().unwrap()).sum()
    };
    assert_eq!(sample(&text, "fairbench_events_total", "phase=\"warmup\""), count(true));
    assert_eq!(sample(&text, "fairbench_events_total", "phase=\"measured\""), count(false));
    let reads: u64 = intervals.iter().map(|i| i["read"]["count"].as_u64().unwrap()).sum();
    assert_eq!(sample(&text, "fairbench_statements_total", "class=\"read\""), reads);
    assert_eq!(sample(&text, "fairbench_clients", ""), 1);
    assert!(text.contains("class=\"event\",quantile=\"0.99\"}"), "{text}");
    // The run's labels on every sample, and a histogram Prometheus's parser reads whose count
    // is every event of the closed intervals, its buckets rising to it.
    assert!(
        text.lines().filter(|l| !l.starts_with('#')).all(|l| l.contains("workload=\"oltp_point_select\"")),
        "{text}"
    );
    let histogram = parsed_event_histogram(&text);
    let value = |name: &str, le: &str| histogram.iter().find(|(n, l, _)| n == name && l == le).unwrap().2;
    assert_eq!(value("fairbench_latency_seconds_count", "-") as u64, count(true) + count(false));
    assert_eq!(value("fairbench_latency_seconds_bucket", "+Inf") as u64, count(true) + count(false));
    let buckets: Vec<f64> = histogram.iter().filter(|(n, _, _)| n.ends_with("_bucket")).map(|s| s.2).collect();
    assert!(buckets.len() == 20 && buckets.windows(2).all(|w| w[0] <= w[1]), "{histogram:?}");
    assert!(text.ends_with("# EOF\n"), "{text}");
    // The same count in the run's record, which the result was built from: its entries'
    // exact histograms (one entry an interval on a run this short).
    let record = fairbench::timeline::read_record(&fairbench::timeline::record_path_for(&out)).unwrap().record;
    let entries = &record.phases[0].entries[..closed];
    let recorded: u64 = entries
        .iter()
        .filter_map(|e| e.counts.events.as_ref())
        .map(|h| fairbench::stats::LatencyHistogram::decode(&h.histogram, h.min_ns, h.max_ns, 0).unwrap().count())
        .sum();
    assert_eq!(value("fairbench_latency_seconds_count", "-") as u64, recorded);
    // Gone with the run.
    assert!(TcpStream::connect(&address).is_err(), "still listening after the run");
}
