//! Plain text queries (`ConnectOptions::prepared_statements` off, sysbench's
//! `--db-ps-mode=disable`) against the real servers: the same statements give the same
//! results as prepared statements (text with quotes, backslashes and unicode read back
//! exactly, 64-bit integers, floats, NULL, affected rows), random text round-trips through
//! the rendered literals, and MariaDB's own session counters show what went over the wire.

mod common;
use common::*;
use fairbench::db::mysql::MysqlDatabase;
use fairbench::db::postgres::PostgresDatabase;
use fairbench::db::sqlite::SqliteDatabase;
use fairbench::db::{ConnectOptions, Connection, Database, Executed, Param, TargetUrl, Value};

fn options(prepared_statements: bool) -> ConnectOptions {
    ConnectOptions { prepared_statements, ..ConnectOptions::default() }
}

fn target(db: &TestDb) -> TargetUrl {
    TargetUrl::parse(&db.url, |_| None).unwrap()
}

fn sqlite_file(db: &TestDb) {
    std::fs::File::create(db.dir.path().join("test.db")).unwrap();
}

fn ddl(kind: Kind, table: &str) -> String {
    match kind {
        Kind::Mysql => format!(
            "CREATE TABLE {table} (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, i BIGINT, f DOUBLE, \
             s VARCHAR(400) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin, b BLOB, n INTEGER NULL)"
        ),
        Kind::Postgres => format!(
            "CREATE TABLE {table} (id BIGSERIAL PRIMARY KEY, i BIGINT, f DOUBLE PRECISION, s VARCHAR(400), \
             b BYTEA, n INTEGER NULL)"
        ),
        Kind::Sqlite => format!(
            "CREATE TABLE {table} (id INTEGER PRIMARY KEY, i BIGINT, f DOUBLE, s VARCHAR(400), b BLOB, n INTEGER NULL)"
        ),
    }
}

/// Text that breaks naive quoting, and SQL that looks like placeholders or comments.
fn texts(kind: Kind) -> Vec<&'static str> {
    let mut v = vec![
        "it's",
        r"back\slash",
        r"\'",
        r"\",
        "''",
        "\"double\"",
        "`tick`",
        "?",
        "é😀中",
        "-- not a comment",
        "/* ? */ #",
        "line\nbreak\ttab\r",
        "' OR 1=1 -- ",
        "",
        r"\0 \n \x00 not escapes",
        "$$ $1 E'x'",
        "trailing space ",
    ];
    if kind != Kind::Postgres {
        v.push("nul\0byte"); // PostgreSQL text cannot hold NUL
    }
    v
}

const INTS: [i64; 7] = [1 << 40, i64::MAX, i64::MIN, -(1 << 33), 0, 2_147_483_648, -2_147_483_649];
const FLOATS: [f64; 7] = [0.1, -2.5, 1e300, 5e-324, f64::MIN_POSITIVE, 1.0 / 3.0, -123456.789e-20];

/// One statement's outcome: what it was, what it did, the first row.
type Step = (String, Executed, Vec<Value>);

