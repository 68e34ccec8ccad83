//! LOAD DATA LOCAL INFILE: rows sent as the "file" the server asks for, in MySQL's default
//! text format (tab between fields, newline after rows, `\` escapes, NULL as `\N`). The
//! server may ask for any file name: only the one this statement named is answered, and
//! with our rows, never a file's contents. CLIENT_LOCAL_FILES is announced only by
//! connections opened for loading (WireLimits::local_infile).

use super::packets::{err_packet, OkInfo, CLIENT_LOCAL_FILES};
use super::{malformed, Socket, WireConn, STATUS_LIMIT};
use crate::db::{ClientFault, DbError, ErrorCode, Param, RowSource};
use std::io::Write as _;

const PHASE: &str = "in reply to LOAD DATA LOCAL INFILE";
/// A server that refuses LOCAL INFILE: 1148 (not allowed with this version), 3948 (MySQL 8
/// local_infile off), 4166 (MariaDB local_infile off).
const REFUSALS: [u16; 3] = [1148, 3948, 4166];
/// Data packets of this size (the protocol allows 16 MiB - 1; the server reads them as one
/// stream, so where they are cut does not matter).
const PACKET: usize = 1024 * 1024;

/// What a load did.
#[derive(Debug)]
pub enum LoadOutcome {
    /// Rows the server counted.
    Rows(u64),
    /// The server (or this connection) does not take LOCAL INFILE: load another way.
    Refused,
}

impl<S: Socket> WireConn<S> {
    /// Loads `rows` into `columns` of `table`.
    pub async fn load_data_local(
        &mut self,
        table: &str,
        columns: &[&str],
        rows: &mut dyn RowSource,
    ) -> Result<LoadOutcome, DbError> {
        if self.caps & CLIENT_LOCAL_FILES == 0 {
            return Ok(LoadOutcome::Refused);
        }
        let file = format!("fairbench-{table}");
        let sql =
            format!("LOAD DATA LOCAL INFILE '{file}' INTO TABLE {table} CHARACTER SET binary ({})", columns.join(", "));
        self.command(0x03, |out| out.extend_from_slice(sql.as_bytes())).await?;
        let p = self.read_packet(STATUS_LIMIT, PHASE).await?;
        match p.first() {
            Some(0xff) => {
                let e = err_packet(p);
                self.finished();
                let refused = matches!(e.code, ErrorCode::Mysql(c) if REFUSALS.contains(&c));
                return if refused { Ok(LoadOutcome::Refused) } else { Err(e) };
            }
            Some(0xfb) if p[1..] == *file.as_bytes() => {}
            Some(0xfb) => {
                // Another file: the server gets an empty one, and we stop.
                let asked = String::from_utf8_lossy(&p[1..]).chars().take(200).collect::<String>();
                self.write_data(&[]).await?;
                let _ = self.read_packet(STATUS_LIMIT, PHASE).await;
                return Err(DbError::protocol(format!(
                    "the server asked for the local file {asked:?}, not the rows fairbench offered: nothing was sent"
                )));
            }
            _ => return Err(DbError::protocol(format!("unexpected reply {PHASE} (not a file request)"))),
        }
        let sent = self.send_rows(columns.len(), rows).await;
        self.write_data(&[]).await?;
        let caps = self.caps;
        let p = self.read_packet(STATUS_LIMIT, PHASE).await?;
        let reply = match p.first() {
            Some(0xff) => Err(err_packet(p)),
            Some(0x00) => OkInfo::parse(caps, p).map_err(|m| malformed(PHASE, m)),
            _ => Err(DbError::protocol(format!("unexpected reply {PHASE} (not OK)"))),
        };
        self.finished();
        let (sent, ok) = (sent?, reply?);
        if ok.affected_rows != sent {
            return Err(DbError::client(
                ClientFault::Other,
                format!(
                    "LOAD DATA took {} of {sent} rows (duplicate keys or values its columns refuse)",
                    ok.affected_rows
                ),
            ));
        }
        Ok(LoadOutcome::Rows(sent))
    }

    /// Encodes and sends every row in packets of about PACKET bytes; returns the rows sent.
    async fn send_rows(&mut self, columns: usize, rows: &mut dyn RowSource) -> Result<u64, DbError> {
        let mut data = Vec::with_capacity(PACKET + 64 * 1024);
        let mut n = 0;
        loop {
            let more = text_row(columns, rows, &mut data)?;
            if more {
                n += 1;
            }
            while data.len() >= PACKET || (!more && !data.is_empty()) {
                let cut = data.len().min(PACKET);
                self.write_data(&data[..cut]).await?;
                data.drain(..cut);
            }
            if !more {
                return Ok(n);
            }
        }
    }

    /// One packet of the file (empty: its end), with the sequence id that follows.
    async fn write_data(&mut self, bytes: &[u8]) -> Result<(), DbError> {
        let mut head = (bytes.len() as u32).to_le_bytes();
        head[3] = self.seq;
        self.seq = self.seq.wrapping_add(1);
        self.write(&head).await?;
        if bytes.is_empty() {
            return Ok(());
        }
        self.write(bytes).await
    }
}

/// Appends the next row as a line of the text format; `Ok(false)` when none is left.
pub(super) fn text_row(columns: usize, rows: &mut dyn RowSource, out: &mut Vec<u8>) -> Result<bool, DbError> {
    let mark = out.len();
    let (mut i, mut failed) = (0, None);
    let more = rows.next_row(&mut |p: Param<'_>| {
        if i > 0 {
            out.push(b'\t');
        }
        i += 1;
        match p {
            Param::Null => out.extend_from_slice(b"\\N"),
            Param::Int(v) => {
                let _ = write!(out, "{v}");
            }
            Param::Float(f) if f.is_finite() => {
                let _ = write!(out, "{f}");
            }
            Param::Float(f) => {
                failed.get_or_insert_with(|| DbError::client(ClientFault::Other, format!("{f} has no MySQL value")));
            }
            Param::Text(s) => escape(s.as_bytes(), out),
            Param::Bytes(b) => escape(b, out),
        }
    });
    if !more {
        out.truncate(mark);
        return Ok(false);
    }
    out.push(b'\n');
    if let Some(e) = failed {
        return Err(e);
    }
    if i != columns {
        return Err(DbError::arity(columns, i));
    }
    Ok(true)
}

/// The bytes with the format's separators and escape character escaped.
fn escape(bytes: &[u8], out: &mut Vec<u8>) {
    for &b in bytes {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            0 => out.extend_from_slice(b"\\0"),
            _ => out.push(b),
        }
    }
}
