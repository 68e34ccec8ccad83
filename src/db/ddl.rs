//! What the three drivers' CREATE TABLE statements share: the column list and the key,
//! each column in the driver's spelling (types and generated ids).

use crate::model::{ColumnDef, ColumnType, TableDef};

/// `(\n  col type,\n  ...,\n  PRIMARY KEY (a, b)\n)` in a database's spelling. A generated
/// column spelled `Instead` is the whole key and says PRIMARY KEY itself (SQLite's rowid
/// alias must).
pub fn body(t: &TableDef, s: &Spelling) -> String {
    let mut parts: Vec<String> = t.columns.iter().map(|c| format!("  {} {}", c.name, column(c, s))).collect();
    let inlined = matches!(s.generated, Generated::Instead(_)) && t.columns.iter().any(|c| c.generated);
    if !t.primary_key.is_empty() && !inlined {
        parts.push(format!("  PRIMARY KEY ({})", t.primary_key.join(", ")));
    }
    format!("(\n{}\n)", parts.join(",\n"))
}

/// How a database spells what the three write differently.
pub struct Spelling {
    pub double: &'static str,
    pub decimal: &'static str,
    pub blob: &'static str,
    /// Date and time to the microsecond, without a time zone (values are UTC).
    pub timestamp: &'static str,
    /// A column the database generates.
    pub generated: Generated,
}

pub enum Generated {
    /// Written after the type (AUTO_INCREMENT, identity).
    After(&'static str),
    /// Written instead of the type (SQLite's INTEGER PRIMARY KEY).
    Instead(&'static str),
}

/// A column's type, and how the database generates it when it does.
fn column(c: &ColumnDef, s: &Spelling) -> String {
    match (&s.generated, c.generated) {
        (Generated::Instead(text), true) => text.to_string(),
        (Generated::After(text), true) => format!("{} {text}", column_type(c.ty, s)),
        (_, false) => column_type(c.ty, s),
    }
}

/// A column type in a database's spelling.
fn column_type(ty: ColumnType, s: &Spelling) -> String {
    match ty {
        ColumnType::Integer => "INTEGER".into(),
        ColumnType::BigInt => "BIGINT".into(),
        ColumnType::SmallInt => "SMALLINT".into(),
        ColumnType::Double => s.double.into(),
        ColumnType::Decimal(p, scale) => format!("{}({p},{scale})", s.decimal),
        ColumnType::Char(n) => format!("CHAR({n})"),
        ColumnType::Varchar(n) => format!("VARCHAR({n})"),
        ColumnType::Text => "TEXT".into(),
        ColumnType::Blob => s.blob.into(),
        ColumnType::Timestamp => s.timestamp.into(),
    }
}
