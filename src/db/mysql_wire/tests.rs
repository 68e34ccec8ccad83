//! The lean client against a scripted fake server over an in-memory pipe: one test per
//! class of malformed reply, and a fuzz run over whole conversations. Each must end in an
//! error (or success) promptly: a hang fails the test by its timeout, a panic by itself.

use super::*;
use crate::db::{RowSource, Value};
use proptest::prelude::*;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};

const CAPS: u32 = CLIENT_PROTOCOL_41 | CLIENT_SECURE_CONNECTION | CLIENT_PLUGIN_AUTH | CLIENT_DEPRECATE_EOF;

/// A column definition packet (protocol 4.1) of a VARCHAR column named `name`.
fn column_definition(name: &str) -> Vec<u8> {
    let mut p = Vec::new();
    for part in ["def", "db", "t", "t", name, name] {
        p.push(part.len() as u8);
        p.extend(part.as_bytes());
    }
    p.extend([0x0c, 33, 0, 0, 1, 0, 0, 0xfd, 0, 0, 0, 0, 0]);
    p
}

fn pkt(seq: u8, payload: &[u8]) -> Vec<u8> {
    let mut p = (payload.len() as u32).to_le_bytes()[..3].to_vec();
    p.push(seq);
    p.extend_from_slice(payload);
    p
}

fn greeting_payload(protocol: u8, plugin: &str) -> Vec<u8> {
    greeting_with(protocol, plugin, CAPS)
}

fn greeting_with(protocol: u8, plugin: &str, caps: u32) -> Vec<u8> {
    let mut g = vec![protocol];
    g.extend_from_slice(b"8.0.36-fake\0");
    g.extend_from_slice(&[7, 0, 0, 0]);
    g.extend_from_slice(b"abcdefgh\0");
    g.extend_from_slice(&(caps as u16).to_le_bytes());
    g.push(45);
    g.extend_from_slice(&2u16.to_le_bytes());
    g.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
    g.push(21);
    g.extend_from_slice(&[0; 10]);
    g.extend_from_slice(b"ijklmnopqrst\0");
    g.extend_from_slice(plugin.as_bytes());
    g.push(0);
    g
}

const OK: &[u8] = &[0, 0, 0, 2, 0, 0, 0];

/// Greeting and OK: a server that lets the client in.
fn welcome() -> Vec<u8> {
    let mut s = pkt(0, &greeting_payload(10, "mysql_native_password"));
    s.extend(pkt(2, OK));
    s
}

/// A server that writes `script`, reads and ignores what the client sends, and then closes
/// (or, `keep_open`, stays silent until the client goes away).
fn serve(script: Vec<u8>, keep_open: bool) -> DuplexStream {
    let (client, server) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        let (mut rd, mut wr) = tokio::io::split(server);
        let reader = tokio::spawn(async move {
            let mut sink = vec![0; 65536];
            while let Ok(n) = rd.read(&mut sink).await {
                if n == 0 {
                    break;
                }
            }
        });
        let _ = wr.write_all(&script).await;
        if keep_open {
            let _ = reader.await;
        } else {
            let _ = wr.shutdown().await;
        }
    });
    client
}

async fn connect(script: Vec<u8>, keep_open: bool) -> Result<WireConn<DuplexStream>, String> {
    let stream = serve(script, keep_open);
    let fut = WireConn::connect(stream, "u", "pw", "db", false, WireLimits::default());
    match tokio::time::timeout(Duration::from_secs(5), fut).await.expect("the client hung") {
        Ok(c) => Ok(c),
        Err(ConnectError::Unsupported) => Err("unsupported".into()),
        Err(ConnectError::TlsOffered) => Err("tls offered".into()),
        Err(ConnectError::Db(e)) => Err(e.to_string()),
    }
}

/// Connects, then sends one query whose reply is `reply`; the error message, if any.
async fn query(reply: Vec<u8>, keep_open: bool) -> Result<Vec<Vec<Option<String>>>, DbError> {
    let mut script = welcome();
    script.extend(reply);
    let mut c = connect(script, keep_open).await.expect("handshake");
    tokio::time::timeout(Duration::from_secs(5), c.query_rows("SHOW X")).await.expect("the client hung")
}

