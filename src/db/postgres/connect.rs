//! Opening a PostgreSQL connection: fairbench makes the socket itself (TCP or Unix) and
//! hands it to tokio-postgres, so that every byte the server sends passes the frame guard
//! (messages bounded by `--max-packet`) and, over plain TCP with a password, the cleartext
//! guard.

use super::frame_guard::{FrameGuard, FrameVerdict, GuardedTls};
use super::{drive, error_given, PostgresDatabase};
use crate::db::cleartext_guard::CleartextGuard;
use crate::db::{ClientFault, DbError, ErrorCode, TargetUrl};
use std::path::PathBuf;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_postgres::tls::MakeTlsConnect;
use tokio_postgres::{Client, NoTls};

impl PostgresDatabase {
    /// Plain TCP with a password the user did not allow in clear: through the cleartext guard.
    fn guarded(&self) -> bool {
        self.tls.is_none()
            && self.target.socket.is_none()
            && !self.target.password.is_empty()
            && !self.options.allow_cleartext_password
    }

    /// A logged-in client whose connection task runs on the local task set, and the
    /// verdict its frame guard leaves if it cuts the connection.
    pub(super) async fn connect_client(&self) -> Result<(Client, FrameVerdict), DbError> {
        let t = &self.target;
        let lost = |e: std::io::Error| DbError::lost(format!("connection lost: {e}"));
        let verdict = FrameVerdict::default();
        if let Some(path) = &t.socket {
            let stream = tokio::net::UnixStream::connect(socket_file(path, t.port)).await.map_err(lost)?;
            return Ok((self.handshake(stream, "", &verdict).await?, verdict));
        }
        let stream = tokio::net::TcpStream::connect((t.host.as_str(), t.port)).await.map_err(lost)?;
        let _ = stream.set_nodelay(true);
        if !self.guarded() {
            return Ok((self.handshake(stream, &t.host, &verdict).await?, verdict));
        }
        let (guard, refused) = CleartextGuard::wrap(stream);
        match self.handshake(guard, &t.host, &verdict).await {
            Err(_) if refused.load(std::sync::atomic::Ordering::Relaxed) => Err(DbError::client(
                ClientFault::Tls,
                "the server asked for the password in clear over unencrypted TCP; refused \
                 (use ?tls=require, a Unix socket, or --allow-cleartext-password)",
            )),
            client => Ok((client?, verdict)),
        }
    }

    /// Startup and authentication over `stream` (TLS first when configured), its reads
    /// through the frame guard.
    async fn handshake<S>(&self, stream: S, domain: &str, verdict: &FrameVerdict) -> Result<Client, DbError>
    where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let max_message = self.options.max_packet;
        let failed = |e| error_given(verdict, e);
        match &self.tls {
            None => {
                let guarded = FrameGuard::wrap(stream, max_message, verdict.clone());
                let (client, conn) = self.config.connect_raw(guarded, NoTls).await.map_err(failed)?;
                drive(conn);
                Ok(client)
            }
            Some(tls) => {
                let mut make = tokio_postgres_rustls::MakeRustlsConnect::new(tls.clone());
                let tls =
                    MakeTlsConnect::<S>::make_tls_connect(&mut make, domain).unwrap_or_else(|never| match never {});
                let guarded = GuardedTls { tls, max_message, verdict: verdict.clone() };
                let (client, conn) = self.config.connect_raw(stream, guarded).await.map_err(failed)?;
                drive(conn);
                Ok(client)
            }
        }
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
