//! fairbench against fake MySQL and PostgreSQL servers that misbehave on purpose, over real TCP: each must
//! end in one clear line and exit 2 within its deadline, never a panic, a hang or unbounded
//! memory. Needs no database server.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[path = "common/fake_mysql.rs"]
mod fake_mysql;
use fake_mysql::{pkt, read_packet, FRAME};

fn greeting() -> Vec<u8> {
    fake_mysql::greeting("8.0.36-hostile")
}

fn welcome(s: &mut TcpStream) -> Option<()> {
    fake_mysql::welcome(s, "8.0.36-hostile")
}

/// A result set of one column whose one row is `row_len` bytes, framed as the protocol says.
fn big_result(row_len: usize, send_body: bool) -> Vec<u8> {
    let mut r = pkt(1, &[1]);
    r.extend(pkt(2, b"\x03def\0\0\0\x01x\0\x0c\x21\0\0\0\0\0\xfd\0\0\0\0\0"));
    let mut value = Vec::with_capacity(row_len);
    value.push(0xfe);
    value.extend_from_slice(&((row_len - 9) as u64).to_le_bytes());
    let mut seq = 3u8;
    let mut left = row_len;
    loop {
        let n = left.min(FRAME);
        let mut h = (n as u32).to_le_bytes()[..3].to_vec();
        h.push(seq);
        r.extend(h);
        if send_body {
            let have = value.len().min(n);
            r.extend_from_slice(&value[..have]);
            value.drain(..have);
            r.extend(std::iter::repeat_n(b'x', n - have));
        }
        seq = seq.wrapping_add(1);
        left -= n;
        if n < FRAME {
            break;
        }
    }
    if send_body {
        r.extend(pkt(seq, &[0xfe, 0, 0, 2, 0, 0, 0]));
    }
    r
}

/// A server on a free port whose every connection is handled by `behave` on its own thread.
fn serve(behave: fn(TcpStream)) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in listener.incoming().flatten() {
            std::thread::spawn(move || behave(s));
        }
    });
    port
}

struct Exit {
    code: Option<i32>,
    stderr: String,
    elapsed: Duration,
    peak_rss_kb: i64,
}

/// Runs `fairbench run` against the fake server and waits (at most 60 s) for it to exit.
fn run_against(port: u16, extra: &[&str]) -> Exit {
    run_against_url(&format!("mysql://bench:hostile-pw@127.0.0.1:{port}/db"), extra)
}

/// Runs `fairbench run` against the fake server at `url`; as [`run_against`].
#[allow(clippy::zombie_processes)] // reaped by wait4, which also gives its peak RSS
fn run_against_url(url: &str, extra: &[&str]) -> Exit {
    let dir = tempfile::tempdir().unwrap();
    let start = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_fairbench"))
        .args(["run", "oltp_point_select", "--target", url, "--time", "1"])
        .args(extra)
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let pid = child.id() as libc::pid_t;
    let watchdog = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(60));
        // SAFETY: signalling a pid we spawned; harmless if it already exited and was reaped
        // only in the unlikely case the pid was reused within the test.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    });
    // wait4 reports this child's own peak RSS.
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointers to locals; the child is ours and not waited for elsewhere.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid);
    let elapsed = start.elapsed();
    assert!(elapsed < Duration::from_secs(59), "fairbench hung: killed after 60 s");
    drop(watchdog);
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    Exit { code, stderr: reader.join().unwrap(), elapsed, peak_rss_kb: usage.ru_maxrss }
}

/// Exit 2 with exactly one line naming the server, no password, no panic.
fn assert_one_clear_line(e: &Exit, port: u16, words: &str) {
    assert_eq!(e.code, Some(2), "{}", e.stderr);
    let lines: Vec<&str> = e.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", e.stderr);
    assert!(lines[0].contains(&format!("127.0.0.1:{port}")), "{}", e.stderr);
    assert!(lines[0].contains(words), "{}", e.stderr);
    assert!(!e.stderr.contains("hostile-pw") && !e.stderr.contains("panick"), "{}", e.stderr);
}

#[test]
fn silent_server_times_out_at_connect() {
    // Like pointing mysql:// at a Redis port: the server waits for the client to speak.
    let port = serve(|s| {
        std::thread::sleep(Duration::from_secs(120));
        drop(s)
    });
    let e = run_against(port, &["--connect-timeout", "1"]);
    assert_one_clear_line(&e, port, "no complete handshake within 1 s");
    assert!(e.elapsed < Duration::from_secs(10), "{:?}", e.elapsed);
}

