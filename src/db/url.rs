//! Target URLs: `sqlite://PATH`, `mysql://user:pass@host:port/db`, `postgres://...`.
//!
//! The password never leaves this module in printable form: [`TargetUrl::redacted`] is what
//! reports and result files show.

use super::redact::{password_span, redact_str};
use super::{Dialect, TlsMode, Transport, TransportKind, UrlError};
use std::fmt;
use std::path::{Path, PathBuf};

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

const UNCLEAR_PASSWORD: &str = "cannot tell where the password ends: write scheme://user:password@host:port/db, \
percent-encode / ? # @ inside the password and any @ after the host (%2F %3F %23 %40), or give the password with \
--password-file or FAIRBENCH_PASSWORD";

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

/// `s` is not a target URL, and why (the URL as shown has no password).
fn invalid(s: &str, why: &str) -> UrlError {
    UrlError::Invalid { url: redact_str(s), why: why.to_string() }
}

impl TargetUrl {
    /// Parses a URL; `env` looks up FAIRBENCH_PASSWORD / MYSQL_PWD / PGPASSWORD / PGUSER
    /// (injected for tests).
    pub fn parse(s: &str, env: impl Fn(&str) -> Option<String>) -> Result<TargetUrl, UrlError> {
        Self::parse_with_password_file(s, None, env)
    }

    /// The nodes of one replicated database: every URL parsed as
    /// [`TargetUrl::parse_with_password_file`] with the process's environment, all of one kind.
    pub fn parse_nodes(raw: &[String], password_file: Option<&Path>) -> Result<Vec<TargetUrl>, UrlError> {
        let parse = |u: &String| Self::parse_with_password_file(u, password_file, |k| std::env::var(k).ok());
        let urls = raw.iter().map(parse).collect::<Result<Vec<_>, _>>()?;
        match urls.iter().all(|u| u.dialect == urls[0].dialect) {
            true => Ok(urls),
            false => Err(UrlError::MixedNodes),
        }
    }

    /// Parses a URL. The password is the URL's, else the first line of `password_file`, else
    /// FAIRBENCH_PASSWORD, else MYSQL_PWD (mysql://) or PGPASSWORD (postgres://). A file that
    /// is given must be readable and hold a password, whatever the URL says.
    pub fn parse_with_password_file(
        s: &str,
        password_file: Option<&Path>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<TargetUrl, UrlError> {
        let from_file = password_file.map(read_password_file).transpose()?;
        let bad = |why: &str| invalid(s, why);
        if let Some(rest) = s.strip_prefix("sqlite://").or_else(|| s.strip_prefix("sqlite:")) {
            // The errors below echo parts of the path: none may be a password.
            if s.contains('@') && password_span(s).is_some() {
                return Err(bad("a SQLite target has no user or password: use sqlite://PATH"));
            }
            return Self::sqlite(s, rest);
        }
        let parsed = url::Url::parse(s).map_err(|e| bad(&e.to_string()))?;
        let dialect = match parsed.scheme() {
            "mysql" | "mariadb" => Dialect::Mysql,
            "postgres" | "postgresql" => Dialect::Postgres,
            other => return Err(bad(&format!("unknown scheme {other:?}: use sqlite://, mysql:// or postgres://"))),
        };
        let decode = |v: &str| percent_encoding::percent_decode_str(v).decode_utf8_lossy().into_owned();
        // Where the URL parser's password differs from the widest reading, the password holds
        // a raw delimiter (or the URL is mistyped) and is partly in the host, path or query,
        // which messages and reports show: refuse rather than guess.
        let widest = password_span(s).map(|r| decode(&s[r]));
        if parsed.password().map(decode).filter(|p| !p.is_empty()) != widest {
            return Err(bad(UNCLEAR_PASSWORD));
        }
        let (default_port, default_user, pwd_var) = match dialect {
            Dialect::Mysql => (3306, "root".to_string(), "MYSQL_PWD"),
            _ => (5432, env("PGUSER").unwrap_or_else(|| "postgres".into()), "PGPASSWORD"),
        };
        let user = if parsed.username().is_empty() { default_user } else { decode(parsed.username()) };
        let given = |v: Option<String>| v.filter(|p| !p.is_empty());
        let password = given(parsed.password().map(decode))
            .or(from_file)
            .or_else(|| given(env("FAIRBENCH_PASSWORD")))
            .or_else(|| given(env(pwd_var)))
            .unwrap_or_default();
        let database = decode(parsed.path().trim_start_matches('/'));
        if database.is_empty() {
            return Err(bad("no database: add /DBNAME, e.g. mysql://root@127.0.0.1:3306/sbtest"));
        }
        if database.contains('/') {
            return Err(bad("the database name cannot contain '/'"));
        }
        let host = parsed.host_str().unwrap_or_default().trim_matches(['[', ']']);
        let mut target = TargetUrl {
            dialect,
            host: if host.is_empty() { "127.0.0.1".into() } else { host.to_string() },
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
        target.apply_options(s, &parsed)?;
        Ok(target)
    }

    /// `sqlite://PATH?pragma=value&...`, `rest` after the scheme.
    fn sqlite(s: &str, rest: &str) -> Result<TargetUrl, UrlError> {
        let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
        if path.is_empty() {
            return Err(invalid(s, "no file: use sqlite://PATH, e.g. sqlite://fairbench.db"));
        }
        let mut pragmas = Vec::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            if !SQLITE_PRAGMAS.contains(&k) {
                return Err(invalid(s, &format!("unknown SQLite option ?{k}= (known: {})", SQLITE_PRAGMAS.join(", "))));
            }
            if v.is_empty() || !v.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
                return Err(invalid(s, &format!("?{k}={v} is not a PRAGMA value")));
            }
            pragmas.push((k.to_string(), v.to_string()));
        }
        Ok(TargetUrl {
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
        })
    }