/// The same statements in either mode; every result checked against what was sent, and
/// returned for comparing the modes.
async fn scenario<D: Database>(db: &D, kind: Kind) -> Vec<Step> {
    let mut c = db.connect().await.unwrap();
    c.simple("DROP TABLE IF EXISTS tq").await.unwrap();
    c.simple(&ddl(kind, "tq")).await.unwrap();
    let insert = c.prepare("INSERT INTO tq (i, f, s, b, n) VALUES (?, ?, ?, ?, ?)").await.unwrap();
    let by_id = c.prepare("SELECT id, i, f, s, b, n FROM tq WHERE id = ?").await.unwrap();
    let by_text = c.prepare("SELECT id FROM tq WHERE s = ? ORDER BY id").await.unwrap();
    let update = c.prepare("UPDATE tq SET n = ? WHERE i >= ?").await.unwrap();
    let nulls = c.prepare("SELECT COUNT(*) FROM tq WHERE s IS NULL AND n IS NULL").await.unwrap();
    let minus = c.prepare("SELECT i-?, f * ? FROM tq WHERE id = ?").await.unwrap();
    assert_eq!(c.columns(by_id).await.unwrap(), ["id", "i", "f", "s", "b", "n"], "{kind:?}");
    assert!(c.columns(insert).await.unwrap().is_empty(), "{kind:?}");

    let mut log: Vec<Step> = Vec::new();
    let mut row = Vec::new();
    let texts = texts(kind);
    for (k, &s) in texts.iter().enumerate() {
        let (i, f) = (INTS[k % INTS.len()], FLOATS[k % FLOATS.len()]);
        let b = [0, 1, 255, b'\\', b'\'', k as u8];
        let params = [Param::Int(i), Param::Float(f), Param::Text(s), Param::Bytes(&b), Param::Null];
        let done = c.execute(insert, &params).await.unwrap_or_else(|e| panic!("{kind:?} insert {s:?}: {e}"));
        let id = k as i64 + 1;
        assert_eq!(done.affected_rows, 1, "{kind:?}");
        assert_eq!(done.last_insert_id, (kind != Kind::Postgres).then_some(id as u64), "{kind:?}");
        log.push((format!("insert {s:?}"), done, Vec::new()));

        let done = c.execute_row(by_id, &[Param::Int(id)], &mut row).await.unwrap();
        let expected = vec![
            Value::Int(id),
            Value::Int(i),
            Value::Float(f),
            Value::Text(s.into()),
            Value::Bytes(b.to_vec()),
            Value::Null,
        ];
        assert_eq!((done.rows, &row), (1, &expected), "{kind:?} read back {s:?}");
        log.push((format!("by id {id}"), done, row.clone()));

        let done = c.execute_row(by_text, &[Param::Text(s)], &mut row).await.unwrap();
        assert_eq!((done.rows, &row), (1, &vec![Value::Int(id)]), "{kind:?} {s:?}");
        log.push((format!("by text {s:?}"), done, row.clone()));
    }

    // NULL everywhere, found by IS NULL; `= NULL` matches nothing.
    let done = c.execute(insert, &[Param::Null; 5]).await.unwrap();
    assert_eq!(done.affected_rows, 1, "{kind:?}");
    let null_id = texts.len() as i64 + 1;
    c.execute_row(by_id, &[Param::Int(null_id)], &mut row).await.unwrap();
    assert_eq!(row, [vec![Value::Int(null_id)], vec![Value::Null; 5]].concat(), "{kind:?}");
    log.push(("null row".into(), done, row.clone()));
    let done = c.execute_row(nulls, &[], &mut row).await.unwrap();
    assert_eq!(row, [Value::Int(1)], "{kind:?}");
    log.push(("count nulls".into(), done, row.clone()));
    let done = c.execute_row(by_text, &[Param::Null], &mut row).await.unwrap();
    assert_eq!((done.rows, row.len()), (0, 0), "{kind:?}");
    log.push(("= NULL".into(), done, row.clone()));

    // Affected rows: the rows with i >= 0; again (MySQL counts rows changed, not matched).
    let matched = texts.iter().enumerate().filter(|(k, _)| INTS[k % INTS.len()] >= 0).count() as u64;
    let done = c.execute(update, &[Param::Int(7), Param::Int(0)]).await.unwrap();
    assert_eq!(done.affected_rows, matched, "{kind:?}");
    log.push(("update".into(), done, Vec::new()));
    let done = c.execute(update, &[Param::Int(7), Param::Int(0)]).await.unwrap();
    assert_eq!(done.affected_rows, if kind == Kind::Mysql { 0 } else { matched }, "{kind:?}");
    log.push(("update again".into(), done, Vec::new()));
    let done = c.execute(update, &[Param::Int(8), Param::Int(i64::MAX)]).await.unwrap();
    let max = (0..texts.len()).filter(|k| INTS[k % INTS.len()] == i64::MAX).count() as u64;
    assert_eq!(done.affected_rows, max, "{kind:?}");
    log.push(("update i64::MAX".into(), done, Vec::new()));

    // Negative parameters inside expressions (`i-?` must not become the comment `i--5`).
    let done = c.execute_row(minus, &[Param::Int(-5), Param::Float(-2.0), Param::Int(1)], &mut row).await.unwrap();
    assert_eq!(row, [Value::Int((1 << 40) + 5), Value::Float(-0.2)], "{kind:?}");
    log.push(("minus".into(), done, row.clone()));
    // The hot path counts rows without reading them.
    let done = c.execute(by_id, &[Param::Int(1)]).await.unwrap();
    assert_eq!(done.rows, 1, "{kind:?}");
    log.push(("count only".into(), done, Vec::new()));
    let e = c.execute(update, &[Param::Int(1)]).await.unwrap_err();
    assert!(e.message.contains("takes 2 parameters, 1 given"), "{kind:?}: {e}");
    c.simple("DROP TABLE tq").await.unwrap();
    log
}

