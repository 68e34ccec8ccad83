//! The tables a statement's SQL names (after FROM, JOIN, INSERT INTO, and a leading UPDATE),
//! so that a statement on a table the file does not declare is an error with its line, not
//! a failure at run time (or a write into a table fairbench did not create).
//!
//! A scanner, not a parser: it skips strings and the FROM of function calls (EXTRACT(x
//! FROM y), TRIM, SUBSTRING) and of `IS [NOT] DISTINCT FROM`, and names a subquery's tables
//! as the statement's; common table expressions (WITH name AS) are not tables.

/// Words after which a parenthesis opens a subquery or a list, not a function's arguments.
const NOT_FUNCTIONS: [&str; 16] = [
    "IN", "EXISTS", "FROM", "JOIN", "AS", "SELECT", "WHERE", "AND", "OR", "NOT", "ON", "VALUES", "ANY", "ALL", "SOME",
    "LATERAL",
];

#[derive(Debug, PartialEq)]
enum Token {
    Word(String),
    Open,
    Close,
    Comma,
    Other,
}

fn tokens(sql: &str) -> Vec<Token> {
    let chars: Vec<char> = sql.chars().collect();
    let (mut out, mut i) = (Vec::new(), 0);
    let word = |c: char| c.is_alphanumeric() || matches!(c, '_' | '$' | '.' | '\u{1}');
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\'' => i = (i + 1..chars.len()).find(|&j| chars[j] == '\'').unwrap_or(chars.len()),
            '`' | '"' => {
                let end = (i + 1..chars.len()).find(|&j| chars[j] == c).unwrap_or(chars.len());
                out.push(Token::Word(chars[i + 1..end].iter().collect()));
                i = end;
            }
            '(' => out.push(Token::Open),
            ')' => out.push(Token::Close),
            ',' => out.push(Token::Comma),
            ':' | '@' | '?' => {
                // A parameter or variable, not a name.
                while i + 1 < chars.len() && word(chars[i + 1]) {
                    i += 1;
                }
                out.push(Token::Other);
            }
            c if word(c) => {
                let start = i;
                while i + 1 < chars.len() && word(chars[i + 1]) {
                    i += 1;
                }
                out.push(Token::Word(chars[start..=i].iter().collect()));
            }
            c if c.is_whitespace() => {}
            _ => out.push(Token::Other),
        }
        i += 1;
    }
    out
}

fn upper(t: Option<&Token>) -> String {
    match t {
        Some(Token::Word(w)) => w.to_ascii_uppercase(),
        _ => String::new(),
    }
}

/// The table names `sql` reads or writes, schema qualifiers dropped, as written.
pub(super) fn referenced(sql: &str) -> Vec<String> {
    let t = tokens(sql);
    let mut out: Vec<String> = Vec::new();
    let mut ctes: Vec<String> = Vec::new();
    // For each open parenthesis: whether it holds a function's arguments.
    let mut calls: Vec<bool> = Vec::new();
    for (i, tok) in t.iter().enumerate() {
        let before = if i > 0 { upper(t.get(i - 1)) } else { String::new() };
        match tok {
            Token::Open => {
                calls.push(i > 0 && matches!(t[i - 1], Token::Word(_)) && !NOT_FUNCTIONS.contains(&before.as_str()))
            }
            Token::Close => drop(calls.pop()),
            Token::Word(w) if calls.last() != Some(&true) => {
                let word = w.to_ascii_uppercase();
                if names_cte(&t, i) {
                    ctes.push(w.to_ascii_lowercase());
                }
                let distinct_from =
                    before == "DISTINCT" && i > 1 && matches!(upper(t.get(i - 2)).as_str(), "IS" | "NOT");
                let introduces = match word.as_str() {
                    "FROM" => !distinct_from,
                    "JOIN" => true,
                    "INTO" => matches!(before.as_str(), "INSERT" | "REPLACE" | "IGNORE"),
                    "UPDATE" => i == 0,
                    _ => false,
                };
                if introduces {
                    out.extend(list_after(&t, i + 1));
                }
            }
            _ => {}
        }
    }
    out.retain(|n| !ctes.contains(&n.to_ascii_lowercase()));
    out.dedup();
    out
}

/// Whether the word at `i` names a common table expression: `name AS (` or, with its
/// columns, `name (a, b) AS (`.
fn names_cte(t: &[Token], i: usize) -> bool {
    let mut after = i + 1;
    if t.get(after) == Some(&Token::Open) {
        let mut depth = 0;
        while let Some(tok) = t.get(after) {
            match tok {
                Token::Open => depth += 1,
                Token::Close => depth -= 1,
                _ => {}
            }
            after += 1;
            if depth == 0 {
                break;
            }
        }
    }
    upper(t.get(after)) == "AS" && t.get(after + 1) == Some(&Token::Open)
}

/// The comma-separated table names from `start` (`a, b AS x, c`), each with its alias skipped.
fn list_after(t: &[Token], start: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = start;
    while let Some(Token::Word(w)) = t.get(i) {
        if ["ONLY", "LATERAL", "SELECT"].contains(&w.to_ascii_uppercase().as_str()) {
            break;
        }
        out.push(w.rsplit('.').next().unwrap_or(w).to_string());
        // An alias (`AS x` or `x`), then a comma for another table.
        i += 1;
        if upper(t.get(i)) == "AS" {
            i += 1;
        }
        if matches!(t.get(i), Some(Token::Word(_))) && t.get(i + 1) == Some(&Token::Comma) {
            i += 1;
        }
        match t.get(i) {
            Some(Token::Comma) => i += 1,
            _ => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::referenced;

    #[test]
    fn names_the_tables_not_functions_strings_or_ctes() {
        let cases: [(&str, &[&str]); 12] = [
            ("SELECT c FROM sbtest\u{1} WHERE id = ?", &["sbtest\u{1}"]),
            ("INSERT INTO history (a) VALUES (:a)", &["history"]),
            ("UPDATE warehouse SET w_ytd = w_ytd + :x WHERE w_id = :w", &["warehouse"]),
            ("DELETE FROM new_order WHERE no_o_id = :o", &["new_order"]),
            ("SELECT a.x, b.y FROM db.a AS a, c cc JOIN b ON a.id = b.id", &["a", "c", "b"]),
            ("SELECT EXTRACT(YEAR FROM o_entry_d), TRIM(BOTH ' ' FROM c_last) FROM orders", &["orders"]),
            ("SELECT 'FROM nowhere' FROM t WHERE x IS DISTINCT FROM y", &["t"]),
            ("SELECT * FROM t WHERE id IN (SELECT id FROM u) FOR UPDATE", &["t", "u"]),
            ("WITH recent AS (SELECT * FROM orders) SELECT * FROM recent", &["orders"]),
            ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 9) SELECT count(*) FROM c", &[]),
            (
                "WITH a (k) AS (SELECT k FROM t1), b AS (SELECT * FROM a) SELECT * FROM b JOIN t2 USING (k)",
                &["t1", "t2"],
            ),
            ("INSERT INTO t (a) VALUES (1) ON DUPLICATE KEY UPDATE a = a + 1", &["t"]),
        ];
        for (sql, want) in cases {
            assert_eq!(referenced(sql), want, "{sql}");
        }
        assert_eq!(referenced("SELECT 1"), Vec::<String>::new());
        assert_eq!(referenced("SELECT `my table`.x FROM `my table`"), ["my table"]);
    }
}