fn err_text(r: Result<WireConn<DuplexStream>, String>) -> String {
    match r {
        Ok(_) => panic!("connected to a broken server"),
        Err(e) => e,
    }
}

#[tokio::test]
async fn a_good_server_gets_a_connection_and_rows() {
    let mut reply = pkt(1, &[2]); // two columns
    reply.extend(pkt(2, b"\x03def"));
    reply.extend(pkt(3, b"\x03def"));
    reply.extend(pkt(4, b"\x07version\x0b8.0.36-fake"));
    reply.extend(pkt(5, &[0xfe, 0, 0, 2, 0, 0, 0]));
    let rows = query(reply, false).await.unwrap();
    assert_eq!(rows, vec![vec![Some("version".to_string()), Some("8.0.36-fake".to_string())]]);
}

#[tokio::test]
async fn not_a_mysql_server() {
    // An HTTP server answering: its first bytes read as a 5 MB packet length.
    let e = err_text(connect(b"HTTP/1.1 400 Bad Request\r\n\r\n".to_vec(), true).await);
    assert!(e.contains("is this a MySQL server?"), "{e}");
}

#[tokio::test]
async fn truncated_and_old_greetings() {
    let g = greeting_payload(10, "mysql_native_password");
    let e = err_text(connect(pkt(0, &g[..20]), false).await);
    assert!(e.contains("malformed reply from the server in its greeting"), "{e}");
    let e = err_text(connect(pkt(0, &greeting_payload(9, "")), false).await);
    assert!(e.contains("protocol version 9"), "{e}");
    let e = err_text(connect(pkt(0, &[]), false).await);
    assert!(e.contains("empty greeting"), "{e}");
    // The server closes in the middle of its greeting.
    let e = err_text(connect(pkt(0, &g)[..30].to_vec(), false).await);
    assert!(e.contains("closed by the server"), "{e}");
}

#[tokio::test]
async fn error_greeting_is_the_servers_error() {
    let e = err_text(connect(pkt(0, b"\xff\x69\x04Host is blocked"), false).await);
    assert!(e.contains("Host is blocked") && e.contains("1129"), "{e}");
}

#[tokio::test]
async fn wrong_sequence_ids() {
    let e = err_text(connect(pkt(3, &greeting_payload(10, "")), false).await);
    assert!(e.contains("sequence id 3, expected 0"), "{e}");
    let mut s = pkt(0, &greeting_payload(10, "mysql_native_password"));
    s.extend(pkt(1, OK)); // the client's response was 1: the reply must be 2
    let e = err_text(connect(s, false).await);
    assert!(e.contains("out of order"), "{e}");
}

#[tokio::test]
async fn endless_auth_switches() {
    let mut s = pkt(0, &greeting_payload(10, "mysql_native_password"));
    for seq in (2..40).step_by(2) {
        s.extend(pkt(seq, b"\xfemysql_native_password\0abcdefghijklmnopqrst\0"));
    }
    let e = err_text(connect(s, true).await);
    assert!(e.contains("switch authentication method twice"), "{e}");
    // Endless fast-auth notices.
    let mut s = pkt(0, &greeting_payload(10, "caching_sha2_password"));
    for seq in 2..40 {
        s.extend(pkt(seq, &[1, 3]));
    }
    let e = err_text(connect(s, true).await);
    assert!(e.contains("did not finish after 4"), "{e}");
}

#[tokio::test]
async fn unknown_plugins_go_to_the_full_driver() {
    // mysql_clear_password: the lean client never sends a password in clear over TCP.
    let e = err_text(connect(pkt(0, &greeting_payload(10, "mysql_clear_password")), true).await);
    assert_eq!(e, "unsupported");
    let mut s = pkt(0, &greeting_payload(10, "caching_sha2_password"));
    s.extend(pkt(2, &[1, 4])); // full authentication over TCP
    assert_eq!(err_text(connect(s, true).await), "unsupported");
}

