//! A lean MySQL client/server protocol client for the measured hot path: prepared
//! statements over the binary protocol, result rows skipped without decoding, buffers
//! reused, one write per command. It speaks plain TCP and Unix sockets with
//! mysql_native_password and caching_sha2_password (fast path, or cleartext on a socket);
//! anything else (TLS, RSA key exchange, other plugins) is left to mysql_async.

use super::{DbError, Param};
use sha1::Digest as _;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

const CLIENT_LONG_PASSWORD: u32 = 1;
const CLIENT_CONNECT_WITH_DB: u32 = 8;
const CLIENT_PROTOCOL_41: u32 = 0x200;
const CLIENT_TRANSACTIONS: u32 = 0x2000;
const CLIENT_SECURE_CONNECTION: u32 = 0x8000;
const CLIENT_MULTI_RESULTS: u32 = 0x20000;
const CLIENT_PLUGIN_AUTH: u32 = 0x80000;
const CLIENT_DEPRECATE_EOF: u32 = 0x0100_0000;
const SERVER_MORE_RESULTS_EXISTS: u16 = 0x0008;
const MAX_PACKET: usize = 0xff_ffff;

pub enum ConnectError {
    /// The server wants an authentication this client does not speak: use mysql_async.
    Unsupported,
    Db(DbError),
}

impl From<DbError> for ConnectError {
    fn from(e: DbError) -> Self {
        ConnectError::Db(e)
    }
}

struct Prepared {
    id: u32,
    params: u16,
}

/// Sockets whose read readiness can be dropped without a syscall: after a complete reply
/// the server has nothing more to say (request/response), so the next read would only
/// return EAGAIN. Dropping it saves that read per statement.
pub trait Socket: AsyncRead + AsyncWrite + Unpin {
    fn drained(&self);
}

impl Socket for tokio::net::TcpStream {
    fn drained(&self) {
        let _ = self.try_io(tokio::io::Interest::READABLE, || Err::<(), _>(std::io::ErrorKind::WouldBlock.into()));
    }
}

impl Socket for tokio::net::UnixStream {
    fn drained(&self) {
        let _ = self.try_io(tokio::io::Interest::READABLE, || Err::<(), _>(std::io::ErrorKind::WouldBlock.into()));
    }
}

pub struct WireConn<S> {
    stream: S,
    /// Bytes read from the socket; `start..end` not yet consumed.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    out: Vec<u8>,
    seq: u8,
    caps: u32,
    statements: Vec<Prepared>,
    pub server_version: String,
}

fn io(e: std::io::Error) -> DbError {
    DbError::lost(format!("connection lost: {e}"))
}

fn lenenc(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let b = *buf.get(*pos)?;
    *pos += 1;
    let (n, v) = match b {
        0..=0xfa => return Some(b as u64),
        0xfb => return None, // NULL
        0xfc => (2, u16::from_le_bytes(buf.get(*pos..*pos + 2)?.try_into().ok()?) as u64),
        0xfd => (3, u32::from_le_bytes([buf[*pos], buf[*pos + 1], buf[*pos + 2], 0]) as u64),
        _ => (8, u64::from_le_bytes(buf.get(*pos..*pos + 8)?.try_into().ok()?)),
    };
    *pos += n;
    Some(v)
}