/// Both modes, compared step by step.
async fn same_in_both_modes<D: Database>(prepared: &D, text: &D, kind: Kind) {
    let a = scenario(prepared, kind).await;
    let b = scenario(text, kind).await;
    assert_eq!(a.len(), b.len());
    for (a, b) in a.iter().zip(&b) {
        assert_eq!(a, b, "{kind:?}: prepared statements and plain text queries differ");
    }
}

/// A deterministic stream of awkward strings: quotes of every kind, backslashes,
/// placeholders, comment starts, unicode, and NUL where the database allows it.
fn random_texts(kind: Kind, n: usize) -> Vec<String> {
    let mut alphabet: Vec<&str> = vec![
        "'", "\"", "\\", "`", "?", "%", "_", "\n", "\t", " ", "é", "😀", "中", "$", "$$", "--", "/*", "*/", "#", "E'",
        "x", "0", "\u{7f}", "\u{1}",
    ];
    if kind != Kind::Postgres {
        alphabet.push("\0");
    }
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..n)
        .map(|k| {
            let len = (next() % 24) as usize;
            let s: String = (0..len).map(|_| alphabet[(next() % alphabet.len() as u64) as usize]).collect();
            format!("{s}#{k}") // unique, so a lookup by text finds one row
        })
        .collect()
}

/// Random text through the rendered literals into the table and back, exactly.
async fn round_trip<D: Database>(db: &D, kind: Kind) {
    let mut c = db.connect().await.unwrap();
    c.simple(&ddl(kind, "tq_fuzz")).await.unwrap();
    let insert = c.prepare("INSERT INTO tq_fuzz (s) VALUES (?)").await.unwrap();
    let by_id = c.prepare("SELECT s FROM tq_fuzz WHERE id = ?").await.unwrap();
    let by_text = c.prepare("SELECT id FROM tq_fuzz WHERE s = ?").await.unwrap();
    let mut row = Vec::new();
    for (k, s) in random_texts(kind, 300).iter().enumerate() {
        c.execute(insert, &[Param::Text(s)]).await.unwrap_or_else(|e| panic!("{kind:?} {s:?}: {e}"));
        let id = k as i64 + 1;
        c.execute_row(by_id, &[Param::Int(id)], &mut row).await.unwrap();
        assert_eq!(row, [Value::Text(s.clone())], "{kind:?}");
        c.execute_row(by_text, &[Param::Text(s)], &mut row).await.unwrap();
        assert_eq!(row, [Value::Int(id)], "{kind:?} {s:?}");
    }
    // A `?` inside quotes is SQL, not a placeholder (PostgreSQL's prepared statements
    // number every `?`, so this is checked in text mode only).
    let quoted = c.prepare("SELECT id, 'a ? in quotes' FROM tq_fuzz WHERE id = ?").await.unwrap();
    c.execute_row(quoted, &[Param::Int(1)], &mut row).await.unwrap();
    assert_eq!(row, [Value::Int(1), Value::Text("a ? in quotes".into())], "{kind:?}");
    c.simple("DROP TABLE tq_fuzz").await.unwrap();
}