#[tokio::test]
async fn huge_column_counts_and_field_lengths() {
    let e = query(pkt(1, &[0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), true).await.unwrap_err();
    assert!(e.message.contains("more columns than the limit"), "{e}");
    // One column, then a row whose value claims 16 MiB in a 6-byte packet.
    let mut reply = pkt(1, &[1]);
    reply.extend(pkt(2, b"\x03def"));
    reply.extend(pkt(3, &[0xfd, 0xff, 0xff, 0xff, b'a', b'b']));
    let e = query(reply, true).await.unwrap_err();
    assert!(e.message.contains("row cut short"), "{e}");
    // A length-encoded integer cut short (the 0xfd case).
    let mut reply = pkt(1, &[1]);
    reply.extend(pkt(2, b"\x03def"));
    reply.extend(pkt(3, &[0xfd, 1]));
    let e = query(reply, true).await.unwrap_err();
    assert!(e.message.contains("row cut short"), "{e}");
}

#[tokio::test]
async fn packets_over_the_limit_are_refused_before_reading_them() {
    // A long (multi-frame) reply claiming more than 64 MiB; the server never sends the
    // bytes: the client must refuse on the lengths alone, not wait for them.
    let mut reply = pkt(1, &[1]);
    reply.extend(pkt(2, b"\x03def"));
    for seq in 3..8u8 {
        let mut h = MAX_FRAME.to_le_bytes()[..3].to_vec();
        h.push(seq);
        reply.extend(h);
        reply.extend(std::iter::repeat_n(b'x', MAX_FRAME));
    }
    let e = query(reply, true).await.unwrap_err();
    assert!(e.message.contains("over the limit of 67108864") && e.message.contains("--max-packet"), "{e}");
}

#[tokio::test]
async fn skipped_rows_are_never_buffered() {
    // A 40 MiB row in reply to a prepared statement: skipped frame by frame.
    let mut script = welcome();
    script.extend(pkt(1, &[0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0])); // PREPARE OK: 1 column, 0 params
    script.extend(pkt(2, &column_definition("c")));
    let mut reply = pkt(1, &[1]);
    reply.extend(pkt(2, b"\x03def"));
    let mut seq = 3u8;
    let mut left = 40 << 20;
    while left >= MAX_FRAME {
        let mut h = MAX_FRAME.to_le_bytes()[..3].to_vec();
        h.push(seq);
        reply.extend(h);
        reply.extend(std::iter::repeat_n(0u8, MAX_FRAME));
        seq += 1;
        left -= MAX_FRAME;
    }
    reply.extend(pkt(seq, &vec![0u8; left]));
    reply.extend(pkt(seq + 1, &[0xfe, 0, 0, 2, 0, 0, 0]));
    script.extend(reply);
    let mut c = connect(script, true).await.unwrap();
    let stmt = c.prepare("SELECT c FROM t WHERE id=?").await.unwrap();
    assert_eq!(c.columns(stmt).unwrap(), ["c"], "names kept from the prepare reply");
    // The statement announced no parameters; the row comes back regardless of the SQL.
    c.execute(stmt, &[]).await.unwrap();
    assert!(c.inbox.buf.len() <= READ_BUFFER, "buffer grew to {}", c.inbox.buf.len());
    assert!(c.long.capacity() <= READ_BUFFER);
}

/// A prepared statement's reply of `rows` one-column rows, sequence ids from 1 (a wrong id
/// at position `bad_seq_at`, if given).
fn rows_reply(rows: u8, bad_seq_at: Option<u8>) -> Vec<u8> {
    let mut r = pkt(1, &[1]);
    r.extend(pkt(2, b"\x03def"));
    for i in 0..rows {
        let seq = 3 + i;
        r.extend(pkt(if bad_seq_at == Some(i) { seq + 7 } else { seq }, b"\x00\x00\x05hello"));
    }
    r.extend(pkt(3 + rows, &[0xfe, 0, 0, 2, 0, 0, 0]));
    r
}

#[tokio::test]
async fn buffered_rows_are_counted_and_still_checked() {
    let prepare_ok = [pkt(1, &[0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]), pkt(2, &column_definition("c"))].concat();
    let mut script = welcome();
    script.extend(&prepare_ok);
    script.extend(rows_reply(200, None));
    let mut c = connect(script, true).await.unwrap();
    let stmt = c.prepare("SELECT c FROM t").await.unwrap();
    assert_eq!(c.execute(stmt, &[]).await.unwrap().rows, 200);
    // A sequence id wrong in the middle of rows already buffered: still refused.
    let mut script = welcome();
    script.extend(&prepare_ok);
    script.extend(rows_reply(200, Some(150)));
    let mut c = connect(script, true).await.unwrap();
    let stmt = c.prepare("SELECT c FROM t").await.unwrap();
    let e = c.execute(stmt, &[]).await.unwrap_err();
    assert!(e.message.contains("out of order"), "{e}");
}

#[tokio::test]
async fn measured_statements_refuse_huge_status_packets() {
    // A 2 MiB ERR in reply to a statement: the measured path never buffers more than 1 MiB.
    let mut script = welcome();
    let mut err = b"\xff\x28\x04#HY000".to_vec();
    err.resize(2 << 20, b'!');
    script.extend(pkt(1, &err));
    let mut c = connect(script, true).await.unwrap();
    let e = c.simple("BEGIN").await.unwrap_err();
    assert!(e.message.contains("over the limit of 1048576") && !e.message.contains("--max-packet"), "{e}");
    assert!(c.inbox.buf.len() <= READ_BUFFER);
}

#[tokio::test]
async fn a_server_that_closes_mid_reply() {
    let mut reply = pkt(1, &[1]);
    reply.extend(pkt(2, b"\x03def"));
    reply.extend(&pkt(3, b"\x05hello")[..6]);
    let e = query(reply, false).await.unwrap_err();
    assert!(e.connection_lost && e.message.contains("closed by the server"), "{e}");
}

#[tokio::test]
async fn com_quit_on_drop() {
    let (client, mut server) = tokio::io::duplex(1 << 16);
    let mut script = welcome();
    server.write_all(&std::mem::take(&mut script)).await.unwrap();
    let c = WireConn::connect(client, "u", "", "db", false, WireLimits::default()).await.ok().unwrap();
    drop(c);
    let mut got = Vec::new();
    server.read_to_end(&mut got).await.unwrap();
    assert!(got.ends_with(&[1, 0, 0, 0, 0x01]), "{got:?}");
}

/// Conversations for the fuzz run: random bytes, or a real greeting (and a welcome) followed
/// by random or mutated replies.
fn conversation() -> impl Strategy<Value = Vec<u8>> {
    let bytes = proptest::collection::vec(any::<u8>(), 0..200);
    prop_oneof![
        bytes.clone(),
        bytes.clone().prop_map(|b| [pkt(0, &greeting_payload(10, "mysql_native_password")), b].concat()),
        bytes.clone().prop_map(|b| [welcome(), b].concat()),
        // Framed packets with random payloads and mostly right sequence ids.
        (proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 0..8), any::<bool>()).prop_map(
            |(payloads, shift)| {
                let mut s = welcome();
                for (i, p) in payloads.iter().enumerate() {
                    s.extend(pkt(i as u8 + 1 + shift as u8, p));
                }
                s
            }
        ),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: super::fuzz_cases(1500), failure_persistence: None, ..ProptestConfig::default() })]

    /// Whole conversations: connect, prepare, execute, query. Ends in an error or a result,
    /// never a panic, never a hang (the server closes after its script).
    #[test]
    fn any_conversation_ends_cleanly(script in conversation()) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let stream = serve(script, false);
            let run = async {
                let mut c = match WireConn::connect(stream, "u", "pw", "db", false, WireLimits::default()).await {
                    Ok(c) => c,
                    Err(_) => return,
                };
                if let Ok(stmt) = c.prepare("SELECT 1").await {
                    let _ = c.execute(stmt, &[]).await;
                }
                let _ = c.query_rows("SHOW X").await;
                let _ = c.simple("BEGIN").await;
            };
            tokio::time::timeout(Duration::from_secs(5), run).await.expect("the client hung");
        });
    }
}

