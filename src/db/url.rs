//! Target URLs: `sqlite://PATH`, `mysql://user:pass@host:port/db`, `postgres://...`.
//!
//! The password never leaves this module in printable form: [`TargetUrl::redacted`] is what
//! reports and result files show.

use super::{Dialect, TlsMode, Transport, TransportKind};
use std::fmt;
use std::path::PathBuf;

/// A password that prints as `***`.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn expose(&self) -> &str {
        &self.0
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// A parsed, validated target.
#[derive(Clone, Debug)]
pub struct TargetUrl {
    pub dialect: Dialect,
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: Secret,
    pub database: String,
    pub socket: Option<PathBuf>,
    pub tls: TlsMode,
    pub ca_file: Option<PathBuf>,
    /// SQLite's database file.
    pub path: PathBuf,
    /// SQLite only: PRAGMAs set on every connection (`?synchronous=off&journal_mode=memory`).
    pub pragmas: Vec<(String, String)>,
}

/// PRAGMAs a SQLite URL may set (each is recorded and audited like a server variable).
pub const SQLITE_PRAGMAS: [&str; 6] =
    ["journal_mode", "synchronous", "cache_size", "mmap_size", "temp_store", "locking_mode"];

impl TargetUrl {
    /// Parses a URL; `env` looks up FAIRBENCH_PASSWORD, MYSQL_PWD / PGPASSWORD and PGUSER
    /// (injected for tests and for `--password-file`).
    pub fn parse(s: &str, env: impl Fn(&str) -> Option<String>) -> Result<TargetUrl, String> {
        // The reason may quote a piece of the URL (a query key, a port): scrub the password
        // from it too, raw and percent-decoded.
        let secret = password_span(s).map(|r| s[r].to_string()).filter(|p| !p.is_empty());
        let bad = |why: &str| {
            let mut why = why.to_string();
            if let Some(p) = &secret {
                let decoded = percent_encoding::percent_decode_str(p).decode_utf8_lossy().into_owned();
                why = why.replace(p.as_str(), "***").replace(decoded.as_str(), "***");
            }
            let hint = match &secret {
                Some(p) if p.contains(['/', '?', '#', '@']) => {
                    " (the password holds a raw '/', '?', '#' or '@': percent-encode it, e.g. %2F, or use --password-file)"
                }
                _ => "",
            };
            format!("invalid --target {:?}: {why}{hint}", redact_str(s))
        };
        if let Some(rest) = s.strip_prefix("sqlite://").or_else(|| s.strip_prefix("sqlite:")) {
            let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
            if path.is_empty() {
                return Err(bad("no file: use sqlite://PATH, e.g. sqlite://fairbench.db"));
            }
            let mut pragmas = Vec::new();
            for pair in query.split('&').filter(|p| !p.is_empty()) {
                let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                if !SQLITE_PRAGMAS.contains(&k) {
                    return Err(bad(&format!("unknown SQLite option ?{k}= (known: {})", SQLITE_PRAGMAS.join(", "))));
                }
                if v.is_empty() || !v.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
                    return Err(bad(&format!("?{k}={v} is not a PRAGMA value")));
                }
                pragmas.push((k.to_string(), v.to_string()));
            }
            return Ok(TargetUrl {
                dialect: Dialect::Sqlite,
                host: String::new(),
                port: 0,
                user: String::new(),
                password: Secret::default(),
                database: String::new(),
                socket: None,
                tls: TlsMode::Off,
                ca_file: None,
                path: PathBuf::from(path),
                pragmas,
            });
        }
        let parsed = url::Url::parse(s).map_err(|e| bad(&e.to_string()))?;
        let dialect = match parsed.scheme() {
            "mysql" | "mariadb" => Dialect::Mysql,
            "postgres" | "postgresql" => Dialect::Postgres,
            other => return Err(bad(&format!("unknown scheme {other:?}: use sqlite://, mysql:// or postgres://"))),
        };
        let decode = |v: &str| percent_encoding::percent_decode_str(v).decode_utf8_lossy().into_owned();
        let (default_port, default_user, pwd_var) = match dialect {
            Dialect::Mysql => (3306, "root".to_string(), "MYSQL_PWD"),
            _ => (5432, env("PGUSER").unwrap_or_else(|| "postgres".into()), "PGPASSWORD"),
        };
        let user = if parsed.username().is_empty() { default_user } else { decode(parsed.username()) };
        // The URL's own password, else FAIRBENCH_PASSWORD (or --password-file, which the
        // caller passes under that name), else the client's usual variable.
        let password = match parsed.password() {
            Some(p) => decode(p),
            None => env("FAIRBENCH_PASSWORD").or_else(|| env(pwd_var)).unwrap_or_default(),
        };
        let database = decode(parsed.path().trim_start_matches('/'));
        if database.is_empty() {
            return Err(bad("no database: add /DBNAME, e.g. mysql://root@127.0.0.1:3306/sbtest"));
        }
        if database.contains('/') {
            return Err(bad("the database name cannot contain '/'"));
        }
        let mut target = TargetUrl {
            dialect,
            host: parsed.host_str().unwrap_or("127.0.0.1").trim_matches(['[', ']']).to_string(),
            port: parsed.port().unwrap_or(default_port),
            user,
            password: Secret(password),
            database,
            socket: None,
            tls: TlsMode::Off,
            ca_file: None,
            path: PathBuf::new(),
            pragmas: Vec::new(),
        };
        if target.host.is_empty() {
            target.host = "127.0.0.1".into();
        }
        for (key, value) in parsed.query_pairs() {
            match &*key {
                "socket" => target.socket = Some(PathBuf::from(&*value)),
                "tls" | "ssl" | "sslmode" => {
                    target.tls = match &*value {
                        "off" | "disable" | "false" => TlsMode::Off,
                        "require" | "required" | "on" | "true" => TlsMode::Require,
                        "verify" | "verify-full" | "verify_identity" => TlsMode::Verify,
                        v => return Err(bad(&format!("tls={v}: use tls=require or tls=verify"))),
                    }
                }
                "ca" | "sslrootcert" => target.ca_file = Some(PathBuf::from(&*value)),
                k => return Err(bad(&format!("unknown option ?{k}= (known: socket, tls, ca)"))),
            }
        }
        if target.socket.is_some() && target.tls != TlsMode::Off {
            return Err(bad("TLS over a Unix socket is not supported: drop ?tls or ?socket"));
        }
        if target.ca_file.is_some() && target.tls == TlsMode::Off {
            target.tls = TlsMode::Verify;
        }
        Ok(target)
    }

    /// TCP or socket, as a client/server target reaches its server.
    pub fn network_transport(&self) -> Transport {
        match &self.socket {
            Some(s) => Transport { kind: TransportKind::Socket, address: s.display().to_string(), tls: TlsMode::Off },
            None => {
                Transport { kind: TransportKind::Tcp, address: format!("{}:{}", self.host, self.port), tls: self.tls }
            }
        }
    }

    /// The URL as reports show it: password replaced by `***`.
    pub fn redacted(&self) -> String {
        match self.dialect {
            Dialect::Sqlite => {
                let q: Vec<String> = self.pragmas.iter().map(|(k, v)| format!("{k}={v}")).collect();
                let q = if q.is_empty() { String::new() } else { format!("?{}", q.join("&")) };
                format!("sqlite://{}{q}", self.path.display())
            }
            d => {
                let pw = if self.password.is_empty() { "" } else { ":***" };
                let mut s = format!("{}://{}{pw}@{}:{}/{}", d.name(), self.user, self.host, self.port, self.database);
                let mut q = Vec::new();
                if let Some(sock) = &self.socket {
                    q.push(format!("socket={}", sock.display()));
                }
                if self.tls != TlsMode::Off {
                    q.push(format!("tls={}", self.tls.name()));
                }
                if let Some(ca) = &self.ca_file {
                    q.push(format!("ca={}", ca.display()));
                }
                if !q.is_empty() {
                    s.push('?');
                    s.push_str(&q.join("&"));
                }
                s
            }
        }
    }
}

