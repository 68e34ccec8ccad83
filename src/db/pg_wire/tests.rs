//! The lean client against a scripted fake server over an in-memory pipe: a good
//! conversation, errors by SQLSTATE, authentication, COPY, and servers that break the
//! protocol or die mid-reply. Each must end promptly in a result or an error, never a panic.

use super::*;
use crate::db::ErrorCode;
use proptest::prelude::*;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};

fn msg(kind: u8, body: &[u8]) -> Vec<u8> {
    crate::db::inspected::pg_message(kind, body)
}

fn ready() -> Vec<u8> {
    msg(b'Z', b"I")
}

/// AuthenticationOk, a parameter, BackendKeyData, ReadyForQuery.
fn welcome() -> Vec<u8> {
    [
        msg(b'R', &0i32.to_be_bytes()),
        msg(b'S', b"server_version\x0016.4\0"),
        msg(b'K', &[0, 0, 0, 7, 0, 0, 0, 9]),
        ready(),
    ]
    .concat()
}

fn error(severity: &str, code: &str, text: &str) -> Vec<u8> {
    let body = format!("S{severity}\0V{severity}\0C{code}\0M{text}\0\0");
    msg(b'E', body.as_bytes())
}

/// Parse/Describe's reply: parameters and columns (name, type oid).
fn described(params: &[u32], columns: &[(&str, u32)]) -> Vec<u8> {
    let mut t = (params.len() as i16).to_be_bytes().to_vec();
    params.iter().for_each(|p| t.extend(p.to_be_bytes()));
    let mut out = [msg(b'1', &[]), msg(b't', &t)].concat();
    if columns.is_empty() {
        out.extend(msg(b'n', &[]));
    } else {
        let mut r = (columns.len() as i16).to_be_bytes().to_vec();
        for (name, oid) in columns {
            r.extend(name.as_bytes());
            r.extend([0, 0, 0, 0, 0, 0, 0]);
            r.extend(oid.to_be_bytes());
            r.extend([0, 4, 255, 255, 255, 255, 0, 1]);
        }
        out.extend(msg(b'T', &r));
    }
    out.extend(ready());
    out
}

fn data_row(fields: &[Option<&[u8]>]) -> Vec<u8> {
    let mut b = (fields.len() as i16).to_be_bytes().to_vec();
    for f in fields {
        match f {
            None => b.extend((-1i32).to_be_bytes()),
            Some(v) => {
                b.extend((v.len() as i32).to_be_bytes());
                b.extend(*v);
            }
        }
    }
    msg(b'D', &b)
}

fn complete(tag: &str) -> Vec<u8> {
    msg(b'C', format!("{tag}\0").as_bytes())
}

/// A server that writes `script` and then closes; what the client sent arrives on the
/// returned channel when it has gone.
fn serve(script: Vec<u8>) -> (DuplexStream, tokio::sync::oneshot::Receiver<Vec<u8>>) {
    serve_in_pieces(script, 1 << 20)
}

/// The same, the client reading at most `piece` bytes at a time (the pipe's capacity).
fn serve_in_pieces(script: Vec<u8>, piece: usize) -> (DuplexStream, tokio::sync::oneshot::Receiver<Vec<u8>>) {
    let (client, server) = tokio::io::duplex(piece);
    let (tx, rx) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let (mut rd, mut wr) = tokio::io::split(server);
        let reader = tokio::spawn(async move {
            let mut sent = Vec::new();
            let _ = rd.read_to_end(&mut sent).await;
            let _ = tx.send(sent);
        });
        let _ = wr.write_all(&script).await;
        let _ = wr.shutdown().await;
        let _ = reader.await;
    });
    (client, rx)
}

async fn connect_as(stream: DuplexStream, password: &str, cleartext_ok: bool) -> Result<PgConn<DuplexStream>, DbError> {
    let who = Credentials { user: "u", password, cleartext_ok };
    let fut = PgConn::connect(stream, &who, "db", 1 << 20, false);
    tokio::time::timeout(Duration::from_secs(5), fut).await.expect("the client hung")
}