/// A server that writes `script` and returns everything the client sent, once it closes.
fn serve_recording(script: Vec<u8>) -> (DuplexStream, tokio::task::JoinHandle<Vec<u8>>) {
    let (client, server) = tokio::io::duplex(1 << 20);
    let (mut rd, mut wr) = tokio::io::split(server);
    let recorded = tokio::spawn(async move {
        let mut got = Vec::new();
        let _ = rd.read_to_end(&mut got).await;
        got
    });
    tokio::spawn(async move {
        let _ = wr.write_all(&script).await;
        std::future::pending::<()>().await;
    });
    (client, recorded)
}

/// A column definition of type `kind` and character set `charset`.
fn typed_column(name: &str, kind: u8, charset: u8) -> Vec<u8> {
    let mut p = column_definition(name);
    let at = p.len() - 13;
    p[at + 1] = charset;
    p[at + 7] = kind;
    p
}

#[tokio::test]
async fn text_queries_close_their_statement_and_read_text_rows() {
    let mut script = welcome();
    // PREPARE OK: statement 5, 2 columns, 1 parameter; its definitions.
    script.extend(pkt(1, &[0, 5, 0, 0, 0, 2, 0, 1, 0, 0, 0, 0]));
    script.extend(pkt(2, &column_definition("?")));
    script.extend(pkt(3, &column_definition("id")));
    script.extend(pkt(4, &column_definition("c")));
    // The COM_QUERY's reply: BIGINT and VARCHAR columns, two rows.
    script.extend(pkt(1, &[2]));
    script.extend(pkt(2, &typed_column("id", 0x08, 63)));
    script.extend(pkt(3, &typed_column("c", 0xfd, 45)));
    script.extend(pkt(4, b"\x0242\x04it's"));
    script.extend(pkt(5, b"\x0243\xfb"));
    script.extend(pkt(6, &[0xfe, 0, 0, 2, 0, 0, 0]));
    let (stream, recorded) = serve_recording(script);
    let mut c = WireConn::connect(stream, "u", "pw", "db", false, WireLimits::default()).await.ok().unwrap();
    let (stmt, params) = c.describe("SELECT id, c FROM t WHERE c = ?").await.unwrap();
    assert_eq!((params, c.columns(stmt).unwrap()), (1, vec!["id".to_string(), "c".to_string()]));
    let mut row = vec![Value::Null];
    let mut kept = crate::db::KeptRow::new(&mut row, crate::db::RowPick::First);
    let done = c.query("SELECT id, c FROM t WHERE c = 'it''s'", Some(&mut kept)).await.unwrap();
    drop(kept);
    assert_eq!(done.rows, 2);
    assert_eq!(row, vec![Value::Int(42), Value::Text("it's".into())]);
    drop(c);
    let sent = tokio::time::timeout(Duration::from_secs(5), recorded).await.unwrap().unwrap();
    let close = [5, 0, 0, 0, 0x19, 5, 0, 0, 0];
    assert!(sent.windows(close.len()).any(|w| w == close), "no COM_STMT_CLOSE of statement 5");
    let query = b"\x03SELECT id, c FROM t WHERE c = 'it''s'";
    assert!(sent.windows(query.len()).any(|w| w == query), "no COM_QUERY");
    assert!(!sent.windows(5).any(|w| w[3] == 0 && w[4] == 0x17), "a COM_STMT_EXECUTE was sent");
}

