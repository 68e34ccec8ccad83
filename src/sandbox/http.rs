//! One HTTP GET on a loopback address, for etcd's health and Patroni's REST API: a request, a
//! short deadline, the status and the body (no client library for a few read-only calls).

use std::io::{Error, ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// The status code and body of `GET path` on `host`:`port`, within `deadline` per step.
pub fn get(host: &str, port: u16, path: &str, deadline: Duration) -> std::io::Result<(u16, String)> {
    let ip = host.parse().map_err(|_| Error::new(ErrorKind::InvalidInput, format!("{host} is not an address")))?;
    let mut stream = TcpStream::connect_timeout(&SocketAddr::new(ip, port), deadline)?;
    stream.set_read_timeout(Some(deadline))?;
    stream.set_write_timeout(Some(deadline))?;
    // HTTP/1.0: the server closes the connection after the body, no chunked encoding.
    write!(stream, "GET {path} HTTP/1.0\r\nHost: {host}:{port}\r\n\r\n")?;
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes)?;
    let text = String::from_utf8_lossy(&bytes);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.split_whitespace().nth(1).and_then(|code| code.parse().ok());
    let status =
        status.ok_or_else(|| Error::new(ErrorKind::InvalidData, format!("{host}:{port} is not an HTTP server")))?;
    Ok((status, body.to_string()))
}
