//! MySQL's protocol: the handshake (mysql_native_password), COM_STMT_PREPARE, and per query
//! one COM_STMT_EXECUTE whose reply is scanned to its end.

use super::{Args, Fallible, Param, Scan, Statements};
use sha1::{Digest, Sha1};
use std::io::{Read, Write};
use std::net::TcpStream;

const CLIENT_CONNECT_WITH_DB: u32 = 8;
const CLIENT_PROTOCOL_41: u32 = 0x200;
const CLIENT_TRANSACTIONS: u32 = 0x2000;
const CLIENT_SECURE_CONNECTION: u32 = 0x8000;
const CLIENT_PLUGIN_AUTH: u32 = 0x80000;
const CLIENT_DEPRECATE_EOF: u32 = 0x0100_0000;
/// MariaDB's extended capability: results of prepared statements without their metadata.
const MARIADB_CLIENT_CACHE_METADATA: u32 = 1 << 4;

/// Errors sysbench retries (deadlock, lock wait timeout, duplicate key): the floor skips
/// to the COMMIT.
const RETRIED: [u16; 3] = [1213, 1205, 1062];

/// Encodes COM_STMT_EXECUTE of `stmt` with `params` into `out` (header, sequence 0).
pub fn encode_execute(out: &mut Vec<u8>, stmt: u32, params: &[Param]) {
    out.clear();
    out.extend_from_slice(&[0, 0, 0, 0, 0x17]);
    out.extend_from_slice(&stmt.to_le_bytes());
    out.push(0); // no cursor
    out.extend_from_slice(&1u32.to_le_bytes());
    if !params.is_empty() {
        out.extend(std::iter::repeat_n(0u8, params.len().div_ceil(8))); // no NULLs
        out.push(1); // types follow
        for p in params {
            out.extend_from_slice(match p {
                Param::Int(_) => &[0x03, 0],  // LONG, as sysbench binds its INTs
                Param::Text(_) => &[0xfe, 0], // STRING, as sysbench binds its CHARs
            });
        }
        for p in params {
            match p {
                Param::Int(i) => out.extend_from_slice(&i.to_le_bytes()),
                Param::Text(t) => {
                    out.push(t.len() as u8); // < 251: a one-byte length
                    out.extend_from_slice(t);
                }
            }
        }
    }
    let len = (out.len() - 4) as u32;
    out[..3].copy_from_slice(&len.to_le_bytes()[..3]);
}

/// The reply so far in `buf`: complete (an OK, or with CLIENT_DEPRECATE_EOF the 0xfe OK that
/// ends a result set), or the bytes of whole packets seen. `in_result`: past the reply's first
/// packet, a result set's column count (rows start 0x00 too).
pub fn scan(buf: &[u8], in_result: &mut bool) -> Scan {
    let mut at = 0;
    while at + 4 < buf.len() {
        let size = u32::from_le_bytes([buf[at], buf[at + 1], buf[at + 2], 0]) as usize;
        if at + 4 + size > buf.len() {
            break;
        }
        let packet = &buf[at + 4..at + 4 + size];
        at += 4 + size;
        match (*in_result, packet.first()) {
            (_, Some(0xff)) => return failed(packet),
            (false, Some(0x00)) | (_, Some(0xfe)) => return Scan::Complete { retried: false },
            _ => *in_result = true,
        }
    }
    Scan::Partial(at)
}

/// An ERR packet: one sysbench retries completes the statement, any other ends the client.
fn failed(packet: &[u8]) -> Scan {
    let code = u16::from_le_bytes([packet.get(1).copied().unwrap_or(0), packet.get(2).copied().unwrap_or(0)]);
    if RETRIED.contains(&code) {
        return Scan::Complete { retried: true };
    }
    // The message follows the code (2 bytes) and the SQL state (#, 5 bytes).
    let message = packet.get(9..).unwrap_or_default();
    Scan::Failed(format!("server error {code}: {}", String::from_utf8_lossy(message)))
}

/// Blocking packet I/O for the setup (handshake, prepare).
fn read_packet(s: &mut TcpStream) -> Fallible<(u8, Vec<u8>)> {
    let mut head = [0u8; 4];
    s.read_exact(&mut head).map_err(|e| format!("read: {e}"))?;
    let mut p = vec![0u8; u32::from_le_bytes([head[0], head[1], head[2], 0]) as usize];
    s.read_exact(&mut p).map_err(|e| format!("read: {e}"))?;
    if p.first() == Some(&0xff) {
        return Err(format!("server error: {}", String::from_utf8_lossy(&p[p.len().min(9)..])));
    }
    Ok((head[3], p))
}

