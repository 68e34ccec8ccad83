//! PostgreSQL's protocol: the startup (trust or a cleartext password), each statement parsed
//! once as a named prepared statement, and per query one Bind, Execute and Sync in a single
//! send (as a lean client does; libpq's PQexecPrepared, sysbench's, adds a Describe), the reply
//! scanned to its ReadyForQuery.

use super::{Args, Fallible, Param, Scan, Statements};
use std::io::{Read, Write};
use std::net::TcpStream;

/// SQLSTATEs sysbench's pgsql driver retries: deadlock, serialization failure, unique violation.
const RETRIED: [&[u8]; 3] = [b"40P01", b"40001", b"23505"];
const PROTOCOL_3_0: u32 = 196_608;

/// Connects, starts the session and prepares the workload's statements for every table.
pub fn connect(a: &Args) -> Fallible<(TcpStream, Statements)> {
    let mut s = TcpStream::connect(&a.addr).map_err(|e| format!("connect {}: {e}", a.addr))?;
    s.set_nodelay(true).map_err(|e| e.to_string())?;
    let mut startup = vec![0; 4];
    startup.extend_from_slice(&PROTOCOL_3_0.to_be_bytes());
    for (key, value) in [("user", &a.user), ("database", &a.db)] {
        startup.extend_from_slice(key.as_bytes());
        startup.push(0);
        startup.extend_from_slice(value.as_bytes());
        startup.push(0);
    }
    startup.push(0);
    let n = startup.len() as u32;
    startup[..4].copy_from_slice(&n.to_be_bytes());
    s.write_all(&startup).map_err(|e| format!("write: {e}"))?;
    loop {
        let (kind, body) = read_message(&mut s)?;
        match kind {
            b'R' => match body.get(..4).map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]])) {
                Some(0) => {}
                Some(3) => {
                    let mut password = a.password.clone().into_bytes();
                    password.push(0);
                    write_message(&mut s, b'p', &password)?;
                }
                code => {
                    return Err(format!(
                        "the server asks for authentication method {code:?}: the floor client answers trust and \
                         cleartext passwords only (pg_hba.conf)"
                    ))
                }
            },
            b'Z' => break,
            _ => {}
        }
    }
    let mut next = 0;
    let stmts = super::statements(a, |sql| {
        next += 1;
        prepare(&mut s, next, sql).map(|_| next)
    })?;
    s.set_nonblocking(true).map_err(|e| e.to_string())?;
    Ok((s, stmts))
}

/// Parses `sql` (`?` numbered into `$n`) as statement `s<n>`, and waits for ReadyForQuery.
fn prepare(s: &mut TcpStream, n: u32, sql: &str) -> Fallible<()> {
    let mut numbered = String::with_capacity(sql.len() + 8);
    for (i, part) in sql.split('?').enumerate() {
        if i > 0 {
            numbered.push_str(&format!("${i}"));
        }
        numbered.push_str(part);
    }
    let mut body = format!("s{n}\0{numbered}\0").into_bytes();
    body.extend_from_slice(&0u16.to_be_bytes()); // parameter types: the server's inference
    write_message(s, b'P', &body)?;
    write_message(s, b'S', &[])?;
    while read_message(s)?.0 != b'Z' {}
    Ok(())
}

/// Blocking message I/O for the setup; an ErrorResponse is the error it carries.
fn read_message(s: &mut TcpStream) -> Fallible<(u8, Vec<u8>)> {
    let mut head = [0u8; 5];
    s.read_exact(&mut head).map_err(|e| format!("read: {e}"))?;
    let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
    let mut body = vec![0u8; len.saturating_sub(4)];
    s.read_exact(&mut body).map_err(|e| format!("read: {e}"))?;
    if head[0] == b'E' {
        let (code, message) = error_fields(&body);
        return Err(format!("server error {}: {}", String::from_utf8_lossy(code), String::from_utf8_lossy(message)));
    }
    Ok((head[0], body))
}

fn write_message(s: &mut TcpStream, kind: u8, body: &[u8]) -> Fallible<()> {
    let mut out = vec![kind];
    out.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
    out.extend_from_slice(body);
    s.write_all(&out).map_err(|e| format!("write: {e}"))
}

/// An ErrorResponse's SQLSTATE and message.
fn error_fields(body: &[u8]) -> (&[u8], &[u8]) {
    let (mut code, mut message) = (&b""[..], &b""[..]);
    for field in body.split(|&b| b == 0).filter(|f| !f.is_empty()) {
        match field[0] {
            b'C' => code = &field[1..],
            b'M' => message = &field[1..],
            _ => {}
        }
    }
    (code, message)
}

/// Bind (integers binary, strings text, results text), Execute and Sync of statement `s<stmt>`
/// into `out`: one send.
pub fn encode_execute(out: &mut Vec<u8>, stmt: u32, params: &[Param]) {
    out.clear();
    out.extend_from_slice(&[b'B', 0, 0, 0, 0, 0]); // length to come; the unnamed portal
    let _ = write!(out, "s{stmt}");
    out.push(0);
    out.extend_from_slice(&(params.len() as u16).to_be_bytes());
    for p in params {
        out.extend_from_slice(&(matches!(p, Param::Int(_)) as u16).to_be_bytes());
    }
    out.extend_from_slice(&(params.len() as u16).to_be_bytes());
    for p in params {
        match p {
            Param::Int(i) => {
                out.extend_from_slice(&4i32.to_be_bytes());
                out.extend_from_slice(&(*i as i32).to_be_bytes());
            }
            Param::Text(t) => {
                out.extend_from_slice(&(t.len() as i32).to_be_bytes());
                out.extend_from_slice(t);
            }
        }
    }
    out.extend_from_slice(&0u16.to_be_bytes()); // every result column as text
    let len = (out.len() - 1) as u32;
    out[1..5].copy_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&[b'E', 0, 0, 0, 9, 0, 0, 0, 0, 0]); // the unnamed portal, every row
    out.extend_from_slice(&[b'S', 0, 0, 0, 4]);
}

/// The reply so far in `buf`: complete at ReadyForQuery, or the bytes of whole messages seen.
/// `errored`: an error sysbench retries came first.
pub fn scan(buf: &[u8], errored: &mut bool) -> Scan {
    let mut at = 0;
    while at + 5 <= buf.len() {
        let len = u32::from_be_bytes([buf[at + 1], buf[at + 2], buf[at + 3], buf[at + 4]]) as usize;
        if at + 1 + len > buf.len() {
            break;
        }
        let (kind, body) = (buf[at], &buf[at + 5..at + 1 + len]);
        at += 1 + len;
        match kind {
            b'E' => {
                let (code, message) = error_fields(body);
                if !RETRIED.contains(&code) {
                    let (code, message) = (String::from_utf8_lossy(code), String::from_utf8_lossy(message));
                    return Scan::Failed(format!("server error {code}: {message}"));
                }
                *errored = true;
            }
            b'Z' => return Scan::Complete { retried: std::mem::take(errored) },
            _ => {}
        }
    }
    Scan::Partial(at)
}
