//! Backend message bodies decoded: errors with their SQLSTATE, command tags' counts, row and
//! parameter descriptions, data rows. Every read is bounds-checked: a malformed body is an
//! error naming what was cut short, never a panic.

use super::values::{text_value, BoxError, Captured, NotOfType};
use super::Column;
use crate::db::{DbError, Value};
use tokio_postgres::types::{FromSql, Type};

/// A body cut short or inconsistent; the text names the part.
#[derive(Debug)]
pub struct Malformed(pub &'static str);

/// A cursor over a message body.
pub struct Reader<'a>(pub &'a [u8]);

impl<'a> Reader<'a> {
    pub fn bytes(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], Malformed> {
        if n > self.0.len() {
            return Err(Malformed(what));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    pub fn i16(&mut self, what: &'static str) -> Result<i16, Malformed> {
        self.bytes(2, what).map(|b| i16::from_be_bytes([b[0], b[1]]))
    }

    pub fn i32(&mut self, what: &'static str) -> Result<i32, Malformed> {
        self.bytes(4, what).map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A NUL-terminated string (lossy UTF-8 is left to the caller).
    pub fn cstr(&mut self, what: &'static str) -> Result<&'a [u8], Malformed> {
        let n = self.0.iter().position(|&b| b == 0).ok_or(Malformed(what))?;
        let s = self.bytes(n, what)?;
        self.0 = &self.0[1..];
        Ok(s)
    }
}

/// ErrorResponse: SQLSTATE (C) and message (M); a FATAL or PANIC ends the session.
pub fn server_error(body: &[u8]) -> DbError {
    let (mut code, mut message, mut fatal) = ("XX000".to_string(), String::new(), false);
    let mut r = Reader(body);
    while let Ok(field) = r.bytes(1, "field") {
        if field[0] == 0 {
            break;
        }
        let Ok(value) = r.cstr("field value") else { break };
        let value = String::from_utf8_lossy(value);
        match field[0] {
            b'C' => code = value.into_owned(),
            b'M' => message = value.into_owned(),
            b'V' => fatal = matches!(&*value, "FATAL" | "PANIC"),
            _ => {}
        }
    }
    let mut e = DbError::sqlstate(&code, message);
    e.connection_lost |= fatal;
    e
}

/// CommandComplete's count: the tag's last word ("SELECT 5", "INSERT 0 1"), 0 when none.
pub fn command_count(body: &[u8]) -> u64 {
    let tag = body.strip_suffix(&[0]).unwrap_or(body);
    let last = tag.rsplit(|&b| b == b' ').next().unwrap_or_default();
    std::str::from_utf8(last).ok().and_then(|s| s.parse().ok()).unwrap_or(0)
}

/// ParameterDescription: one type each; None for a type this client does not know.
pub fn parameter_types(body: &[u8], max: usize) -> Result<Vec<Option<Type>>, Malformed> {
    let mut r = Reader(body);
    let n = r.i16("parameter count")?;
    if n < 0 || n as usize > max {
        return Err(Malformed("parameter count"));
    }
    (0..n).map(|_| Ok(Type::from_oid(r.i32("parameter type")? as u32))).collect()
}

/// RowDescription: each column's name and type.
pub fn columns(body: &[u8], max: usize) -> Result<Vec<Column>, Malformed> {
    let mut r = Reader(body);
    let n = r.i16("column count")?;
    if n < 0 || n as usize > max {
        return Err(Malformed("column count"));
    }
    (0..n)
        .map(|_| {
            let name = String::from_utf8_lossy(r.cstr("column name")?).into_owned();
            r.bytes(6, "column table")?;
            let oid = r.i32("column type")? as u32;
            r.bytes(8, "column format")?;
            Ok(Column { name, ty: Type::from_oid(oid) })
        })
        .collect()
}

/// The fields of a DataRow (None: NULL).
fn fields<'a>(body: &'a [u8]) -> Result<impl Iterator<Item = Result<Option<&'a [u8]>, Malformed>> + 'a, Malformed> {
    let mut r = Reader(body);
    let n = r.i16("field count")?;
    Ok((0..n.max(0)).map(move |_| match r.i32("field length")? {
        -1 => Ok(None),
        len if len < 0 => Err(Malformed("field length")),
        len => r.bytes(len as usize, "field").map(Some),
    }))
}

/// A DataRow that does not read as its columns' values.
#[derive(Debug, thiserror::Error)]
pub enum RowError {
    /// The part of the row that is cut short or inconsistent.
    #[error("malformed data row from the server: {0}")]
    Malformed(&'static str),
    #[error("column {name}: {why}")]
    Column { name: String, why: ColumnError },
}

#[derive(Debug, thiserror::Error)]
pub enum ColumnError {
    /// The binary decoder's own words.
    #[error("{0}")]
    Binary(BoxError),
    #[error("text that is not UTF-8")]
    NotUtf8,
    #[error(transparent)]
    Text(#[from] NotOfType),
}

/// A DataRow as values typed by `columns`: binary for known types, text otherwise (or
/// for every column when `text` is set: the simple query protocol).
pub fn row_values(body: &[u8], columns: &[Column], text: bool, out: &mut Vec<Value>) -> Result<(), RowError> {
    let malformed = |m: Malformed| RowError::Malformed(m.0);
    for (i, field) in fields(body).map_err(malformed)?.enumerate() {
        let field = field.map_err(malformed)?;
        let col = columns.get(i);
        let name = col.map_or("?", |c| c.name.as_str());
        let ty = col.and_then(|c| c.ty.as_ref());
        let value = match (field, ty) {
            (None, _) => Ok(Value::Null),
            (Some(raw), Some(ty)) if !text => Captured::from_sql(ty, raw).map(|c| c.0).map_err(ColumnError::Binary),
            (Some(raw), ty) => std::str::from_utf8(raw)
                .map_err(|_| ColumnError::NotUtf8)
                .and_then(|s| Ok(text_value(Some(s), ty.unwrap_or(&Type::TEXT))?)),
        }
        .map_err(|why| RowError::Column { name: name.to_string(), why })?;
        out.push(value);
    }
    Ok(())
}

/// A DataRow of the simple query protocol as strings.
pub fn text_row(body: &[u8]) -> Result<Vec<Option<String>>, Malformed> {
    fields(body)?.map(|f| Ok(f?.map(|b| String::from_utf8_lossy(b).into_owned()))).collect()
}