#[test]
fn sqlite_text_queries() {
    let db = TestDb::new(Kind::Sqlite);
    sqlite_file(&db);
    let prepared = SqliteDatabase::with_options(&target(&db), &options(true)).unwrap();
    let text = SqliteDatabase::with_options(&target(&db), &options(false)).unwrap();
    fairbench::local_runtime().block_on(async {
        same_in_both_modes(&prepared, &text, Kind::Sqlite).await;
        round_trip(&text, Kind::Sqlite).await;
    });
}

#[test]
fn mariadb_text_queries() {
    let db = TestDb::new(Kind::Mysql);
    let prepared = MysqlDatabase::new(&target(&db), &options(true)).unwrap();
    let text = MysqlDatabase::new(&target(&db), &options(false)).unwrap();
    fairbench::local_runtime().block_on(async {
        same_in_both_modes(&prepared, &text, Kind::Mysql).await;
        round_trip(&text, Kind::Mysql).await;
        // A float MySQL has no literal for is refused before anything is sent.
        let mut c = text.connect().await.unwrap();
        let st = c.prepare("SELECT ?").await.unwrap();
        let e = c.execute(st, &[Param::Float(f64::NAN)]).await.unwrap_err();
        assert!(e.message.contains("has no mysql literal"), "{e}");
        // The connection is still in step.
        let mut row = Vec::new();
        c.execute_row(st, &[Param::Text("ok")], &mut row).await.unwrap();
        assert_eq!(row, [Value::Text("ok".into())]);
    });
}

#[test]
fn postgres_text_queries() {
    let db = TestDb::new(Kind::Postgres);
    let prepared = PostgresDatabase::new(&target(&db), &options(true)).unwrap();
    let text = PostgresDatabase::new(&target(&db), &options(false)).unwrap();
    fairbench::local_runtime().block_on(async {
        same_in_both_modes(&prepared, &text, Kind::Postgres).await;
        round_trip(&text, Kind::Postgres).await;
        // NaN and the infinities as float8 literals; NUL in text refused.
        let mut c = text.connect().await.unwrap();
        let st = c.prepare("SELECT ?::float8, ?::float8, ?::float8").await.unwrap();
        let mut row = Vec::new();
        let params = [Param::Float(f64::NAN), Param::Float(f64::INFINITY), Param::Float(f64::NEG_INFINITY)];
        c.execute_row(st, &params, &mut row).await.unwrap();
        assert!(matches!(row[0], Value::Float(f) if f.is_nan()), "{row:?}");
        assert_eq!(row[1..], [Value::Float(f64::INFINITY), Value::Float(f64::NEG_INFINITY)]);
        let echo = c.prepare("SELECT ?::text").await.unwrap();
        let e = c.execute(echo, &[Param::Text("a\0b")]).await.unwrap_err();
        assert!(e.message.contains("cannot hold NUL"), "{e}");
        // The server keeps no statement: only descriptions were asked for.
        let count = c.prepare("SELECT count(*) FROM pg_prepared_statements").await.unwrap();
        c.execute_row(count, &[], &mut row).await.unwrap();
        assert_eq!(row, [Value::Int(0)], "statements left prepared on the server");
        // With prepared statements the same query sees its own (and the others).
        let mut p = prepared.connect().await.unwrap();
        let count = p.prepare("SELECT count(*) FROM pg_prepared_statements").await.unwrap();
        p.execute_row(count, &[], &mut row).await.unwrap();
        assert_eq!(row, [Value::Int(1)]);
    });
}