fn write_packet(s: &mut TcpStream, seq: u8, payload: &[u8]) -> Fallible<()> {
    let mut out = (payload.len() as u32).to_le_bytes();
    out[3] = seq;
    s.write_all(&out).and_then(|_| s.write_all(payload)).map_err(|e| format!("write: {e}"))
}

/// mysql_native_password: SHA1(pw) XOR SHA1(nonce + SHA1(SHA1(pw))).
fn scramble(password: &str, nonce: &[u8]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let h1 = Sha1::digest(password.as_bytes());
    let h2 = Sha1::digest(h1);
    let h3 = Sha1::new().chain_update(nonce).chain_update(h2).finalize();
    h1.iter().zip(h3.iter()).map(|(a, b)| a ^ b).collect()
}

/// Connects, logs in and prepares the workload's statements for every table.
pub fn connect(a: &Args) -> Fallible<(TcpStream, Statements)> {
    let mut s = TcpStream::connect(&a.addr).map_err(|e| format!("connect {}: {e}", a.addr))?;
    s.set_nodelay(true).map_err(|e| e.to_string())?;
    let (_, g) = read_packet(&mut s)?;
    let nul = g.iter().skip(1).position(|&b| b == 0).ok_or("bad greeting")? + 2;
    if g.len() < nul + 43 {
        return Err("a greeting too short for protocol 41 with its nonce (is this a MySQL server?)".into());
    }
    let mut nonce = g[nul + 4..nul + 12].to_vec();
    let caps = u32::from(u16::from_le_bytes([g[nul + 13], g[nul + 14]]))
        | u32::from(u16::from_le_bytes([g[nul + 18], g[nul + 19]])) << 16;
    let extended = u32::from_le_bytes([g[nul + 27], g[nul + 28], g[nul + 29], g[nul + 30]]);
    let rest = &g[nul + 31..];
    nonce.extend_from_slice(&rest[..12]);
    let want = CLIENT_CONNECT_WITH_DB
        | CLIENT_PROTOCOL_41
        | CLIENT_TRANSACTIONS
        | CLIENT_SECURE_CONNECTION
        | CLIENT_PLUGIN_AUTH
        | CLIENT_DEPRECATE_EOF;
    let (mine, ext) = (want & caps, if caps & 1 == 0 { extended & MARIADB_CLIENT_CACHE_METADATA } else { 0 });
    let mut out = Vec::new();
    out.extend_from_slice(&mine.to_le_bytes());
    out.extend_from_slice(&(16u32 << 20).to_le_bytes());
    out.push(45);
    out.extend_from_slice(&[0; 19]);
    out.extend_from_slice(&ext.to_le_bytes());
    out.extend_from_slice(a.user.as_bytes());
    out.push(0);
    let auth = scramble(&a.password, &nonce);
    out.push(auth.len() as u8);
    out.extend_from_slice(&auth);
    out.extend_from_slice(a.db.as_bytes());
    out.push(0);
    out.extend_from_slice(b"mysql_native_password\0");
    write_packet(&mut s, 1, &out)?;
    let (seq, p) = read_packet(&mut s)?;
    if p.first() == Some(&0xfe) {
        // Switch to mysql_native_password with a new nonce.
        let nul = p[1..].iter().position(|&b| b == 0).ok_or("bad auth switch")? + 2;
        let nonce = p.get(nul..p.len().saturating_sub(1)).ok_or("bad auth switch")?;
        write_packet(&mut s, seq + 1, &scramble(&a.password, nonce))?;
        read_packet(&mut s)?;
    }
    let stmts = super::statements(a, |sql| prepare(&mut s, sql))?;
    s.set_nonblocking(true).map_err(|e| e.to_string())?;
    Ok((s, stmts))
}

/// COM_STMT_PREPARE: the statement's id (its parameter and column definitions skipped).
fn prepare(s: &mut TcpStream, sql: &str) -> Fallible<u32> {
    write_packet(s, 0, &[&[0x16u8][..], sql.as_bytes()].concat())?;
    let (_, ok) = read_packet(s)?;
    if ok.len() < 9 {
        return Err("a short reply to COM_STMT_PREPARE".into());
    }
    let defs = u16::from_le_bytes([ok[5], ok[6]]) + u16::from_le_bytes([ok[7], ok[8]]);
    for _ in 0..defs {
        read_packet(s)?;
    }
    Ok(u32::from_le_bytes([ok[1], ok[2], ok[3], ok[4]]))
}
