//! A lean PostgreSQL (protocol 3.0) client for the measured hot path, owned by the task
//! that uses it: no connection task, no channels. Statements are parsed and described once
//! (named); each execution is Bind/Execute/Sync in one write, and the reply is read up to
//! ReadyForQuery from a reused buffer, rows counted and skipped unread except the first
//! when asked for. Plain text queries (`prepared_statements` off) describe each statement
//! once (unnamed) and send executions over the simple query protocol. Plain TCP and Unix
//! sockets only: TLS targets stay with tokio-postgres.
//!
//! The server is not trusted: every message's length is checked against `--max-packet`
//! before it is buffered, rows being skipped are never buffered, and a malformed reply is
//! a protocol error, never a panic.

mod auth;
mod framing;
mod messages;
mod reply;
#[cfg(test)]
mod tests;
pub(super) mod values;

use super::socket::{Inbox, Socket};
use super::text_sql::TextSql;
use super::{ClientFault, DbError, Dialect, Executed, KeptRow, Param, RowPick, Value};
pub use auth::Credentials;
use bytes::BytesMut;
use reply::{command_count, row_values, server_error, text_row};
use tokio_postgres::types::Type;

/// The most columns (and parameters) a description may announce (PostgreSQL allows 1,664).
const MAX_COLUMNS: usize = 4096;
/// Data per CopyData message.
const COPY_CHUNK: usize = 64 * 1024;
const COPY_PHASE: &str = "in reply to COPY FROM STDIN";

pub struct Column {
    pub name: String,
    /// None: a type this client does not know (read and sent as text).
    pub ty: Option<Type>,
}

pub struct Statement {
    /// Its Bind message's fixed parts (its name: "" for a plain text query's description).
    bind: messages::BindFrame,
    params: Vec<Option<Type>>,
    columns: Vec<Column>,
    /// Plain text queries: the SQL executions render their parameters into.
    text: Option<TextSql>,
}

pub struct PgConn<S: Socket> {
    stream: S,
    inbox: Inbox,
    out: BytesMut,
    max_message: usize,
    /// A message is being written: a Terminate now would corrupt the stream.
    writing: bool,
    statements: Vec<Statement>,
    /// Plain text queries (`prepared_statements` off): the buffer executions render into.
    text: Option<String>,
    pub server_version: String,
}

/// `?` to `$1, $2, ...` (the workload SQL has no `?` inside literals).
pub fn numbered_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut n = 0;
    for ch in sql.chars() {
        if ch == '?' {
            n += 1;
            out.push('$');
            out.push_str(&n.to_string());
        } else {
            out.push(ch);
        }
    }
    out
}

fn unexpected(kind: u8, phase: &str) -> DbError {
    DbError::protocol(format!("unexpected message '{}' from the server {phase}", (kind as char).escape_default()))
}

/// Bytes that break the protocol before the session starts: likely another kind of server.
fn foreign(mut e: DbError) -> DbError {
    if e.fault() == Some(ClientFault::Protocol) && !e.message.contains("is this a PostgreSQL server?") {
        e.message.push_str(" (is this a PostgreSQL server?)");
    }
    e
}

fn malformed(phase: &str, m: reply::Malformed) -> DbError {
    DbError::protocol(format!("malformed message from the server {phase}: {}", m.0))
}

impl<S: Socket> PgConn<S> {
    /// Startup and authentication, then the server's parameters up to ReadyForQuery.
    /// `text`: plain text queries instead of prepared statements.
    pub async fn connect(
        stream: S,
        who: &Credentials<'_>,
        database: &str,
        max_message: usize,
        text: bool,
    ) -> Result<Self, DbError> {
        let mut c = PgConn {
            stream,
            inbox: Inbox::default(),
            out: BytesMut::with_capacity(256),
            max_message,
            writing: false,
            statements: Vec::new(),
            text: text.then(String::new),
            server_version: String::new(),
        };
        messages::startup(&mut c.out, who.user, database);
        c.send().await?;
        c.authenticate(who).await.map_err(foreign)?;
        c.server_parameters().await.map_err(foreign)?;
        Ok(c)
    }

    /// The server's parameters and key, up to ReadyForQuery.
    async fn server_parameters(&mut self) -> Result<(), DbError> {
        loop {
            let (kind, body) = self.message().await?;
            match kind {
                b'Z' => break,
                b'E' => return Err(server_error(body)),
                b'S' => {
                    let mut r = reply::Reader(body);
                    if r.cstr("name").is_ok_and(|n| n == b"server_version") {
                        self.server_version = String::from_utf8_lossy(r.cstr("value").unwrap_or_default()).into_owned();
                    }
                }
                b'K' | b'N' | b'v' => {}
                _ => return Err(unexpected(kind, "after authentication")),
            }
        }
        self.finished();
        Ok(())
    }

