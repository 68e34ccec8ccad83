//! Opening a PostgreSQL connection: plain TCP and Unix sockets through the lean client
//! (pg_wire), which bounds every message by `--max-packet` and refuses a cleartext password
//! over TCP unless allowed; TLS through tokio-postgres, its decrypted bytes through the
//! frame guard.

use super::frame_guard::{FrameVerdict, GuardedTls};
use super::tls_conn::{error_given, TlsConn};
use super::{Inner, PostgresDatabase};
use crate::db::pg_wire::{Credentials, PgConn};
use crate::db::{DbError, ErrorCode, TargetUrl};
use std::path::PathBuf;
use tokio::net::{TcpStream, UnixStream};
use tokio_postgres::tls::MakeTlsConnect;

impl PostgresDatabase {
    /// A logged-in connection: the lean client, or tokio-postgres for TLS (its connection
    /// task on the local task set).
    pub(super) async fn connect_inner(&self) -> Result<Inner, DbError> {
        let t = &self.target;
        let lost = |e: std::io::Error| DbError::lost(format!("connection lost: {e}"));
        let text = !self.options.prepared_statements;
        let max = self.options.max_packet;
        let password = t.password.expose();
        if let Some(path) = &t.socket {
            let stream = UnixStream::connect(socket_file(path, t.port)).await.map_err(lost)?;
            let who = Credentials { user: &t.user, password, cleartext_ok: true };
            return PgConn::connect(stream, &who, &t.database, max, text).await.map(Inner::Unix);
        }
        let stream = TcpStream::connect((t.host.as_str(), t.port)).await.map_err(lost)?;
        let _ = stream.set_nodelay(true);
        let Some(tls) = &self.tls else {
            let who = Credentials { user: &t.user, password, cleartext_ok: self.options.allow_cleartext_password };
            return PgConn::connect(stream, &who, &t.database, max, text).await.map(Inner::Tcp);
        };
        let verdict = FrameVerdict::default();
        let mut make = tokio_postgres_rustls::MakeRustlsConnect::new(tls.clone());
        let tls =
            MakeTlsConnect::<TcpStream>::make_tls_connect(&mut make, &t.host).unwrap_or_else(|never| match never {});
        let guarded = GuardedTls { tls, max_message: max, verdict: verdict.clone() };
        let (client, conn) = self.config.connect_raw(stream, guarded).await.map_err(|e| error_given(&verdict, e))?;
        tokio::task::spawn_local(async move {
            let _ = conn.await;
        });
        Ok(Inner::Tls(Box::new(TlsConn::new(client, verdict, text))))
    }
}

/// The socket file of `path` (libpq takes the socket's directory; the file is accepted too).
fn socket_file(path: &std::path::Path, port: u16) -> PathBuf {
    if path.file_name().is_some_and(|n| n.to_string_lossy().starts_with(".s.PGSQL")) {
        path.to_path_buf()
    } else {
        path.join(format!(".s.PGSQL.{port}"))
    }
}

pub(super) fn connect_error(mut err: DbError, t: &TargetUrl) -> DbError {
    let at = match &t.socket {
        Some(s) => format!("socket {}", s.display()),
        None => format!("{}:{}", t.host, t.port),
    };
    let sqlstate = match &err.code {
        ErrorCode::Sqlstate(s) => s.as_str(),
        _ => "",
    };
    err.message = match sqlstate {
        "28P01" | "28000" => format!(
            "authentication failed for user '{}' at {at}: check the user and password (URL, --password-file, FAIRBENCH_PASSWORD or PGPASSWORD)",
            t.user
        ),
        "3D000" => format!(
            "database '{}' does not exist at {at}: create it (CREATE DATABASE {}) or name another in --target",
            t.database, t.database
        ),
        _ => {
            // tokio-postgres's words for bytes that are not PostgreSQL's protocol.
            let m = &err.message;
            let foreign = ["unexpected message", "bytes remaining", "invalid message", "unexpected EOF"];
            let hint = if foreign.iter().any(|f| m.contains(f)) { " (is this a PostgreSQL server?)" } else { "" };
            format!(
                "cannot connect to PostgreSQL at {at}: {}{}{hint}",
                m.trim_start_matches("connection lost: "),
                crate::db::unreachable_hint(m)
            )
        }
    };
    err.connection_lost = false;
    err
}