/// Rows with the text format's separators in them: (1, "a<TAB>b<LF>c\\d", NULL), then (2, "", NULL).
struct Awkward(i64);

impl RowSource for Awkward {
    fn next_row(&mut self, put: &mut dyn FnMut(Param<'_>)) -> bool {
        if self.0 >= 2 {
            return false;
        }
        self.0 += 1;
        put(Param::Int(self.0));
        put(Param::Text(if self.0 == 1 { "a\tb\nc\\d" } else { "" }));
        put(Param::Null);
        true
    }
}

/// A LOAD DATA LOCAL INFILE against a server announcing `caps` that replies `reply`: the
/// outcome and what the client sent after its handshake.
async fn load(caps: u32, reply: Vec<u8>) -> (Result<LoadOutcome, DbError>, Vec<u8>) {
    let mut script = pkt(0, &greeting_with(10, "mysql_native_password", caps));
    script.extend(pkt(2, OK));
    script.extend(reply);
    let (stream, sent) = serve_recording(script);
    let limits = WireLimits { local_infile: true, ..WireLimits::default() };
    let Ok(mut c) = WireConn::connect(stream, "u", "pw", "db", false, limits).await else { panic!("handshake") };
    let mut rows = Awkward(0);
    let fut = c.load_data_local("t", &["a", "b", "c"], &mut rows);
    let r = tokio::time::timeout(Duration::from_secs(5), fut).await.expect("the client hung");
    drop(c);
    let sent = sent.await.unwrap();
    // Past the handshake response, without the COM_QUIT sent on drop.
    let start = 4 + u32::from_le_bytes([sent[0], sent[1], sent[2], 0]) as usize;
    let end = sent.len() - if sent.ends_with(&[1, 0, 0, 0, 1]) { 5 } else { 0 };
    (r, sent[start..end].to_vec())
}

#[tokio::test]
async fn local_infile_sends_escaped_rows_for_the_file_it_named() {
    let mut reply = pkt(1, b"\xfbfairbench-t");
    reply.extend(pkt(4, &[0, 2, 0, 2, 0, 0, 0]));
    let (r, sent) = load(CAPS | CLIENT_LOCAL_FILES, reply).await;
    assert!(matches!(r, Ok(LoadOutcome::Rows(2))), "{r:?}");
    let query = b"LOAD DATA LOCAL INFILE 'fairbench-t' INTO TABLE t CHARACTER SET binary (a, b, c)";
    let mut expected = pkt(0, &[&[3u8][..], query].concat());
    expected.extend(pkt(2, b"1\ta\\tb\\nc\\\\d\t\\N\n2\t\t\\N\n"));
    expected.extend(pkt(3, b""));
    assert_eq!(String::from_utf8_lossy(&sent[..expected.len().min(sent.len())]), String::from_utf8_lossy(&expected));
}

#[tokio::test]
async fn local_infile_refused_by_the_server_or_not_negotiated() {
    let mut err = vec![0xff];
    err.extend(1148u16.to_le_bytes());
    err.extend(b"#42000The used command is not allowed with this MariaDB version");
    let (r, _) = load(CAPS | CLIENT_LOCAL_FILES, pkt(1, &err)).await;
    assert!(matches!(r, Ok(LoadOutcome::Refused)), "{r:?}");
    let (r, sent) = load(CAPS, Vec::new()).await;
    assert!(matches!(r, Ok(LoadOutcome::Refused)), "{r:?}");
    assert!(sent.is_empty(), "nothing sent without the capability");
}

#[tokio::test]
async fn local_infile_never_answers_for_another_file() {
    let mut reply = pkt(1, b"\xfb/etc/passwd");
    reply.extend(pkt(3, &[0, 0, 0, 2, 0, 0, 0]));
    let (r, sent) = load(CAPS | CLIENT_LOCAL_FILES, reply).await;
    let e = r.unwrap_err();
    assert!(e.message.contains("/etc/passwd"), "{}", e.message);
    let query_len = 4 + u32::from_le_bytes([sent[0], sent[1], sent[2], 0]) as usize;
    assert_eq!(&sent[query_len..], &pkt(2, b"")[..], "only an empty file");
}

/// A MariaDB greeting (CLIENT_MYSQL off) offering `extended` capabilities.
fn mariadb_greeting(extended: u32) -> Vec<u8> {
    let mut g = greeting_payload(10, "mysql_native_password");
    // The reserved bytes follow the version, connection id, nonce, capabilities, charset,
    // status and nonce length: their last four are MariaDB's extended capabilities.
    let reserved = 1 + b"8.0.36-fake\0".len() + 4 + 9 + 2 + 1 + 2 + 2 + 1;
    g[reserved + 6..reserved + 10].copy_from_slice(&extended.to_le_bytes());
    g
}

#[tokio::test]
async fn cached_metadata_is_agreed_and_rows_without_definitions_keep_the_last_types() {
    let mut script = pkt(0, &mariadb_greeting(MARIADB_CLIENT_CACHE_METADATA | 1));
    script.extend(pkt(2, OK));
    // PREPARE OK: statement 5, 1 column, no parameter; a BIGINT column.
    script.extend(pkt(1, &[0, 5, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]));
    script.extend(pkt(2, &typed_column("id", 0x08, 63)));
    let ok_eof = [0xfe, 0, 0, 2, 0, 0, 0];
    // Executions: the definitions come (flag 1), are left out (0), come changed (a VARCHAR,
    // as after an ALTER TABLE), are left out again.
    let replies: [(u8, Option<Vec<u8>>, Vec<u8>); 4] = [
        (1, Some(typed_column("id", 0x08, 63)), [&[0u8, 0][..], &42i64.to_le_bytes()].concat()),
        (0, None, [&[0u8, 0][..], &43i64.to_le_bytes()].concat()),
        (1, Some(typed_column("id", 0xfd, 45)), b"\x00\x00\x02ab".to_vec()),
        (0, None, b"\x00\x00\x02cd".to_vec()),
    ];
    for (flag, definition, row) in &replies {
        script.extend(pkt(1, &[1, *flag]));
        let mut seq = 2;
        if let Some(d) = definition {
            script.extend(pkt(seq, d));
            seq += 1;
        }
        script.extend(pkt(seq, row));
        script.extend(pkt(seq + 1, &ok_eof));
    }
    let (stream, recorded) = serve_recording(script);
    let mut c = WireConn::connect(stream, "u", "pw", "db", false, WireLimits::default()).await.ok().unwrap();
    let stmt = c.prepare("SELECT id FROM t").await.unwrap();
    let mut seen = Vec::new();
    for _ in 0..replies.len() {
        let mut row = Vec::new();
        let done = tokio::time::timeout(Duration::from_secs(5), c.execute_row(stmt, &[], &mut row)).await.unwrap();
        assert_eq!(done.unwrap().rows, 1);
        seen.push(row.remove(0));
    }
    assert_eq!(seen, vec![Value::Int(42), Value::Int(43), Value::Text("ab".into()), Value::Text("cd".into())]);
    drop(c);
    let sent = tokio::time::timeout(Duration::from_secs(5), recorded).await.unwrap().unwrap();
    // The handshake response's filler ends with the extended capabilities the client wants:
    // only the metadata cache, not the other bit offered.
    assert_eq!(sent[32..36], MARIADB_CLIENT_CACHE_METADATA.to_le_bytes());
}

#[tokio::test]
async fn without_the_metadata_cache_a_skipped_definition_is_refused() {
    let mut script = welcome();
    script.extend(pkt(1, &[0, 5, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]));
    script.extend(pkt(2, &typed_column("id", 0x08, 63)));
    // A flag byte the client never agreed to: read as part of a malformed column count.
    script.extend(pkt(1, &[1, 0]));
    script.extend(pkt(2, &[0, 0, 42, 0, 0, 0, 0, 0, 0, 0]));
    script.extend(pkt(3, &[0xfe, 0, 0, 2, 0, 0, 0]));
    let (stream, recorded) = serve_recording(script);
    let mut c = WireConn::connect(stream, "u", "pw", "db", false, WireLimits::default()).await.ok().unwrap();
    let stmt = c.prepare("SELECT id FROM t").await.unwrap();
    let mut row = Vec::new();
    let r = tokio::time::timeout(Duration::from_secs(5), c.execute_row(stmt, &[], &mut row)).await.unwrap();
    assert!(r.is_err(), "a row read without its definitions: {r:?}");
    drop(c);
    let sent = tokio::time::timeout(Duration::from_secs(5), recorded).await.unwrap().unwrap();
    assert_eq!(sent[32..36], [0, 0, 0, 0]);
}