fn put_lenenc(out: &mut Vec<u8>, v: u64) {
    match v {
        0..=0xfa => out.push(v as u8),
        0xfb..=0xffff => {
            out.push(0xfc);
            out.extend_from_slice(&(v as u16).to_le_bytes());
        }
        0x1_0000..=0xff_ffff => {
            out.push(0xfd);
            out.extend_from_slice(&(v as u32).to_le_bytes()[..3]);
        }
        _ => {
            out.push(0xfe);
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
}

/// An ERR packet as a DbError with the server's code.
fn err_packet(p: &[u8]) -> DbError {
    let code = u16::from_le_bytes([p.get(1).copied().unwrap_or(0), p.get(2).copied().unwrap_or(0)]);
    let msg_start = if p.get(3) == Some(&b'#') { 9 } else { 3 };
    let message = String::from_utf8_lossy(p.get(msg_start..).unwrap_or_default()).into_owned();
    DbError::mysql(code, message)
}

/// mysql_native_password: SHA1(pw) XOR SHA1(nonce + SHA1(SHA1(pw))).
fn native_scramble(password: &[u8], nonce: &[u8]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let h1 = sha1::Sha1::digest(password);
    let h2 = sha1::Sha1::digest(h1);
    let mut h = sha1::Sha1::new();
    h.update(nonce);
    h.update(h2);
    h1.iter().zip(h.finalize()).map(|(a, b)| a ^ b).collect()
}

/// caching_sha2_password: SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) + nonce).
fn sha2_scramble(password: &[u8], nonce: &[u8]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let h1 = sha2::Sha256::digest(password);
    let h2 = sha2::Sha256::digest(h1);
    let mut h = sha2::Sha256::new();
    h.update(h2);
    h.update(nonce);
    h1.iter().zip(h.finalize()).map(|(a, b)| a ^ b).collect()
}

/// The auth response for `plugin`, or None for a plugin this client does not speak.
fn scramble(plugin: &str, password: &str, nonce: &[u8]) -> Option<Vec<u8>> {
    match plugin {
        "mysql_native_password" => Some(native_scramble(password.as_bytes(), nonce)),
        "caching_sha2_password" => Some(sha2_scramble(password.as_bytes(), nonce)),
        _ => None,
    }
}

/// Whether an OK/EOF packet announces another result set.
fn more_results(caps: u32, p: &[u8]) -> bool {
    let status = if p[0] == 0xfe && p.len() < 9 && caps & CLIENT_DEPRECATE_EOF == 0 {
        // EOF: header, warnings(2), status(2)
        p.get(3..5).map(|s| u16::from_le_bytes([s[0], s[1]])).unwrap_or(0)
    } else {
        let mut pos = 1;
        lenenc(p, &mut pos);
        lenenc(p, &mut pos);
        p.get(pos..pos + 2).map(|s| u16::from_le_bytes([s[0], s[1]])).unwrap_or(0)
    };
    status & SERVER_MORE_RESULTS_EXISTS != 0
}

impl<S: Socket> WireConn<S> {
    /// Handshake and authentication. `secure`: the transport is a Unix socket, where
    /// caching_sha2_password may send the password in clear.
    pub async fn connect(stream: S, user: &str, password: &str, db: &str, secure: bool) -> Result<Self, ConnectError> {
        let mut c = WireConn {
            stream,
            buf: vec![0; 64 * 1024],
            start: 0,
            end: 0,
            out: Vec::with_capacity(1024),
            seq: 0,
            caps: 0,
            statements: Vec::new(),
            server_version: String::new(),
        };
        let greeting = c.read_packet().await?.to_vec();
        if greeting.first() == Some(&0xff) {
            return Err(err_packet(&greeting).into());
        }
        let bad = || DbError::protocol("unexpected handshake from the server");
        let nul = |from: usize| greeting[from..].iter().position(|&b| b == 0).map(|p| from + p);
        let v_end = nul(1).ok_or_else(bad)?;
        c.server_version = String::from_utf8_lossy(&greeting[1..v_end]).into_owned();
        let mut pos = v_end + 1 + 4;
        let mut nonce = greeting.get(pos..pos + 8).ok_or_else(bad)?.to_vec();
        pos += 9;
        let caps_low = u16::from_le_bytes([greeting[pos], greeting[pos + 1]]) as u32;
        pos += 2 + 1 + 2;
        let caps_high = u16::from_le_bytes([greeting[pos], greeting[pos + 1]]) as u32;
        let server_caps = caps_low | caps_high << 16;
        pos += 2;
        let auth_len = greeting[pos] as usize;
        pos += 1 + 10;
        let part2 = auth_len.saturating_sub(8).max(13);
        if let Some(p2) = greeting.get(pos..pos + part2) {
            nonce.extend_from_slice(p2.strip_suffix(&[0]).unwrap_or(p2));
        }
        pos += part2;
        let mut plugin = nul(pos).map(|e| String::from_utf8_lossy(&greeting[pos..e]).into_owned()).unwrap_or_default();
        if plugin.is_empty() {
            plugin = "mysql_native_password".into();
        }
        c.caps = (CLIENT_LONG_PASSWORD
            | CLIENT_CONNECT_WITH_DB
            | CLIENT_PROTOCOL_41
            | CLIENT_TRANSACTIONS
            | CLIENT_SECURE_CONNECTION
            | CLIENT_MULTI_RESULTS
            | CLIENT_PLUGIN_AUTH
            | CLIENT_DEPRECATE_EOF)
            & server_caps;
        let response = scramble(&plugin, password, &nonce).ok_or(ConnectError::Unsupported)?;
        c.out.clear();
        c.out.extend_from_slice(&c.caps.to_le_bytes());
        c.out.extend_from_slice(&(16u32 << 20).to_le_bytes());
        c.out.push(45); // utf8mb4_general_ci
        c.out.extend_from_slice(&[0; 23]);
        c.out.extend_from_slice(user.as_bytes());
        c.out.push(0);
        c.out.push(response.len() as u8);
        c.out.extend_from_slice(&response);
        c.out.extend_from_slice(db.as_bytes());
        c.out.push(0);
        c.out.extend_from_slice(plugin.as_bytes());
        c.out.push(0);
        c.seq = 1;
        c.send().await?;
        loop {
            let p = c.read_packet().await?.to_vec();
            match p.first() {
                Some(0x00) => return Ok(c),
                Some(0xff) => return Err(err_packet(&p).into()),
                Some(0xfe) => {
                    // Auth switch: plugin name, then a new nonce.
                    let e = p[1..].iter().position(|&b| b == 0).map(|i| i + 1).unwrap_or(p.len());
                    let name = String::from_utf8_lossy(&p[1..e]).into_owned();
                    let data = p.get(e + 1..).unwrap_or_default();
                    let data = data.strip_suffix(&[0]).unwrap_or(data);
                    let resp = scramble(&name, password, data).ok_or(ConnectError::Unsupported)?;
                    c.out.clear();
                    c.out.extend_from_slice(&resp);
                    c.send().await?;
                }
                Some(0x01) if p.get(1) == Some(&3) => {} // caching_sha2 fast auth: OK follows
                Some(0x01) if p.get(1) == Some(&4) => {
                    // Full authentication: cleartext only on a socket; RSA is mysql_async's job.
                    if !secure {
                        return Err(ConnectError::Unsupported);
                    }
                    c.out.clear();
                    c.out.extend_from_slice(password.as_bytes());
                    c.out.push(0);
                    c.send().await?;
                }
                _ => return Err(DbError::protocol("unexpected authentication reply").into()),
            }
        }
    }

    /// Writes `out` as one packet (split at 16 MiB) with the current sequence id.
    async fn send(&mut self) -> Result<(), DbError> {
        let mut framed = Vec::with_capacity(self.out.len() + 8);
        let mut chunks = self.out.chunks(MAX_PACKET).peekable();
        if chunks.peek().is_none() {
            framed.extend_from_slice(&[0, 0, 0, self.seq]);
            self.seq = self.seq.wrapping_add(1);
        }
        let mut last_len = 0;
        for chunk in chunks {
            framed.extend_from_slice(&(chunk.len() as u32).to_le_bytes()[..3]);
            framed.push(self.seq);
            self.seq = self.seq.wrapping_add(1);
            framed.extend_from_slice(chunk);
            last_len = chunk.len();
        }
        if last_len == MAX_PACKET {
            framed.extend_from_slice(&[0, 0, 0, self.seq]);
            self.seq = self.seq.wrapping_add(1);
        }
        self.stream.write_all(&framed).await.map_err(io)
    }

    /// Starts a command: resets the sequence and writes `out` with `cmd` prepended.
    async fn command(&mut self, cmd: u8, body: impl FnOnce(&mut Vec<u8>)) -> Result<(), DbError> {
        // Header space reserved in front so the command goes out in one write.
        self.out.clear();
        self.out.extend_from_slice(&[0, 0, 0, 0, cmd]);
        body(&mut self.out);
        let len = self.out.len() - 4;
        if len >= MAX_PACKET {
            let payload = self.out.split_off(4);
            self.out = payload;
            self.seq = 0;
            return self.send().await;
        }
        self.out[..3].copy_from_slice(&(len as u32).to_le_bytes()[..3]);
        self.out[3] = 0;
        self.seq = 1;
        self.stream.write_all(&self.out).await.map_err(io)
    }

    async fn fill(&mut self, need: usize) -> Result<(), DbError> {
        if self.end - self.start >= need {
            return Ok(());
        }
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.buf.len() < need {
            self.buf.resize(need.next_power_of_two(), 0);
        }
        while self.end < need {
            let n = self.stream.read(&mut self.buf[self.end..]).await.map_err(io)?;
            if n == 0 {
                return Err(DbError::lost("connection closed by the server"));
            }
            self.end += n;
        }
        Ok(())
    }

    /// The next packet's payload (valid until the next read).
    async fn read_packet(&mut self) -> Result<&[u8], DbError> {
        self.fill(4).await?;
        let h = &self.buf[self.start..self.start + 4];
        let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
        self.seq = h[3].wrapping_add(1);
        if len == MAX_PACKET {
            return self.read_long_packet().await;
        }
        self.fill(4 + len).await?;
        let from = self.start + 4;
        self.start = from + len;
        Ok(&self.buf[from..from + len])
    }

    /// A payload of 16 MiB or more, spread over continuation packets.
    async fn read_long_packet(&mut self) -> Result<&[u8], DbError> {
        let mut payload = Vec::new();
        loop {
            self.fill(4).await?;
            let h = &self.buf[self.start..self.start + 4];
            let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
            self.seq = h[3].wrapping_add(1);
            self.fill(4 + len).await?;
            payload.extend_from_slice(&self.buf[self.start + 4..self.start + 4 + len]);
            self.start += 4 + len;
            if len < MAX_PACKET {
                break;
            }
        }
        // Park it at the front of an empty buffer so a slice can be returned.
        let rest = self.buf[self.start..self.end].to_vec();
        self.buf.clear();
        self.buf.extend_from_slice(&payload);
        self.buf.extend_from_slice(&rest);
        self.buf.resize(self.buf.len().max(64 * 1024), 0);
        self.start = payload.len();
        self.end = payload.len() + rest.len();
        Ok(&self.buf[..payload.len()])
    }

    /// Reads a complete response, skipping any result rows. Returns the column count of
    /// the last result set (0 for OK).
    async fn drain_response(&mut self) -> Result<(), DbError> {
        let result = self.drain_inner().await;
        self.finished();
        result
    }

    /// A reply is complete and the server speaks only when spoken to: if every byte
    /// received is consumed, the socket is empty.
    fn finished(&mut self) {
        if self.start == self.end {
            self.stream.drained();
        }
    }

    async fn drain_inner(&mut self) -> Result<(), DbError> {
        let caps = self.caps;
        loop {
            let p = self.read_packet().await?;
            match p.first() {
                Some(0x00) => {
                    if more_results(caps, p) {
                        continue;
                    }
                    return Ok(());
                }
                Some(0xff) => return Err(err_packet(p)),
                _ => {}
            }
            // A result set: column count, column definitions, [EOF], rows, EOF/OK.
            let mut pos = 0;
            let columns = lenenc(p, &mut pos).unwrap_or(0);
            for _ in 0..columns {
                self.read_packet().await?;
            }
            if caps & CLIENT_DEPRECATE_EOF == 0 {
                self.read_packet().await?;
            }
            loop {
                let p = self.read_packet().await?;
                match p.first() {
                    Some(0xfe) if p.len() < MAX_PACKET => {
                        if more_results(caps, p) {
                            break;
                        }
                        return Ok(());
                    }
                    Some(0xff) => return Err(err_packet(p)),
                    _ => {}
                }
            }
        }
    }

    pub async fn prepare(&mut self, sql: &str) -> Result<usize, DbError> {
        self.command(0x16, |out| out.extend_from_slice(sql.as_bytes())).await?;
        let p = self.read_packet().await?;
        if p.first() == Some(&0xff) {
            return Err(err_packet(p));
        }
        if p.len() < 12 {
            return Err(DbError::protocol("short COM_STMT_PREPARE reply"));
        }
        let id = u32::from_le_bytes([p[1], p[2], p[3], p[4]]);
        let columns = u16::from_le_bytes([p[5], p[6]]);
        let params = u16::from_le_bytes([p[7], p[8]]);
        let eof = self.caps & CLIENT_DEPRECATE_EOF == 0;
        for n in [params, columns] {
            for _ in 0..n {
                self.read_packet().await?;
            }
            if n > 0 && eof {
                self.read_packet().await?;
            }
        }
        self.statements.push(Prepared { id, params });
        Ok(self.statements.len() - 1)
    }

    pub async fn execute(&mut self, stmt: usize, params: &[Param<'_>]) -> Result<(), DbError> {
        let s = &self.statements[stmt];
        let (id, n) = (s.id, s.params as usize);
        if n != params.len() {
            return Err(DbError::client(
                super::ClientFault::Other,
                format!("statement takes {n} parameters, {} given", params.len()),
            ));
        }
        self.command(0x17, |out| {
            out.extend_from_slice(&id.to_le_bytes());
            out.push(0); // CURSOR_TYPE_NO_CURSOR
            out.extend_from_slice(&1u32.to_le_bytes());
            if n > 0 {
                out.extend(std::iter::repeat_n(0u8, n.div_ceil(8))); // no NULLs
                out.push(1); // types follow
                for p in params {
                    match p {
                        Param::Int(_) => out.extend_from_slice(&[0x03, 0]), // MYSQL_TYPE_LONG, signed
                        Param::Text(_) => out.extend_from_slice(&[0xfd, 0]), // VAR_STRING
                    }
                }
                for p in params {
                    match p {
                        Param::Int(i) => out.extend_from_slice(&i.to_le_bytes()),
                        Param::Text(s) => {
                            put_lenenc(out, s.len() as u64);
                            out.extend_from_slice(s.as_bytes());
                        }
                    }
                }
            }
        })
        .await?;
        self.drain_response().await
    }

    pub async fn simple(&mut self, sql: &str) -> Result<(), DbError> {
        self.command(0x03, |out| out.extend_from_slice(sql.as_bytes())).await?;
        self.drain_response().await
    }

    /// A text-protocol query's rows as strings (NULL as None): for SHOW commands.
    pub async fn query_rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, DbError> {
        self.command(0x03, |out| out.extend_from_slice(sql.as_bytes())).await?;
        let p = self.read_packet().await?;
        match p.first() {
            Some(0x00) => return Ok(Vec::new()),
            Some(0xff) => return Err(err_packet(p)),
            _ => {}
        }
        let mut pos = 0;
        let columns = lenenc(p, &mut pos).unwrap_or(0) as usize;
        for _ in 0..columns {
            self.read_packet().await?;
        }
        if self.caps & CLIENT_DEPRECATE_EOF == 0 {
            self.read_packet().await?;
        }
        let mut rows = Vec::new();
        loop {
            let p = self.read_packet().await?;
            match p.first() {
                Some(0xfe) if p.len() < MAX_PACKET => return Ok(rows),
                Some(0xff) => return Err(err_packet(p)),
                _ => {}
            }
            let mut pos = 0;
            let mut row = Vec::with_capacity(columns);
            for _ in 0..columns {
                match lenenc(p, &mut pos) {
                    None => row.push(None),
                    Some(len) => {
                        let end = (pos + len as usize).min(p.len());
                        row.push(Some(String::from_utf8_lossy(&p[pos..end]).into_owned()));
                        pos = end;
                    }
                }
            }
            rows.push(row);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenenc_round_trip() {
        for v in [0u64, 250, 251, 65_535, 65_536, 16_777_215, 16_777_216, u64::MAX / 3] {
            let mut out = Vec::new();
            put_lenenc(&mut out, v);
            let mut pos = 0;
            assert_eq!(lenenc(&out, &mut pos), Some(v));
            assert_eq!(pos, out.len());
        }
    }

    #[test]
    fn native_password_scramble_known_vector() {
        // SHA1("") never used: an empty password sends an empty response.
        assert!(native_scramble(b"", b"12345678901234567890").is_empty());
        let s = native_scramble(b"secret", b"01234567890123456789");
        assert_eq!(s.len(), 20);
        // XOR-ing back with SHA1(nonce + SHA1(SHA1(pw))) gives SHA1(pw).
        let h1 = sha1::Sha1::digest(b"secret");
        let h2 = sha1::Sha1::digest(h1);
        let mut h = sha1::Sha1::new();
        h.update(b"01234567890123456789");
        h.update(h2);
        let back: Vec<u8> = s.iter().zip(h.finalize()).map(|(a, b)| a ^ b).collect();
        assert_eq!(back, h1.to_vec());
    }
}
