//! fairbench never drops, overwrites or writes a table it did not create, however much the
//! table looks like one of its own; it never measures a half-prepared dataset; and two
//! prepares of one database exclude each other.

mod common;
use common::*;

/// A user's `sbtest1` whose comment (MySQL, PostgreSQL) or column default (SQLite) merely
/// contains fairbench's old marker text, with three rows.
fn lookalike(db: &TestDb) {
    let rows = "INSERT INTO sbtest1 (id, k, c, pad) VALUES (1, 1, 'a', 'b'), (2, 2, 'c', 'd'), (3, 3, 'e', 'f')";
    match db.kind {
        Kind::Mysql => db.exec(&format!(
            "CREATE TABLE sbtest1 (id INTEGER PRIMARY KEY, k INTEGER, c CHAR(120), pad CHAR(60)) COMMENT='NOT created by fairbench'; {rows}"
        )),
        Kind::Postgres => db.exec(&format!(
            "CREATE TABLE sbtest1 (id INTEGER PRIMARY KEY, k INTEGER, c CHAR(120), pad CHAR(60)); \
             COMMENT ON TABLE sbtest1 IS 'NOT created by fairbench: fairbench:sbtest:v1'; {rows}"
        )),
        Kind::Sqlite => {
            std::fs::File::create(db.url.trim_start_matches("sqlite://")).unwrap();
            db.exec(&format!(
                "CREATE TABLE sbtest1( /* fairbench:sbtest:v1 */ id INTEGER PRIMARY KEY, k INTEGER, \
                 c CHAR(120) DEFAULT 'NOT created by fairbench', pad CHAR(60)); {rows}"
            ))
        }
    }
}

fn refused(db: &TestDb, args: &[&str], needle: &str) {
    let o = db.fairbench(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?} should be refused:\n{}", text(&o));
    assert!(err.contains(needle), "{args:?}: {err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

fn lookalike_tables_are_never_touched(kind: Kind) {
    let db = TestDb::new(kind);
    lookalike(&db);
    refused(
        &db,
        &["prepare", "oltp_read_write", "--overwrite"],
        "sbtest1 already exists and was not created by fairbench",
    );
    refused(&db, &["run", "oltp_write_only", "--time=1"], "table sbtest1 was not created by fairbench");
    refused(&db, &["bench", "oltp_delete", "--time=1"], "table sbtest1 was not created by fairbench");
    let o = db.fairbench(&["cleanup"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("left sbtest1 alone"), "{}", text(&o));
    assert_eq!(db.tables(), ["sbtest1"]);
    assert_eq!(db.count("sbtest1"), 3, "the user's rows are all there");
}

#[test]
fn sqlite_lookalike_tables_are_never_touched() {
    lookalike_tables_are_never_touched(Kind::Sqlite);
}

#[test]
fn mysql_lookalike_tables_are_never_touched() {
    lookalike_tables_are_never_touched(Kind::Mysql);
}

#[test]
fn postgres_lookalike_tables_are_never_touched() {
    lookalike_tables_are_never_touched(Kind::Postgres);
}

/// What a prepare interrupted before its last step leaves: the loading marker.
fn half_prepared_tables_are_refused_then_rebuilt(kind: Kind) {
    let db = TestDb::new(kind);
    let o = db.fairbench(&["prepare", "oltp_read_only", "--table-size=100"]);
    assert!(o.status.success(), "{}", text(&o));
    match kind {
        Kind::Mysql => {
            db.exec("ALTER TABLE sbtest1 COMMENT='fairbench:sbtest:v1:loading'; DELETE FROM sbtest1 WHERE id > 10")
        }
        _ => db.exec("COMMENT ON TABLE sbtest1 IS 'fairbench:sbtest:v1:loading'; DELETE FROM sbtest1 WHERE id > 10"),
    }
    refused(&db, &["run", "oltp_read_only", "--table-size=100", "--time=1"], "sbtest1 is not completely prepared");
    let o = db.fairbench(&["prepare", "oltp_read_only", "--table-size=100", "--overwrite"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(db.count("sbtest1"), 100);
    let doc = db.run_json(&["run", "oltp_read_only", "--table-size=100", "--events=5"]);
    assert_eq!(doc["conditions"]["run"]["status"], "completed");
}

#[test]
fn mysql_half_prepared_tables_are_refused_then_rebuilt() {
    half_prepared_tables_are_refused_then_rebuilt(Kind::Mysql);
}

#[test]
fn postgres_half_prepared_tables_are_refused_then_rebuilt() {
    half_prepared_tables_are_refused_then_rebuilt(Kind::Postgres);
}

#[test]
fn a_prepare_waits_for_no_one_while_another_holds_the_lock() {
    // MariaDB: another session holds fairbench's lock on this database.
    let db = TestDb::new(Kind::Mysql);
    rt().block_on(async {
        use mysql_async::prelude::Queryable;
        let mut holder = mysql_async::Conn::from_url(&db.url).await.unwrap();
        let got: Option<i64> =
            holder.query_first("SELECT GET_LOCK(CONCAT('fairbench.prepare.', DATABASE()), 0)").await.unwrap();
        assert_eq!(got, Some(1));
        refused(&db, &["prepare", "oltp_read_write", "--table-size=10"], "another fairbench prepare or cleanup");
        refused(&db, &["cleanup"], "another fairbench prepare or cleanup");
        holder.disconnect().await.unwrap();
    });
    assert!(db.tables().is_empty(), "nothing was created while locked out");
    // PostgreSQL: the same with its advisory lock.
    let db = TestDb::new(Kind::Postgres);
    rt().block_on(async {
        let (holder, conn) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls).await.unwrap();
        let task = tokio::spawn(conn);
        let got: bool =
            holder.query_one("SELECT pg_try_advisory_lock(hashtext('fairbench.prepare'))", &[]).await.unwrap().get(0);
        assert!(got);
        refused(&db, &["prepare", "oltp_read_write", "--table-size=10"], "another fairbench prepare or cleanup");
        drop(holder);
        let _ = task.await;
    });
    assert!(db.tables().is_empty());
}