async fn connect(script: Vec<u8>) -> Result<PgConn<DuplexStream>, DbError> {
    connect_as(serve(script).0, "", false).await
}

fn sqlstate(e: &DbError) -> &str {
    match &e.code {
        ErrorCode::Sqlstate(s) => s,
        _ => "",
    }
}

#[tokio::test]
async fn a_good_server_gets_statements_rows_and_counts() {
    let script = [
        welcome(),
        described(&[23], &[("id", 23), ("c", 1042), ("f", 701), ("n", 1700)]),
        msg(b'2', &[]),
        data_row(&[Some(&5i32.to_be_bytes()), Some(b"abc"), None, Some(&[0, 1, 0, 0, 0, 0, 0, 0, 0, 7])]),
        data_row(&[Some(&6i32.to_be_bytes()), Some(b"x"), None, None]),
        complete("SELECT 2"),
        ready(),
        msg(b'2', &[]),
        msg(b'N', b"SWARNING\0Mnothing\0\0"),
        msg(b'S', b"TimeZone\0UTC\0"),
        complete("SELECT 2"),
        ready(),
    ]
    .concat();
    let mut c = connect(script).await.unwrap();
    assert_eq!(c.server_version, "16.4");
    let st = c.prepare("SELECT id, c, f, n FROM t WHERE id = ?").await.unwrap();
    assert_eq!(c.columns(st).unwrap(), ["id", "c", "f", "n"]);
    let mut row = Vec::new();
    let done = c.execute_row(st, &[Param::Int(5)], &mut row).await.unwrap();
    assert_eq!(done.rows, 2);
    assert_eq!(row, [Value::Int(5), Value::Text("abc".into()), Value::Null, Value::Text("7".into())]);
    assert_eq!(c.execute(st, &[Param::Int(6)]).await.unwrap().rows, 2);
    assert_eq!(c.execute(st, &[]).await.unwrap_err().to_string(), DbError::arity(1, 0).to_string());
}

/// A reply is read the same whether it arrives whole or a few bytes per read: messages
/// handled from the buffer and messages waited for meet at every possible cut.
#[tokio::test]
async fn a_reply_cut_anywhere_reads_the_same() {
    let reply = [
        msg(b'2', &[]),
        data_row(&[Some(&5i32.to_be_bytes())]),
        data_row(&[Some(&6i32.to_be_bytes())]),
        msg(b'N', b"SWARNING\0Mnothing\0\0"),
        complete("SELECT 2"),
        ready(),
    ]
    .concat();
    for piece in [1, 2, 3, 5, 7, 11, 64, 1 << 20] {
        let script = [welcome(), described(&[], &[("id", 23)]), reply.clone(), reply.clone()].concat();
        let mut c = connect_as(serve_in_pieces(script, piece).0, "", false).await.unwrap();
        let st = c.prepare("SELECT id FROM t").await.unwrap();
        let mut row = Vec::new();
        let done = c.execute_row(st, &[], &mut row).await.unwrap();
        assert_eq!((done.rows, &row[..]), (2, &[Value::Int(5)][..]), "pieces of {piece}");
        assert_eq!(c.execute(st, &[]).await.unwrap().rows, 2, "pieces of {piece}");
        assert!(c.inbox.empty(), "pieces of {piece}: nothing read past the reply");
    }
}

