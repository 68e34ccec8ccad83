//! A probe's result as its reports name it: the HTML title and target card of a probe that
//! ran alone, the text header when its first target was down, and the workload's stall set
//! against the probe's outage on the HTML page as in the text. The documents are a real
//! result (src/audit/testdata) with a probe's figures put in.

use super::html::{render, HtmlInput};
use super::{Report, ReportOptions, TextReport};
use crate::model::ResultDocument;
use serde_json::json;

fn node(name: &str, port: u16, up: bool) -> serde_json::Value {
    let url = format!("mysql://fairbench@127.0.0.1:{port}/fairbench");
    match up {
        true => json!({ "name": name, "url": url, "product": "MariaDB", "version": "11.8.3", "role": "primary" }),
        false => json!({ "name": name, "url": url, "unreachable": "cannot connect: Connection refused" }),
    }
}

/// A failover probe over two nodes, alone or beside `load`, with one 2 s outage; the
/// conditions left empty, as when the first target is down after the run.
fn probe(nodes: [serde_json::Value; 2], load: Option<&str>) -> ResultDocument {
    let mut d: ResultDocument = serde_json::from_str(include_str!("../audit/testdata/mariadb_loopback.json")).unwrap();
    d.conditions.workload.name = "probe failover".into();
    d.conditions.server.product.clear();
    d.conditions.server.version.clear();
    let outage = json!({ "from_us": 3_000_000, "to_us": 5_000_000, "duration_ms": 2000.0, "errors": {},
        "target_before": 1, "target_after": 2 });
    d.ha = Some(
        serde_json::from_value(json!({
            "probe": "failover", "started_at": "2026-11-29T05:00:00Z", "duration_s": 10.0, "load": load,
            "nodes": nodes,
            "failover": { "rate": 20.0, "attempt_timeout_s": 1.0, "run_id": 7, "attempts": [], "outcomes": {},
                "outages": [outage], "downtime_ms": 2000.0 }
        }))
        .unwrap(),
    );
    d
}

fn page(d: &ResultDocument) -> String {
    render(&HtmlInput::Single { file: "probe.json", doc: d })
}

fn between<'a>(s: &'a str, open: &str, close: &str) -> &'a str {
    let from = s.find(open).unwrap_or_else(|| panic!("no {open}")) + open.len();
    &s[from..from + s[from..].find(close).unwrap()]
}

#[test]
fn a_probe_alone_names_its_first_node_in_the_title_and_every_node_in_the_target_card() {
    let html = page(&probe([node("target1", 13306, true), node("target2", 13307, true)], None));
    assert_eq!(
        between(&html, "<title>", "</title>"),
        "fairbench: probe failover on target1 mysql://fairbench@127.0.0.1:13306/fairbench (MariaDB 11.8.3) (probe.json)"
    );
    assert_eq!(
        between(&html, "<dt>target</dt><dd>", "</dd>"),
        "target1 mysql://fairbench@127.0.0.1:13306/fairbench (MariaDB 11.8.3); \
         target2 mysql://fairbench@127.0.0.1:13307/fairbench (MariaDB 11.8.3); mysql over tcp"
    );
}

#[test]
fn the_header_says_the_first_target_was_unreachable_and_which_node_answered() {
    let opts = ReportOptions::default();
    let down_first = probe([node("target1", 13306, false), node("target2", 13307, true)], None);
    let header = TextReport.render(&down_first, &opts).lines().next().unwrap().to_string();
    assert!(
        header.contains(
            "probe failover on target1 mysql://fairbench@127.0.0.1:13306/fairbench \
             (unreachable at the start; target2 answered: MariaDB 11.8.3), "
        ),
        "{header}"
    );
    let all_down = probe([node("target1", 13306, false), node("target2", 13307, false)], None);
    let header = TextReport.render(&all_down, &opts).lines().next().unwrap().to_string();
    assert!(header.contains("(unreachable at the start, as was every node), "), "{header}");
}

