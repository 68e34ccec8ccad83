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

pub use crate::model::RowPick;

/// Where a driver puts the row a statement keeps: the first one decoded straight into `out`;
/// for the middle one, every row decoded until the last is known, then the middle moved
/// into `out` when the `KeptRow` goes away (the result has ended).
pub struct KeptRow<'a> {
    out: &'a mut Vec<Value>,
    pick: RowPick,
    rows: Vec<Vec<Value>>,
    taken: bool,
}

impl<'a> KeptRow<'a> {
    pub fn new(out: &'a mut Vec<Value>, pick: RowPick) -> Self {
        out.clear();
        KeptRow { out, pick, rows: Vec::new(), taken: false }
    }

    /// Whether the result's next row is kept (decoded); otherwise it is passed over unread.
    pub fn wants(&self) -> bool {
        self.pick == RowPick::Middle || !self.taken
    }

    /// The buffer the result's next row is decoded into, or None when it is not kept.
    pub fn next_row(&mut self) -> Option<&mut Vec<Value>> {
        match self.pick {
            RowPick::First if self.taken => None,
            RowPick::First => {
                self.taken = true;
                Some(&mut *self.out)
            }
            RowPick::Middle => {
                self.rows.push(Vec::new());
                self.rows.last_mut()
            }
        }
    }
}

impl Drop for KeptRow<'_> {
    /// The result has ended: the middle row in place (none when no row came back).
    fn drop(&mut self) {
        if self.pick == RowPick::Middle && !self.rows.is_empty() {
            let middle = self.rows.len().div_ceil(2) - 1;
            *self.out = self.rows.swap_remove(middle);
        }
    }
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
    /// An owned copy of a parameter (rows gathered into one statement's parameters).
    pub fn from_param(p: Param<'_>) -> Value {
        match p {
            Param::Null => Value::Null,
            Param::Int(i) => Value::Int(i),
            Param::Float(f) => Value::Float(f),
            Param::Text(s) => Value::Text(s.to_string()),
            Param::Bytes(b) => Value::Bytes(b.to_vec()),
        }
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    /// What a driver keeps of a result of `n` rows (row i holds the value i).
    fn kept(pick: RowPick, n: i64) -> Vec<Value> {
        let mut out = vec![Value::Text("stale".into())];
        let mut k = KeptRow::new(&mut out, pick);
        for i in 1..=n {
            let wanted = k.wants();
            match k.next_row() {
                Some(row) => {
                    assert!(wanted);
                    row.push(Value::Int(i));
                }
                None => assert!(!wanted),
            }
        }
        drop(k);
        out
    }

    #[test]
    fn the_first_or_the_middle_row_is_kept_and_none_from_an_empty_result() {
        for pick in [RowPick::First, RowPick::Middle] {
            assert_eq!(kept(pick, 0), vec![], "{pick:?}: nothing stale is left");
        }
        assert_eq!(kept(RowPick::First, 4), vec![Value::Int(1)]);
        // ceil(n/2): 1 of 1, 1 of 2, 2 of 3, 2 of 4, 3 of 5.
        for (n, middle) in [(1, 1), (2, 1), (3, 2), (4, 2), (5, 3)] {
            assert_eq!(kept(RowPick::Middle, n), vec![Value::Int(middle)], "{n} rows");
        }
    }
}
