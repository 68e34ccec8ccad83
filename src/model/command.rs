//! The SQL command each statement is, as servers count statements: what the audit compares
//! the server's own counters with (MySQL's `Com_*`, PostgreSQL's transaction and row
//! statistics), for built-in workloads and workload files alike.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SqlCommand {
    Select,
    Insert,
    /// `INSERT ... SELECT` (MySQL counts it apart: `Com_insert_select`).
    InsertSelect,
    Replace,
    ReplaceSelect,
    Update,
    Delete,
    /// `BEGIN` or `START TRANSACTION`.
    Begin,
    Commit,
    Rollback,
    /// Anything else (`WITH`, `CALL`, `SET`, DDL): not compared with the server's counters.
    Other,
}

impl SqlCommand {
    pub const ALL: [SqlCommand; 11] = [
        SqlCommand::Select,
        SqlCommand::Insert,
        SqlCommand::InsertSelect,
        SqlCommand::Replace,
        SqlCommand::ReplaceSelect,
        SqlCommand::Update,
        SqlCommand::Delete,
        SqlCommand::Begin,
        SqlCommand::Commit,
        SqlCommand::Rollback,
        SqlCommand::Other,
    ];

    /// The command of a statement's SQL, by its leading keyword (comments and parentheses
    /// before it skipped); `INSERT`/`REPLACE` with a `SELECT` and no `VALUES` is the
    /// `..._select` form.
    pub fn of_sql(sql: &str) -> SqlCommand {
        let words = keywords(sql);
        let first = words.first().map(String::as_str).unwrap_or("");
        let has = |w: &str| words.iter().any(|x| x == w);
        let from_select = has("select") && !has("values") && !has("value");
        match first {
            "select" => SqlCommand::Select,
            "insert" if from_select => SqlCommand::InsertSelect,
            "insert" => SqlCommand::Insert,
            "replace" if from_select => SqlCommand::ReplaceSelect,
            "replace" => SqlCommand::Replace,
            "update" => SqlCommand::Update,
            "delete" => SqlCommand::Delete,
            "begin" => SqlCommand::Begin,
            "start" if words.get(1).is_some_and(|w| w == "transaction") => SqlCommand::Begin,
            "commit" | "end" => SqlCommand::Commit,
            "rollback" | "abort" => SqlCommand::Rollback,
            _ => SqlCommand::Other,
        }
    }

    /// The name results use.
    pub fn name(self) -> &'static str {
        match self {
            SqlCommand::Select => "select",
            SqlCommand::Insert => "insert",
            SqlCommand::InsertSelect => "insert_select",
            SqlCommand::Replace => "replace",
            SqlCommand::ReplaceSelect => "replace_select",
            SqlCommand::Update => "update",
            SqlCommand::Delete => "delete",
            SqlCommand::Begin => "begin",
            SqlCommand::Commit => "commit",
            SqlCommand::Rollback => "rollback",
            SqlCommand::Other => "other",
        }
    }

    pub fn from_name(name: &str) -> Option<SqlCommand> {
        SqlCommand::ALL.into_iter().find(|c| c.name() == name)
    }

    /// Whether the command adds rows (the rows it affected are inserted rows).
    pub fn inserts(self) -> bool {
        matches!(self, SqlCommand::Insert | SqlCommand::InsertSelect | SqlCommand::Replace | SqlCommand::ReplaceSelect)
    }
}

/// The SQL's words outside comments and quotes, lowercased (enough to classify it).
fn keywords(sql: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut chars = sql.chars().peekable();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '\'' | '"' | '`' => quote = Some(c),
            '-' if chars.peek() == Some(&'-') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut prev = ' ';
                for c in chars.by_ref() {
                    if prev == '*' && c == '/' {
                        break;
                    }
                    prev = c;
                }
            }
            c if c.is_ascii_alphanumeric() || c == '_' => {
                word.push(c.to_ascii_lowercase());
                continue;
            }
            _ => {}
        }
        if !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::SqlCommand::{self, *};

    #[test]
    fn commands_by_leading_keyword() {
        let cases = [
            ("SELECT c FROM sbtest1 WHERE id=?", Select),
            ("  /* hint */ select 1", Select),
            ("-- note\nUPDATE t SET k=k+1 WHERE id=?", Update),
            ("INSERT INTO t (id, k) VALUES (?, ?)", Insert),
            ("INSERT INTO t SELECT * FROM u", InsertSelect),
            ("insert into t (c) values ('select')", Insert),
            ("REPLACE INTO t VALUES (1)", Replace),
            ("DELETE FROM t WHERE id=?", Delete),
            ("BEGIN", Begin),
            ("BEGIN IMMEDIATE", Begin),
            ("START TRANSACTION READ ONLY", Begin),
            ("COMMIT", Commit),
            ("ROLLBACK", Rollback),
            ("WITH x AS (SELECT 1) SELECT * FROM x", Other),
            ("", Other),
        ];
        for (sql, want) in cases {
            assert_eq!(SqlCommand::of_sql(sql), want, "{sql}");
        }
    }

    #[test]
    fn names_round_trip() {
        for c in SqlCommand::ALL {
            assert_eq!(SqlCommand::from_name(c.name()), Some(c));
        }
    }
}
