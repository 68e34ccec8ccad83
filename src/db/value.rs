//! Values crossing the driver seam: parameters (borrowed, so executing allocates nothing),
//! values read back from a result row, and what an execution did.

/// A statement parameter. Each driver encodes it for the parameter's declared type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Param<'a> {
    Null,
    Int(i64),
    Float(f64),
    Text(&'a str),
    Bytes(&'a [u8]),
}

/// A value read from a result row.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Float(f64),
    Text(String),
    Bytes(Vec<u8>),
}

impl Value {
    /// The value as a parameter of a later statement (values carried between statements).
    pub fn as_param(&self) -> Param<'_> {
        match self {
            Value::Null => Param::Null,
            Value::Int(i) => Param::Int(*i),
            Value::Float(f) => Param::Float(*f),
            Value::Text(s) => Param::Text(s),
            Value::Bytes(b) => Param::Bytes(b),
        }
    }
}

/// What one execution did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Executed {
    /// Rows an INSERT, UPDATE or DELETE changed, as the server counts them (MySQL counts
    /// rows actually changed, not rows matched).
    pub affected_rows: u64,
    /// Rows a query returned.
    pub rows: u64,
    /// The id an INSERT generated: MySQL's LAST_INSERT_ID, SQLite's rowid. PostgreSQL has
    /// none (use `RETURNING id` and read the row).
    pub last_insert_id: Option<u64>,
}

/// Rows for [`Connection::bulk_load`](super::Connection::bulk_load), produced one at a time
/// straight into the driver's buffer: nothing is allocated per value.
pub trait RowSource {
    /// Passes the next row's values, in column order, to `put`; false when none is left.
    fn next_row(&mut self, put: &mut dyn FnMut(Param<'_>)) -> bool;
}
