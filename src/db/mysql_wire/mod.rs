//! A lean MySQL client/server protocol client for the measured hot path: prepared
//! statements over the binary protocol (or, for plain text queries, statements described
//! and closed at once, then sent as COM_QUERY), result rows skipped without decoding,
//! buffers reused, one write per command. It speaks plain TCP and Unix sockets with
//! mysql_native_password and caching_sha2_password (fast path, or cleartext on a socket);
//! anything else (TLS, RSA key exchange, other plugins) is left to mysql_async.
//!
//! The server is not trusted: every length is checked against [`WireLimits`], sequence ids
//! are checked, rows being skipped are never buffered, and a malformed reply is a protocol
//! error naming the phase, never a panic. Memory per measured connection stays under
//! 1 MiB plus a 64 KiB buffer whatever the server sends (rows are skipped unbuffered);
//! the introspection queries (query_rows) keep at most `max_packet` of rows and packets.

mod auth;
mod framing;
mod local_infile;
mod packets;
#[cfg(test)]
mod tests;

pub use super::socket::Socket;
use super::socket::{Inbox, READ_BUFFER};
use super::{ClientFault, DbError, Executed, KeptRow, Param};
use framing::{too_large, PacketKind};
use packets::*;

pub use local_infile::LoadOutcome;
pub use packets::{text_value, ColumnFormat};

/// The protocol's frame limit: a payload this long continues in the next frame.
const MAX_FRAME: usize = 0xff_ffff;
/// Handshake and authentication packets are small; anything larger is not a MySQL server.
const HANDSHAKE_LIMIT: usize = 64 * 1024;
/// Authentication replies read before giving up (one switch, fast-auth, full auth, OK).
const MAX_AUTH_REPLIES: usize = 4;
/// OK, ERR, EOF, column counts and prepare replies on the measured path: small by nature.
/// Rows are skipped unbuffered, so a client connection holds at most this plus READ_BUFFER
/// whatever `max_packet` is; only introspection (query_rows) buffers up to `max_packet`.
const STATUS_LIMIT: usize = 1024 * 1024;

#[cfg(test)]
use super::socket::fuzz_cases;

/// What the client accepts from a server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WireLimits {
    /// The largest packet (a reply row, an error) read into memory or skipped.
    pub max_packet: usize,
    /// The most columns (and statement parameters) a reply may announce.
    pub max_columns: usize,
    /// Announce CLIENT_LOCAL_FILES (connections that bulk load).
    pub local_infile: bool,
    /// `?tls=prefer`: a greeting offering TLS ends the attempt ([`ConnectError::TlsOffered`]).
    pub prefer_tls: bool,
}

impl Default for WireLimits {
    fn default() -> Self {
        WireLimits { max_packet: 64 * 1024 * 1024, max_columns: 4096, local_infile: false, prefer_tls: false }
    }
}

pub enum ConnectError {
    /// The server wants an authentication this client does not speak: use mysql_async.
    Unsupported,
    /// `?tls=prefer` and the server offers TLS, which this client does not speak: use mysql_async.
    TlsOffered,
    Db(DbError),
}

impl From<DbError> for ConnectError {
    fn from(e: DbError) -> Self {
        ConnectError::Db(e)
    }
}

/// How a result row is encoded: binary rows of an execution of prepared statement `.0`
/// (COM_STMT_EXECUTE), COM_QUERY's text rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RowFormat {
    Binary(usize),
    Text,
}

struct Prepared {
    id: u32,
    params: u16,
    /// The names of the columns it returns (read once, at prepare).
    columns: Vec<String>,
    /// Their types, from prepare and refreshed whenever an execution's reply carries them:
    /// with MARIADB_CLIENT_CACHE_METADATA the server sends them only when they changed.
    types: Vec<ColumnFormat>,
}

pub struct WireConn<S: Socket> {
    stream: S,
    limits: WireLimits,
    /// Bytes read from the socket, not yet consumed.
    inbox: Inbox,
    /// A payload spread over several frames, assembled here.
    long: Vec<u8>,
    out: Vec<u8>,
    seq: u8,
    caps: u32,
    /// MARIADB_CLIENT_CACHE_METADATA was agreed.
    cache_metadata: bool,
    /// A command is being written: a COM_QUIT now would corrupt the stream.
    writing: bool,
    statements: Vec<Prepared>,
    pub server_version: String,
}

