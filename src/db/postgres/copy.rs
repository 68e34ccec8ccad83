//! Bulk loading with `COPY table (cols) FROM STDIN (FORMAT binary)`. The payload (header,
//! tuples, trailer) is encoded by pure functions into a `BytesMut`, apart from the
//! tokio-postgres call, so any client can send the same bytes as CopyData messages. Each
//! value is encoded for its column's type exactly as a bound parameter is (values.rs).

use crate::db::pg_wire::values::PgParam;
use crate::db::pg_wire::PgConn;
use crate::db::socket::Socket;
use crate::db::{DbError, Param, RowSource};
use bytes::{BufMut, Bytes, BytesMut};
use futures_util::SinkExt as _;
use tokio_postgres::types::{IsNull, ToSql, Type};
use tokio_postgres::Client;

/// The binary COPY signature, then flags and header extension length (both 0).
const SIGNATURE: &[u8] = b"PGCOPY\n\xff\r\n\0";
/// CopyData messages of about this size: large enough that per-message costs vanish.
pub const CHUNK: usize = 256 * 1024;

/// The header every binary COPY payload starts with.
pub fn header(out: &mut BytesMut) {
    out.put_slice(SIGNATURE);
    out.put_i32(0);
    out.put_i32(0);
}

/// The trailer that ends the payload (a tuple of -1 fields).
pub fn trailer(out: &mut BytesMut) {
    out.put_i16(-1);
}

/// Appends the next row of `rows` as one tuple, each value encoded for its column's type;
/// `Ok(false)` (nothing appended) when no row is left.
pub fn tuple(types: &[Type], rows: &mut dyn RowSource, out: &mut BytesMut) -> Result<bool, DbError> {
    let mark = out.len();
    out.put_i16(types.len() as i16);
    let (mut i, mut failed) = (0, None);
    let more = rows.next_row(&mut |p: Param<'_>| {
        let Some(ty) = types.get(i) else {
            i += 1;
            return;
        };
        i += 1;
        let at = out.len();
        out.put_i32(0);
        match PgParam(p).to_sql(ty, out) {
            Ok(IsNull::No) => {
                let len = (out.len() - at - 4) as i32;
                out[at..at + 4].copy_from_slice(&len.to_be_bytes());
            }
            Ok(IsNull::Yes) => {
                out.truncate(at);
                out.put_i32(-1);
            }
            Err(e) => {
                out.truncate(at);
                failed.get_or_insert_with(|| DbError::client(crate::db::ClientFault::Other, e.to_string()));
            }
        }
    });
    if !more {
        out.truncate(mark);
        return Ok(false);
    }
    if let Some(e) = failed {
        return Err(e);
    }
    if i != types.len() {
        return Err(DbError::arity(types.len(), i));
    }
    Ok(true)
}

/// Sends `rows` with COPY over the lean client, in CopyData messages of about CHUNK bytes
/// (the payload is never held whole). Returns the rows the server counted, or None (nothing
/// sent) when a column is of a type the client does not know.
pub(super) async fn copy_lean<S: Socket>(
    conn: &mut PgConn<S>,
    table: &str,
    columns: &[&str],
    rows: &mut dyn RowSource,
) -> Result<Option<u64>, DbError> {
    let cols = columns.join(", ");
    let described = conn.prepare(&format!("SELECT {cols} FROM {table}")).await?;
    let Some(types) = conn.column_types(described)? else {
        return Ok(None);
    };
    conn.copy_start(&format!("COPY {table} ({cols}) FROM STDIN (FORMAT binary)")).await?;
    let mut buf = BytesMut::with_capacity(CHUNK + 64 * 1024);
    header(&mut buf);
    loop {
        let more = match tuple(&types, rows, &mut buf) {
            Ok(more) => more,
            Err(e) => {
                conn.copy_fail(&e.message).await;
                return Err(e);
            }
        };
        if !more {
            trailer(&mut buf);
        }
        if buf.len() >= CHUNK || !more {
            conn.copy_data(&buf).await?;
            buf.clear();
        }
        if !more {
            return conn.copy_done().await.map(Some);
        }
    }
}

/// Sends `rows` with COPY over `client`; `err` words the client's errors. Returns the rows
/// the server counted. An error midway drops the sink, which aborts the COPY.
pub(super) async fn copy_in(
    client: &Client,
    table: &str,
    columns: &[&str],
    rows: &mut dyn RowSource,
    err: impl Fn(tokio_postgres::Error) -> DbError,
) -> Result<u64, DbError> {
    let cols = columns.join(", ");
    // The columns' types, as the server declares them: each value is encoded for its own.
    let described = client.prepare(&format!("SELECT {cols} FROM {table}")).await.map_err(&err)?;
    let types: Vec<Type> = described.columns().iter().map(|c| c.type_().clone()).collect();
    let sink =
        client.copy_in::<_, Bytes>(&format!("COPY {table} ({cols}) FROM STDIN (FORMAT binary)")).await.map_err(&err)?;
    let mut sink = std::pin::pin!(sink);
    let mut buf = BytesMut::with_capacity(CHUNK + 64 * 1024);
    header(&mut buf);
    loop {
        let more = tuple(&types, rows, &mut buf)?;
        if !more {
            trailer(&mut buf);
        }
        if buf.len() >= CHUNK || !more {
            sink.send(buf.split().freeze()).await.map_err(&err)?;
        }
        if !more {
            return sink.as_mut().finish().await.map_err(&err);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::bulk::tests::Few;

    #[test]
    fn payload_is_header_tuples_trailer() {
        let mut out = BytesMut::new();
        header(&mut out);
        let types = [Type::INT4, Type::TEXT, Type::TEXT];
        let mut rows = Few(1);
        assert!(tuple(&types, &mut rows, &mut out).unwrap());
        assert!(!tuple(&types, &mut rows, &mut out).unwrap());
        trailer(&mut out);
        let mut expected = b"PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0".to_vec();
        expected
            .extend_from_slice(&[0, 3, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 3, b'a', b'\'', b'b', 0xff, 0xff, 0xff, 0xff]);
        expected.extend_from_slice(&[0xff, 0xff]);
        assert_eq!(&out[..], &expected[..]);
    }

    #[test]
    fn a_value_that_does_not_fit_its_column_is_an_error() {
        let mut out = BytesMut::new();
        let err = tuple(&[Type::INT2, Type::TEXT, Type::TEXT], &mut BigFew, &mut out).unwrap_err();
        assert!(err.message.contains("does not fit"), "{}", err.message);
        let err = tuple(&[Type::INT4, Type::TEXT], &mut Few(1), &mut out).unwrap_err();
        assert!(err.message.contains('2') || err.message.contains('3'), "{}", err.message);
    }

    struct BigFew;

    impl RowSource for BigFew {
        fn next_row(&mut self, put: &mut dyn FnMut(Param<'_>)) -> bool {
            put(Param::Int(1 << 40));
            put(Param::Null);
            put(Param::Null);
            true
        }
    }
}
