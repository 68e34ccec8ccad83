//! sysbench's --db-driver and --mysql-* / --pgsql-* options, as one target URL.

use super::{boolean, Line, Refusal};
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

/// sysbench's connection options, resolved into one target URL once the driver is known
/// (sysbench ignores the options of the driver it does not use, wherever they stand).
#[derive(Default)]
pub(super) struct Connection {
    pub driver: Option<String>,
    /// (driver, option without the driver's prefix, value), in order.
    pub options: Vec<(String, String, Option<String>)>,
}

impl Line {
    /// The server, from --db-driver and the --mysql-* / --pgsql-* options.
    pub(super) fn target(&mut self, args: &mut Vec<String>) -> Result<(), Refusal> {
        let given = |d: &str| self.conn.options.iter().any(|(o, _, _)| o == d);
        let driver = match (&self.conn.driver, given("mysql"), given("pgsql")) {
            (Some(d), _, _) => d.clone(),
            (None, false, false) => {
                if !self.target_given() && !self.own_order {
                    self.notes.push(
                        "sysbench would connect to MySQL on localhost as sbtest; fairbench uses --target (default sqlite://fairbench.db): add --db-driver=mysql for sysbench's default"
                            .into(),
                    );
                }
                return Ok(());
            }
            (None, false, true) => {
                return Err("--pgsql-* options without --db-driver=pgsql: sysbench would connect to MySQL and ignore them; add --db-driver=pgsql".into())
            }
            (None, true, _) => "mysql".into(),
        };
        if self.target_given() {
            return Err(
                "give the server either as --target or as sysbench's --db-driver/--mysql-*/--pgsql-* options, not both"
                    .into(),
            );
        }
        let mut field: std::collections::BTreeMap<String, Option<String>> = Default::default();
        for (d, name, value) in std::mem::take(&mut self.conn.options) {
            if d != driver {
                self.ignored.push(format!("--{d}-{name}"));
            } else if name == "ignore-errors" {
                self.flag("ignore-errors", value.as_deref());
            } else if name == "storage-engine" || name == "table-engine" {
                self.flag("mysql-storage-engine", value.as_deref());
            } else {
                field.insert(name, value);
            }
        }
        let get = |k: &str| field.get(k).cloned().flatten();
        let (scheme, default_port) = if driver == "mysql" { ("mysql", "3306") } else { ("postgres", "5432") };
        let host = get("host").unwrap_or_else(|| "localhost".into());
        let port = get("port").unwrap_or_else(|| default_port.into());
        if host.contains(',') || port.contains(',') {
            return Err(format!(
                "several --{driver}-host/--{driver}-port values: fairbench runs against one server; run one fairbench per server"
            ));
        }
        if port.parse::<u16>().is_err() {
            return Err(format!("--{driver}-port={port} is not a port number"));
        }
        const PART: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.');
        let encode = |s: &str| utf8_percent_encode(s, PART).to_string();
        let user = encode(&get("user").unwrap_or_else(|| "sbtest".into()));
        let password = get("password").filter(|p| !p.is_empty()).map(|p| format!(":{}", encode(&p)));
        let db = encode(&get("db").unwrap_or_else(|| "sbtest".into()));
        let mut query = Vec::new();
        let mut socket = get("socket");
        // libmysqlclient reads `localhost` as its default unix socket.
        if driver == "mysql" && host == "localhost" && socket.is_none() {
            socket = DEFAULT_MYSQL_SOCKETS.iter().find(|p| std::path::Path::new(p).exists()).map(|p| p.to_string());
            self.notes.push(match &socket {
                Some(s) => format!(
                    "--mysql-host=localhost means the unix socket {s}, as libmysqlclient reads it (--mysql-host=127.0.0.1 for TCP)"
                ),
                None => "no MySQL unix socket found for localhost: connecting over TCP".into(),
            });
        }
        if let Some(s) = socket {
            query.push(format!("socket={}", encode(&s)));
        }
        if field.contains_key("ssl") && boolean("mysql-ssl", get("ssl").as_deref()).unwrap_or(false) {
            query.push("tls=require".into());
        }
        let query = if query.is_empty() { String::new() } else { format!("?{}", query.join("&")) };
        args.push(format!("--target={scheme}://{user}{}@{host}:{port}/{db}{query}", password.unwrap_or_default()));
        Ok(())
    }
}

/// libmysqlclient's compiled-in socket paths (Debian/Ubuntu first).
const DEFAULT_MYSQL_SOCKETS: [&str; 3] = ["/run/mysqld/mysqld.sock", "/var/run/mysqld/mysqld.sock", "/tmp/mysql.sock"];
