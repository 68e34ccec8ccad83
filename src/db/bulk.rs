//! The INSERT fallback of [`Connection::bulk_load`](super::Connection::bulk_load): rows as
//! literals in multi-row INSERTs of up to [`INSERT_BYTES`] each, for a server that refuses
//! the fast path (MySQL without local_infile) or a connection that cannot take it.

use super::text_sql::literal;
use super::{Connection, DbError, Dialect, Param, RowSource};

/// Statement size: large enough that per-statement costs vanish, under every default
/// max_allowed_packet (MySQL 64 MiB, MariaDB 16 MiB).
pub(crate) const INSERT_BYTES: usize = 4 * 1024 * 1024;

/// Sends `rows` as multi-row INSERTs over `conn`; returns the rows sent.
pub(crate) async fn insert_rows(
    conn: &mut impl Connection,
    dialect: Dialect,
    table: &str,
    columns: &[&str],
    rows: &mut dyn RowSource,
) -> Result<u64, DbError> {
    let head = format!("INSERT INTO {table} ({}) VALUES ", columns.join(", "));
    let mut sql = String::with_capacity(INSERT_BYTES + 64 * 1024);
    let mut total = 0u64;
    loop {
        sql.clear();
        sql.push_str(&head);
        let mut in_statement = 0u64;
        while sql.len() < INSERT_BYTES {
            if !push_row(dialect, rows, &mut sql, in_statement > 0)? {
                break;
            }
            in_statement += 1;
        }
        if in_statement == 0 {
            return Ok(total);
        }
        conn.simple(&sql).await?;
        total += in_statement;
    }
}

/// Appends the next row as `(v, v, ...)`; false when none is left.
fn push_row(dialect: Dialect, rows: &mut dyn RowSource, sql: &mut String, comma: bool) -> Result<bool, DbError> {
    let mut failed = None;
    let mut first = true;
    let mark = sql.len();
    if comma {
        sql.push(',');
    }
    sql.push('(');
    let more = rows.next_row(&mut |p: Param<'_>| {
        if !first {
            sql.push_str(", ");
        }
        first = false;
        if let Err(e) = literal(dialect, &p, sql) {
            failed.get_or_insert(e);
        }
    });
    if !more {
        sql.truncate(mark);
        return Ok(false);
    }
    sql.push(')');
    failed.map_or(Ok(true), Err)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// `n` rows of (i, 'a\'b', NULL).
    pub(crate) struct Few(pub u64);

    impl RowSource for Few {
        fn next_row(&mut self, put: &mut dyn FnMut(Param<'_>)) -> bool {
            if self.0 == 0 {
                return false;
            }
            put(Param::Int(self.0 as i64));
            put(Param::Text("a'b"));
            put(Param::Null);
            self.0 -= 1;
            true
        }
    }

    #[test]
    fn rows_become_inserts_with_literals() {
        use crate::db::{sqlite::SqliteDatabase, Database, TargetUrl};
        let dir = tempfile::tempdir().unwrap();
        let url = TargetUrl::parse(&format!("sqlite://{}/b.db", dir.path().display()), |_| None).unwrap();
        let db = SqliteDatabase::new(&url).unwrap();
        db.create_if_missing().unwrap();
        let rt = crate::local_runtime();
        let rows = rt.block_on(async {
            let mut conn = db.connect().await.unwrap();
            conn.simple("CREATE TABLE t (a INTEGER, b TEXT, c TEXT)").await.unwrap();
            assert_eq!(insert_rows(&mut conn, Dialect::Sqlite, "t", &["a", "b", "c"], &mut Few(3)).await.unwrap(), 3);
            conn.text_rows("SELECT a, b, c FROM t ORDER BY a").await.unwrap()
        });
        assert_eq!(rows[0], [Some("1".to_string()), Some("a'b".to_string()), None]);
        assert_eq!(rows.len(), 3);
    }
}
