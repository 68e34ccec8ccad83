//! Parsers for the server's packets. Every length, count and offset comes from the network,
//! so every read is bounds-checked and every failure is a `Malformed` naming what was wrong:
//! nothing here can panic or allocate more than the packet it is given.

use super::super::{DbError, Value};

pub const CLIENT_LONG_PASSWORD: u32 = 1;
pub const CLIENT_CONNECT_WITH_DB: u32 = 8;
pub const CLIENT_LOCAL_FILES: u32 = 0x80;
pub const CLIENT_PROTOCOL_41: u32 = 0x200;
pub const CLIENT_SSL: u32 = 0x800;
pub const CLIENT_TRANSACTIONS: u32 = 0x2000;
pub const CLIENT_SECURE_CONNECTION: u32 = 0x8000;
pub const CLIENT_MULTI_RESULTS: u32 = 0x20000;
pub const CLIENT_PLUGIN_AUTH: u32 = 0x80000;
pub const CLIENT_DEPRECATE_EOF: u32 = 0x0100_0000;
/// MariaDB's extended capabilities follow in the greeting only when a server leaves this bit
/// (CLIENT_LONG_PASSWORD to MySQL) off.
pub const CLIENT_MYSQL: u32 = 1;
/// MariaDB: a prepared statement's result metadata is sent only when it changed.
pub const MARIADB_CLIENT_CACHE_METADATA: u32 = 1 << 4;
const SERVER_MORE_RESULTS_EXISTS: u16 = 0x0008;

/// What a malformed packet lacked; becomes a protocol error naming the phase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed(pub &'static str);

