//! Plain text queries (sysbench's `--db-ps-mode=disable`): a statement's `?` placeholders
//! found once, then every execution renders the parameters as SQL literals in the
//! dialect's spelling, into a buffer the connection keeps (no allocation once it is large
//! enough). Used by MySQL (COM_QUERY) and PostgreSQL (the simple query protocol) when
//! [`ConnectOptions::prepared_statements`](super::ConnectOptions) is off.
//!
//! Literals are spelled so the result does not depend on session settings:
//! - MySQL: text `'...'` with `'` doubled, or `_utf8mb4 X'...'` when it holds a backslash or
//!   NUL (so NO_BACKSLASH_ESCAPES does not matter); bytes `X'...'`; floats as DOUBLE literals
//!   (`2.5e0`, the shortest form that reads back the same value); NaN and infinities refused.
//! - PostgreSQL: text `E'...'` with `\` and `'` escaped (standard_conforming_strings does
//!   not matter; NUL refused: PostgreSQL text cannot hold it); bytes `E'\\x...'::bytea`;
//!   NaN and infinities as `'NaN'::float8`, `'Infinity'::float8`, `'-Infinity'::float8`.
//! - SQLite (not used by its driver, which binds): standard SQL `'...'` and `X'...'`.
//!
//! Negative numbers are parenthesized (`(-5)`), so `k-?` never becomes the comment `k--5`.

use super::{ClientFault, DbError, Dialect, Param};
use std::fmt::Write as _;

/// A statement's SQL with the byte offsets of its `?` placeholders: those outside quotes
/// ('...', "...", `...`, PostgreSQL's $tag$...$tag$) and comments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TextSql {
    dialect: Dialect,
    sql: String,
    marks: Vec<usize>,
}

impl TextSql {
    pub fn new(dialect: Dialect, sql: &str) -> TextSql {
        TextSql { dialect, sql: sql.to_string(), marks: placeholders(dialect, sql) }
    }

    /// How many parameters the statement takes.
    #[cfg(test)]
    pub fn placeholders(&self) -> usize {
        self.marks.len()
    }

    /// The SQL with `$1, $2, ...` for the placeholders (PostgreSQL's prepare).
    pub fn numbered(&self) -> String {
        let mut out = String::with_capacity(self.sql.len() + 2 * self.marks.len());
        let mut from = 0;
        for (n, &at) in self.marks.iter().enumerate() {
            out.push_str(&self.sql[from..at]);
            let _ = write!(out, "${}", n + 1);
            from = at + 1;
        }
        out.push_str(&self.sql[from..]);
        out
    }

    /// An error when the server counts other parameters than the placeholders found here
    /// (a `?` the scan could not place, e.g. inside a MySQL `/*! ... */` comment).
    pub fn check_count(&self, server: usize) -> Result<(), DbError> {
        if server == self.marks.len() {
            return Ok(());
        }
        Err(DbError::client(
            ClientFault::Other,
            format!(
                "plain text queries: the server counts {server} parameters in this statement but {} `?` \
                 placeholders were found outside quotes and comments; use prepared statements for it: {}",
                self.marks.len(),
                self.sql
            ),
        ))
    }

