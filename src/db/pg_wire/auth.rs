//! Authentication: trust, MD5, SCRAM-SHA-256 (postgres-protocol's implementation), and the
//! cleartext password only where the caller allows it (a Unix socket, or the user's
//! --allow-cleartext-password over TCP). Never logs or echoes the password.

use super::reply::{server_error, Reader};
use super::{messages, PgConn, Socket};
use crate::db::{ClientFault, DbError};
use postgres_protocol::authentication::md5_hash;
use postgres_protocol::authentication::sasl::{ChannelBinding, ScramSha256, SCRAM_SHA_256};

const OK: i32 = 0;
const CLEARTEXT: i32 = 3;
const MD5: i32 = 5;
const SASL: i32 = 10;
const SASL_CONTINUE: i32 = 11;
const SASL_FINAL: i32 = 12;
/// Authentication requests read before giving up (SASL takes three).
const MAX_REQUESTS: usize = 4;

/// What the server's messages before AuthenticationOk may ask of this client.
pub struct Credentials<'a> {
    pub user: &'a str,
    pub password: &'a str,
    /// The password may go in clear (a Unix socket, or allowed by the user).
    pub cleartext_ok: bool,
}

const CLEARTEXT_REFUSED: &str = "the server asked for the password in clear over unencrypted TCP; refused \
     (use ?tls=require, a Unix socket, or --allow-cleartext-password)";

fn unexpected(kind: u8) -> DbError {
    DbError::protocol(format!(
        "unexpected message '{}' during authentication (is this a PostgreSQL server?)",
        (kind as char).escape_default()
    ))
}

fn malformed(what: &str) -> DbError {
    DbError::protocol(format!("malformed authentication request from the server: {what}"))
}

fn scram_failed(e: std::io::Error) -> DbError {
    DbError::client(ClientFault::Refused, format!("SCRAM-SHA-256 authentication failed: {e}"))
}

impl<S: Socket> PgConn<S> {
    /// Answers authentication requests until AuthenticationOk.
    pub(super) async fn authenticate(&mut self, who: &Credentials<'_>) -> Result<(), DbError> {
        let mut scram: Option<ScramSha256> = None;
        for _ in 0..MAX_REQUESTS {
            let (kind, body) = self.message().await?;
            match kind {
                b'R' => {}
                b'E' => return Err(server_error(body)),
                _ => return Err(unexpected(kind)),
            }
            let mut r = Reader(body);
            let code = r.i32("request code").map_err(|m| malformed(m.0))?;
            let rest = r.0.to_vec(); // the reply may need it after the next write
            self.out.clear();
            match code {
                OK => return Ok(()),
                CLEARTEXT if !who.cleartext_ok => return Err(DbError::client(ClientFault::Tls, CLEARTEXT_REFUSED)),
                CLEARTEXT => messages::password(&mut self.out, need(who)?.as_bytes()),
                MD5 => {
                    let salt: [u8; 4] =
                        rest.get(..4).and_then(|s| s.try_into().ok()).ok_or_else(|| malformed("salt"))?;
                    let hash = md5_hash(who.user.as_bytes(), need(who)?.as_bytes(), salt);
                    messages::password(&mut self.out, hash.as_bytes());
                }
                SASL => {
                    let offered = rest.split(|&b| b == 0).any(|m| m == SCRAM_SHA_256.as_bytes());
                    if !offered {
                        return Err(DbError::client(
                            ClientFault::Refused,
                            "the server offers no SASL mechanism fairbench speaks without TLS (SCRAM-SHA-256)",
                        ));
                    }
                    let s = ScramSha256::new(need(who)?.as_bytes(), ChannelBinding::unsupported());
                    messages::sasl_initial(&mut self.out, SCRAM_SHA_256, s.message());
                    scram = Some(s);
                }
                SASL_CONTINUE => {
                    let s = scram.as_mut().ok_or_else(|| malformed("SASLContinue before SASL"))?;
                    s.update(&rest).map_err(scram_failed)?;
                    messages::sasl_response(&mut self.out, s.message());
                }
                SASL_FINAL => {
                    let s = scram.as_mut().ok_or_else(|| malformed("SASLFinal before SASL"))?;
                    s.finish(&rest).map_err(scram_failed)?;
                    continue; // AuthenticationOk follows
                }
                other => {
                    return Err(DbError::client(
                        ClientFault::Refused,
                        format!("the server asks for an authentication fairbench does not speak (request {other})"),
                    ))
                }
            }
            self.send().await?;
        }
        Err(DbError::protocol(format!("authentication did not finish after {MAX_REQUESTS} server requests")))
    }
}

/// The password, when the server asks for one.
fn need<'a>(who: &Credentials<'a>) -> Result<&'a str, DbError> {
    if who.password.is_empty() {
        return Err(DbError::client(ClientFault::Refused, "the server asks for a password and none was given"));
    }
    Ok(who.password)
}