/// Where the password is in a URL-looking string, however malformed: between the first `:`
/// of the userinfo and the LAST `@` (a password may hold raw `/ ? # @`). A scheme with
/// slashes (`mysql://`, or the typo `mysql:/`) is skipped first; without them the first `:`
/// starts the password (`user:pw@host`, `mysql:u:pw@h`), which may hide more than the
/// password but never less. None when there is no `@` or no `:` before it, or it is empty.
pub fn password_span(s: &str) -> Option<std::ops::Range<usize>> {
    let at = s.rfind('@')?;
    let head = &s[..at];
    let colon = head.find(':')?;
    let scheme = &head[..colon];
    let after = &head[colon + 1..];
    let slashes = after.len() - after.trim_start_matches('/').len();
    let scheme_like = !scheme.is_empty() && scheme.bytes().all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b));
    let user_start = colon + 1 + slashes;
    // After `scheme://`, the userinfo's own colon; without one, what looked like a scheme
    // was the user (`bob:/pw@h`), so everything after the first colon goes.
    let known = ["mysql", "mariadb", "postgres", "postgresql", "sqlite"].contains(&scheme);
    let start = match head[user_start..].find(':') {
        Some(c) if scheme_like && slashes > 0 => user_start + c + 1,
        None if known && slashes > 0 => return None, // `mysql://user@host`: no password
        _ => colon + 1,
    };
    (start < at).then_some(start..at)
}