#[test]
fn a_workload_beside_the_probe_names_its_server_as_before() {
    let mut d = probe([node("target1", 13306, true), node("target2", 13307, true)], Some("oltp_write_only"));
    d.conditions.server.product = "MariaDB".into();
    d.conditions.server.version = "10.11.6".into();
    assert_eq!(super::probed::subject(&d), "MariaDB 10.11.6");
    assert!(super::probed::probed_nodes(&d).is_none());
}

#[test]
fn the_html_page_sets_the_workloads_stall_against_the_probes_outage_as_the_text_does() {
    let d = probe([node("target1", 13306, true), node("target2", 13307, true)], Some("oltp_write_only"));
    let views = d.outage_views().expect("a workload beside a probe that saw an outage");
    let sentence = super::ha::views_sentence(&views);
    assert!(sentence.starts_with("the workload beside it: longest stall"), "{sentence}");
    let text = TextReport.render(&d, &ReportOptions::default());
    assert!(text.contains(&format!("  {sentence}\n")), "{text}");
    let html = page(&d);
    let escaped = sentence.replace('\'', "&#39;");
    let class = if views.agree() { "views" } else { "views fail" };
    assert!(html.contains(&format!("<p class=\"{class}\">{escaped}</p>")), "no views line in the HA section");
}

/// Two primaries that took writes in turns behind one proxy target: the verdict and the
/// split-brain lines name both servers (by the names the result gives them), with the writes
/// each took, and the final primary by name, never "target1" or "SPLIT BRAIN".
#[test]
fn two_primaries_behind_one_target_are_named_with_the_writes_each_took() {
    let f: crate::model::ha::FailoverRecord = serde_json::from_value(json!({
        "rate": 20.0, "attempt_timeout_s": 1.0, "run_id": 7, "attempts": [], "outcomes": {}, "outages": [],
        "downtime_ms": 0.0,
        "servers": [
            { "key": "server_id 1 at 127.0.0.1:13306", "address": "127.0.0.1:13306", "name": "primary" },
            { "key": "server_id 2 at 127.0.0.1:13307", "address": "127.0.0.1:13307", "name": "replica1" }
        ],
        "split_brain": { "on_non_primary": [], "overlapping": [{ "targets": [1, 1],
            "nodes": ["server_id 1 at 127.0.0.1:13306", "server_id 2 at 127.0.0.1:13307"],
            "acknowledged": 3, "acknowledged_each": [40, 72], "from_us": 6_000_000, "to_us": 10_000_000 }] },
        "verification": { "node": "mysql://fairbench@127.0.0.1:13307/fairbench", "server": "server_id 2 at 127.0.0.1:13307",
            "target": 2, "why": "", "at": "", "acknowledged": 179, "lost": 0, "lost_seqs": [],
            "unacknowledged_present": 0, "unacknowledged_present_seqs": [], "failed_present": 0 }
    }))
    .unwrap();
    let verdict = super::ha::verdict(&f, None);
    assert!(verdict.starts_with("TWO PRIMARIES (primary and replica1 took writes at once)"), "{verdict}");
    assert!(verdict.contains("lost on the final primary (replica1)"), "{verdict}");
    let mut text = String::new();
    let ha = crate::model::ha::HaRecord {
        probe: "failover".into(),
        started_at: String::new(),
        duration_s: 10.0,
        load: None,
        nodes: Vec::new(),
        request: None,
        failover: Some(f),
        lag: None,
    };
    super::ha::text(&mut text, &ha, None, false);
    assert!(
        text.contains("TWO PRIMARIES: primary and replica1 both took writes while both read as primaries, 6.000 -> 10.000: 40 and 72 acknowledged write(s)"),
        "{text}"
    );
    assert!(!text.contains("SPLIT BRAIN") && !text.contains("target1"), "{text}");
}