    /// Parses and describes `sql` (`?` placeholders) once; returns its handle.
    pub async fn prepare(&mut self, sql: &str) -> Result<usize, DbError> {
        let (name, text, numbered) = match self.text {
            None => (format!("fb{}", self.statements.len()), None, numbered_placeholders(sql)),
            Some(_) => {
                let t = TextSql::new(Dialect::Postgres, sql);
                let numbered = t.numbered();
                (String::new(), Some(t), numbered)
            }
        };
        self.out.clear();
        messages::parse_describe(&mut self.out, &name, &numbered);
        messages::sync(&mut self.out);
        self.send().await?;
        let (params, columns) = self.read_description().await?;
        if let Some(t) = &text {
            t.check_count(params.len())?;
        }
        let bind = messages::BindFrame::new(&name, &params, &columns);
        self.statements.push(Statement { bind, params, columns, text });
        Ok(self.statements.len() - 1)
    }

    /// ParseComplete, ParameterDescription, RowDescription or NoData, ReadyForQuery.
    async fn read_description(&mut self) -> Result<(Vec<Option<Type>>, Vec<Column>), DbError> {
        const PHASE: &str = "in reply to Parse/Describe";
        let (mut params, mut columns, mut failed) = (Vec::new(), Vec::new(), None);
        loop {
            let (kind, body) = self.message().await.map_err(|e| failed.take().map_or(e, lost))?;
            match kind {
                b'1' | b'n' | b'N' | b'S' | b'A' => {}
                b't' => params = reply::parameter_types(body, MAX_COLUMNS).map_err(|m| malformed(PHASE, m))?,
                b'T' => columns = reply::columns(body, MAX_COLUMNS).map_err(|m| malformed(PHASE, m))?,
                b'E' => failed = failed.or(Some(server_error(body))),
                b'Z' => break,
                _ => return Err(unexpected(kind, PHASE)),
            }
        }
        self.finished();
        failed.map_or(Ok((params, columns)), Err)
    }

    /// The column names of statement `stmt`.
    pub fn columns(&self, stmt: usize) -> Result<Vec<String>, DbError> {
        let st = self.statements.get(stmt).ok_or_else(|| DbError::no_statement(stmt))?;
        Ok(st.columns.iter().map(|c| c.name.clone()).collect())
    }

    /// The types of the columns statement `stmt` returns; None when one is a type this
    /// client does not know.
    pub fn column_types(&self, stmt: usize) -> Result<Option<Vec<Type>>, DbError> {
        let st = self.statements.get(stmt).ok_or_else(|| DbError::no_statement(stmt))?;
        Ok(st.columns.iter().map(|c| c.ty.clone()).collect())
    }