    /// A server URL's `?socket=`, `?tls=` and `?ca=`.
    fn apply_options(&mut self, s: &str, parsed: &url::Url) -> Result<(), UrlError> {
        for (key, value) in parsed.query_pairs() {
            match &*key {
                "socket" => self.socket = Some(PathBuf::from(&*value)),
                "tls" | "ssl" | "sslmode" => {
                    self.tls = match &*value {
                        "off" | "disable" | "disabled" | "false" => TlsMode::Off,
                        "prefer" | "preferred" => TlsMode::Prefer,
                        "require" | "required" | "on" | "true" => TlsMode::Require,
                        "verify" | "verify-full" | "verify_identity" => TlsMode::Verify,
                        v => {
                            let known = "use tls=off, tls=prefer, tls=require or tls=verify";
                            return Err(invalid(s, &format!("tls={v}: {known}")));
                        }
                    }
                }
                "ca" | "sslrootcert" => self.ca_file = Some(PathBuf::from(&*value)),
                k => return Err(invalid(s, &format!("unknown option ?{k}= (known: socket, tls, ca)"))),
            }
        }
        // As libpq: a Unix socket is never encrypted, and `prefer` then means plaintext.
        if self.socket.is_some() && self.tls == TlsMode::Prefer {
            self.tls = TlsMode::Off;
        }
        if self.socket.is_some() && self.tls != TlsMode::Off {
            return Err(invalid(s, "TLS over a Unix socket is not supported: drop ?tls or ?socket"));
        }
        if self.ca_file.is_some() && self.tls == TlsMode::Off {
            self.tls = TlsMode::Verify;
        }
        Ok(())
    }