fn malformed(phase: &str, m: Malformed) -> DbError {
    DbError::protocol(format!("malformed reply from the server {phase}: {}", m.0))
}

impl<S: Socket> WireConn<S> {
    /// Handshake and authentication. `secure`: the transport is a Unix socket, where
    /// caching_sha2_password may send the password in clear.
    pub async fn connect(
        stream: S,
        user: &str,
        password: &str,
        db: &str,
        secure: bool,
        limits: WireLimits,
    ) -> Result<Self, ConnectError> {
        let mut c = WireConn {
            stream,
            limits,
            inbox: Inbox::default(),
            long: Vec::new(),
            out: Vec::with_capacity(256),
            seq: 0,
            caps: 0,
            cache_metadata: false,
            writing: false,
            statements: Vec::new(),
            server_version: String::new(),
        };
        let greeting = c.greeting().await?;
        if limits.prefer_tls && greeting.capabilities & CLIENT_SSL != 0 {
            return Err(ConnectError::TlsOffered);
        }
        c.server_version = greeting.server_version.clone();
        c.caps = (CLIENT_LONG_PASSWORD
            | CLIENT_CONNECT_WITH_DB
            | CLIENT_PROTOCOL_41
            | CLIENT_TRANSACTIONS
            | CLIENT_SECURE_CONNECTION
            | CLIENT_MULTI_RESULTS
            | CLIENT_PLUGIN_AUTH
            | CLIENT_DEPRECATE_EOF
            | if limits.local_infile { CLIENT_LOCAL_FILES } else { 0 })
            & greeting.capabilities;
        // As libmariadb (sysbench's client) does: results of prepared statements then come
        // without their column definitions unless these changed.
        let extended = greeting.extended & MARIADB_CLIENT_CACHE_METADATA;
        c.cache_metadata = extended != 0;
        let response = auth::scramble(&greeting.plugin, password, &greeting.nonce).ok_or(ConnectError::Unsupported)?;
        c.out.clear();
        c.out.extend_from_slice(&c.caps.to_le_bytes());
        c.out.extend_from_slice(&(16u32 << 20).to_le_bytes());
        c.out.push(45); // utf8mb4_general_ci
        c.out.extend_from_slice(&[0; 19]);
        c.out.extend_from_slice(&extended.to_le_bytes());
        c.out.extend_from_slice(user.as_bytes());
        c.out.push(0);
        c.out.push(response.len() as u8);
        c.out.extend_from_slice(&response);
        c.out.extend_from_slice(db.as_bytes());
        c.out.push(0);
        c.out.extend_from_slice(greeting.plugin.as_bytes());
        c.out.push(0);
        c.send().await?;
        c.authenticate(password, secure).await?;
        Ok(c)
    }

    /// The server's first packet: its greeting, or an error (too many connections, a host
    /// not allowed).
    async fn greeting(&mut self) -> Result<Greeting, ConnectError> {
        let p = match self.read_packet(HANDSHAKE_LIMIT, "as its greeting").await {
            Err(e) if e.fault() == Some(ClientFault::Protocol) => {
                return Err(DbError::protocol(format!("{} (is this a MySQL server?)", e.message)).into());
            }
            p => p?,
        };
        if p.first() == Some(&0xff) {
            return Err(err_packet(p).into());
        }
        Ok(Greeting::parse(p).map_err(|m| malformed("in its greeting (is this a MySQL server?)", m))?)
    }

