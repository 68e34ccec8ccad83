//! SQL text of workload files: named parameters to positional ones, the row a batch
//! repeats, a table set's marker, and the class a statement is measured in.

use super::identifier;
use crate::workload::StatementClass;

/// Why a statement's SQL text cannot be used as written.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SqlError {
    #[error("an unclosed {{: table marker")]
    UnclosedMarker,
    /// The marker as written.
    #[error("{0} must follow a table set's name and hold a value name, as in sbtest{{:t}}")]
    MisplacedMarker(String),
    #[error("a statement may use one table set's table (one {{:name}})")]
    TwoMarkers,
    #[error("an unclosed {0} quote")]
    UnclosedQuote(char),
    #[error("a raw ? placeholder: name it (:name) so fairbench knows what to bind")]
    RawPlaceholder,
}

/// The one `{:name}` of a statement's SQL: the table set named just before it, the value
/// name and the marker text. Two different markers are an error.
pub(super) fn table_marker(sql: &str) -> Result<Option<(String, String, String)>, SqlError> {
    let mut found: Option<(String, String, String)> = None;
    let mut from = 0;
    while let Some(i) = sql[from..].find("{:").map(|i| i + from) {
        let end = sql[i..].find('}').map(|e| e + i).ok_or(SqlError::UnclosedMarker)?;
        let value = sql[i + 2..end].to_string();
        let set: String = sql[..i]
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        if set.is_empty() || !identifier(&value) {
            return Err(SqlError::MisplacedMarker(sql[i..=end].to_string()));
        }
        match &found {
            Some((s, v, _)) if *s != set || *v != value => return Err(SqlError::TwoMarkers),
            _ => found = Some((set, value, sql[i..=end].to_string())),
        }
        from = end + 1;
    }
    Ok(found)
}

/// Where the row after the last VALUES starts and ends (its parentheses), quotes skipped.
pub(super) fn values_row(sql: &str) -> Option<(usize, usize)> {
    let upper = sql.to_ascii_uppercase();
    let open = upper.rfind("VALUES").map(|v| v + 6).and_then(|v| sql[v..].find('(').map(|i| v + i))?;
    let b = sql.as_bytes();
    let (mut depth, mut i) = (0usize, open);
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"' | b'`') => i = (i + 1..b.len()).find(|&j| b[j] == q)?,
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some((open, i));
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// `:name` parameters to `?`, outside quoted strings and identifiers, leaving `::` casts.
pub fn positional(sql: &str) -> Result<(String, Vec<String>), SqlError> {
    let b = sql.as_bytes();
    let (mut out, mut names) = (String::with_capacity(sql.len()), Vec::new());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"' | b'`') => {
                let end = (i + 1..b.len()).find(|&j| b[j] == q).ok_or(SqlError::UnclosedQuote(q as char))?;
                out.push_str(&sql[i..=end]);
                i = end + 1;
            }
            b':' if b.get(i + 1) == Some(&b':') => {
                out.push_str("::");
                i += 2;
            }
            b':' if b.get(i + 1).is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_') => {
                let end =
                    (i + 1..b.len()).find(|&j| !(b[j].is_ascii_alphanumeric() || b[j] == b'_')).unwrap_or(b.len());
                names.push(sql[i + 1..end].to_string());
                out.push('?');
                i = end;
            }
            b'?' => return Err(SqlError::RawPlaceholder),
            _ => {
                let ch = sql[i..].chars().next().unwrap_or(' ');
                out.push(ch);
                i += ch.len_utf8();
            }
        }
    }
    Ok((out, names))
}

/// By the statement's first word, as fairbench classes every statement.
pub(super) fn classify(sql: &str) -> StatementClass {
    let word: String = sql
        .trim_start_matches(|c: char| c.is_whitespace() || c == '(')
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect();
    match word.to_ascii_uppercase().as_str() {
        "SELECT" | "WITH" | "SHOW" | "VALUES" | "TABLE" => StatementClass::Read,
        "INSERT" | "UPDATE" | "DELETE" | "REPLACE" | "MERGE" | "UPSERT" => StatementClass::Write,
        "COMMIT" => StatementClass::Commit,
        _ => StatementClass::Other,
    }
}