/// This connection's own counters (SHOW SESSION STATUS), read through it.
struct Session {
    reads: Vec<usize>,
}

const COUNTERS: [&str; 6] =
    ["Com_select", "Com_insert", "Com_update", "Com_stmt_prepare", "Com_stmt_execute", "Com_stmt_close"];

impl Session {
    async fn new(c: &mut impl Connection) -> Session {
        let mut reads = Vec::new();
        for name in COUNTERS {
            reads.push(c.prepare(&format!("SHOW SESSION STATUS LIKE '{name}'")).await.unwrap());
        }
        Session { reads }
    }

    async fn read(&self, c: &mut impl Connection) -> Vec<i64> {
        let mut row = Vec::new();
        let mut out = Vec::new();
        for (&st, name) in self.reads.iter().zip(COUNTERS) {
            c.execute_row(st, &[], &mut row).await.unwrap();
            match &row[..] {
                [Value::Text(n), Value::Text(v)] if n == name => out.push(v.parse().unwrap()),
                other => panic!("{name}: {other:?}"),
            }
        }
        out
    }
}

fn delta(before: &[i64], after: &[i64]) -> Vec<i64> {
    before.iter().zip(after).map(|(b, a)| a - b).collect()
}

/// MariaDB's session counters: text mode prepares each statement once at setup (and closes
/// it), never executes a prepared statement, and counts one Com_select per SELECT.
#[test]
fn mariadb_text_queries_send_no_stmt_execute() {
    let db = TestDb::new(Kind::Mysql);
    db.exec("CREATE TABLE tq_count (id INTEGER PRIMARY KEY, k INTEGER NOT NULL)");
    for (prepared, mode) in [(false, "text"), (true, "prepared")] {
        let mysql = MysqlDatabase::new(&target(&db), &options(prepared)).unwrap();
        fairbench::local_runtime().block_on(async {
            let mut c = mysql.connect().await.unwrap();
            let session = Session::new(&mut c).await;
            let reads = COUNTERS.len() as i64;
            let start = session.read(&mut c).await;
            let select = c.prepare("SELECT k FROM tq_count WHERE id = ?").await.unwrap();
            let insert = c.prepare("INSERT INTO tq_count (id, k) VALUES (?, ?)").await.unwrap();
            let update = c.prepare("UPDATE tq_count SET k = k + ? WHERE id = ?").await.unwrap();
            let setup = session.read(&mut c).await;
            let (selects, inserts, updates) = (25, 5, 7);
            let mut row = Vec::new();
            for i in 0..inserts {
                c.execute(insert, &[Param::Int(i), Param::Int(0)]).await.unwrap();
            }
            for i in 0..updates {
                c.execute(update, &[Param::Int(-3), Param::Int(i % inserts)]).await.unwrap();
            }
            for i in 0..selects {
                c.execute_row(select, &[Param::Int(i % inserts)], &mut row).await.unwrap();
            }
            let end = session.read(&mut c).await;
            c.simple("DELETE FROM tq_count").await.unwrap();
            // Columns: select, insert, update, stmt_prepare, stmt_execute, stmt_close. Reading
            // the counters through prepared statements executes `reads` of them per read.
            if prepared {
                assert_eq!(delta(&start, &setup), [0, 0, 0, 3, reads, 0], "{mode}: setup");
                assert_eq!(
                    delta(&setup, &end),
                    [selects, inserts, updates, 0, selects + inserts + updates + reads, 0],
                    "{mode}: run"
                );
            } else {
                assert_eq!(delta(&start, &setup), [0, 0, 0, 3, 0, 3], "{mode}: setup");
                assert_eq!(delta(&setup, &end), [selects, inserts, updates, 0, 0, 0], "{mode}: run");
            }
        });
    }
}
