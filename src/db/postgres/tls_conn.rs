//! TLS targets: tokio-postgres (a client and its connection task) behind the frame guard.
//! The lean client (pg_wire) speaks no TLS; this keeps what worked before it.

use super::frame_guard::FrameVerdict;
use crate::db::pg_wire::numbered_placeholders;
use crate::db::pg_wire::values::{text_value, Captured, PgParam};
use crate::db::text_sql::TextSql;
use crate::db::{ClientFault, DbError, Dialect, Executed, KeptRow, Param, RowPick, Value};
use futures_util::StreamExt as _;
use std::error::Error as _;
use tokio_postgres::types::Type;
use tokio_postgres::{Client, SimpleQueryMessage, Statement};

pub struct TlsConn {
    pub(super) client: Client,
    statements: Vec<Statement>,
    /// Plain text queries (`prepared_statements` off); None: prepared statements.
    text: Option<TextMode>,
    /// Set when the frame guard cut the connection (a message over --max-packet).
    frames: FrameVerdict,
}

/// The statements as described by the server (index = handle), and the buffer every
/// execution renders into.
#[derive(Default)]
struct TextMode {
    statements: Vec<TextStatement>,
    sql: String,
}

struct TextStatement {
    sql: TextSql,
    /// Names and types of the columns it returns.
    columns: Vec<(String, Type)>,
}

impl TlsConn {
    pub(super) fn new(client: Client, frames: FrameVerdict, text: bool) -> Self {
        TlsConn { client, statements: Vec::new(), text: text.then(TextMode::default), frames }
    }

    fn failed(&self, e: tokio_postgres::Error) -> DbError {
        error_given(&self.frames, e)
    }

    /// Bulk loading: binary COPY through tokio-postgres.
    pub(super) async fn copy(
        &mut self,
        table: &str,
        columns: &[&str],
        rows: &mut dyn crate::db::RowSource,
    ) -> Result<u64, DbError> {
        let frames = &self.frames;
        super::copy::copy_in(&self.client, table, columns, rows, |e| error_given(frames, e)).await
    }