    /// The statement with `params` as literals, into `out` (cleared first). The caller has
    /// checked the number of parameters; a mismatch here is an arity error all the same.
    pub fn render(&self, params: &[Param<'_>], out: &mut String) -> Result<(), DbError> {
        if params.len() != self.marks.len() {
            return Err(DbError::arity(self.marks.len(), params.len()));
        }
        out.clear();
        let extra: usize = params.iter().map(|p| literal_len(p)).sum();
        out.reserve(self.sql.len() + extra);
        let mut from = 0;
        for (p, &at) in params.iter().zip(&self.marks) {
            out.push_str(&self.sql[from..at]);
            literal(self.dialect, p, out)?;
            from = at + 1;
        }
        out.push_str(&self.sql[from..]);
        Ok(())
    }
}

/// An upper bound of a literal's length, so one reservation usually suffices.
fn literal_len(p: &Param<'_>) -> usize {
    match p {
        Param::Null | Param::Int(_) | Param::Float(_) => 32,
        Param::Text(s) => 2 * s.len() + 16,
        Param::Bytes(b) => 2 * b.len() + 16,
    }
}

fn refused(message: String) -> DbError {
    DbError::client(ClientFault::Other, message)
}

/// One parameter as a literal of `dialect`, appended to `out`.
pub(crate) fn literal(dialect: Dialect, p: &Param<'_>, out: &mut String) -> Result<(), DbError> {
    match *p {
        Param::Null => out.push_str("NULL"),
        Param::Int(i) if i < 0 => {
            let _ = write!(out, "({i})");
        }
        Param::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Param::Float(f) if f.is_finite() => {
            // LowerExp without a precision is the shortest text that reads back as `f`;
            // the exponent makes it a DOUBLE literal in MySQL (a DECIMAL otherwise).
            if f.is_sign_negative() {
                let _ = write!(out, "({f:e})");
            } else {
                let _ = write!(out, "{f:e}");
            }
        }
        Param::Float(f) => non_finite(dialect, f, out)?,
        Param::Text(s) => text(dialect, s, out)?,
        Param::Bytes(b) => match dialect {
            Dialect::Mysql | Dialect::Sqlite => {
                out.push_str("X'");
                hex(b, out);
                out.push('\'');
            }
            Dialect::Postgres => {
                out.push_str("E'\\\\x");
                hex(b, out);
                out.push_str("'::bytea");
            }
        },
    }
    Ok(())
}

/// NaN and the infinities: PostgreSQL has literals for them, MySQL and SQLite none.
fn non_finite(dialect: Dialect, f: f64, out: &mut String) -> Result<(), DbError> {
    match dialect {
        Dialect::Postgres => out.push_str(if f.is_nan() {
            "'NaN'::float8"
        } else if f > 0.0 {
            "'Infinity'::float8"
        } else {
            "'-Infinity'::float8"
        }),
        Dialect::Mysql | Dialect::Sqlite => {
            return Err(refused(format!(
                "plain text queries: {} has no {} literal; use prepared statements or another value",
                f,
                dialect.name()
            )))
        }
    }
    Ok(())
}

/// A text literal that reads back as `s` whatever the server's escaping mode: MySQL's with
/// a backslash or NUL as hex, PostgreSQL's as an escape string.
fn text(dialect: Dialect, s: &str, out: &mut String) -> Result<(), DbError> {
    match dialect {
        Dialect::Mysql if s.bytes().any(|b| b == b'\\' || b == 0) => {
            out.push_str("_utf8mb4 X'");
            hex(s.as_bytes(), out);
            out.push('\'');
        }
        Dialect::Mysql | Dialect::Sqlite => {
            if dialect == Dialect::Sqlite && s.contains('\0') {
                return Err(refused("plain text queries: a SQLite text literal cannot hold NUL".into()));
            }
            out.push('\'');
            push_doubling_quotes(s, out);
            out.push('\'');
        }
        Dialect::Postgres => {
            if s.contains('\0') {
                return Err(refused(
                    "plain text queries: PostgreSQL text cannot hold NUL (0x00); send it as bytes".into(),
                ));
            }
            out.push_str("E'");
            let mut from = 0;
            for (i, b) in s.bytes().enumerate() {
                let escaped = match b {
                    b'\\' => "\\\\",
                    b'\'' => "''",
                    _ => continue,
                };
                out.push_str(&s[from..i]);
                out.push_str(escaped);
                from = i + 1;
            }
            out.push_str(&s[from..]);
            out.push('\'');
        }
    }
    Ok(())
}

fn push_doubling_quotes(s: &str, out: &mut String) {
    let mut from = 0;
    for (i, b) in s.bytes().enumerate() {
        if b == b'\'' {
            out.push_str(&s[from..=i]);
            out.push('\'');
            from = i + 1;
        }
    }
    out.push_str(&s[from..]);
}

fn hex(bytes: &[u8], out: &mut String) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for &b in bytes {
        out.push(DIGITS[(b >> 4) as usize] as char);
        out.push(DIGITS[(b & 15) as usize] as char);
    }
}

