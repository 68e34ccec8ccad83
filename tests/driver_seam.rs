//! The driver seam on all three targets: typed parameters (64-bit ints, floats, text,
//! bytes, NULL) in any number, what an execution did (affected rows, rows returned, the id
//! an INSERT generated), and the first row read back so a later statement can use it.

mod common;
use common::*;
use fairbench::db::mysql::MysqlDatabase;
use fairbench::db::postgres::PostgresDatabase;
use fairbench::db::sqlite::SqliteDatabase;
use fairbench::db::{ConnectOptions, Connection, Database, Param, TargetUrl, Value};

const BIG: i64 = 1 << 40;

fn ddl(kind: Kind) -> &'static str {
    match kind {
        Kind::Mysql => "CREATE TABLE seam_t (id INTEGER NOT NULL AUTO_INCREMENT PRIMARY KEY, i BIGINT, f DOUBLE, s VARCHAR(20), b BLOB, n INTEGER NULL, d DECIMAL(10,2) NULL)",
        Kind::Postgres => "CREATE TABLE seam_t (id SERIAL PRIMARY KEY, i BIGINT, f DOUBLE PRECISION, s VARCHAR(20), b BYTEA, n INTEGER NULL, d NUMERIC(10,2) NULL)",
        Kind::Sqlite => "CREATE TABLE seam_t (id INTEGER PRIMARY KEY, i BIGINT, f DOUBLE, s VARCHAR(20), b BLOB, n INTEGER NULL, d NUMERIC NULL)",
    }
}

async fn exercise<D: Database>(db: &D, kind: Kind) {
    let mut c = db.connect().await.unwrap();
    c.simple(ddl(kind)).await.unwrap();
    let insert = c.prepare("INSERT INTO seam_t (i, f, s, b, n) VALUES (?, ?, ?, ?, ?)").await.unwrap();
    let params = [Param::Int(BIG), Param::Float(2.5), Param::Text("héllo"), Param::Bytes(&[0, 1, 255]), Param::Null];
    let done = c.execute(insert, &params).await.unwrap();
    assert_eq!(done.affected_rows, 1, "{kind:?}");
    let first_id = if kind == Kind::Postgres { None } else { Some(1) };
    assert_eq!(done.last_insert_id, first_id, "{kind:?}");
    let done = c.execute(insert, &params).await.unwrap();
    assert_eq!(done.last_insert_id, first_id.map(|_| 2), "{kind:?}");

    // The first row comes back typed; the count covers every row.
    let select = c.prepare("SELECT id, i, f, s, b, n FROM seam_t WHERE i = ? ORDER BY id").await.unwrap();
    let mut row = Vec::new();
    let done = c.execute_row(select, &[Param::Int(BIG)], &mut row).await.unwrap();
    assert_eq!(done.rows, 2, "{kind:?}");
    assert_eq!(
        row,
        vec![
            Value::Int(1),
            Value::Int(BIG),
            Value::Float(2.5),
            Value::Text("héllo".into()),
            Value::Bytes(vec![0, 1, 255]),
            Value::Null
        ],
        "{kind:?}"
    );
    // The hot path counts rows without reading them.
    assert_eq!(c.execute(select, &[Param::Int(BIG)]).await.unwrap().rows, 2, "{kind:?}");

    // A value carried from one statement to the next: the UPDATE matches nothing unless it
    // received the id the SELECT returned.
    let find = c.prepare("SELECT id FROM seam_t WHERE s = ? ORDER BY id DESC").await.unwrap();
    let update = c.prepare("UPDATE seam_t SET n = ? WHERE id = ?").await.unwrap();
    c.execute_row(find, &[Param::Text("héllo")], &mut row).await.unwrap();
    assert_eq!(row, vec![Value::Int(2)], "{kind:?}");
    let done = c.execute(update, &[Param::Int(7), row[0].as_param()]).await.unwrap();
    assert_eq!(done.affected_rows, 1, "{kind:?}");
    let n = c.prepare("SELECT n, d FROM seam_t WHERE id = ?").await.unwrap();
    c.execute_row(n, &[Param::Int(2)], &mut row).await.unwrap();
    assert_eq!(row, vec![Value::Int(7), Value::Null], "{kind:?}");

    // Affected rows, and decimals read back as exact text.
    let bump = c.prepare("UPDATE seam_t SET i = i + 1, d = 12.5 WHERE i = ?").await.unwrap();
    assert_eq!(c.execute(bump, &[Param::Int(BIG)]).await.unwrap().affected_rows, 2, "{kind:?}");
    c.execute_row(n, &[Param::Int(1)], &mut row).await.unwrap();
    let decimal = if kind == Kind::Sqlite { Value::Float(12.5) } else { Value::Text("12.50".into()) };
    assert_eq!(row, vec![Value::Null, decimal], "{kind:?}");

    // No row: the buffer is left empty.
    let done = c.execute_row(select, &[Param::Int(-1)], &mut row).await.unwrap();
    assert_eq!((done.rows, row.len()), (0, 0), "{kind:?}");
    // The wrong number of parameters is the caller's error, named.
    let e = c.execute(update, &[Param::Int(1)]).await.unwrap_err();
    assert!(e.message.contains("takes 2 parameters, 1 given"), "{kind:?}: {e}");

    if kind == Kind::Postgres {
        // PostgreSQL's generated ids come back through RETURNING.
        let ret = c.prepare("INSERT INTO seam_t (i) VALUES (?) RETURNING id").await.unwrap();
        c.execute_row(ret, &[Param::Int(5)], &mut row).await.unwrap();
        assert_eq!(row, vec![Value::Int(3)]);
    }
    c.simple("DROP TABLE seam_t").await.unwrap();
}

fn target(db: &TestDb) -> TargetUrl {
    TargetUrl::parse(&db.url, |_| None).unwrap()
}

#[test]
fn sqlite_driver_seam() {
    let db = TestDb::new(Kind::Sqlite);
    std::fs::File::create(db.dir.path().join("test.db")).unwrap();
    let sqlite = SqliteDatabase::new(&target(&db)).unwrap();
    fairbench::local_runtime().block_on(exercise(&sqlite, Kind::Sqlite));
}

#[test]
fn mariadb_driver_seam() {
    let db = TestDb::new(Kind::Mysql);
    let mysql = MysqlDatabase::new(&target(&db), &ConnectOptions::default()).unwrap();
    fairbench::local_runtime().block_on(exercise(&mysql, Kind::Mysql));
}

#[test]
fn postgres_driver_seam() {
    let db = TestDb::new(Kind::Postgres);
    let pg = PostgresDatabase::new(&target(&db), &ConnectOptions::default()).unwrap();
    fairbench::local_runtime().block_on(exercise(&pg, Kind::Postgres));
}
