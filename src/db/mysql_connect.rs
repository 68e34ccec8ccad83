//! How mysql_async connects (its options for each `?tls=` mode), and a refused connection in
//! words that name the fix.

use super::{ConnectOptions, DbError, ErrorCode, TargetUrl, TlsMode};
use mysql_async::{Opts, OptsBuilder, SslOpts};

/// mysql_async's options for `target` with TLS as `tls` says (`prefer` and `require` alike:
/// encrypt without checking the certificate, as libpq and MySQL's ssl-mode=PREFERRED).
pub fn opts(target: &TargetUrl, options: &ConnectOptions, tls: TlsMode) -> Opts {
    let mut b = OptsBuilder::default()
        .ip_or_hostname(target.host.clone())
        .tcp_port(target.port)
        .user(Some(target.user.clone()))
        .db_name(Some(target.database.clone()))
        // Set explicitly: left unset, mysql_async switches 127.0.0.1 to the Unix socket
        // and runs `SELECT @@...` on connect, which the server would count as a SELECT.
        .prefer_socket(false)
        .max_allowed_packet(Some(options.max_packet))
        // mysql_clear_password over plain TCP only when the user allows it.
        .enable_cleartext_plugin(options.allow_cleartext_password || tls != TlsMode::Off)
        .wait_timeout(Some(28_800))
        .tcp_nodelay(true)
        .stmt_cache_size(0);
    if !target.password.is_empty() {
        b = b.pass(Some(target.password.expose().to_string()));
    }
    if let Some(sock) = &target.socket {
        b = b.socket(Some(sock.to_string_lossy().into_owned()));
    }
    match tls {
        TlsMode::Off => {}
        TlsMode::Prefer | TlsMode::Require => {
            b = b.ssl_opts(
                SslOpts::default().with_danger_accept_invalid_certs(true).with_danger_skip_domain_validation(true),
            )
        }
        TlsMode::Verify => {
            let mut ssl = SslOpts::default();
            if let Some(ca) = &target.ca_file {
                ssl = ssl.with_root_certs(vec![ca.clone().into()]);
            }
            b = b.ssl_opts(ssl);
        }
    }
    b.into()
}

/// MySQL's ER_SECURE_TRANSPORT_REQUIRED: `require_secure_transport=ON` refuses plaintext.
const SECURE_TRANSPORT_REQUIRED: u16 = 3159;

/// Turns connection failures into advice naming the server: one line naming the fix.
pub fn describe_connect_error(mut err: DbError, t: &TargetUrl) -> DbError {
    let at = match &t.socket {
        Some(s) => format!("socket {}", s.display()),
        None => format!("{}:{}", t.host, t.port),
    };
    let plaintext = t.tls == TlsMode::Off && t.socket.is_none();
    let insecure = matches!(err.code, ErrorCode::Mysql(SECURE_TRANSPORT_REQUIRED))
        || err.message.contains("insecure transport are prohibited");
    err.message = match err.code {
        _ if insecure && plaintext => format!(
            "the server at {at} refuses connections without TLS (require_secure_transport): add ?tls=require (or ?tls=prefer) to --target"
        ),
        _ if err.message.contains("server does not have this capability") => format!(
            "the server at {at} offers no TLS: use ?tls=prefer (TLS when offered) or ?tls=off, or configure TLS on the server"
        ),
        // The server says the same to an account created REQUIRE SSL that came without TLS.
        ErrorCode::Mysql(1045) => format!(
            "access denied for user '{}' at {at}: check the user and password (URL, --password-file, FAIRBENCH_PASSWORD or MYSQL_PWD){}",
            t.user,
            if plaintext { ", or, if the account requires TLS (REQUIRE SSL), add ?tls=require to --target" } else { "" }
        ),
        ErrorCode::Mysql(1049) => format!(
            "database '{}' does not exist at {at}: create it (CREATE DATABASE {}) or name another in --target",
            t.database, t.database
        ),
        _ => format!(
            "cannot connect to MySQL at {at}: {}{}",
            err.message.trim_start_matches("connection lost: "),
            super::unreachable_hint(&err.message)
        ),
    };
    err.connection_lost = false;
    err
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_that_wants_tls_is_answered_with_the_url_option() {
        let no_env = |_: &str| None;
        let t = TargetUrl::parse("mysql://u@db.example:3306/sb", no_env).unwrap();
        let e = describe_connect_error(
            DbError::mysql(
                SECURE_TRANSPORT_REQUIRED,
                "Connections using insecure transport are prohibited while --require_secure_transport=ON.",
            ),
            &t,
        );
        assert!(e.message.contains("?tls=require") && !e.message.contains('\n'), "{}", e.message);
        let e = describe_connect_error(DbError::mysql(1045, "Access denied"), &t);
        assert!(e.message.contains("REQUIRE SSL") && e.message.contains("?tls=require"), "{}", e.message);
        let t = TargetUrl::parse("mysql://u@db.example:3306/sb?tls=require", no_env).unwrap();
        let e = describe_connect_error(DbError::mysql(1045, "Access denied"), &t);
        assert!(!e.message.contains("?tls="), "already over TLS: {}", e.message);
    }
}