    /// The server's replies to the handshake response, until it accepts or refuses: one
    /// switch of method, a fast-auth OK, or a full authentication (cleartext on a socket).
    async fn authenticate(&mut self, password: &str, secure: bool) -> Result<(), ConnectError> {
        let mut switched = false;
        for _ in 0..MAX_AUTH_REPLIES {
            let p = self.read_packet(HANDSHAKE_LIMIT, "authentication").await?;
            match AuthReply::parse(p).map_err(|m| malformed("during authentication", m))? {
                AuthReply::Ok => return Ok(()),
                AuthReply::Err(e) => return Err(e.into()),
                AuthReply::Switch { plugin, nonce } => {
                    if switched {
                        return Err(DbError::protocol("the server asked to switch authentication method twice").into());
                    }
                    switched = true;
                    let resp = auth::scramble(&plugin, password, &nonce).ok_or(ConnectError::Unsupported)?;
                    self.out.clear();
                    self.out.extend_from_slice(&resp);
                    self.send().await?;
                }
                AuthReply::FastAuthOk => {}
                AuthReply::FullAuth => {
                    // Cleartext only on a socket; RSA is mysql_async's job.
                    if !secure {
                        return Err(ConnectError::Unsupported);
                    }
                    self.out.clear();
                    self.out.extend_from_slice(password.as_bytes());
                    self.out.push(0);
                    self.send().await?;
                }
            }
        }
        Err(DbError::protocol(format!("authentication did not finish after {MAX_AUTH_REPLIES} server replies")).into())
    }

    /// Reads a complete response, skipping any result rows.
    async fn drain_response(
        &mut self,
        phase: &str,
        row: Option<&mut KeptRow<'_>>,
        format: RowFormat,
    ) -> Result<Executed, DbError> {
        let result = self.drain_inner(phase, row, format).await;
        self.finished();
        result
    }

    /// A reply is complete and the server speaks only when spoken to: if every byte
    /// received is consumed, the socket is empty.
    fn finished(&mut self) {
        if self.inbox.empty() {
            self.stream.drained();
        }
    }

    /// The first packet of a reply: OK (Ok(None)), ERR, or a result set's column count.
    async fn reply_start(&mut self, phase: &str) -> Result<Option<usize>, DbError> {
        let (caps, max_columns, cached) = (self.caps, self.limits.max_columns, self.cache_metadata);
        let p = self.read_packet(STATUS_LIMIT, phase).await?;
        match p.first() {
            Some(0x00) => {
                if more_results(caps, p).map_err(|m| malformed(phase, m))? {
                    return Err(DbError::protocol(format!("unexpected extra result sets from the server {phase}")));
                }
                Ok(None)
            }
            Some(0xff) => Err(err_packet(p)),
            _ => match result_header(p, max_columns, cached).map_err(|m| malformed(phase, m))? {
                (n, true) => Ok(Some(n)),
                (_, false) => Err(DbError::protocol(format!("a text result without its column definitions {phase}"))),
            },
        }
    }

    /// Reads a reply to its end: counts from OK packets, rows counted and skipped unread,
    /// except the rows of the first result set `row` keeps (decoded as `format` says).
    async fn drain_inner(
        &mut self,
        phase: &str,
        mut row: Option<&mut KeptRow<'_>>,
        format: RowFormat,
    ) -> Result<Executed, DbError> {
        let (caps, cached) = (self.caps, self.cache_metadata);
        let WireLimits { max_packet, max_columns, .. } = self.limits;
        let mut done = Executed::default();
        let count = |p: &[u8], done: &mut Executed| -> Result<bool, DbError> {
            let ok = OkInfo::parse(caps, p).map_err(|m| malformed(phase, m))?;
            done.affected_rows += ok.affected_rows;
            if ok.last_insert_id != 0 {
                done.last_insert_id = Some(ok.last_insert_id);
            }
            Ok(ok.more)
        };
        loop {
            let p = self.read_packet(STATUS_LIMIT, phase).await?;
            let header = match p.first() {
                Some(0x00) => {
                    if count(p, &mut done)? {
                        continue;
                    }
                    return Ok(done);
                }
                Some(0xff) => return Err(err_packet(p)),
                _ => result_header(p, max_columns, cached).map_err(|m| malformed(phase, m))?,
            };
            // A result set: column definitions, [EOF], rows, EOF/OK. Only rows of the first
            // result set are read, and only those `row` keeps.
            let mut want_row = row.as_ref().is_some_and(|r| r.wants()) && done.rows == 0;
            let stmt = match format {
                RowFormat::Binary(stmt) => Some(stmt),
                RowFormat::Text => None,
            };
            let types = self.definitions(stmt, header, want_row, phase).await?;
            loop {
                if !want_row {
                    done.rows += self.skip_buffered_rows(u64::MAX);
                }
                let (len, kind) = self.next_kind().await?;
                match kind {
                    PacketKind::Data if want_row => {
                        let p = self.payload(len, max_packet, phase).await?;
                        let values = match format {
                            RowFormat::Binary(_) => binary_row(p, &types),
                            RowFormat::Text => text_values(p, &types),
                        }
                        .map_err(|m| malformed(phase, m))?;
                        if let Some(out) = row.as_deref_mut().and_then(KeptRow::next_row) {
                            *out = values;
                        }
                        want_row = row.as_ref().is_some_and(|r| r.wants());
                        done.rows += 1;
                    }
                    PacketKind::Data => {
                        self.skip_payload(len).await?;
                        done.rows += 1;
                    }
                    PacketKind::Status => {
                        let p = self.payload(len, STATUS_LIMIT, phase).await?;
                        if p[0] == 0xff {
                            return Err(err_packet(p));
                        }
                        if count(p, &mut done)? {
                            break;
                        }
                        return Ok(done);
                    }
                }
            }
        }
    }

