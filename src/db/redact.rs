//! Passwords out of everything fairbench shows or keeps: a URL however malformed (for
//! messages about URLs that do not parse), and the process arguments (`ps`, the recorded
//! command line). When unsure it hides more.

use std::ops::Range;

/// Removes the password from a URL-looking string, however malformed (for messages about
/// unparsable URLs and for the recorded command line). When unsure it hides more.
pub fn redact_str(s: &str) -> String {
    match password_span(s) {
        Some(r) => format!("{}***{}", &s[..r.start], &s[r.end..]),
        None => s.to_string(),
    }
}

/// Flags whose value is a password. fairbench takes none (sysbench's are refused), but they
/// still reach `ps` and the recorded command line.
const PASSWORD_FLAGS: [&str; 5] =
    ["--password", "--mysql-password", "--pgsql-password", "--mysql_password", "--pgsql_password"];

/// The process arguments with every password replaced by `***` (see [`arg_password_spans`]).
pub fn redact_args(args: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut args: Vec<String> = args.into_iter().collect();
    for (i, range) in arg_password_spans(&args).into_iter().rev() {
        args[i].replace_range(range, "***");
    }
    args
}

/// Where passwords sit in process arguments, as (argument, byte range): in the value of
/// `--target` and in any argument holding `://` (as [`password_span`] finds them), and the
/// whole value of a password flag (`--password X`, `--password=X`).
pub fn arg_password_spans(args: &[String]) -> Vec<(usize, Range<usize>)> {
    let mut spans = Vec::new();
    for (i, arg) in args.iter().enumerate() {
        let prev = if i == 0 { "" } else { args[i - 1].as_str() };
        let (flag, value, offset) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => (flag, value, flag.len() + 1),
            _ => ("", arg.as_str(), 0),
        };
        if PASSWORD_FLAGS.contains(&prev) || PASSWORD_FLAGS.contains(&flag) {
            if !value.is_empty() {
                spans.push((i, offset..arg.len()));
            }
        } else if prev == "--target" || flag == "--target" || value.contains("://") {
            if let Some(r) = password_span(value) {
                spans.push((i, offset + r.start..offset + r.end));
            }
        }
    }
    spans
}

/// Schemes whose separator, even misspelled (`mysql:/`, `mysql//`, `mysql:`), marks where the
/// user part starts.
const SCHEMES: [&str; 5] = ["mysql", "mariadb", "postgres", "postgresql", "sqlite"];

/// Other databases' and common URL schemes: given by mistake, they are schemes all the same.
const OTHER_SCHEMES: [&str; 10] =
    ["mongodb", "redis", "mssql", "sqlserver", "oracle", "jdbc", "http", "https", "cockroachdb", "tidb"];

/// `mysq`, `postgress`, `mongodb`: a mistyped scheme of ours or another's, not a user name.
fn looks_like_a_scheme(word: &str) -> bool {
    let word = word.to_ascii_lowercase();
    OTHER_SCHEMES.contains(&word.as_str()) || SCHEMES.iter().any(|k| strsim::levenshtein(&word, k) <= 2)
}

