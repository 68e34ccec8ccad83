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
    /// Parses a URL; `env` looks up MYSQL_PWD / PGPASSWORD / PGUSER (injected for tests).
    pub fn parse(s: &str, env: impl Fn(&str) -> Option<String>) -> Result<TargetUrl, String> {
        let bad = |why: &str| format!("invalid --target {:?}: {why}", redact_str(s));
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
        let password = match parsed.password() {
            Some(p) => decode(p),
            None => env(pwd_var).unwrap_or_default(),
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

/// Removes the password from a URL-looking string (for messages about unparsable URLs
/// and for the recorded command line).
pub fn redact_str(s: &str) -> String {
    let Some(scheme_end) = s.find("://") else {
        return s.to_string();
    };
    let rest = &s[scheme_end + 3..];
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    match (authority.rfind('@'), authority.find(':')) {
        (Some(at), Some(colon)) if colon < at => {
            format!("{}{}:***{}", &s[..scheme_end + 3], &authority[..colon], &rest[at..])
        }
        _ => s.to_string(),
    }
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
    }
}
