//! Opening a PostgreSQL connection: plain TCP and Unix sockets through the lean client
//! (pg_wire), which bounds every message by `--max-packet` and refuses a cleartext password
//! over TCP unless allowed; TLS through tokio-postgres, its decrypted bytes through the
//! frame guard. `?tls=prefer` sends the SSLRequest itself: `N` leaves the same connection to
//! the lean client in plaintext, `S` to a TLS handshake and tokio-postgres over it.

use super::frame_guard::{FrameVerdict, GuardedTls};
use super::tls_conn::{error_given, TlsConn};
use super::{Inner, PostgresDatabase};
use crate::db::pg_wire::{Credentials, PgConn};
use crate::db::{ClientFault, DbError, ErrorCode, TargetUrl, TlsMode};
use std::path::PathBuf;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpStream, UnixStream};
use tokio_postgres::tls::{MakeTlsConnect, NoTls, TlsConnect as _};

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
        let plain = |stream| async move {
            let who = Credentials { user: &t.user, password, cleartext_ok: self.options.allow_cleartext_password };
            PgConn::connect(stream, &who, &t.database, max, text).await.map(Inner::Tcp)
        };
        let Some(tls) = &self.tls else { return plain(stream).await };
        let verdict = FrameVerdict::default();
        let mut make = tokio_postgres_rustls::MakeRustlsConnect::new(tls.clone());
        let tls =
            MakeTlsConnect::<TcpStream>::make_tls_connect(&mut make, &t.host).unwrap_or_else(|never| match never {});
        let guarded = GuardedTls { tls, max_message: max, verdict: verdict.clone() };
        let client = if t.tls == TlsMode::Prefer {
            let mut stream = stream;
            if !server_offers_tls(&mut stream).await? {
                return plain(stream).await;
            }
            let session = guarded
                .connect(stream)
                .await
                .map_err(|e| DbError::client(ClientFault::Tls, format!("TLS handshake failed (?tls=prefer): {e}")))?;
            let (client, conn) = self.config.connect_raw(session, NoTls).await.map_err(|e| error_given(&verdict, e))?;
            in_background(conn);
            client
        } else {
            let (client, conn) =
                self.config.connect_raw(stream, guarded).await.map_err(|e| error_given(&verdict, e))?;
            in_background(conn);
            client
        };
        Ok(Inner::Tls(Box::new(TlsConn::new(client, verdict, text))))
    }
}

/// tokio-postgres's connection task, on the local task set.
fn in_background(conn: impl std::future::Future<Output = Result<(), tokio_postgres::Error>> + 'static) {
    tokio::task::spawn_local(async move {
        let _ = conn.await;
    });
}

/// `?tls=prefer`, as libpq's sslmode=prefer: an SSLRequest; the server answers one byte,
/// `S` (go on with a TLS handshake) or `N` (go on in plaintext on the same connection).
async fn server_offers_tls(stream: &mut TcpStream) -> Result<bool, DbError> {
    const SSL_REQUEST: [u8; 8] = [0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]; // length 8, code 80877103
    let lost = |e: std::io::Error| DbError::lost(format!("connection lost: {e}"));
    stream.write_all(&SSL_REQUEST).await.map_err(lost)?;
    let mut answer = [0u8; 1];
    stream.read_exact(&mut answer).await.map_err(lost)?;
    match answer[0] {
        b'S' => Ok(true),
        b'N' => Ok(false),
        other => Err(DbError::protocol(format!(
            "unexpected answer {:?} to an SSLRequest (is this a PostgreSQL server?)",
            (other as char).escape_default().to_string()
        ))),
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
    // pg_hba.conf admits this user only over TLS (`hostssl`): "..., no encryption" (SSL off
    // before PostgreSQL 14).
    let plaintext_refused = err.message.contains("no encryption") || err.message.contains("SSL off");
    err.message = match sqlstate {
        "28000" if plaintext_refused && t.socket.is_none() => format!(
            "the server at {at} admits user '{}' only over TLS: add ?tls=require (or ?tls=prefer) to --target",
            t.user
        ),
        "28P01" | "28000" => format!(
            "authentication failed for user '{}' at {at}: check the user and password (URL, --password-file, FAIRBENCH_PASSWORD or PGPASSWORD)",
            t.user
        ),
        "3D000" => format!(
            "database '{}' does not exist at {at}: create it (CREATE DATABASE {}) or name another in --target",
            t.database, t.database
        ),
        _ if err.message.contains("server does not support TLS") => format!(
            "the server at {at} offers no TLS (ssl = off): use ?tls=prefer (TLS when offered) or ?tls=off, or turn ssl on"
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_that_admits_a_user_only_over_tls_is_answered_with_the_url_option() {
        let t = TargetUrl::parse("postgres://bench@db.example/sb", |_: &str| None).unwrap();
        let hba = r#"no pg_hba.conf entry for host "10.0.0.5", user "bench", database "sb", no encryption"#;
        let e = connect_error(DbError::sqlstate("28000", hba), &t);
        assert!(e.message.contains("only over TLS: add ?tls=require"), "{}", e.message);
        let e = connect_error(DbError::sqlstate("28P01", "password authentication failed"), &t);
        assert!(e.message.contains("check the user and password") && !e.message.contains("?tls"), "{}", e.message);
    }
}