    /// A result set's column types when a row is wanted (else none): from the definitions
    /// that follow `columns`, or, when the server left them out (MARIADB_CLIENT_CACHE_METADATA),
    /// statement `stmt`'s copy; definitions that come refresh that copy.
    async fn definitions(
        &mut self,
        stmt: Option<usize>,
        (columns, follows): (usize, bool),
        want_row: bool,
        phase: &str,
    ) -> Result<Vec<ColumnFormat>, DbError> {
        let cached = stmt.filter(|_| self.cache_metadata);
        match (follows, cached) {
            (true, Some(s)) => {
                let types = self.read_definitions(columns, phase).await?;
                let kept = &mut self.statements[s].types;
                *kept = types;
                Ok(if want_row { kept.clone() } else { Vec::new() })
            }
            (true, None) if want_row => self.read_definitions(columns, phase).await,
            (true, None) => self.skip_definitions(columns, phase).await.map(|_| Vec::new()),
            (false, Some(s)) => {
                self.eof_after_definitions(columns, phase).await?;
                let kept = &self.statements[s].types;
                if kept.len() != columns {
                    return Err(DbError::protocol(format!(
                        "a result of {columns} columns without their definitions, where the statement had {} {phase}",
                        kept.len()
                    )));
                }
                Ok(if want_row { kept.clone() } else { Vec::new() })
            }
            (false, None) => Err(DbError::protocol(format!("a text result without its column definitions {phase}"))),
        }
    }

    /// Reads `n` column definitions (and the EOF after them without CLIENT_DEPRECATE_EOF).
    async fn read_definitions(&mut self, n: usize, phase: &str) -> Result<Vec<ColumnFormat>, DbError> {
        let mut types = Vec::with_capacity(n);
        for _ in 0..n {
            let p = self.read_packet(STATUS_LIMIT, phase).await?;
            if matches!(p.first(), Some(0xff)) {
                return Err(err_packet(p));
            }
            types.push(ColumnFormat::parse(p).map_err(|m| malformed(phase, m))?);
        }
        self.eof_after_definitions(n, phase).await?;
        Ok(types)
    }

    /// Without CLIENT_DEPRECATE_EOF, an EOF packet follows column definitions.
    async fn eof_after_definitions(&mut self, n: usize, phase: &str) -> Result<(), DbError> {
        if n > 0 && self.caps & CLIENT_DEPRECATE_EOF == 0 {
            let p = self.read_packet(STATUS_LIMIT, phase).await?;
            if p.first() != Some(&0xfe) {
                return Err(DbError::protocol(format!("no EOF after the column definitions {phase}")));
            }
        }
        Ok(())
    }

    /// Skips `n` column definitions and, without CLIENT_DEPRECATE_EOF, the EOF after them.
    async fn skip_definitions(&mut self, n: usize, phase: &str) -> Result<(), DbError> {
        let buffered = self.skip_buffered_rows(n as u64) as usize;
        for _ in buffered..n {
            if self.skip_unless_status(phase).await?.is_some() {
                return Err(DbError::protocol(format!("a result set cut short in its columns {phase}")));
            }
        }
        self.eof_after_definitions(n, phase).await
    }