    /// An embedded database: a file on this machine, no server other hosts could reach.
    pub fn embedded(&self) -> bool {
        self.dialect == Dialect::Sqlite
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

/// The first line of a password file, without its line ending.
fn read_password_file(path: &Path) -> Result<String, UrlError> {
    use std::io::Read;
    let mut bytes = Vec::new();
    // A bound, in case the path names a device or a huge file by mistake.
    std::fs::File::open(path)
        .and_then(|f| f.take(64 * 1024).read_to_end(&mut bytes))
        .map_err(|e| UrlError::PasswordFileUnreadable { path: path.display().to_string(), why: e.to_string() })?;
    let text = String::from_utf8(bytes).map_err(|_| UrlError::PasswordFileNotText(path.display().to_string()))?;
    let line = text.split('\n').next().unwrap_or_default();
    let line = line.strip_suffix('\r').unwrap_or(line);
    if line.is_empty() {
        return Err(UrlError::PasswordFileEmpty(path.display().to_string()));
    }
    Ok(line.to_string())
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
    fn password_precedence_url_file_fairbench_then_client_variable() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pw");
        std::fs::write(&file, "from-file\r\nsecond line\n").unwrap();
        let all = |k: &str| match k {
            "FAIRBENCH_PASSWORD" => Some("from-fairbench".to_string()),
            "MYSQL_PWD" | "PGPASSWORD" => Some("from-client".to_string()),
            _ => None,
        };
        let no_fairbench = |k: &str| all(k).filter(|_| k != "FAIRBENCH_PASSWORD");
        let pw = |url: &str, file: Option<&Path>, env: &dyn Fn(&str) -> Option<String>| {
            TargetUrl::parse_with_password_file(url, file, env).unwrap().password.expose().to_string()
        };
        assert_eq!(pw("mysql://u:from-url@h/db", Some(&file), &all), "from-url");
        assert_eq!(pw("mysql://u@h/db", Some(&file), &all), "from-file");
        assert_eq!(pw("mysql://u:@h/db", Some(&file), &all), "from-file");
        assert_eq!(pw("mysql://u@h/db", None, &all), "from-fairbench");
        assert_eq!(pw("postgres://u@h/db", None, &no_fairbench), "from-client");
        assert_eq!(pw("mysql://u@h/db", None, &|k: &str| (k == "FAIRBENCH_PASSWORD").then(String::new)), "");
        // MYSQL_PWD belongs to mysql://, PGPASSWORD to postgres://.
        let pg_only = |k: &str| (k == "PGPASSWORD").then(|| "pg".to_string());
        assert_eq!(pw("mysql://u@h/db", None, &pg_only), "");
        std::fs::write(&file, "unix-ending\n").unwrap();
        assert_eq!(pw("mysql://u@h/db", Some(&file), &no_env), "unix-ending");
        std::fs::write(&file, "no-ending").unwrap();
        assert_eq!(pw("mysql://u@h/db", Some(&file), &no_env), "no-ending");
    }

    #[test]
    fn a_bad_password_file_is_one_clear_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let parse = |file: &Path| TargetUrl::parse_with_password_file("mysql://u@h/db", Some(file), no_env);
        let missing = dir.path().join("missing");
        let e = parse(&missing).unwrap_err().to_string();
        assert!(e.contains(&format!("cannot read --password-file {}", missing.display())), "{e}");
        let empty = dir.path().join("empty");
        for content in ["", "\n", "\r\nsecret"] {
            std::fs::write(&empty, content).unwrap();
            let e = parse(&empty).unwrap_err().to_string();
            assert!(
                e.contains(&format!("--password-file {} is empty", empty.display())) && !e.contains("secret"),
                "{e}"
            );
        }
        let e = parse(dir.path()).unwrap_err().to_string();
        assert!(e.contains("cannot read --password-file"), "{e}");
        // Checked even when the URL holds the password: a broken flag is never silently ignored.
        assert!(TargetUrl::parse_with_password_file("mysql://u:pw@h/db", Some(&missing), no_env).is_err());
        assert!(!e.contains('\n'));
    }

    #[test]
    fn sqlite_default_and_errors() {
        let t = TargetUrl::parse("sqlite://fairbench.db", no_env).unwrap();
        assert_eq!(t.path, PathBuf::from("fairbench.db"));
        let t = TargetUrl::parse("sqlite://x.db?synchronous=off&journal_mode=memory", no_env).unwrap();
        assert_eq!(t.pragmas.len(), 2);
        assert_eq!(TargetUrl::parse("sqlite://run:1.db", no_env).unwrap().path, PathBuf::from("run:1.db"));
        assert!(TargetUrl::parse("sqlite://x.db?evil=1", no_env).is_err());
        assert!(TargetUrl::parse("sqlite://x.db?synchronous=off;drop", no_env).is_err());
        assert!(TargetUrl::parse("mongodb://x/y", no_env).unwrap_err().to_string().contains("unknown scheme"));
        assert!(TargetUrl::parse("mysql://h:3306", no_env).unwrap_err().to_string().contains("no database"));
        assert!(TargetUrl::parse("mysql://h/db?tls=maybe", no_env).is_err());
        let e = TargetUrl::parse("mysql://a:pw@h:notaport/db", no_env).unwrap_err().to_string();
        assert!(!e.contains("pw@"), "{e}");
    }

    #[test]
    fn socket_and_tls_options() {
        let t = TargetUrl::parse("mysql://root@localhost/db?socket=/run/mysqld/mysqld.sock", no_env).unwrap();
        assert_eq!(t.socket, Some(PathBuf::from("/run/mysqld/mysqld.sock")));
        let t = TargetUrl::parse("postgres://u@h/db?tls=require", no_env).unwrap();
        assert_eq!(t.tls, TlsMode::Require);
        for prefer in ["tls=prefer", "sslmode=prefer", "tls=preferred"] {
            let t = TargetUrl::parse(&format!("postgres://u@h/db?{prefer}"), no_env).unwrap();
            assert_eq!(t.tls, TlsMode::Prefer, "{prefer}");
        }
        assert_eq!(TargetUrl::parse("postgres://u@h/db", no_env).unwrap().tls, TlsMode::Off, "the default");
        let t = TargetUrl::parse("postgres://u@h/db?socket=/run/postgresql&tls=prefer", no_env).unwrap();
        assert_eq!(t.tls, TlsMode::Off, "a socket is never encrypted: prefer is plaintext there");
        let e = TargetUrl::parse("mysql://h/db?tls=maybe", no_env).unwrap_err().to_string();
        assert!(e.contains("tls=prefer"), "{e}");
    }