/// The bytes of `s` that may be a password: from the first `:` after a known scheme's separator
/// (or the start) to the last `@`, since a raw password may hold `/ ? # @ :`. Without any `@`, a
/// port that is not a number starts one too (a password whose `@host` is missing).
pub fn password_span(s: &str) -> Option<Range<usize>> {
    // The URL parser ignores leading spaces and control characters: so does this.
    let lead = s.len() - s.trim_start_matches(|c: char| c <= ' ').len();
    let body = &s[lead..];
    let scheme_len = if body.starts_with(|c: char| c.is_ascii_alphabetic()) {
        body.find(|c: char| !(c.is_ascii_alphanumeric() || "+.-".contains(c))).unwrap_or(body.len())
    } else {
        0
    };
    let after = &body[scheme_len..];
    let start = if SCHEMES.iter().any(|k| body[..scheme_len].eq_ignore_ascii_case(k)) {
        let colon = usize::from(after.starts_with(':'));
        scheme_len + colon + after[colon..].len() - after[colon..].trim_start_matches('/').len()
    } else if after.starts_with("://") && looks_like_a_scheme(&body[..scheme_len]) {
        // A scheme we do not know but that is one (a typo of ours, another database's):
        // read as a URL, its user stays readable and what follows the user's colon is the
        // password. Anything else before `://` may be a user whose password starts `//`.
        let start = lead + scheme_len + 3;
        let at = start + s[start..].rfind('@')?;
        let colon = start + s[start..at].find(':')? + 1;
        return (colon < at).then_some(colon..at);
    } else {
        // Not a scheme (or none): it may be the user, and the first `:` may already start
        // the password.
        0
    };
    let start = lead + start;
    let tail = &s[start..];
    let span = match tail.rfind('@') {
        Some(at) => start + tail[..at].find(':')? + 1..start + at,
        None => {
            let end = tail.find(['/', '?', '#']).unwrap_or(tail.len());
            let authority = &tail[..end];
            let host_end = if authority.starts_with('[') { authority.find(']').map_or(end, |i| i + 1) } else { 0 };
            let colon = host_end + authority[host_end..].find(':')?;
            let port = &authority[colon + 1..];
            if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            start + colon + 1..s.len()
        }
    };
    (!span.is_empty()).then_some(span)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redact_str_hides_passwords() {
        assert_eq!(redact_str("mysql://u:pw@h:1/db"), "mysql://u:***@h:1/db");
        assert_eq!(redact_str("mysql://u:p@ss@h/db?tls=require"), "mysql://u:***@h/db?tls=require");
        assert_eq!(redact_str("mysql:/u:pw@h/db"), "mysql:/u:***@h/db");
        assert_eq!(redact_str("mysq://u:pw@h/db"), "mysq://u:***@h/db");
        assert_eq!(redact_str("mongodb://alice:p:w@db1:27017/x"), "mongodb://alice:***@db1:27017/x");
        assert_eq!(redact_str("mysq://alice@h/db"), "mysq://alice@h/db");
        // Not a scheme: `user` with a password that starts `//`.
        assert_eq!(redact_str("user://pw@h/db"), "user:***@h/db");
        assert_eq!(redact_str("u:pw@h/db"), "u:***@h/db");
        assert_eq!(redact_str("mysql://u:pw/db"), "mysql://u:***");
        for same in [
            "mysql://u@h/db",
            "mysql://u@h:3306/db",
            "postgres://h:5432/db?tls=require",
            "mysql://u@[::1]:3306/db",
            "mysql://[::1]/db",
            "mysql://u:@h/db",
            "sqlite://fairbench.db",
            "sqlite:///tmp/a:b.db",
            "",
            "--threads=8",
        ] {
            assert_eq!(redact_str(same), same);
        }
    }

    #[test]
    fn redact_args_hides_every_password() {
        let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let given = args(&[
            "fairbench",
            "run",
            "--target",
            "u:pw1@h/db",
            "--target=mysql:/u:pw2@h/db",
            "--out=mysql://u:pw3@h/db",
            "postgres://u:pw4@h/db",
            "--password",
            "pw5",
            "--password=pw6",
            "--mysql-password",
            "pw7",
            "--pgsql-password=pw8",
            "--mysql_password=pw9",
            "--threads=8",
            "--password=",
            "--target",
            "sqlite://bench.db",
        ]);
        let want = args(&[
            "fairbench",
            "run",
            "--target",
            "u:***@h/db",
            "--target=mysql:/u:***@h/db",
            "--out=mysql://u:***@h/db",
            "postgres://u:***@h/db",
            "--password",
            "***",
            "--password=***",
            "--mysql-password",
            "***",
            "--pgsql-password=***",
            "--mysql_password=***",
            "--threads=8",
            "--password=",
            "--target",
            "sqlite://bench.db",
        ]);
        assert_eq!(redact_args(given.clone()), want);
        // The spans name the same bytes: blanking them (as argv does) leaves no password.
        let mut blanked = given.clone();
        for (i, r) in arg_password_spans(&given) {
            blanked[i].replace_range(r.clone(), &"x".repeat(r.len()));
        }
        assert!(blanked.iter().all(|a| !a.contains("pw")), "{blanked:?}");
        assert_eq!(
            blanked.iter().map(String::len).collect::<Vec<_>>(),
            given.iter().map(String::len).collect::<Vec<_>>()
        );
    }
}