/// A cursor over one packet's payload.
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    pub fn u8(&mut self, what: &'static str) -> Result<u8, Malformed> {
        Ok(self.take(1, what)?[0])
    }

    pub fn u16(&mut self, what: &'static str) -> Result<u16, Malformed> {
        let b = self.take(2, what)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    pub fn u32(&mut self, what: &'static str) -> Result<u32, Malformed> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], Malformed> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len()).ok_or(Malformed(what))?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    /// Bytes up to a NUL (consumed, not returned).
    pub fn nul_terminated(&mut self, what: &'static str) -> Result<&'a [u8], Malformed> {
        let rest = &self.buf[self.pos..];
        let n = rest.iter().position(|&b| b == 0).ok_or(Malformed(what))?;
        self.pos += n + 1;
        Ok(&rest[..n])
    }

    pub fn rest(&mut self) -> &'a [u8] {
        let s = &self.buf[self.pos..];
        self.pos = self.buf.len();
        s
    }

    /// A length-encoded integer; `None` is SQL NULL (0xfb).
    pub fn lenenc(&mut self, what: &'static str) -> Result<Option<u64>, Malformed> {
        let b = self.u8(what)?;
        let n = match b {
            0..=0xfa => return Ok(Some(b as u64)),
            0xfb => return Ok(None),
            0xfc => 2,
            0xfd => 3,
            0xfe => 8,
            0xff => return Err(Malformed(what)), // an ERR marker, never a length
        };
        let bytes = self.take(n, what)?;
        let mut v = [0u8; 8];
        v[..n].copy_from_slice(bytes);
        Ok(Some(u64::from_le_bytes(v)))
    }

    /// A length-encoded string; `None` is SQL NULL.
    pub fn lenenc_bytes(&mut self, what: &'static str) -> Result<Option<&'a [u8]>, Malformed> {
        match self.lenenc(what)? {
            None => Ok(None),
            Some(len) => {
                let len = usize::try_from(len).map_err(|_| Malformed(what))?;
                self.take(len, what).map(Some)
            }
        }
    }
}

pub fn put_lenenc(out: &mut Vec<u8>, v: u64) {
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

/// The server's initial handshake (protocol 10; v9 servers are older than MySQL 3.22).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Greeting {
    pub server_version: String,
    pub nonce: Vec<u8>,
    pub capabilities: u32,
    /// MariaDB's extended capabilities (0 from other servers).
    pub extended: u32,
    pub plugin: String,
}

impl Greeting {
    pub fn parse(p: &[u8]) -> Result<Greeting, Malformed> {
        let mut r = Reader::new(p);
        match r.u8("an empty greeting")? {
            10 => {}
            9 => return Err(Malformed("protocol version 9 (only protocol 10, MySQL 4.1 and later, is supported)")),
            _ => return Err(Malformed("no MySQL protocol version in the greeting")),
        }
        let version = r.nul_terminated("an unterminated server version")?;
        r.take(4, "a greeting cut short before the connection id")?;
        let mut nonce = r.take(8, "a greeting cut short in the nonce")?.to_vec();
        r.take(1, "a greeting cut short")?;
        let caps_low = r.u16("a greeting without capabilities")? as u32;
        let mut capabilities = caps_low;
        let mut plugin = String::new();
        let mut extended = 0;
        // Everything after the low capabilities is optional in old servers.
        if let Ok(_charset) = r.u8("") {
            r.u16("a greeting cut short in the status flags")?;
            capabilities |= (r.u16("a greeting cut short in the capabilities")? as u32) << 16;
            let auth_len = r.u8("a greeting cut short in the nonce length")? as usize;
            let reserved = r.take(10, "a greeting cut short in the reserved bytes")?;
            if capabilities & CLIENT_MYSQL == 0 {
                extended = u32::from_le_bytes([reserved[6], reserved[7], reserved[8], reserved[9]]);
            }
            if capabilities & CLIENT_SECURE_CONNECTION != 0 {
                // The rest of the nonce: max(13, auth_len - 8) bytes, NUL-terminated.
                let part2 = auth_len.saturating_sub(8).max(13);
                let p2 = r.take(part2, "a greeting cut short in the second nonce part")?;
                nonce.extend_from_slice(p2.strip_suffix(&[0]).unwrap_or(p2));
            }
            if capabilities & CLIENT_PLUGIN_AUTH != 0 {
                let rest = r.rest();
                let name = rest.split(|&b| b == 0).next().unwrap_or_default();
                plugin = String::from_utf8_lossy(name).into_owned();
            }
        }
        if capabilities & CLIENT_PROTOCOL_41 == 0 {
            return Err(Malformed("a server without the 4.1 protocol (CLIENT_PROTOCOL_41)"));
        }
        if plugin.is_empty() {
            plugin = "mysql_native_password".into();
        }
        let server_version = String::from_utf8_lossy(version).into_owned();
        Ok(Greeting { server_version, nonce, capabilities, extended, plugin })
    }
}

/// An ERR packet (0xff) as a DbError with the server's code. Tolerant: an ERR packet too
/// short to hold a code still is an error, with code 0.
pub fn err_packet(p: &[u8]) -> DbError {
    let code = u16::from_le_bytes([p.get(1).copied().unwrap_or(0), p.get(2).copied().unwrap_or(0)]);
    let msg_start = if p.get(3) == Some(&b'#') { 9 } else { 3 };
    let message = String::from_utf8_lossy(p.get(msg_start..).unwrap_or_default());
    // A server's message is shown as one line of bounded length.
    let message: String = message.chars().take(512).map(|c| if c.is_control() { ' ' } else { c }).collect();
    DbError::mysql(code, message)
}

/// An OK packet's counts (an EOF packet has none), and whether another result set follows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OkInfo {
    pub affected_rows: u64,
    pub last_insert_id: u64,
    pub more: bool,
}

impl OkInfo {
    pub fn parse(caps: u32, p: &[u8]) -> Result<OkInfo, Malformed> {
        let mut r = Reader::new(p);
        r.u8("an empty OK packet")?;
        if p.first() == Some(&0xfe) && p.len() < 9 && caps & CLIENT_DEPRECATE_EOF == 0 {
            // EOF: header, warnings(2), status(2)
            r.u16("an EOF packet cut short")?;
            let status = r.u16("an EOF packet cut short")?;
            return Ok(OkInfo { more: status & SERVER_MORE_RESULTS_EXISTS != 0, ..OkInfo::default() });
        }
        let affected_rows = r.lenenc("an OK packet cut short in the affected rows")?.unwrap_or(0);
        let last_insert_id = r.lenenc("an OK packet cut short in the insert id")?.unwrap_or(0);
        let status = r.u16("an OK packet cut short in the status")?;
        Ok(OkInfo { affected_rows, last_insert_id, more: status & SERVER_MORE_RESULTS_EXISTS != 0 })
    }
}

/// Whether an OK or EOF packet announces another result set.
pub fn more_results(caps: u32, p: &[u8]) -> Result<bool, Malformed> {
    OkInfo::parse(caps, p).map(|ok| ok.more)
}

/// What decoding a binary-protocol value needs from its column definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnFormat {
    pub charset: u16,
    pub kind: u8,
    pub flags: u16,
}