#[tokio::test]
async fn server_errors_keep_their_sqlstate_and_the_session() {
    let script = [
        welcome(),
        described(&[], &[]),
        msg(b'2', &[]),
        error("ERROR", "40P01", "deadlock detected"),
        ready(),
        msg(b'2', &[]),
        complete("UPDATE 3"),
        ready(),
        error("FATAL", "57P01", "terminating connection due to administrator command"),
    ]
    .concat();
    let mut c = connect(script).await.unwrap();
    let st = c.prepare("UPDATE t SET k = k + 1").await.unwrap();
    let e = c.execute(st, &[]).await.unwrap_err();
    assert_eq!((sqlstate(&e), e.connection_lost), ("40P01", false), "{e}");
    assert_eq!(c.execute(st, &[]).await.unwrap().affected_rows, 3);
    // The server dies after a FATAL: its code, and the connection counted lost.
    let e = c.execute(st, &[]).await.unwrap_err();
    assert_eq!((sqlstate(&e), e.connection_lost), ("57P01", true), "{e}");
    let e = c.execute(st, &[]).await.unwrap_err();
    assert!(e.connection_lost, "{e}");
}

#[tokio::test]
async fn a_server_that_dies_or_garbles_ends_in_a_clean_error() {
    for (reply, expect) in [
        (msg(b'2', &[]), "connection closed by the server"),
        ([msg(b'2', &[]), b"D\0\0".to_vec()].concat(), "connection closed by the server"),
        ([b'D'].iter().chain(&0x7fff_fff0u32.to_be_bytes()).copied().collect(), "over the limit of 1048576"),
        (msg(b'?', b"x"), "unexpected message '?'"),
        (vec![b'C', 0, 0, 0, 2], "message of length 2"),
        ([msg(b'2', &[]), data_row(&[Some(b"1")])[..7].to_vec(), vec![0; 3]].concat(), "closed"),
    ] {
        let script = [welcome(), described(&[], &[("id", 23)]), reply].concat();
        let mut c = connect(script).await.unwrap();
        let st = c.prepare("SELECT 1").await.unwrap();
        let mut row = Vec::new();
        let run = c.execute_row(st, &[], &mut row);
        let e = tokio::time::timeout(Duration::from_secs(5), run).await.expect("hung").unwrap_err();
        assert!(e.to_string().contains(expect) && e.connection_lost, "{e} (expected {expect})");
    }
}

#[tokio::test]
async fn a_malformed_row_is_an_error_and_the_session_goes_on() {
    let script = [
        welcome(),
        described(&[], &[("id", 23)]),
        msg(b'2', &[]),
        data_row(&[Some(b"12")]),
        complete("SELECT 1"),
        ready(),
    ]
    .concat();
    let mut c = connect(script).await.unwrap();
    let st = c.prepare("SELECT 1").await.unwrap();
    let mut row = Vec::new();
    let e = c.execute_row(st, &[], &mut row).await.unwrap_err();
    assert!(e.to_string().contains("column id") && !e.connection_lost, "{e}");
    assert!(row.is_empty());
}

#[tokio::test]
async fn cleartext_is_refused_unless_allowed_and_md5_is_answered() {
    let cleartext = msg(b'R', &3i32.to_be_bytes());
    let (stream, sent) = serve(cleartext.clone());
    let e = connect_as(stream, "secret-pw", false).await.err().unwrap();
    assert!(e.to_string().contains("--allow-cleartext-password"), "{e}");
    assert!(!String::from_utf8_lossy(&sent.await.unwrap()).contains("secret-pw"));
    let (stream, sent) = serve([cleartext, welcome()].concat());
    connect_as(stream, "secret-pw", true).await.unwrap();
    assert!(String::from_utf8_lossy(&sent.await.unwrap()).contains("secret-pw"));

    let md5 = msg(b'R', &[0, 0, 0, 5, 1, 2, 3, 4]);
    let (stream, sent) = serve([md5, welcome()].concat());
    drop(connect_as(stream, "secret-pw", false).await.unwrap());
    let sent = sent.await.unwrap();
    let expected = postgres_protocol::authentication::md5_hash(b"u", b"secret-pw", [1, 2, 3, 4]);
    assert!(String::from_utf8_lossy(&sent).contains(&expected));
    assert!(sent.ends_with(&messages::TERMINATE), "Terminate on drop");
    // A password asked for and none given; an unknown request.
    let e = connect_as(serve(msg(b'R', &[0, 0, 0, 5, 1, 2, 3, 4])).0, "", false).await.err().unwrap();
    assert!(e.to_string().contains("none was given"), "{e}");
    let e = connect(msg(b'R', &7i32.to_be_bytes())).await.err().unwrap();
    assert!(e.to_string().contains("does not speak"), "{e}");
    let e = connect(b"HTTP/1.1 400 Bad Request\r\n\r\n".to_vec()).await.err().unwrap();
    assert!(e.to_string().contains("is this a PostgreSQL server?"), "{e}");
}

