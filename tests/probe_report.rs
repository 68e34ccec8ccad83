//! A failover probe whose first target is down when it starts, against the local MariaDB:
//! its text header and its HTML report's title name that target, say it was unreachable and
//! name the node that answered, where they read "probe failover on  ," before.

mod common;

use common::*;

#[test]
fn mariadb_a_probe_whose_first_target_is_down_names_it_and_the_node_that_answered() {
    let db = TestDb::new(Kind::Mysql);
    // Port 1: nothing listens there (as in tests/errors.rs), the connection is refused at once.
    let down = format!("mysql://root@127.0.0.1:1/{}", db.name);
    let (json, html) = (db.dir.path().join("probe.json"), db.dir.path().join("probe.html"));
    let args = ["probe", "failover", "--target", &down, "--target", &db.url, "--time", "1", "--rate", "10"];
    let mut args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    args.extend(["--out".into(), json.display().to_string()]);
    let o = fairbench_in(db.dir.path(), &args);
    assert!(o.status.success(), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let header = stdout.lines().find(|l| l.starts_with("fairbench ")).unwrap_or_else(|| panic!("{}", text(&o)));
    let said = format!("probe failover on target1 {down} (unreachable at the start; target2 answered: MariaDB ");
    assert!(header.contains(&said), "{header}");

    let o = fairbench_in(
        db.dir.path(),
        &["report".into(), json.display().to_string(), "--out".into(), html.display().to_string()],
    );
    assert!(o.status.success(), "{}", text(&o));
    let page = std::fs::read_to_string(&html).unwrap();
    let title = &page[page.find("<title>").unwrap()..page.find("</title>").unwrap()];
    assert!(title.contains(&said), "{title}");
}
