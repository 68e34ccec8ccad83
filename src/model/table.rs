//! A table as a workload declares it, for each driver to render in its own DDL.

/// Column types a workload file may use (docs/workloads.md), independent of the database.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnType {
    Integer,
    BigInt,
    SmallInt,
    Double,
    Decimal(u32, u32),
    Char(u32),
    Varchar(u32),
    Text,
    Blob,
    /// Date and time to the microsecond (UTC): `YYYY-MM-DD HH:MM:SS.ffffff` as text.
    Timestamp,
}

impl ColumnType {
    /// `integer`, `bigint`, `varchar(40)`, `decimal(12,2)`... (case-insensitive).
    pub fn parse(text: &str) -> Option<ColumnType> {
        let t = text.trim().to_ascii_lowercase();
        let sized = |prefix: &str| -> Option<Vec<u32>> {
            let inner = t.strip_prefix(prefix)?.trim_start().strip_prefix('(')?.strip_suffix(')')?;
            let n: Option<Vec<u32>> =
                inner.split(',').map(|x| x.trim().parse::<u32>().ok().filter(|v| *v > 0)).collect();
            n
        };
        Some(match t.as_str() {
            "integer" | "int" => ColumnType::Integer,
            "bigint" => ColumnType::BigInt,
            "smallint" => ColumnType::SmallInt,
            "double" => ColumnType::Double,
            "text" => ColumnType::Text,
            "blob" => ColumnType::Blob,
            "timestamp" | "datetime" => ColumnType::Timestamp,
            _ => match (sized("varchar"), sized("char"), sized("decimal")) {
                (Some(n), _, _) if n.len() == 1 => ColumnType::Varchar(n[0]),
                (_, Some(n), _) if n.len() == 1 => ColumnType::Char(n[0]),
                (_, _, Some(n)) if n.len() == 2 && n[1] <= n[0] => ColumnType::Decimal(n[0], n[1]),
                _ => return None,
            },
        })
    }

    /// As a workload file writes it.
    pub fn text(self) -> String {
        match self {
            ColumnType::Integer => "integer".into(),
            ColumnType::BigInt => "bigint".into(),
            ColumnType::SmallInt => "smallint".into(),
            ColumnType::Double => "double".into(),
            ColumnType::Decimal(p, s) => format!("decimal({p},{s})"),
            ColumnType::Char(n) => format!("char({n})"),
            ColumnType::Varchar(n) => format!("varchar({n})"),
            ColumnType::Text => "text".into(),
            ColumnType::Blob => "blob".into(),
            ColumnType::Timestamp => "timestamp".into(),
        }
    }

    pub fn is_integer(self) -> bool {
        matches!(self, ColumnType::Integer | ColumnType::BigInt | ColumnType::SmallInt)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnDef {
    pub name: String,
    pub ty: ColumnType,
    /// The database generates it when an INSERT leaves it out (AUTO_INCREMENT, identity,
    /// SQLite's rowid): a single integer primary key filled with row numbers.
    pub generated: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableDef {
    pub name: String,
    pub columns: Vec<ColumnDef>,
    pub primary_key: Vec<String>,
    /// Secondary indexes, each a list of columns.
    pub indexes: Vec<Vec<String>>,
}

impl TableDef {
    /// The CREATE INDEX statements, built after loading (the same SQL on every database;
    /// names carry the table's because PostgreSQL's index names are per schema).
    pub fn index_sql(&self) -> Vec<String> {
        self.indexes
            .iter()
            .enumerate()
            .map(|(i, cols)| format!("CREATE INDEX {}_i{} ON {} ({})", self.name, i + 1, self.name, cols.join(", ")))
            .collect()
    }
}

/// sysbench's `sbtest<n>` table as its options shape it (oltp_common.lua's create_table).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SbtestShape {
    /// AUTO_INCREMENT / SERIAL id (--auto-inc).
    pub auto_inc: bool,
    /// A secondary index on id instead of the primary key (--secondary).
    pub secondary: bool,
    /// MySQL's storage engine (--mysql-storage-engine).
    pub engine: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_parse_with_sizes() {
        assert_eq!(ColumnType::parse("INT"), Some(ColumnType::Integer));
        assert_eq!(ColumnType::parse("varchar(40)"), Some(ColumnType::Varchar(40)));
        assert_eq!(ColumnType::parse("decimal(12, 2)"), Some(ColumnType::Decimal(12, 2)));
        assert_eq!(ColumnType::parse("decimal(2,12)"), None);
        assert_eq!(ColumnType::parse("char(0)"), None);
        assert_eq!(ColumnType::parse("bigint2"), None);
    }
}
