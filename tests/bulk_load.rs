//! prepare's bulk path (PostgreSQL COPY, MySQL LOAD DATA LOCAL INFILE, SQLite one prepared
//! INSERT per row) against the real servers: the rows equal those of sysbench's INSERTs with
//! the same seed, awkward values survive each driver's encoding, and a MySQL connection
//! without LOCAL INFILE falls back to INSERTs. Each test uses databases `fb_bulk_*` of its own.

mod common;

use common::{Kind, TestDb};
use fairbench::db::{ConnectOptions, Connection, Database, Param, RowSource, TargetUrl};

/// A fingerprint of sbtest`n`: rows, and sums over ids, k and digits of c and pad.
fn fingerprint(db: &TestDb, n: u32) -> Vec<i64> {
    let int = match db.kind {
        Kind::Mysql => "SIGNED",
        Kind::Postgres => "BIGINT",
        Kind::Sqlite => "INTEGER",
    };
    let t = format!("sbtest{n}");
    let sums = [
        "COUNT(*)".to_string(),
        "SUM(id)".into(),
        "SUM(k * (id % 1000))".into(),
        format!("SUM(CAST(SUBSTR(c, 1, 11) AS {int}) % 1000003 * (id % 7))"),
        format!("SUM(CAST(SUBSTR(c, 109, 11) AS {int}) % 1000003)"),
        format!("SUM(CAST(SUBSTR(pad, 49, 11) AS {int}) % 1000003 * (id % 5))"),
    ];
    sums.iter().map(|s| db.count_sql(&format!("SELECT CAST({s} AS {int}) FROM {t}"))).collect()
}

fn prepare(db: &TestDb, extra: &[&str]) {
    let mut args = vec!["prepare", "oltp_read_write", "--tables=2", "--table-size=3000", "--rand-seed=7"];
    args.extend_from_slice(extra);
    let o = db.fairbench(&args);
    assert!(o.status.success(), "{}", common::text(&o));
}

/// The bulk path loads exactly the rows sysbench's INSERTs load with the same seed.
fn same_rows_as_inserts(kind: Kind) {
    let bulk = TestDb::named(kind, "fb_bulk");
    let inserts = TestDb::named(kind, "fb_bulk");
    prepare(&bulk, &["--threads=2"]);
    prepare(&inserts, &["--threads=2", "--bulk-load=insert"]);
    for n in 1..=2 {
        let f = fingerprint(&bulk, n);
        assert_eq!(f[0], 3000);
        assert_eq!(f, fingerprint(&inserts, n), "sbtest{n}");
    }
    // sysbench's secondary index, built after loading, and the run goes on from here.
    let o = bulk.fairbench(&["run", "oltp_insert", "--tables=2", "--table-size=3000", "--events=50"]);
    assert!(o.status.success(), "{}", common::text(&o));
    assert_eq!(bulk.count("sbtest1") + bulk.count("sbtest2"), 6050);
}

#[test]
fn mysql_bulk_rows_equal_inserts() {
    same_rows_as_inserts(Kind::Mysql);
}

#[test]
fn postgres_bulk_rows_equal_inserts() {
    same_rows_as_inserts(Kind::Postgres);
}

#[test]
fn sqlite_bulk_rows_equal_inserts() {
    same_rows_as_inserts(Kind::Sqlite);
}

/// A table of several parts loads alike with one loader or three (each part has its own
/// random stream), and PostgreSQL's SERIAL moves past the loaded ids.
#[test]
fn parts_load_alike_on_any_number_of_loaders() {
    let one = TestDb::named(Kind::Postgres, "fb_bulk");
    let three = TestDb::named(Kind::Postgres, "fb_bulk");
    for (db, threads) in [(&one, "--threads=1"), (&three, "--threads=3")] {
        let o = db.fairbench(&["prepare", "oltp_read_only", "--table-size=250001", "--rand-seed=3", threads]);
        assert!(o.status.success(), "{}", common::text(&o));
    }
    assert_eq!(fingerprint(&one, 1), fingerprint(&three, 1));
    assert_eq!(one.count_sql("SELECT CAST(MAX(id) AS BIGINT) FROM sbtest1"), 250_001);
    three.exec("INSERT INTO sbtest1 (k, c, pad) VALUES (1, 'c', 'pad')");
    assert_eq!(three.count_sql("SELECT CAST(MAX(id) AS BIGINT) FROM sbtest1"), 250_002);
}

