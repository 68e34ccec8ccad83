//! Frontend messages, appended to the connection's reused output buffer: each is a type
//! byte and a big-endian length that counts itself (the startup message has no type).

use super::values::{BoxError, PgParam};
use super::{Column, Statement};
use crate::db::Param;
use bytes::{BufMut, BytesMut};
use tokio_postgres::types::{IsNull, ToSql, Type};

/// Protocol 3.0.
const PROTOCOL_VERSION: i32 = 196_608;

/// Starts a message; returns where its length goes.
fn begin(out: &mut BytesMut, kind: u8) -> usize {
    out.put_u8(kind);
    let at = out.len();
    out.put_i32(0);
    at
}

/// Writes the length of the message begun at `at`.
fn end(out: &mut BytesMut, at: usize) {
    let len = (out.len() - at) as i32;
    out[at..at + 4].copy_from_slice(&len.to_be_bytes());
}

fn cstr(out: &mut BytesMut, s: &[u8]) {
    out.extend_from_slice(s);
    out.put_u8(0);
}

pub fn startup(out: &mut BytesMut, user: &str, database: &str) {
    out.put_i32(0);
    out.put_i32(PROTOCOL_VERSION);
    let pairs =
        [("user", user), ("database", database), ("application_name", "fairbench"), ("client_encoding", "UTF8")];
    for (k, v) in pairs {
        cstr(out, k.as_bytes());
        cstr(out, v.as_bytes());
    }
    out.put_u8(0);
    let len = out.len() as i32;
    out[..4].copy_from_slice(&len.to_be_bytes());
}

/// PasswordMessage, SASLInitialResponse and SASLResponse share the type 'p'.
pub fn password(out: &mut BytesMut, secret: &[u8]) {
    let at = begin(out, b'p');
    cstr(out, secret);
    end(out, at);
}

pub fn sasl_initial(out: &mut BytesMut, mechanism: &str, data: &[u8]) {
    let at = begin(out, b'p');
    cstr(out, mechanism.as_bytes());
    out.put_i32(data.len() as i32);
    out.extend_from_slice(data);
    end(out, at);
}

pub fn sasl_response(out: &mut BytesMut, data: &[u8]) {
    let at = begin(out, b'p');
    out.extend_from_slice(data);
    end(out, at);
}

/// Parse (no parameter types given: the server infers them), then Describe the statement.
pub fn parse_describe(out: &mut BytesMut, name: &str, sql: &str) {
    let at = begin(out, b'P');
    cstr(out, name.as_bytes());
    cstr(out, sql.as_bytes());
    out.put_i16(0);
    end(out, at);
    let at = begin(out, b'D');
    out.put_u8(b'S');
    cstr(out, name.as_bytes());
    end(out, at);
}

/// Format codes: one code for all when every type is known (binary), else one each
/// (text for a type this client does not know).
fn formats(out: &mut BytesMut, known: impl Iterator<Item = bool> + Clone) {
    let n = known.clone().count();
    if known.clone().all(|k| k) {
        out.put_i16(i16::from(n > 0));
        if n > 0 {
            out.put_i16(1);
        }
        return;
    }
    out.put_i16(n as i16);
    for k in known {
        out.put_i16(i16::from(k));
    }
}

/// What never changes in a statement's Bind, encoded once at prepare: the portal and
/// statement names, the parameter formats and count (`frame[..split]`), the result formats
/// (`frame[split..]`). One buffer: an execution reads it, not the name and column list.
pub struct BindFrame {
    frame: Vec<u8>,
    split: usize,
}

impl BindFrame {
    pub fn new(name: &str, params: &[Option<Type>], columns: &[Column]) -> Self {
        let mut frame = BytesMut::new();
        frame.put_u8(0);
        cstr(&mut frame, name.as_bytes());
        formats(&mut frame, params.iter().map(Option::is_some));
        frame.put_i16(params.len() as i16);
        let split = frame.len();
        formats(&mut frame, columns.iter().map(|c| c.ty.is_some()));
        BindFrame { frame: frame.to_vec(), split }
    }
}

/// A parameter that cannot be sent (nothing is): its number, from 1, and why.
#[derive(Debug, thiserror::Error)]
#[error("parameter ${number}: {why}")]
pub struct BindError {
    pub number: usize,
    pub why: ParamError,
}

#[derive(Debug, thiserror::Error)]
pub enum ParamError {
    /// The encoder's own words for a value the declared type cannot take.
    #[error("{0}")]
    Encode(BoxError),
    #[error("bytes for a parameter of an unknown type: cast it in the SQL")]
    BytesOfUnknownType,
}

/// Bind (unnamed portal) with `params` in binary for their declared types, results in
/// binary; the caller has checked the count. An error names the parameter, nothing is sent.
pub fn bind(out: &mut BytesMut, st: &Statement, params: &[Param<'_>]) -> Result<(), BindError> {
    let at = begin(out, b'B');
    out.extend_from_slice(&st.bind.frame[..st.bind.split]);
    for (i, (p, ty)) in params.iter().zip(&st.params).enumerate() {
        let len_at = out.len();
        out.put_i32(0);
        let null = match ty {
            Some(ty) => PgParam(*p).to_sql(ty, out).map_err(ParamError::Encode),
            None => text_param(p, out),
        }
        .map_err(|why| BindError { number: i + 1, why })?;
        let len = match null {
            IsNull::Yes => -1,
            IsNull::No => (out.len() - len_at - 4) as i32,
        };
        out[len_at..len_at + 4].copy_from_slice(&len.to_be_bytes());
    }
    out.extend_from_slice(&st.bind.frame[st.bind.split..]);
    end(out, at);
    Ok(())
}

/// A parameter of a type this client does not know, in text for the server to parse.
fn text_param(p: &Param<'_>, out: &mut BytesMut) -> Result<IsNull, ParamError> {
    use std::fmt::Write as _;
    match *p {
        Param::Null => return Ok(IsNull::Yes),
        Param::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Param::Float(f) => {
            let _ = write!(out, "{f}");
        }
        Param::Text(s) => out.extend_from_slice(s.as_bytes()),
        Param::Bytes(_) => return Err(ParamError::BytesOfUnknownType),
    }
    Ok(IsNull::No)
}

/// Execute the unnamed portal (all rows), then Sync.
pub fn execute_sync(out: &mut BytesMut) {
    out.extend_from_slice(&[b'E', 0, 0, 0, 9, 0, 0, 0, 0, 0]);
    sync(out);
}

pub fn sync(out: &mut BytesMut) {
    out.extend_from_slice(&[b'S', 0, 0, 0, 4]);
}

/// A simple query.
pub fn query(out: &mut BytesMut, sql: &str) {
    let at = begin(out, b'Q');
    cstr(out, sql.as_bytes());
    end(out, at);
}

pub fn copy_data(out: &mut BytesMut, data: &[u8]) {
    let at = begin(out, b'd');
    out.extend_from_slice(data);
    end(out, at);
}

pub fn copy_done(out: &mut BytesMut) {
    out.extend_from_slice(&[b'c', 0, 0, 0, 4]);
}

pub fn copy_fail(out: &mut BytesMut, why: &str) {
    let at = begin(out, b'f');
    cstr(out, why.as_bytes());
    end(out, at);
}

/// Terminate: the server counts a clean close.
pub const TERMINATE: [u8; 5] = [b'X', 0, 0, 0, 4];
