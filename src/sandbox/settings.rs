//! The server settings an engine knows, as its own server program lists them without
//! starting a server: `mariadbd --no-defaults --verbose --help` (every option and variable),
//! `postgres --describe-config` (every setting a configuration file may hold). What `--set`
//! and a study's `set` may name; read afresh each time, never cached.

use super::SandboxError;
use std::collections::BTreeSet;
use std::path::Path;

/// The names an engine's server program knows, written with `_` (MariaDB takes `-` alike).
#[derive(Clone, Debug)]
pub struct KnownSettings {
    /// The command that listed them, as messages name it.
    pub listed_by: String,
    names: BTreeSet<String>,
    syntax: Syntax,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Syntax {
    /// Command-line options: `-` and `_` alike; `loose-` (ignored when unknown), `skip-`,
    /// `enable-`, `disable-` and `maximum-` before a name.
    MariaDb,
    /// A configuration file's names: case-insensitive, `_` only; a dotted name is an
    /// extension's placeholder, which PostgreSQL accepts.
    Postgres,
}

impl KnownSettings {
    /// Whether the server takes `name` as written.
    pub fn knows(&self, name: &str) -> bool {
        let lower = name.to_ascii_lowercase();
        match self.syntax {
            Syntax::Postgres => lower.contains('.') || self.names.contains(&lower),
            Syntax::MariaDb => {
                let n = lower.replace('-', "_");
                if n.starts_with("loose_") {
                    return true;
                }
                let bare = ["skip_", "enable_", "disable_", "maximum_"].iter().find_map(|p| n.strip_prefix(p));
                self.names.contains(&n) || bare.is_some_and(|b| self.names.contains(b))
            }
        }
    }

    /// The known name nearest to `name`, when one is near enough to be a typo of it.
    pub fn nearest(&self, name: &str) -> Option<&str> {
        crate::model::nearest(name, self.names.iter().map(String::as_str))
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// What `mariadbd` knows; `extra` are options that change the list (`--plugin-load-add=...`
/// adds the plugin's own variables).
pub fn mariadb(binary: &Path, extra: &[String]) -> Result<KnownSettings, SandboxError> {
    let mut args = vec!["--no-defaults".to_string()];
    args.extend(extra.iter().cloned());
    args.extend(["--verbose".into(), "--help".into()]);
    let text = listing(binary, &args)?;
    Ok(KnownSettings {
        listed_by: format!("{} {}", binary.display(), args.join(" ")),
        names: mariadb_names(&text),
        syntax: Syntax::MariaDb,
    })
}

/// What `postgres` knows.
pub fn postgres(binary: &Path) -> Result<KnownSettings, SandboxError> {
    let text = listing(binary, &["--describe-config".to_string()])?;
    let names = text.lines().filter_map(|l| l.split('\t').next()).filter(|n| !n.is_empty());
    let names = names.map(str::to_ascii_lowercase).collect();
    Ok(KnownSettings { listed_by: format!("{} --describe-config", binary.display()), names, syntax: Syntax::Postgres })
}

/// The program's standard output; a program that fails or lists nothing has not told.
fn listing(binary: &Path, args: &[String]) -> Result<String, SandboxError> {
    let shown = format!("{} {}", binary.display(), args.join(" "));
    let out = std::process::Command::new(binary)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| SandboxError::Failed(format!("cannot run {shown}: {e}")))?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() || text.trim().is_empty() {
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string();
        return Err(SandboxError::Failed(format!("{shown} listed no settings ({}): {last}", out.status)));
    }
    Ok(text)
}

/// The `--name` of every option line, and every name of the variables table that follows.
fn mariadb_names(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut table = false;
    for line in text.lines() {
        if line.starts_with("----") {
            table = true;
            continue;
        }
        if table {
            match line.split_whitespace().next() {
                Some(name) => names.insert(name.replace('-', "_")),
                None => break,
            };
        } else if line.trim_start().starts_with('-') && line.starts_with("  ") {
            let option = line.split_whitespace().find_map(|w| w.strip_prefix("--"));
            let name = option.map(|o| o.split(['=', '[']).next().unwrap_or(o));
            names.extend(name.filter(|n| !n.is_empty()).map(|n| n.replace('-', "_")));
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    const HELP: &str = "mariadbd  Ver 10.11\nUsage: mariadbd [OPTIONS]\n\n  --allow-suspicious-udfs \n                      Allows use of UDFs\n  -a, --ansi          Use ANSI SQL syntax\n  --innodb-flush-log-at-trx-commit[=#] \n  --log-bin[=name]    Log update queries\n\nVariables (--variable-name=value)\nand boolean options {FALSE|TRUE}  Value (after reading options)\n------------------------------------------------------------ -------------\nsync-binlog                                                  0\nwsrep-on                                                     FALSE\n\nTo see what variables a running server is using, type\n'SELECT * FROM x' instead of 'mysqld --verbose --help'.\n";

    fn mariadb_of(text: &str) -> KnownSettings {
        KnownSettings { listed_by: "mariadbd".into(), names: mariadb_names(text), syntax: Syntax::MariaDb }
    }

    #[test]
    fn mariadb_options_and_variables_are_known_by_either_spelling() {
        let k = mariadb_of(HELP);
        for name in
            ["innodb_flush_log_at_trx_commit", "innodb-flush-log-at-trx-commit", "sync_binlog", "log_bin", "ansi"]
        {
            assert!(k.knows(name), "{name}");
        }
        assert!(k.knows("skip-log-bin") && k.knows("loose_anything") && k.knows("wsrep_on"));
        assert!(!k.knows("innodb_flush_log_at_trx_comit") && !k.knows("to") && !k.knows("select"));
        assert_eq!(k.nearest("innodb_flush_log_at_trx_comit"), Some("innodb_flush_log_at_trx_commit"));
        assert_eq!(k.nearest("max_connections"), None);
    }

    #[test]
    fn postgres_names_are_case_insensitive_and_placeholders_pass() {
        let k = KnownSettings {
            listed_by: "postgres".into(),
            names: ["shared_buffers".to_string(), "fsync".into()].into(),
            syntax: Syntax::Postgres,
        };
        assert!(k.knows("shared_buffers") && k.knows("Shared_Buffers") && k.knows("auto_explain.log_min_duration"));
        assert!(!k.knows("shared-buffers") && !k.knows("shared_bufers"));
        assert_eq!(k.nearest("shared-buffers"), Some("shared_buffers"));
    }
}