fn ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80
}

/// Byte offsets of the `?` placeholders outside quotes and comments. An unterminated
/// quote or comment runs to the end (the server rejects such SQL at prepare).
fn placeholders(dialect: Dialect, sql: &str) -> Vec<usize> {
    let b = sql.as_bytes();
    let mysql = dialect == Dialect::Mysql;
    let pg = dialect == Dialect::Postgres;
    let mut marks = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let next = |k: usize| b.get(i + k).copied();
        i = match b[i] {
            b'?' => {
                marks.push(i);
                i + 1
            }
            q @ (b'\'' | b'"' | b'`') => {
                // Backslash escapes: MySQL in '...' and "..."; PostgreSQL in E'...' only.
                let escapes = match q {
                    b'`' => false,
                    _ if mysql => true,
                    b'\'' if pg => i > 0 && matches!(b[i - 1], b'e' | b'E') && (i < 2 || !ident_byte(b[i - 2])),
                    _ => false,
                };
                skip_quoted(b, i, q, escapes)
            }
            b'-' if next(1) == Some(b'-') && (!mysql || next(2).is_none_or(|c| c.is_ascii_whitespace())) => {
                line_end(b, i)
            }
            b'#' if mysql => line_end(b, i),
            // MySQL runs the SQL inside /*! ... */ and /*M! ... */: not a comment there.
            b'/' if next(1) == Some(b'*') && !(mysql && (next(2) == Some(b'!') || next(2) == Some(b'M'))) => {
                block_comment_end(b, i, pg)
            }
            b'$' if pg && (i == 0 || !ident_byte(b[i - 1])) => dollar_quote_end(b, i).unwrap_or(i + 1),
            _ => i + 1,
        };
    }
    marks
}

/// The index after the quote opened at `at` (a doubled quote stays inside).
fn skip_quoted(b: &[u8], at: usize, q: u8, escapes: bool) -> usize {
    let mut i = at + 1;
    while i < b.len() {
        match b[i] {
            b'\\' if escapes => i += 2,
            c if c == q => return i + 1, // `''` closes and reopens: the same result
            _ => i += 1,
        }
    }
    b.len()
}

fn line_end(b: &[u8], at: usize) -> usize {
    b[at..].iter().position(|&c| c == b'\n').map_or(b.len(), |n| at + n + 1)
}

/// PostgreSQL's block comments nest; MySQL's do not.
fn block_comment_end(b: &[u8], at: usize, nested: bool) -> usize {
    let mut depth = 1;
    let mut i = at + 2;
    while i < b.len() {
        if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
            depth -= 1;
            i += 2;
            if depth == 0 || !nested {
                return i;
            }
        } else if nested && b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            depth += 1;
            i += 2;
        } else {
            i += 1;
        }
    }
    b.len()
}