#[tokio::test]
async fn copy_in_sends_bounded_chunks_and_reads_the_count() {
    let copy_in = msg(b'G', &[1, 0, 0]);
    let script = [
        welcome(),
        copy_in.clone(),
        complete("COPY 2"),
        ready(),
        copy_in,
        error("ERROR", "57014", "COPY from stdin failed"),
        ready(),
    ]
    .concat();
    let (stream, sent) = serve(script);
    let mut c = connect_as(stream, "", false).await.unwrap();
    let data: Vec<u8> = b"PGCOPY\n\xff\r\n\0".iter().copied().chain(std::iter::repeat_n(7, 150_000)).collect();
    assert_eq!(c.copy_in("COPY t FROM STDIN (FORMAT binary)", &data).await.unwrap(), 2);
    let e = c.copy_in("COPY t FROM STDIN (FORMAT binary)", b"not binary").await.unwrap_err();
    assert!(e.to_string().contains("signature"), "{e}");
    drop(c);
    let sent = sent.await.unwrap();
    // After the startup message and the Query: CopyData of at most 64 KiB, then CopyDone.
    let mut at = u32::from_be_bytes(sent[..4].try_into().unwrap()) as usize;
    let (mut chunks, mut total) = (Vec::new(), 0);
    while at + 5 <= sent.len() {
        let len = u32::from_be_bytes(sent[at + 1..at + 5].try_into().unwrap()) as usize - 4;
        if sent[at] == b'd' {
            chunks.push(len);
            total += len;
        }
        if sent[at] == b'c' {
            break;
        }
        at += 5 + len;
    }
    assert_eq!((chunks, total), (vec![65536, 65536, data.len() - 131072], data.len()));
    assert!(sent.windows(5).any(|w| w[0] == b'f'), "CopyFail for the second");
}

/// Arbitrary server bytes after the welcome.
fn garbage() -> impl Strategy<Value = Vec<u8>> {
    let message = (prop::sample::select(b"12CDEIZTtnNSAs?".to_vec()), prop::collection::vec(any::<u8>(), 0..40))
        .prop_map(|(k, body)| msg(k, &body));
    prop::collection::vec(prop_oneof![message, prop::collection::vec(any::<u8>(), 0..12)], 0..8)
        .prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::db::socket::fuzz_cases(500), failure_persistence: None, ..ProptestConfig::default() })]

    /// Whatever the server says after letting the client in: a result or an error, never a
    /// panic, never a hang (the server closes after its script).
    #[test]
    fn any_reply_ends_cleanly(reply in garbage(), described_first in any::<bool>()) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let pre = if described_first { described(&[23], &[("id", 23)]) } else { Vec::new() };
            let script = [welcome(), pre, reply].concat();
            let run = async {
                let Ok(mut c) = connect(script).await else { return };
                if let Ok(st) = c.prepare("SELECT ?").await {
                    let _ = c.execute_row(st, &[Param::Int(1)], &mut Vec::new()).await;
                }
                let _ = c.text_rows("SHOW x").await;
                let _ = c.simple("BEGIN").await;
            };
            tokio::time::timeout(Duration::from_secs(5), run).await.expect("the client hung");
        });
    }
}