    /// Each holds the password `Se...cr3t` somewhere a naive redactor misses it.
    const HOSTILE: [&str; 20] = [
        "mysql://root:Se/cr3t@h/db",
        "mysql://root:Se?cr3t@h/db",
        "mysql://u:Se#cr3t@h/db",
        "mysql://u:Se/c?r#@cr3t@h/db",
        "mysql:/u:Secr3t@h/db",
        "mysql//u:Secr3t@h/db",
        "mysq://u:Secr3t@h/db",
        "u:Secr3t@h/db",
        "mysql:u:Secr3t@h/db",
        "mysql::Secr3t@h/db",
        "mysql:///u:Secr3t@h/db",
        " mysql://u:Se/cr3t@h/db",
        "postgres://u:Se/cr?3t#x@h:5432/db?tls=require",
        "mysql://u:Secr3t@h:notaport/db",
        "mysql://u:Secr3t/db",
        "mysql://u:1?Secr3t@h:3306/db",
        "mysql://u:x@12/Secr3t@h/db",
        "mysql://u:1?Secr3t=1@h:3306/db",
        "sqlite://u:Se?cr3t@h/db",
        "mysql://u:Secr3t@[::1/db",
    ];

    #[test]
    fn hostile_urls_are_refused_without_the_password() {
        for url in HOSTILE {
            let e = TargetUrl::parse(url, no_env).expect_err(url).to_string();
            let r = redact_str(url);
            for shown in [&e, &r] {
                assert!(!shown.contains("cr3t") && !shown.contains("Se/") && !shown.contains("Se?"), "{url}: {shown}");
            }
            assert!(e.starts_with("invalid --target"), "{e}");
        }
    }

    #[test]
    fn raw_delimiters_the_parser_agrees_on_are_accepted() {
        for (url, pw) in [
            ("mysql://u:Se@cr3t@h/db", "Se@cr3t"),
            ("mysql://u:Se:cr3t@h:3306/db", "Se:cr3t"),
            ("MYSQL://u:Secr3t@h/db", "Secr3t"),
            ("mysql://me@corp:Secr3t@h/db", "Secr3t"),
            ("mysql://u:Se%2Fcr3t@h/db", "Se/cr3t"),
            ("postgres://u:50%off@h/db", "50%off"),
        ] {
            let t = TargetUrl::parse(url, no_env).unwrap_or_else(|e| panic!("{url}: {e}"));
            assert_eq!(t.password.expose(), pw, "{url}");
            assert_eq!((t.host.as_str(), t.database.as_str()), ("h", "db"), "{url}");
            for shown in [redact_str(url), t.redacted(), format!("{t:?}")] {
                assert!(!shown.contains("cr3t") && !shown.contains("off"), "{url}: {shown}");
            }
        }
    }

    #[test]
    fn an_at_sign_after_the_host_is_refused_only_with_a_colon_before_it() {
        assert!(TargetUrl::parse("mysql://u@h/db?ca=/x@y.pem", no_env).is_ok());
        let e = TargetUrl::parse("mysql://u@h:3306/db?ca=/x@y.pem", no_env).unwrap_err().to_string();
        assert!(e.contains("%40"), "{e}");
        assert!(TargetUrl::parse("mysql://u@h:3306/db?ca=/x%40y.pem", no_env).is_ok());
    }

    proptest::proptest! {
        /// Passwords of any printable characters (delimiters often), in good and mistyped URLs. Each holds a `~`,
        /// which no message, URL template or field name does: finding it is a leak, not chance.
        #[test]
        fn no_password_ever_shows(a in "([ -~é€]|[/?#@:%]){0,12}", b in "([ -~é€]|[/?#@:%]){3,12}") {
            let pw = format!("{a}~{b}");
            let escaped = pw.escape_debug().to_string();
            for url in [
                format!("mysql://user:{pw}@host:3306/db"),
                format!("postgres://user:{pw}@host/db?tls=require"),
                format!("mysql:/user:{pw}@host:3306/db"),
                format!("mysql//user:{pw}@host:3306/db"),
                format!("mysq://user:{pw}@host:3306/db"),
                format!("user:{pw}@host:3306/db"),
            ] {
                let mut shown = vec![redact_str(&url)];
                match TargetUrl::parse(&url, no_env) {
                    Ok(t) => {
                        let decoded = percent_encoding::percent_decode_str(&pw).decode_utf8_lossy();
                        proptest::prop_assert_eq!(t.password.expose(), decoded);
                        proptest::prop_assert_eq!((t.host.as_str(), t.database.as_str()), ("host", "db"));
                        shown.push(t.redacted());
                        shown.push(format!("{t:?}"));
                    }
                    Err(e) => shown.push(e.to_string()),
                }
                for s in shown {
                    proptest::prop_assert!(!s.contains(&pw) && !s.contains(&escaped), "{} shows {}", url, s);
                }
            }
        }
    }
}