/// `$tag$ ... $tag$` (tag empty or an identifier not starting with a digit): the index
/// after the closing tag, or None when `$` at `at` opens no dollar quote (`$1`).
fn dollar_quote_end(b: &[u8], at: usize) -> Option<usize> {
    let tag_len = b[at + 1..].iter().position(|&c| !(c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80))?;
    let close = at + 1 + tag_len;
    if b[close] != b'$' || b.get(at + 1).is_some_and(u8::is_ascii_digit) {
        return None;
    }
    let tag = &b[at..=close];
    let body = close + 1;
    Some(b[body..].windows(tag.len()).position(|w| w == tag).map_or(b.len(), |n| body + n + tag.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn render(dialect: Dialect, sql: &str, params: &[Param<'_>]) -> Result<String, DbError> {
        let mut out = String::new();
        TextSql::new(dialect, sql).render(params, &mut out).map(|_| out)
    }

    fn one(dialect: Dialect, p: Param<'_>) -> String {
        render(dialect, "?", &[p]).unwrap()
    }

    #[test]
    fn placeholders_outside_quotes_and_comments() {
        let sql = "SELECT '?', \"?\", `?`, 'it''s ?', ? FROM t WHERE a = ? -- ?\n AND b = ? /* ? */ # ?\n";
        let t = TextSql::new(Dialect::Mysql, sql);
        assert_eq!(t.placeholders(), 3);
        // MySQL: a backslash escapes the quote; `--` without a space is no comment.
        assert_eq!(TextSql::new(Dialect::Mysql, r"SELECT 'a\'?', ?").placeholders(), 1);
        assert_eq!(TextSql::new(Dialect::Mysql, "SELECT 1--?").placeholders(), 1);
        assert_eq!(TextSql::new(Dialect::Mysql, "SELECT /*! ? */ 1").placeholders(), 1);
        // PostgreSQL: backslashes escape only in E'...'; `#` is an operator; comments nest.
        assert_eq!(TextSql::new(Dialect::Postgres, r"SELECT 'a\', ?").placeholders(), 1);
        assert_eq!(TextSql::new(Dialect::Postgres, r"SELECT E'a\'?', ?").placeholders(), 1);
        assert_eq!(TextSql::new(Dialect::Postgres, r"SELECT e'a\'?', ?").placeholders(), 1);
        assert_eq!(TextSql::new(Dialect::Postgres, "SELECT 1 # ?").placeholders(), 1);
        assert_eq!(TextSql::new(Dialect::Postgres, "SELECT 1 /* /* ? */ ? */, ?").placeholders(), 1);
        assert_eq!(TextSql::new(Dialect::Postgres, "SELECT $$ ? $$, $a$ ?$ $a$, ?").placeholders(), 1);
        assert_eq!(TextSql::new(Dialect::Postgres, "SELECT 1--?").placeholders(), 0);
        // Unterminated: the rest is quoted.
        assert_eq!(TextSql::new(Dialect::Mysql, "SELECT ?, 'abc ?").placeholders(), 1);
        assert_eq!(TextSql::new(Dialect::Postgres, "SELECT $x$ ?").placeholders(), 0);
        assert_eq!(TextSql::new(Dialect::Postgres, "SELECT $").placeholders(), 0);
    }

    #[test]
    fn numbered_for_postgres() {
        let t = TextSql::new(Dialect::Postgres, "SELECT '?', ? + ?, c FROM t WHERE id = ?");
        assert_eq!(t.numbered(), "SELECT '?', $1 + $2, c FROM t WHERE id = $3");
        assert!(t.check_count(3).is_ok());
        assert!(t.check_count(2).unwrap_err().message.contains("counts 2 parameters"));
    }

    #[test]
    fn literals_per_dialect() {
        use Dialect::*;
        assert_eq!(
            render(Mysql, "UPDATE t SET k=k-? WHERE id=?", &[Param::Int(-5), Param::Int(7)]).unwrap(),
            "UPDATE t SET k=k-(-5) WHERE id=7"
        );
        assert_eq!(one(Mysql, Param::Int(i64::MIN)), "(-9223372036854775808)");
        assert_eq!(one(Mysql, Param::Null), "NULL");
        assert_eq!(one(Mysql, Param::Float(2.5)), "2.5e0");
        assert_eq!(one(Mysql, Param::Float(0.1)), "1e-1");
        assert_eq!(one(Mysql, Param::Float(-1e300)), "(-1e300)");
        assert_eq!(one(Postgres, Param::Float(f64::MIN_POSITIVE)), "2.2250738585072014e-308");
        assert_eq!(one(Mysql, Param::Text("it's")), "'it''s'");
        assert_eq!(one(Mysql, Param::Text("")), "''");
        assert_eq!(one(Mysql, Param::Text(r"a\b")), "_utf8mb4 X'615c62'");
        assert_eq!(one(Mysql, Param::Text("a\0")), "_utf8mb4 X'6100'");
        assert_eq!(one(Mysql, Param::Bytes(&[0, 1, 255])), "X'0001ff'");
        assert_eq!(one(Mysql, Param::Bytes(&[])), "X''");
        assert_eq!(one(Postgres, Param::Text(r"it's a \ é")), r"E'it''s a \\ é'");
        assert_eq!(one(Postgres, Param::Bytes(&[0, 1, 255])), r"E'\\x0001ff'::bytea");
        assert_eq!(one(Postgres, Param::Float(f64::NAN)), "'NaN'::float8");
        assert_eq!(one(Postgres, Param::Float(f64::INFINITY)), "'Infinity'::float8");
        assert_eq!(one(Postgres, Param::Float(f64::NEG_INFINITY)), "'-Infinity'::float8");
        assert_eq!(one(Sqlite, Param::Text(r"it's \")), r"'it''s \'");
        for f in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let e = render(Mysql, "?", &[Param::Float(f)]).unwrap_err();
            assert!(e.message.contains("has no mysql literal"), "{e}");
        }
        let e = render(Postgres, "?", &[Param::Text("a\0b")]).unwrap_err();
        assert!(e.message.contains("cannot hold NUL"), "{e}");
        let e = render(Mysql, "? ?", &[Param::Int(1)]).unwrap_err();
        assert!(e.message.contains("takes 2 parameters, 1 given"), "{e}");
    }

    #[test]
    fn quotes_in_the_sql_are_kept_and_the_buffer_is_reused() {
        let t = TextSql::new(Dialect::Mysql, "SELECT '?' , ? FROM `t?`");
        let mut out = String::new();
        t.render(&[Param::Text("x")], &mut out).unwrap();
        assert_eq!(out, "SELECT '?' , 'x' FROM `t?`");
        let (cap, ptr) = (out.capacity(), out.as_ptr());
        t.render(&[Param::Text("y")], &mut out).unwrap();
        assert_eq!((out.capacity(), out.as_ptr()), (cap, ptr), "no new allocation");
    }

    /// A MySQL string literal read back the way the server's lexer reads it (backslash
    /// escapes on, the default), or a hex literal.
    fn mysql_unquote(lit: &str) -> Vec<u8> {
        if let Some(h) = lit.strip_prefix("_utf8mb4 X'").and_then(|r| r.strip_suffix('\'')) {
            return (0..h.len()).step_by(2).map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap()).collect();
        }
        let body = lit.strip_prefix('\'').unwrap().strip_suffix('\'').unwrap().as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < body.len() {
            assert_ne!(body[i], b'\\', "a backslash reached a quoted literal: {lit}");
            if body[i] == b'\'' {
                assert_eq!(body.get(i + 1), Some(&b'\''), "a lone quote in {lit}");
                i += 1;
            }
            out.push(body[i]);
            i += 1;
        }
        out
    }

    fn pg_unquote(lit: &str) -> String {
        let body = lit.strip_prefix("E'").unwrap().strip_suffix('\'').unwrap();
        let mut out = String::new();
        let mut chars = body.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => out.push(chars.next().unwrap()),
                '\'' => {
                    assert_eq!(chars.next(), Some('\''), "a lone quote in {lit}");
                    out.push('\'');
                }
                c => out.push(c),
            }
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

        /// Any text renders to one literal that reads back as itself, and the placeholder
        /// scan of the rendered statement finds no `?` inside it.
        #[test]
        fn text_literals_round_trip(s in "(\\PC|['\"\\\\`?\\x00\n]){0,40}") {
            let mysql = one(Dialect::Mysql, Param::Text(&s));
            prop_assert_eq!(mysql_unquote(&mysql), s.as_bytes());
            prop_assert_eq!(TextSql::new(Dialect::Mysql, &format!("{mysql}, ?")).placeholders(), 1);
            if !s.contains('\0') {
                let pg = one(Dialect::Postgres, Param::Text(&s));
                prop_assert_eq!(pg_unquote(&pg), s.clone());
                prop_assert_eq!(TextSql::new(Dialect::Postgres, &format!("{pg}, ?")).placeholders(), 1);
            }
        }

        #[test]
        fn floats_round_trip(f in any::<f64>()) {
            prop_assume!(f.is_finite());
            let lit = one(Dialect::Mysql, Param::Float(f));
            let back: f64 = lit.trim_start_matches('(').trim_end_matches(')').parse().unwrap();
            prop_assert_eq!(back.to_bits(), f.to_bits());
        }
    }
}