    /// Executes statement `stmt`, rows counted and skipped: the measured hot path.
    pub async fn execute(&mut self, stmt: usize, params: &[Param<'_>]) -> Result<Executed, DbError> {
        self.run(stmt, params, None).await
    }

    /// The same, keeping the first row's values in `row` (cleared first).
    #[cfg(test)]
    pub async fn execute_row(
        &mut self,
        stmt: usize,
        params: &[Param<'_>],
        row: &mut Vec<Value>,
    ) -> Result<Executed, DbError> {
        self.execute_kept(stmt, params, RowPick::First, row).await
    }

    /// The same, keeping the row `pick` names.
    pub async fn execute_kept(
        &mut self,
        stmt: usize,
        params: &[Param<'_>],
        pick: RowPick,
        row: &mut Vec<Value>,
    ) -> Result<Executed, DbError> {
        self.run(stmt, params, Some(&mut KeptRow::new(row, pick))).await
    }

    async fn run(
        &mut self,
        stmt: usize,
        params: &[Param<'_>],
        row: Option<&mut KeptRow<'_>>,
    ) -> Result<Executed, DbError> {
        let st = self.statements.get(stmt).ok_or_else(|| DbError::no_statement(stmt))?;
        if st.params.len() != params.len() {
            return Err(DbError::arity(st.params.len(), params.len()));
        }
        let returns_rows = !st.columns.is_empty();
        self.out.clear();
        match (&st.text, &mut self.text) {
            (Some(t), Some(sql)) => {
                t.render(params, sql)?;
                messages::query(&mut self.out, sql);
            }
            _ => {
                messages::bind(&mut self.out, st, params)
                    .map_err(|e| DbError::client(ClientFault::Other, e.to_string()))?;
                messages::execute_sync(&mut self.out);
            }
        }
        self.send().await?;
        let count = self.reply(Some(stmt), row, "in reply to a statement").await?;
        // The command tag's count: rows returned by a query, rows changed otherwise.
        Ok(if returns_rows {
            Executed { rows: count, ..Executed::default() }
        } else {
            Executed { affected_rows: count, ..Executed::default() }
        })
    }

    /// SQL text without parameters over the simple query protocol (several statements
    /// allowed), rows skipped.
    pub async fn simple(&mut self, sql: &str) -> Result<(), DbError> {
        self.out.clear();
        messages::query(&mut self.out, sql);
        self.send().await?;
        self.reply(None, None, "in reply to a query").await.map(|_| ())
    }

    /// Reads a reply up to ReadyForQuery: the counts of its CommandCompletes summed, rows
    /// skipped unread except those `row` keeps (typed by `stmt`'s columns).
    /// The first error is returned once the server is ready again (the stream stays usable).
    async fn reply(
        &mut self,
        stmt: Option<usize>,
        mut row: Option<&mut KeptRow<'_>>,
        phase: &str,
    ) -> Result<u64, DbError> {
        let mut got = Got { count: 0, failed: None };
        loop {
            let read = match self.take_buffered(stmt, &mut row, &mut got, phase)? {
                Wait::Ready => {
                    self.finished();
                    return got.failed.map_or(Ok(got.count), Err);
                }
                Wait::Bytes(need) => self.inbox.fill(&mut self.stream, need).await,
                Wait::Skip(len) => self.inbox.discard(&mut self.stream, len).await,
                Wait::CopyIn => {
                    // COPY FROM STDIN through a plain query: refuse, the server answers E, Z.
                    self.out.clear();
                    messages::copy_fail(&mut self.out, "fairbench sends COPY data only through copy_in");
                    self.send().await
                }
            };
            read.map_err(|e| got.failed.take().map_or(e, lost))?;
        }
    }

    /// Takes every message of a reply already in the inbox, without awaiting (a point
    /// select's whole reply arrives in one read, a range's rows in a few); says what the
    /// reply waits for next.
    fn take_buffered(
        &mut self,
        stmt: Option<usize>,
        row: &mut Option<&mut KeptRow<'_>>,
        got: &mut Got,
        phase: &str,
    ) -> Result<Wait, DbError> {
        loop {
            let Some((kind, len)) = self.buffered_header()? else { return Ok(Wait::Bytes(5)) };
            let read = match kind {
                b'D' => row.as_ref().is_some_and(|r| r.wants()),
                b'C' | b'E' | b'Z' | b'G' => true,
                b'1' | b'2' | b'3' | b'n' | b'I' | b'T' | b's' | b'N' | b'S' | b'A' | b'H' | b'd' | b'c' => false,
                _ => return Err(unexpected(kind, phase)),
            };
            let inbox = &mut self.inbox;
            if !read {
                // Skipped: never buffered whole, only what already arrived is passed over.
                inbox.start += 5;
                match inbox.consume(len) {
                    0 => continue,
                    rest => return Ok(Wait::Skip(rest)),
                }
            }
            if inbox.end - inbox.start < 5 + len {
                return Ok(Wait::Bytes(5 + len));
            }
            let from = inbox.start + 5;
            inbox.start = from + len;
            let body = &inbox.buf[from..from + len];
            match kind {
                b'D' => {
                    let st = stmt.and_then(|s| self.statements.get(s));
                    let (columns, text) = st.map_or((&[][..], true), |s| (&s.columns[..], s.text.is_some()));
                    if let Some(out) = row.as_deref_mut().and_then(KeptRow::next_row) {
                        if let Err(e) = row_values(body, columns, text, out) {
                            out.clear();
                            got.failed.get_or_insert_with(|| DbError::client(ClientFault::Other, e.to_string()));
                        }
                    }
                }
                b'C' => got.count += command_count(body),
                b'E' => _ = got.failed.get_or_insert_with(|| server_error(body)),
                b'Z' => return Ok(Wait::Ready),
                _ => return Ok(Wait::CopyIn),
            }
        }
    }
}

/// What a reply has brought so far: its CommandCompletes' counts, its first error.
struct Got {
    count: u64,
    failed: Option<DbError>,
}

/// What a reply waits for after the messages already received.
enum Wait {
    /// ReadyForQuery came: the reply is complete.
    Ready,
    /// At least this many unconsumed bytes: the next message's header or whole body.
    Bytes(usize),
    /// This many bytes of a message skipped unread.
    Skip(usize),
    /// CopyInResponse to a plain query: to be refused.
    CopyIn,
}

/// The server's error when the connection ends right after it (a FATAL): the error, and
/// the connection counted lost.
fn lost(mut e: DbError) -> DbError {
    e.connection_lost = true;
    e
}

impl<S: Socket> PgConn<S> {
    /// A simple query's rows as strings (NULL as None), for introspection, never the
    /// workload: rows are kept in memory, bounded like one message (`--max-packet`).
    pub async fn text_rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, DbError> {
        const PHASE: &str = "in reply to a query";
        self.out.clear();
        messages::query(&mut self.out, sql);
        self.send().await?;
        let (mut rows, mut bytes, mut failed) = (Vec::new(), 0usize, None);
        let max = self.max_message;
        loop {
            let (kind, body) = self.message().await.map_err(|e| failed.take().map_or(e, lost))?;
            match kind {
                b'D' if failed.is_none() => {
                    bytes += body.len() + 24 * 4;
                    if bytes > max {
                        failed = Some(DbError::protocol(format!(
                            "the rows of a query came to over {max} bytes, the limit (--max-packet raises the limit)"
                        )));
                        rows = Vec::new();
                        continue;
                    }
                    rows.push(text_row(body).map_err(|m| malformed(PHASE, m))?);
                }
                b'E' => failed = failed.or(Some(server_error(body))),
                b'Z' => break,
                b'D' | b'T' | b'C' | b'I' | b'N' | b'S' | b'A' | b'H' | b'd' | b'c' => {}
                _ => return Err(unexpected(kind, PHASE)),
            }
        }
        self.finished();
        failed.map_or(Ok(rows), Err)
    }

    /// `COPY ... FROM STDIN` with all of `data`: one CopyData message per COPY_CHUNK bytes.
    /// Binary data without COPY's signature is refused with CopyFail (the session stays
    /// usable). Returns the rows the server counted.
    pub async fn copy_in(&mut self, sql: &str, data: &[u8]) -> Result<u64, DbError> {
        const SIGNATURE: &[u8] = b"PGCOPY\n\xff\r\n\0";
        let binary = self.copy_start(sql).await?;
        if binary && !data.starts_with(SIGNATURE) {
            let refused = self.copy_fail("fairbench: the data is not in COPY's binary format").await;
            return Err(DbError::client(
                ClientFault::Other,
                format!("COPY (FORMAT binary) data must start with its signature; the server said: {refused}"),
            ));
        }
        self.copy_data(data).await?;
        self.copy_done().await
    }

    /// Sends `COPY ... FROM STDIN` and reads the server's CopyInResponse: Ok(true) when it
    /// takes binary data. Then copy_data, and copy_done or copy_fail.
    pub async fn copy_start(&mut self, sql: &str) -> Result<bool, DbError> {
        self.out.clear();
        messages::query(&mut self.out, sql);
        self.send().await?;
        let (kind, body) = self.message().await?;
        match kind {
            b'G' => Ok(body.first() == Some(&1)),
            b'E' => {
                let e = server_error(body);
                self.reply(None, None, COPY_PHASE).await.and(Err(e))
            }
            _ => Err(unexpected(kind, COPY_PHASE)),
        }
    }

    /// The next bytes of the COPY data, in CopyData messages of at most COPY_CHUNK.
    pub async fn copy_data(&mut self, data: &[u8]) -> Result<(), DbError> {
        for chunk in data.chunks(COPY_CHUNK) {
            self.out.clear();
            messages::copy_data(&mut self.out, chunk);
            self.send().await?;
        }
        Ok(())
    }

    /// CopyDone: the rows the server counted.
    pub async fn copy_done(&mut self) -> Result<u64, DbError> {
        self.out.clear();
        messages::copy_done(&mut self.out);
        self.send().await?;
        self.reply(None, None, COPY_PHASE).await
    }

    /// CopyFail with `why`: the server aborts the COPY and the session stays usable. Returns
    /// what the server said (its error, as expected, or why the connection failed).
    pub async fn copy_fail(&mut self, why: &str) -> String {
        self.out.clear();
        messages::copy_fail(&mut self.out, why);
        if let Err(e) = self.send().await {
            return e.message;
        }
        match self.reply(None, None, COPY_PHASE).await {
            Ok(_) => String::new(),
            Err(e) => e.message,
        }
    }
}

impl<S: Socket> Drop for PgConn<S> {
    /// Terminate, so the server counts a clean close rather than a lost client.
    fn drop(&mut self) {
        if !self.writing {
            self.stream.try_send(&messages::TERMINATE);
        }
    }
}