    pub async fn prepare(&mut self, sql: &str) -> Result<usize, DbError> {
        const PHASE: &str = "in reply to COM_STMT_PREPARE";
        self.command(0x16, |out| out.extend_from_slice(sql.as_bytes())).await?;
        let max_columns = self.limits.max_columns;
        let p = self.read_packet(STATUS_LIMIT, PHASE).await?;
        if p.first() == Some(&0xff) {
            return Err(err_packet(p));
        }
        let ok = PrepareOk::parse(p, max_columns).map_err(|m| malformed(PHASE, m))?;
        self.skip_definitions(ok.params as usize, PHASE).await?;
        let mut columns = Vec::with_capacity(ok.columns as usize);
        let mut types = Vec::with_capacity(ok.columns as usize);
        for _ in 0..ok.columns {
            let p = self.read_packet(STATUS_LIMIT, PHASE).await?;
            columns.push(column_name(p).map_err(|m| malformed(PHASE, m))?);
            types.push(ColumnFormat::parse(p).map_err(|m| malformed(PHASE, m))?);
        }
        self.eof_after_definitions(ok.columns as usize, PHASE).await?;
        self.finished();
        // One more, not four more: every client connection holds this list all run.
        self.statements.reserve_exact(1);
        self.statements.push(Prepared { id: ok.id, params: ok.params, columns, types });
        Ok(self.statements.len() - 1)
    }

    /// The column names of prepared statement `stmt`.
    pub fn columns(&self, stmt: usize) -> Result<Vec<String>, DbError> {
        self.statements.get(stmt).map(|s| s.columns.clone()).ok_or_else(|| DbError::no_statement(stmt))
    }