#[test]
fn stall_after_the_greeting_times_out() {
    let port = serve(|mut s| {
        let _ = s.write_all(&greeting());
        std::thread::sleep(Duration::from_secs(120));
    });
    let e = run_against(port, &["--connect-timeout", "1.5"]);
    assert_one_clear_line(&e, port, "no complete handshake within 1.5 s");
}

#[test]
fn a_server_that_stops_answering_queries_hits_the_admin_deadline() {
    // Lets the client in, then reads its queries and never replies.
    let port = serve(|mut s| {
        if welcome(&mut s).is_none() {
            return;
        }
        while read_packet(&mut s).is_some() {}
    });
    let e = run_against(port, &["--admin-timeout", "1"]);
    assert_one_clear_line(&e, port, "did not answer within 1 s while reading its tables (--admin-timeout");
    assert!(e.elapsed < Duration::from_secs(10), "{:?}", e.elapsed);
}

#[test]
fn not_a_mysql_server() {
    let port = serve(|mut s| {
        let _ = s.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
        std::thread::sleep(Duration::from_secs(120));
    });
    assert_one_clear_line(&run_against(port, &[]), port, "is this a MySQL server?");
}

#[test]
fn endless_auth_switches_are_refused() {
    let port = serve(|mut s| {
        let _ = s.write_all(&greeting());
        let mut seq = 2u8;
        while read_packet(&mut s).is_some() {
            let switch = pkt(seq, b"\xfemysql_native_password\0abcdefghijklmnopqrst\0");
            if s.write_all(&switch).is_err() {
                break;
            }
            seq = seq.wrapping_add(2);
        }
    });
    assert_one_clear_line(&run_against(port, &[]), port, "switch authentication method twice");
}

#[test]
fn a_reply_over_the_packet_limit_is_refused_unread() {
    // A 10 MiB row under --max-packet 1M: only its header arrives; refused on the length.
    let port = serve(|mut s| {
        if welcome(&mut s).is_none() {
            return;
        }
        while read_packet(&mut s).is_some() {
            if s.write_all(&big_result(10 << 20, false)).is_err() {
                break;
            }
        }
    });
    let e = run_against(port, &["--max-packet", "1M"]);
    assert_eq!(e.code, Some(2), "{}", e.stderr);
    assert!(e.stderr.contains("over the limit of 1048576") && e.stderr.contains("--max-packet"), "{}", e.stderr);
    assert!(e.elapsed < Duration::from_secs(10), "{:?}", e.elapsed);
}

#[test]
fn a_reply_over_the_default_limit_is_refused() {
    // 100 MiB in 16 MiB frames: refused once the frames announced pass 64 MiB.
    let port = serve(|mut s| {
        if welcome(&mut s).is_none() {
            return;
        }
        let reply = big_result(100 << 20, true);
        while read_packet(&mut s).is_some() {
            if s.write_all(&reply).is_err() {
                break;
            }
        }
    });
    let e = run_against(port, &[]);
    assert_eq!(e.code, Some(2), "{}", e.stderr);
    assert!(e.stderr.contains("over the limit of 67108864") && e.stderr.contains("--max-packet"), "{}", e.stderr);
    assert!(e.peak_rss_kb < 400 * 1024, "peak RSS {} MB", e.peak_rss_kb / 1024);
}

/// The largest reply the default limit admits, in answer to every query (the introspection
/// path, which keeps rows): memory stays bounded. Prints the peak for the record.
#[test]
fn largest_admitted_reply_keeps_memory_bounded() {
    let port = serve(|mut s| {
        if welcome(&mut s).is_none() {
            return;
        }
        let reply = big_result((64 << 20) - 64, true);
        while read_packet(&mut s).is_some() {
            if s.write_all(&reply).is_err() {
                break;
            }
        }
    });
    let e = run_against(port, &[]);
    assert_eq!(e.code, Some(2), "{}", e.stderr);
    assert!(!e.stderr.contains("panick"), "{}", e.stderr);
    eprintln!("peak RSS under a 64 MiB hostile reply: {} MB", e.peak_rss_kb / 1024);
    assert!(e.peak_rss_kb < 400 * 1024, "peak RSS {} MB", e.peak_rss_kb / 1024);
}

