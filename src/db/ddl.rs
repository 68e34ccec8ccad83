//! What the three drivers' CREATE TABLE statements share: the column list and the key,
//! each column's type and generated-id form rendered by the driver.

use crate::model::{ColumnDef, ColumnType, TableDef};

/// `(\n  col type,\n  ...,\n  PRIMARY KEY (a, b)\n)`; `inline_key`: a generated column that
/// is the whole key says PRIMARY KEY itself (SQLite's rowid alias must).
pub fn body(t: &TableDef, column: impl Fn(&ColumnDef) -> String, inline_key: bool) -> String {
    let mut parts: Vec<String> = t.columns.iter().map(|c| format!("  {} {}", c.name, column(c))).collect();
    let inlined = inline_key && t.columns.iter().any(|c| c.generated);
    if !t.primary_key.is_empty() && !inlined {
        parts.push(format!("  PRIMARY KEY ({})", t.primary_key.join(", ")));
    }
    format!("(\n{}\n)", parts.join(",\n"))
}

/// How a database spells the types where the three differ.
pub struct Spelling {
    pub double: &'static str,
    pub decimal: &'static str,
    pub blob: &'static str,
}

/// A column type in a database's spelling.
pub fn column_type(ty: ColumnType, s: &Spelling) -> String {
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
    }
}