    pub async fn execute(&mut self, stmt: usize, params: &[Param<'_>]) -> Result<Executed, DbError> {
        self.send_execute(stmt, params).await?;
        self.drain_response("in reply to COM_STMT_EXECUTE", None, RowFormat::Binary(stmt)).await
    }

    /// Executes and keeps the first row's values in `row`.
    #[cfg(test)]
    pub async fn execute_row(
        &mut self,
        stmt: usize,
        params: &[Param<'_>],
        row: &mut Vec<super::Value>,
    ) -> Result<Executed, DbError> {
        self.execute_into(stmt, params, Some(&mut KeptRow::new(row, super::RowPick::First))).await
    }

    /// Executes, keeping in `row` the rows it asks for (the caller finishes it).
    pub async fn execute_into(
        &mut self,
        stmt: usize,
        params: &[Param<'_>],
        row: Option<&mut KeptRow<'_>>,
    ) -> Result<Executed, DbError> {
        self.send_execute(stmt, params).await?;
        self.drain_response("in reply to COM_STMT_EXECUTE", row, RowFormat::Binary(stmt)).await
    }

    async fn send_execute(&mut self, stmt: usize, params: &[Param<'_>]) -> Result<(), DbError> {
        let Some(s) = self.statements.get(stmt) else {
            return Err(DbError::no_statement(stmt));
        };
        let (id, n) = (s.id, s.params as usize);
        if n != params.len() {
            return Err(DbError::arity(n, params.len()));
        }
        self.command(0x17, |out| {
            out.extend_from_slice(&id.to_le_bytes());
            out.push(0); // CURSOR_TYPE_NO_CURSOR
            out.extend_from_slice(&1u32.to_le_bytes());
            if n > 0 {
                let bitmap = out.len();
                out.extend(std::iter::repeat_n(0u8, n.div_ceil(8)));
                for (i, p) in params.iter().enumerate() {
                    if matches!(p, Param::Null) {
                        out[bitmap + i / 8] |= 1 << (i % 8);
                    }
                }
                out.push(1); // types follow
                for p in params {
                    // An integer that fits 32 bits goes as LONG, as sysbench sends it.
                    out.extend_from_slice(match p {
                        Param::Null => &[0x06, 0],
                        Param::Int(i) if i32::try_from(*i).is_ok() => &[0x03, 0],
                        Param::Int(_) => &[0x08, 0],
                        Param::Float(_) => &[0x05, 0],
                        Param::Text(_) => &[0xfd, 0],
                        Param::Bytes(_) => &[0xfc, 0],
                    });
                }
                for p in params {
                    match *p {
                        Param::Null => {}
                        Param::Int(i) => match i32::try_from(i) {
                            Ok(small) => out.extend_from_slice(&small.to_le_bytes()),
                            Err(_) => out.extend_from_slice(&i.to_le_bytes()),
                        },
                        Param::Float(f) => out.extend_from_slice(&f.to_le_bytes()),
                        Param::Text(s) => {
                            put_lenenc(out, s.len() as u64);
                            out.extend_from_slice(s.as_bytes());
                        }
                        Param::Bytes(b) => {
                            put_lenenc(out, b.len() as u64);
                            out.extend_from_slice(b);
                        }
                    }
                }
            }
        })
        .await
    }

    pub async fn simple(&mut self, sql: &str) -> Result<(), DbError> {
        self.command(0x03, |out| out.extend_from_slice(sql.as_bytes())).await?;
        self.drain_response("in reply to COM_QUERY", None, RowFormat::Text).await.map(|_| ())
    }

    /// Plain text queries: prepares `sql` only to learn its parameters and columns, then
    /// closes it (COM_STMT_CLOSE, which has no reply) so the server keeps no statement.
    /// Returns the handle (for [`columns`](Self::columns)) and the parameter count.
    pub async fn describe(&mut self, sql: &str) -> Result<(usize, usize), DbError> {
        let stmt = self.prepare(sql).await?;
        let (id, params) = (self.statements[stmt].id, self.statements[stmt].params as usize);
        self.command(0x19, |out| out.extend_from_slice(&id.to_le_bytes())).await?;
        Ok((stmt, params))
    }

    /// SQL text (COM_QUERY) read like a statement's reply: counts, rows skipped unread,
    /// the first row kept in `row` when asked (cleared first).
    pub async fn query(&mut self, sql: &str, row: Option<&mut KeptRow<'_>>) -> Result<Executed, DbError> {
        self.command(0x03, |out| out.extend_from_slice(sql.as_bytes())).await?;
        self.drain_response("in reply to COM_QUERY", row, RowFormat::Text).await
    }

    /// A text-protocol query's rows as strings (NULL as None): for SHOW commands. Rows are
    /// read into memory, so this is for introspection, never the workload.
    pub async fn query_rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, DbError> {
        const PHASE: &str = "in reply to a SHOW query";
        self.command(0x03, |out| out.extend_from_slice(sql.as_bytes())).await?;
        let Some(columns) = self.reply_start(PHASE).await? else {
            return Ok(Vec::new());
        };
        self.skip_definitions(columns, PHASE).await?;
        let mut rows = Vec::new();
        let mut bytes = 0usize;
        let (caps, max_packet) = (self.caps, self.limits.max_packet);
        loop {
            let p = self.read_packet(max_packet, PHASE).await?;
            match p.first() {
                Some(0xfe) if p.len() < MAX_FRAME => {
                    if more_results(caps, p).map_err(|m| malformed(PHASE, m))? {
                        return Err(DbError::protocol(format!("unexpected extra result sets {PHASE}")));
                    }
                    self.finished();
                    return Ok(rows);
                }
                Some(0xff) => return Err(err_packet(p)),
                _ => {}
            }
            // The rows kept are bounded like one packet: a server cannot fill memory.
            bytes += p.len() + 24 * columns;
            if bytes > max_packet {
                return Err(too_large(bytes, max_packet, PHASE, true));
            }
            rows.push(text_row(p, columns).map_err(|m| malformed(PHASE, m))?);
        }
    }
}

impl<S: Socket> Drop for WireConn<S> {
    /// COM_QUIT, so the server counts a clean close rather than an aborted client.
    fn drop(&mut self) {
        if !self.writing {
            self.stream.try_send(&[1, 0, 0, 0, 0x01]);
        }
    }
}