/// Values each format must escape or mark: separators, the escape character, quotes, NULL.
const AWKWARD: [Option<&str>; 6] =
    [Some("tab\there"), Some("line\nbreak\r\n"), Some("back\\slash \\N"), Some("it's \"quoted\""), None, Some("")];

struct Awkward(usize);

impl RowSource for Awkward {
    fn next_row(&mut self, put: &mut dyn FnMut(Param<'_>)) -> bool {
        let Some(v) = AWKWARD.get(self.0) else { return false };
        self.0 += 1;
        put(Param::Int(self.0 as i64));
        put(v.map_or(Param::Null, Param::Text));
        put(Param::Float(self.0 as f64 / 4.0));
        true
    }
}

type Rows = Vec<Vec<Option<String>>>;

/// Loads AWKWARD through the driver's bulk_load and reads it back.
fn load_awkward<D: Database>(d: std::sync::Arc<D>) -> Result<(u64, Rows), fairbench::db::DbError> {
    d.create_if_missing()?;
    fairbench::local_runtime().block_on(async {
        let mut conn = d.connect().await?;
        conn.simple("CREATE TABLE awkward (id INTEGER PRIMARY KEY, v TEXT, f DOUBLE PRECISION)").await?;
        let n = conn.bulk_load("awkward", &["id", "v", "f"], &mut Awkward(0)).await?;
        Ok((n, conn.text_rows("SELECT v, f FROM awkward ORDER BY id").await?))
    })
}

fn load_in(url: &TargetUrl, options: &ConnectOptions) -> Result<(u64, Rows), fairbench::db::DbError> {
    fairbench::with_database!(url, options, |d| load_awkward(d))
}

fn round_trip(db: &TestDb, options: &ConnectOptions) {
    let url = TargetUrl::parse(&db.url, |_| None).unwrap();
    let (n, rows) = load_in(&url, options).unwrap();
    assert_eq!(n, AWKWARD.len() as u64);
    for (i, (row, v)) in rows.iter().zip(AWKWARD).enumerate() {
        assert_eq!(row[0].as_deref(), v, "row {}", i + 1);
        assert_eq!(row[1].as_deref().map(|f| f.parse::<f64>().unwrap()), Some((i + 1) as f64 / 4.0));
    }
}

#[test]
fn postgres_copy_keeps_nulls_and_escapes() {
    round_trip(&TestDb::named(Kind::Postgres, "fb_bulk"), &ConnectOptions::default());
}

#[test]
fn mysql_local_infile_keeps_nulls_and_escapes() {
    let options = ConnectOptions { local_infile: true, ..ConnectOptions::default() };
    round_trip(&TestDb::named(Kind::Mysql, "fb_bulk"), &options);
}

/// Without LOCAL INFILE (the capability not announced, as a server that refuses it) the
/// same rows go in as INSERTs.
#[test]
fn mysql_without_local_infile_falls_back_to_inserts() {
    round_trip(&TestDb::named(Kind::Mysql, "fb_bulk"), &ConnectOptions::default());
}

#[test]
fn sqlite_bulk_keeps_nulls_and_escapes() {
    round_trip(&TestDb::named(Kind::Sqlite, "fb_bulk"), &ConnectOptions::default());
}

/// A workload file's tables of every type load through the bulk path on each database,
/// equal to what INSERTs load.
#[test]
fn workload_file_tables_load_alike() {
    let file = format!("{}/tests/workloads/types.toml", env!("CARGO_MANIFEST_DIR"));
    for kind in [Kind::Sqlite, Kind::Mysql, Kind::Postgres] {
        let (bulk, inserts) = (TestDb::named(kind, "fb_bulk"), TestDb::named(kind, "fb_bulk"));
        for (db, how) in [(&bulk, "--bulk-load=auto"), (&inserts, "--bulk-load=insert")] {
            let o = db.fairbench(&["prepare", &file, how, "--rand-seed=5"]);
            assert!(o.status.success(), "{kind:?}: {}", common::text(&o));
        }
        let sum = "SELECT CAST(SUM(small * id + big % 1000 + price * 100) AS BIGINT) FROM typed";
        let sum = if kind == Kind::Mysql { sum.replace("BIGINT", "SIGNED") } else { sum.to_string() };
        assert_eq!(bulk.count_sql(&sum), inserts.count_sql(&sum), "{kind:?}");
        let text = "SELECT COUNT(*) FROM typed WHERE notes = 'it''s \\ fine'";
        let text = if kind == Kind::Mysql { text.replace('\\', "\\\\") } else { text.to_string() };
        assert_eq!(bulk.count_sql(&text), 50, "{kind:?}");
    }
}