/// Removes the password from a URL-looking string (for messages about unparsable URLs).
pub fn redact_str(s: &str) -> String {
    match password_span(s) {
        Some(r) => format!("{}***{}", &s[..r.start], &s[r.end..]),
        None => s.to_string(),
    }
}

/// Where the password is in one command-line argument: a URL's password, also after
/// `--target=`.
pub fn argument_password_span(arg: &str) -> Option<std::ops::Range<usize>> {
    let value_at = match arg.strip_prefix("--") {
        Some(flag) => flag.find('=').map(|i| i + 3).unwrap_or(0),
        None => 0,
    };
    password_span(&arg[value_at..]).map(|r| r.start + value_at..r.end + value_at)
}

/// The process arguments with every password replaced by `***`, as result files record them.
pub fn redact_args(args: impl IntoIterator<Item = String>) -> Vec<String> {
    args.into_iter()
        .map(|a| match argument_password_span(&a) {
            Some(r) => format!("{}***{}", &a[..r.start], &a[r.end..]),
            None => a,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn mysql_url_with_password_is_redacted() {
        let t = TargetUrl::parse("mysql://bob:s3cret@db.example:3307/shop", no_env).unwrap();
        assert_eq!(t.dialect, Dialect::Mysql);
        assert_eq!((t.host.as_str(), t.port, t.user.as_str()), ("db.example", 3307, "bob"));
        assert_eq!(t.password.expose(), "s3cret");
        assert!(!t.redacted().contains("s3cret"));
        assert!(!format!("{t:?}").contains("s3cret"));
    }

    #[test]
    fn password_from_environment() {
        let env = |k: &str| (k == "PGPASSWORD").then(|| "pw".to_string());
        let t = TargetUrl::parse("postgresql://u@h/db", env).unwrap();
        assert_eq!(t.password.expose(), "pw");
        assert_eq!(t.port, 5432);
    }

    #[test]
    fn sqlite_default_and_errors() {
        let t = TargetUrl::parse("sqlite://fairbench.db", no_env).unwrap();
        assert_eq!(t.path, PathBuf::from("fairbench.db"));
        let t = TargetUrl::parse("sqlite://x.db?synchronous=off&journal_mode=memory", no_env).unwrap();
        assert_eq!(t.pragmas.len(), 2);
        assert!(TargetUrl::parse("sqlite://x.db?evil=1", no_env).is_err());
        assert!(TargetUrl::parse("sqlite://x.db?synchronous=off;drop", no_env).is_err());
        assert!(TargetUrl::parse("mongodb://x/y", no_env).unwrap_err().contains("unknown scheme"));
        assert!(TargetUrl::parse("mysql://h:3306", no_env).unwrap_err().contains("no database"));
        assert!(TargetUrl::parse("mysql://h/db?tls=maybe", no_env).is_err());
        let e = TargetUrl::parse("mysql://a:pw@h:notaport/db", no_env).unwrap_err();
        assert!(!e.contains("pw@"), "{e}");
    }

    #[test]
    fn socket_and_tls_options() {
        let t = TargetUrl::parse("mysql://root@localhost/db?socket=/run/mysqld/mysqld.sock", no_env).unwrap();
        assert_eq!(t.socket, Some(PathBuf::from("/run/mysqld/mysqld.sock")));
        let t = TargetUrl::parse("postgres://u@h/db?tls=require", no_env).unwrap();
        assert_eq!(t.tls, TlsMode::Require);
    }

    #[test]
    fn redact_str_hides_passwords() {
        assert_eq!(redact_str("mysql://u:pw@h:1/db"), "mysql://u:***@h:1/db");
        assert_eq!(redact_str("mysql://u@h/db"), "mysql://u@h/db");
        assert_eq!(redact_str("mysql://h:3306/db"), "mysql://h:3306/db");
        assert_eq!(redact_str("sqlite://x.db"), "sqlite://x.db");
        assert_eq!(redact_str("mysql://u:p@ss@h/db"), "mysql://u:***@h/db");
    }

    /// Hostile and mistyped URLs: the password never shows, in the error or the redaction.
    #[test]
    fn malformed_urls_never_show_the_password() {
        let cases = [
            "mysql://root:pa/ss9Z@h/db",
            "mysql://root:p?ss9Z@h/db",
            "mysql://root:p#ss9Z@h/db",
            "mysql://root:p@ss9Z@h/db",
            "mysql://root:pss9Z@@h/db",
            "mysql://root:p%ss9Z@h/db",
            "mysql://root:pss9Z@h:notaport/db",
            "mysql://root:pss9Z@h:99999/db",
            "mysql:/root:pss9Z@h/db",
            "mysql//root:pss9Z@h/db",
            "mysq://root:pss9Z@h/db",
            "mongodb://root:pss9Z@h/db",
            "root:pss9Z@h/db",
            "mysql:root:pss9Z@h/db",
            "postgres://root:pss9Z@[::1/db",
            "postgres://root:pss9Z@h/db?tls=maybe",
            "postgres://root:pss9Z@h/db?evil=1",
            "mysql://root:pss9Z@h",
            "mysql://root:pss9Z@h/a/b",
            "mysql://:pss9Z@h/db/",
        ];
        for url in cases {
            let err = TargetUrl::parse(url, no_env).err().unwrap_or_default();
            assert!(!err.contains("ss9Z"), "{url}: {err}");
            assert!(!redact_str(url).contains("ss9Z"), "{url}: {}", redact_str(url));
            assert!(!redact_args([url.to_string()]).concat().contains("ss9Z"), "{url}");
            assert!(!redact_args([format!("--target={url}")]).concat().contains("ss9Z"), "{url}");
            if let Ok(t) = TargetUrl::parse(url, no_env) {
                assert!(!t.redacted().contains("ss9Z") && !format!("{t:?}").contains("ss9Z"), "{url}");
            }
        }
    }

    #[test]
    fn redact_args_keeps_everything_but_passwords() {
        let args = ["fairbench", "run", "--target", "mysql://u:pw@h/db", "--target=postgres://u:x@h/d", "--threads=4"];
        let got = redact_args(args.iter().map(|s| s.to_string()));
        assert_eq!(
            got,
            ["fairbench", "run", "--target", "mysql://u:***@h/db", "--target=postgres://u:***@h/d", "--threads=4"]
        );
    }

    #[test]
    fn password_precedence() {
        let env = |k: &str| match k {
            "FAIRBENCH_PASSWORD" => Some("fb".to_string()),
            "MYSQL_PWD" => Some("my".to_string()),
            _ => None,
        };
        assert_eq!(TargetUrl::parse("mysql://u:url@h/db", env).unwrap().password.expose(), "url");
        assert_eq!(TargetUrl::parse("mysql://u@h/db", env).unwrap().password.expose(), "fb");
        let only_mysql = |k: &str| (k == "MYSQL_PWD").then(|| "my".to_string());
        assert_eq!(TargetUrl::parse("mysql://u@h/db", only_mysql).unwrap().password.expose(), "my");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 3000, failure_persistence: None, ..Default::default() })]

        /// Any printable password, in good and broken URLs: never in an error, a redaction
        /// or a parsed target's Debug.
        #[test]
        fn no_password_escapes(pw in "[!-~]{4,20}", broken in 0usize..6) {
            let prefix = ["mysql://", "mysql:/", "mysql//", "mysq://", "", "postgres://"][broken];
            let url = format!("{prefix}bob:{pw}@db.example:3306/shop");
            // Only meaningful when the password is not also a piece of the rest of the URL.
            proptest::prop_assume!(!format!("{prefix}bob:@db.example:3306/shop").contains(&pw));
            let err = TargetUrl::parse(&url, no_env).err().unwrap_or_default();
            proptest::prop_assert!(!err.contains(&pw), "{}", err);
            proptest::prop_assert!(!redact_str(&url).contains(&pw));
            if let Ok(t) = TargetUrl::parse(&url, no_env) {
                let shown = format!("{} {:?}", t.redacted(), t);
                proptest::prop_assert!(!shown.contains(&pw));
            }
        }
    }
}