const BINARY_CHARSET: u16 = 63;
const UNSIGNED_FLAG: u16 = 0x20;

impl ColumnFormat {
    /// A column definition packet (protocol 4.1).
    pub fn parse(p: &[u8]) -> Result<ColumnFormat, Malformed> {
        let mut r = Reader::new(p);
        for _ in 0..6 {
            r.lenenc_bytes("a column definition cut short")?; // catalog, schema, tables, names
        }
        r.lenenc("a column definition cut short")?;
        let charset = r.u16("a column definition cut short")?;
        r.u32("a column definition cut short")?;
        let kind = r.u8("a column definition cut short")?;
        let flags = r.u16("a column definition cut short")?;
        Ok(ColumnFormat { charset, kind, flags })
    }
}

/// The name (alias) a column definition packet gives its column.
pub fn column_name(p: &[u8]) -> Result<String, Malformed> {
    let mut r = Reader::new(p);
    for _ in 0..4 {
        r.lenenc_bytes("a column definition cut short")?; // catalog, schema, table, org_table
    }
    let name = r.lenenc_bytes("a column definition cut short")?.unwrap_or_default();
    Ok(String::from_utf8_lossy(name).into_owned())
}

/// A binary-protocol result row (COM_STMT_EXECUTE) as values.
pub fn binary_row(p: &[u8], columns: &[ColumnFormat]) -> Result<Vec<Value>, Malformed> {
    let mut r = Reader::new(p);
    if r.u8("an empty row")? != 0 {
        return Err(Malformed("a binary row without its 0x00 header"));
    }
    let bitmap = r.take((columns.len() + 7 + 2) / 8, "a row cut short in its NULL bitmap")?;
    let mut row = Vec::with_capacity(columns.len());
    for (i, c) in columns.iter().enumerate() {
        let bit = i + 2;
        if bitmap[bit / 8] & (1 << (bit % 8)) != 0 {
            row.push(Value::Null);
            continue;
        }
        let unsigned = c.flags & UNSIGNED_FLAG != 0;
        const SHORT: &str = "a row cut short";
        let v = match c.kind {
            0x01 => {
                let b = r.u8(SHORT)?;
                Value::Int(if unsigned { b as i64 } else { b as i8 as i64 })
            }
            0x02 | 0x0d => {
                let v = r.u16(SHORT)?;
                Value::Int(if unsigned { v as i64 } else { v as i16 as i64 })
            }
            0x03 | 0x09 => {
                let v = r.u32(SHORT)?;
                Value::Int(if unsigned { v as i64 } else { v as i32 as i64 })
            }
            0x08 => {
                let b = r.take(8, SHORT)?;
                let v = u64::from_le_bytes(b.try_into().map_err(|_| Malformed(SHORT))?);
                match (unsigned, i64::try_from(v)) {
                    (true, Err(_)) => Value::Text(v.to_string()),
                    _ => Value::Int(v as i64),
                }
            }
            0x04 => Value::Float(f32::from_bits(r.u32(SHORT)?) as f64),
            0x05 => {
                let b = r.take(8, SHORT)?;
                Value::Float(f64::from_le_bytes(b.try_into().map_err(|_| Malformed(SHORT))?))
            }
            0x06 => Value::Null,
            0x07 | 0x0a | 0x0c | 0x0e => {
                let n = r.u8(SHORT)? as usize;
                Value::Text(datetime_text(r.take(n, SHORT)?)?)
            }
            0x0b => {
                let n = r.u8(SHORT)? as usize;
                Value::Text(time_text(r.take(n, SHORT)?)?)
            }
            0x00 | 0xf6 => Value::Text(String::from_utf8_lossy(r.lenenc_bytes(SHORT)?.unwrap_or_default()).into()),
            _ => {
                let b = r.lenenc_bytes(SHORT)?.unwrap_or_default();
                if c.charset == BINARY_CHARSET {
                    Value::Bytes(b.to_vec())
                } else {
                    Value::Text(String::from_utf8_lossy(b).into_owned())
                }
            }
        };
        row.push(v);
    }
    if !r.rest().is_empty() {
        return Err(Malformed("a row longer than its columns"));
    }
    Ok(row)
}