/// A PostgreSQL server that asks for the password in clear; returns what the client sent
/// after the startup message (a PasswordMessage would hold the password).
fn serve_cleartext_pg(received: std::sync::mpsc::Sender<Vec<u8>>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut s in listener.incoming().flatten() {
            let received = received.clone();
            std::thread::spawn(move || {
                let mut len = [0u8; 4];
                if s.read_exact(&mut len).is_err() {
                    return;
                }
                let mut startup = vec![0; u32::from_be_bytes(len) as usize - 4];
                let _ = s.read_exact(&mut startup);
                let _ = s.write_all(&[b'R', 0, 0, 0, 8, 0, 0, 0, 3]); // AuthenticationCleartextPassword
                let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
                let mut after = Vec::new();
                let _ = s.read_to_end(&mut after);
                let _ = received.send(after);
            });
        }
    });
    port
}

#[test]
fn postgres_cleartext_password_over_tcp_is_refused_unless_allowed() {
    let (tx, rx) = std::sync::mpsc::channel();
    let port = serve_cleartext_pg(tx);
    let url = format!("postgres://bench:hostile-pw@127.0.0.1:{port}/db");
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_fairbench"))
            .args(["run", "oltp_point_select", "--target", &url, "--time", "1", "--connect-timeout", "3"])
            .args(extra)
            .current_dir(std::env::temp_dir())
            .output()
            .unwrap()
    };
    let out = run(&[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("asked for the password in clear") && stderr.contains("--allow-cleartext-password"));
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let sent = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(!String::from_utf8_lossy(&sent).contains("hostile-pw"), "the password was sent: {sent:?}");
    // Allowed explicitly: the password goes out (and this fake server then hangs up).
    let out = run(&["--allow-cleartext-password"]);
    assert_eq!(out.status.code(), Some(2));
    let sent = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(sent.first() == Some(&b'p') && String::from_utf8_lossy(&sent).contains("hostile-pw"), "{sent:?}");
}

/// A PostgreSQL server that lets the client in, then answers its first query with a
/// message announcing 2 GB and streams data for it (at most the 2 GB, until the client
/// hangs up).
fn serve_huge_pg_message() -> u16 {
    serve(|mut s| {
        let mut len = [0u8; 4];
        if s.read_exact(&mut len).is_err() {
            return;
        }
        let mut startup = vec![0; (u32::from_be_bytes(len) as usize).saturating_sub(4)];
        if s.read_exact(&mut startup).is_err() {
            return;
        }
        // AuthenticationOk, ReadyForQuery (idle).
        if s.write_all(&[b'R', 0, 0, 0, 8, 0, 0, 0, 0, b'Z', 0, 0, 0, 5, b'I']).is_err() {
            return;
        }
        let mut query = [0u8; 1];
        if s.read_exact(&mut query).is_err() {
            return;
        }
        let announced: u32 = 2_000_000_000;
        let mut out = vec![b'D'];
        out.extend_from_slice(&announced.to_be_bytes());
        if s.write_all(&out).is_err() {
            return;
        }
        let chunk = vec![b'x'; 1 << 16];
        let mut sent = 0usize;
        while sent < announced as usize && s.write_all(&chunk).is_ok() {
            sent += chunk.len();
        }
    })
}

#[test]
fn a_postgres_message_over_the_packet_limit_is_refused_unread() {
    let port = serve_huge_pg_message();
    let url = format!("postgres://bench:hostile-pw@127.0.0.1:{port}/db");
    let e = run_against_url(&url, &[]);
    assert_eq!(e.code, Some(2), "{}", e.stderr);
    assert_eq!(e.stderr.lines().count(), 1, "{}", e.stderr);
    assert!(
        e.stderr.contains("message of 1999999996 bytes")
            && e.stderr.contains("over the limit of 67108864 (--max-packet"),
        "{}",
        e.stderr
    );
    assert!(!e.stderr.contains("hostile-pw") && !e.stderr.contains("panick"), "{}", e.stderr);
    eprintln!("peak RSS under a 2 GB PostgreSQL message: {} MB", e.peak_rss_kb / 1024);
    assert!(e.peak_rss_kb < 200 * 1024, "peak RSS {} MB", e.peak_rss_kb / 1024);
    // A lower limit applies from the first message on; the error names it.
    let e = run_against_url(&url, &["--max-packet", "1K"]);
    assert_eq!(e.code, Some(2), "{}", e.stderr);
    assert!(e.stderr.contains("over the limit of 1024 (--max-packet"), "{}", e.stderr);
}