    /// A plain text query: `stmt`'s SQL with `params` as literals, over the simple query
    /// protocol; the count from the command tag as for prepared statements.
    async fn execute_text(
        &mut self,
        stmt: usize,
        params: &[Param<'_>],
        mut row: Option<&mut KeptRow<'_>>,
    ) -> Result<Executed, DbError> {
        let Some(text) = self.text.as_mut() else { return Err(DbError::no_statement(stmt)) };
        let st = text.statements.get(stmt).ok_or_else(|| DbError::no_statement(stmt))?;
        st.sql.render(params, &mut text.sql)?;
        let stream = self.client.simple_query_raw(&text.sql).await.map_err(|e| error_given(&self.frames, e))?;
        let mut stream = std::pin::pin!(stream);
        let mut count = 0;
        while let Some(m) = stream.next().await {
            match m.map_err(|e| error_given(&self.frames, e))? {
                SimpleQueryMessage::Row(r) => {
                    let Some(out) = row.as_deref_mut().and_then(KeptRow::next_row) else { continue };
                    for i in 0..r.len() {
                        let v = r.try_get(i).map_err(|e| error_given(&self.frames, e))?;
                        let (name, ty) = st.columns.get(i).map_or(("?", &Type::TEXT), |(n, t)| (n.as_str(), t));
                        let v = text_value(v, ty)
                            .map_err(|e| DbError::client(ClientFault::Other, format!("column {name}: {e}")))?;
                        out.push(v);
                    }
                }
                SimpleQueryMessage::CommandComplete(n) => count += n,
                _ => {}
            }
        }
        Ok(counted(st.columns.is_empty(), count))
    }

    /// The prepared statement `stmt`, checked to take `params`.
    fn statement(&self, stmt: usize, params: &[Param<'_>]) -> Result<&Statement, DbError> {
        let st = self.statements.get(stmt).ok_or_else(|| DbError::no_statement(stmt))?;
        if st.params().len() != params.len() {
            return Err(DbError::arity(st.params().len(), params.len()));
        }
        Ok(st)
    }

    pub async fn text_rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, DbError> {
        let messages = self.client.simple_query(sql).await.map_err(|e| self.failed(e))?;
        Ok(messages
            .iter()
            .filter_map(|m| match m {
                SimpleQueryMessage::Row(r) => Some((0..r.len()).map(|i| r.get(i).map(str::to_string)).collect()),
                _ => None,
            })
            .collect())
    }

    pub async fn prepare(&mut self, sql: &str) -> Result<usize, DbError> {
        let Some(text) = self.text.as_mut() else {
            let stmt = self.client.prepare(&numbered_placeholders(sql)).await.map_err(|e| self.failed(e))?;
            self.statements.push(stmt);
            return Ok(self.statements.len() - 1);
        };
        // Plain text queries: the server's description is kept, its statement closed (on drop).
        let template = TextSql::new(Dialect::Postgres, sql);
        let described = self.client.prepare(&template.numbered()).await.map_err(|e| error_given(&self.frames, e))?;
        template.check_count(described.params().len())?;
        let columns = described.columns().iter().map(|c| (c.name().to_string(), c.type_().clone())).collect();
        text.statements.push(TextStatement { sql: template, columns });
        Ok(text.statements.len() - 1)
    }

    pub async fn execute(&mut self, stmt: usize, params: &[Param<'_>]) -> Result<Executed, DbError> {
        if self.text.is_some() {
            return self.execute_text(stmt, params, None).await;
        }
        let st = self.statement(stmt, params)?;
        let n = self.client.execute_raw(st, params.iter().map(|p| PgParam(*p))).await.map_err(|e| self.failed(e))?;
        Ok(counted(st.columns().is_empty(), n))
    }

    pub fn columns(&self, stmt: usize) -> Result<Vec<String>, DbError> {
        if let Some(text) = &self.text {
            let st = text.statements.get(stmt).ok_or_else(|| DbError::no_statement(stmt))?;
            return Ok(st.columns.iter().map(|(name, _)| name.clone()).collect());
        }
        let st = self.statements.get(stmt).ok_or_else(|| DbError::no_statement(stmt))?;
        Ok(st.columns().iter().map(|c| c.name().to_string()).collect())
    }

    pub async fn execute_kept(
        &mut self,
        stmt: usize,
        params: &[Param<'_>],
        pick: RowPick,
        row: &mut Vec<Value>,
    ) -> Result<Executed, DbError> {
        let mut kept = KeptRow::new(row, pick);
        match self.text.is_some() {
            true => self.execute_text(stmt, params, Some(&mut kept)).await,
            false => self.execute_prepared(stmt, params, &mut kept).await,
        }
    }

    async fn execute_prepared(
        &mut self,
        stmt: usize,
        params: &[Param<'_>],
        kept: &mut KeptRow<'_>,
    ) -> Result<Executed, DbError> {
        let st = self.statement(stmt, params)?;
        let stream = self.client.query_raw(st, params.iter().map(|p| PgParam(*p))).await.map_err(|e| self.failed(e))?;
        let mut stream = std::pin::pin!(stream);
        let mut done = Executed::default();
        while let Some(r) = stream.next().await {
            let r = r.map_err(|e| self.failed(e))?;
            if let Some(row) = kept.next_row() {
                for i in 0..r.len() {
                    let v: Captured = r.try_get(i).map_err(|e| {
                        let name = r.columns()[i].name();
                        DbError::client(ClientFault::Other, format!("column {name}: {}", error_text(&e)))
                    })?;
                    row.push(v.0);
                }
            }
            done.rows += 1;
        }
        if st.columns().is_empty() {
            done.affected_rows = stream.rows_affected().unwrap_or(0);
        }
        Ok(done)
    }

    pub async fn simple(&mut self, sql: &str) -> Result<(), DbError> {
        self.client.batch_execute(sql).await.map_err(|e| self.failed(e))
    }
}

/// The command tag's count: rows returned by a query, rows changed otherwise.
fn counted(no_columns: bool, n: u64) -> Executed {
    if no_columns {
        Executed { affected_rows: n, ..Executed::default() }
    } else {
        Executed { rows: n, ..Executed::default() }
    }
}

/// An error's innermost message (tokio-postgres wraps conversion errors).
fn error_text(e: &tokio_postgres::Error) -> String {
    e.source().map(|s| s.to_string()).unwrap_or_else(|| e.to_string())
}

/// `e`, or the frame guard's refusal when it is what ended the connection (tokio-postgres
/// then only says the connection closed).
pub(super) fn error_given(frames: &FrameVerdict, e: tokio_postgres::Error) -> DbError {
    match frames.refusal() {
        Some(refusal) => DbError::protocol(refusal),
        None => error(e),
    }
}

fn error(e: tokio_postgres::Error) -> DbError {
    if let Some(db) = e.as_db_error() {
        return DbError::sqlstate(db.code().code(), db.message());
    }
    if e.is_closed() {
        return DbError::lost("connection closed by the server");
    }
    DbError::lost(format!("connection lost: {}", error_text(&e)))
}