/// DATE/DATETIME/TIMESTAMP: 0, 4, 7 or 11 bytes.
fn datetime_text(b: &[u8]) -> Result<String, Malformed> {
    let mut r = Reader::new(b);
    if b.is_empty() {
        return Ok("0000-00-00 00:00:00".into());
    }
    const BAD: &str = "a malformed date";
    let (y, m, d) = (r.u16(BAD)?, r.u8(BAD)?, r.u8(BAD)?);
    let mut s = format!("{y:04}-{m:02}-{d:02}");
    if b.len() >= 7 {
        s.push_str(&format!(" {:02}:{:02}:{:02}", r.u8(BAD)?, r.u8(BAD)?, r.u8(BAD)?));
    }
    if b.len() >= 11 {
        s.push_str(&format!(".{:06}", r.u32(BAD)?));
    }
    Ok(s)
}

/// TIME: 0, 8 or 12 bytes (sign, days, h, m, s, microseconds).
fn time_text(b: &[u8]) -> Result<String, Malformed> {
    if b.is_empty() {
        return Ok("00:00:00".into());
    }
    const BAD: &str = "a malformed time";
    let mut r = Reader::new(b);
    let negative = r.u8(BAD)? == 1;
    let days = r.u32(BAD)? as u64;
    let (h, m, s) = (r.u8(BAD)? as u64, r.u8(BAD)?, r.u8(BAD)?);
    let mut t = format!("{}{:02}:{m:02}:{s:02}", if negative { "-" } else { "" }, days * 24 + h);
    if b.len() >= 12 {
        t.push_str(&format!(".{:06}", r.u32(BAD)?));
    }
    Ok(t)
}

/// The first packet of a result set: how many column definitions follow.
/// A result set's first packet: its column count and whether the column definitions follow.
/// With MARIADB_CLIENT_CACHE_METADATA agreed (`cached`) a flag byte says so; without, they
/// always do.
pub fn result_header(p: &[u8], max_columns: usize, cached: bool) -> Result<(usize, bool), Malformed> {
    let mut r = Reader::new(p);
    let n = r.lenenc("a result set without a column count")?.ok_or(Malformed("a NULL column count"))?;
    let n = match usize::try_from(n) {
        Ok(n) if n > 0 && n <= max_columns => n,
        Ok(0) => return Err(Malformed("a result set with zero columns")),
        _ => return Err(Malformed("a result set with more columns than the limit")),
    };
    let follows = !cached || r.u8("a column count without its metadata flag")? != 0;
    Ok((n, follows))
}

/// COM_STMT_PREPARE's OK: statement id, result columns, parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrepareOk {
    pub id: u32,
    pub columns: u16,
    pub params: u16,
}

impl PrepareOk {
    pub fn parse(p: &[u8], max_columns: usize) -> Result<PrepareOk, Malformed> {
        let mut r = Reader::new(p);
        if r.u8("an empty prepare reply")? != 0 {
            return Err(Malformed("a prepare reply that is neither OK nor ERR"));
        }
        let id = r.u32("a prepare reply cut short")?;
        let columns = r.u16("a prepare reply cut short")?;
        let params = r.u16("a prepare reply cut short")?;
        // Parameters are at most 65535 by the protocol and their definitions are skipped
        // unread; columns are kept, so they are capped.
        if columns as usize > max_columns {
            return Err(Malformed("a prepare reply with more columns than the limit"));
        }
        Ok(PrepareOk { id, columns, params })
    }
}

/// A text-protocol row of exactly `columns` values (NULL as None).
pub fn text_row(p: &[u8], columns: usize) -> Result<Vec<Option<String>>, Malformed> {
    let mut r = Reader::new(p);
    let mut row = Vec::with_capacity(columns.min(p.len()));
    for _ in 0..columns {
        let v = r.lenenc_bytes("a row cut short")?;
        row.push(v.map(|b| String::from_utf8_lossy(b).into_owned()));
    }
    if !r.rest().is_empty() {
        return Err(Malformed("a row longer than its columns"));
    }
    Ok(row)
}

/// A text-protocol row (COM_QUERY) as values typed by the column definitions, like
/// [`binary_row`]'s: integers, floats, NULL, bytes for binary columns, text otherwise.
pub fn text_values(p: &[u8], columns: &[ColumnFormat]) -> Result<Vec<Value>, Malformed> {
    let mut r = Reader::new(p);
    let mut row = Vec::with_capacity(columns.len());
    for c in columns {
        row.push(text_value(r.lenenc_bytes("a row cut short")?, c)?);
    }
    if !r.rest().is_empty() {
        return Err(Malformed("a row longer than its columns"));
    }
    Ok(row)
}

/// One text-protocol value (`None`: NULL) as the value the binary protocol would give.
pub fn text_value(v: Option<&[u8]>, c: &ColumnFormat) -> Result<Value, Malformed> {
    let Some(b) = v else { return Ok(Value::Null) };
    let text = || std::str::from_utf8(b).map_err(|_| Malformed("a number that is not text"));
    Ok(match c.kind {
        // TINY, SHORT, LONG, LONGLONG, INT24, YEAR: an unsigned BIGINT above i64 stays text.
        0x01 | 0x02 | 0x03 | 0x08 | 0x09 | 0x0d => match text()?.parse::<i64>() {
            Ok(i) => Value::Int(i),
            Err(_) if c.flags & UNSIGNED_FLAG != 0 && text()?.parse::<u64>().is_ok() => Value::Text(text()?.into()),
            Err(_) => return Err(Malformed("an integer column with a value that is not an integer")),
        },
        // FLOAT is read as the binary protocol reads it: a 32-bit float, widened.
        0x04 => Value::Float(text()?.parse::<f32>().map_err(|_| Malformed("a FLOAT that is not a number"))? as f64),
        0x05 => Value::Float(text()?.parse::<f64>().map_err(|_| Malformed("a DOUBLE that is not a number"))?),
        0x06 => Value::Null,
        _ if c.charset == BINARY_CHARSET && !matches!(c.kind, 0x00 | 0xf6 | 0x07 | 0x0a | 0x0b | 0x0c | 0x0e) => {
            Value::Bytes(b.to_vec())
        }
        _ => Value::Text(String::from_utf8_lossy(b).into_owned()),
    })
}

/// What the server says during authentication after the client's response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthReply {
    Ok,
    Err(DbError),
    /// Use another plugin, with a new nonce.
    Switch {
        plugin: String,
        nonce: Vec<u8>,
    },
    /// caching_sha2_password: the fast path worked, OK follows.
    FastAuthOk,
    /// caching_sha2_password: send the full password (only over a secure transport).
    FullAuth,
}

impl AuthReply {
    pub fn parse(p: &[u8]) -> Result<AuthReply, Malformed> {
        let mut r = Reader::new(p);
        match r.u8("an empty authentication reply")? {
            0x00 => Ok(AuthReply::Ok),
            0xff => Ok(AuthReply::Err(err_packet(p))),
            0xfe => {
                let plugin = r.nul_terminated("an auth switch without a plugin name")?;
                let data = r.rest();
                Ok(AuthReply::Switch {
                    plugin: String::from_utf8_lossy(plugin).into_owned(),
                    nonce: data.strip_suffix(&[0]).unwrap_or(data).to_vec(),
                })
            }
            0x01 => match r.u8("an empty auth-more-data packet")? {
                3 => Ok(AuthReply::FastAuthOk),
                4 => Ok(AuthReply::FullAuth),
                _ => Err(Malformed("auth-more-data this client does not speak")),
            },
            _ => Err(Malformed("an authentication reply that is neither OK, ERR nor a switch")),
        }
    }
}

#[cfg(test)]
mod tests;
