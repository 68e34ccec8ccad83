//! The least a client can do per query of oltp_point_select or oltp_read_write on MariaDB/MySQL
//! or PostgreSQL, as a yardstick for bench/client-floor.sh: sysbench's prepared statements
//! (BEGIN and COMMIT included), one statement per connection at a time (as sysbench and
//! fairbench: MySQL's COM_STMT_EXECUTE, PostgreSQL's Bind, Execute and Sync in one send), a
//! clock read before the send and after the reply, the latency counted in a power-of-two
//! bucket, result rows skipped unread, and nothing else: no workload language, no histograms,
//! no result document, no async runtime. `LOOPS` threads each run a level-triggered epoll loop
//! over their share of the connections, one `send` and (usually) one `recv` per query.
//! Whatever CPU this spends per query, no client can spend much less.
//!
//! Usage: floor_client [mysql://|postgres://]HOST:PORT USER DB CONNECTIONS SECONDS TABLES TABLE_SIZE
//! [LOOPS] [MODE] [WORKLOAD]
//! (MODE epoll, the default; uring: the same loop over io_uring; tokio: the same client as
//! tokio tasks, as fairbench runs its clients. WORKLOAD point_select, the default, or
//! read_write: sysbench's 20 statements per transaction, ids uniform; an error sysbench
//! retries (deadlock, lock wait timeout, serialization failure, duplicate key) skips to the
//! COMMIT.) The password comes from FB_FLOOR_PASSWORD (PostgreSQL: trust or a cleartext
//! password only). Prints the queries, transactions and seconds measured.

mod mysql;
mod pg;

use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

type Fallible<T> = Result<T, String>;

/// sysbench's statements (../shared/reference/sysbench-compat.md) by kind, `%u` the table:
/// BEGIN and COMMIT are prepared once, the others once per table.
const SQL: [&str; 11] = [
    "BEGIN",
    "COMMIT",
    "SELECT c FROM sbtest%u WHERE id=?",
    "SELECT c FROM sbtest%u WHERE id BETWEEN ? AND ?",
    "SELECT SUM(k) FROM sbtest%u WHERE id BETWEEN ? AND ?",
    "SELECT c FROM sbtest%u WHERE id BETWEEN ? AND ? ORDER BY c",
    "SELECT DISTINCT c FROM sbtest%u WHERE id BETWEEN ? AND ? ORDER BY c",
    "UPDATE sbtest%u SET k=k+1 WHERE id=?",
    "UPDATE sbtest%u SET c=? WHERE id=?",
    "DELETE FROM sbtest%u WHERE id=?",
    "INSERT INTO sbtest%u (id, k, c, pad) VALUES (?, ?, ?, ?)",
];
/// An index into `SQL`.
type Kind = usize;
const BEGIN: Kind = 0;
const COMMIT: Kind = 1;
const POINT: Kind = 2;
const SIMPLE_RANGE: Kind = 3;
const SUM_RANGE: Kind = 4;
const ORDER_RANGE: Kind = 5;
const DISTINCT_RANGE: Kind = 6;
const INDEX_UPDATE: Kind = 7;
const NON_INDEX_UPDATE: Kind = 8;
const DELETE: Kind = 9;
const INSERT: Kind = 10;

const POINT_SELECT: [Kind; 1] = [POINT];
/// One transaction of oltp_read_write.
const READ_WRITE: [Kind; 20] = [
    BEGIN,
    POINT,
    POINT,
    POINT,
    POINT,
    POINT,
    POINT,
    POINT,
    POINT,
    POINT,
    POINT,
    SIMPLE_RANGE,
    SUM_RANGE,
    ORDER_RANGE,
    DISTINCT_RANGE,
    INDEX_UPDATE,
    NON_INDEX_UPDATE,
    DELETE,
    INSERT,
    COMMIT,
];
/// sysbench's --range-size default.
const RANGE_SIZE: u32 = 100;
/// Prepared statement ids of one connection: per table, by kind (0 where unused).
struct Statements(Vec<[u32; SQL.len()]>);

impl Statements {
    fn of(&self, kind: Kind, table: usize) -> u32 {
        self.0[table][kind]
    }
}

/// The workload's statements prepared by `prepare` for every table (BEGIN and COMMIT once).
fn statements(a: &Args, mut prepare: impl FnMut(&str) -> Fallible<u32>) -> Fallible<Statements> {
    let mut stmts = Statements(Vec::new());
    let (mut begin, mut commit) = (0, 0);
    if a.workload.contains(&BEGIN) {
        (begin, commit) = (prepare(SQL[BEGIN])?, prepare(SQL[COMMIT])?);
    }
    for t in 1..=a.tables {
        let mut ids = [0; SQL.len()];
        (ids[BEGIN], ids[COMMIT]) = (begin, commit);
        for kind in (POINT..SQL.len()).filter(|k| a.workload.contains(k)) {
            ids[kind] = prepare(&SQL[kind].replace("%u", &t.to_string()))?;
        }
        stmts.0.push(ids);
    }
    Ok(stmts)
}

/// A statement's parameter.
enum Param<'a> {
    Int(u32),
    Text(&'a [u8]),
}

/// sysbench's c (10 groups of 11 random digits joined by '-') or pad (5 groups) into `out`.
fn random_digits(out: &mut [u8], rng: &mut u64) {
    let mut r = 0;
    for (i, b) in out.iter_mut().enumerate() {
        if i % 12 == 11 {
            *b = b'-';
            continue;
        }
        if r < 10 {
            r = xorshift(rng);
        }
        *b = b'0' + (r % 10) as u8;
        r /= 10;
    }
}

/// The server's protocol: `mysql://` (the default) or `postgres://` before HOST:PORT.
#[derive(Clone, Copy, PartialEq)]
enum Protocol {
    Mysql,
    Postgres,
}

/// How a reply's bytes so far stand.
enum Scan {
    /// Incomplete: this many bytes are whole messages, seen and no longer needed.
    Partial(usize),
    /// The reply ended; `retried`: with an error sysbench retries.
    Complete {
        retried: bool,
    },
    Failed(String),
}

struct Args {
    protocol: Protocol,
    addr: String,
    user: String,
    password: String,
    db: String,
    connections: usize,
    seconds: f64,
    tables: u32,
    table_size: u32,
    loops: usize,
    mode: Mode,
    workload: &'static [Kind],
}

#[derive(Clone, Copy)]
enum Mode {
    Epoll,
    Uring,
    Tokio,
}

fn args() -> Fallible<Args> {
    let a: Vec<String> = std::env::args().skip(1).collect();
    if a.len() < 7 {
        return Err(
            "usage: floor_client [mysql://|postgres://]HOST:PORT USER DB CONNECTIONS SECONDS TABLES TABLE_SIZE [LOOPS] \
             [epoll|uring|tokio] [point_select|read_write]"
                .into(),
        );
    }
    let num = |i: usize| a[i].parse::<f64>().map_err(|_| format!("argument {} is not a number: {}", i + 1, a[i]));
    let (protocol, addr) = match a[0].split_once("://") {
        None => (Protocol::Mysql, a[0].as_str()),
        Some(("mysql", addr)) => (Protocol::Mysql, addr),
        Some(("postgres", addr)) => (Protocol::Postgres, addr),
        Some((other, _)) => return Err(format!("the scheme is mysql:// or postgres://, not {other}://")),
    };
    Ok(Args {
        protocol,
        addr: addr.to_string(),
        user: a[1].clone(),
        password: std::env::var("FB_FLOOR_PASSWORD").unwrap_or_default(),
        db: a[2].clone(),
        connections: num(3)? as usize,
        seconds: num(4)?,
        tables: num(5)? as u32,
        table_size: num(6)? as u32,
        loops: if a.len() > 7 { num(7)? as usize } else { 2 },
        mode: match a.get(8).map(String::as_str) {
            None | Some("epoll") => Mode::Epoll,
            Some("uring") => Mode::Uring,
            Some("tokio") => Mode::Tokio,
            Some(other) => return Err(format!("MODE is epoll, uring or tokio, not {other}")),
        },
        workload: match a.get(9).map(String::as_str) {
            None | Some("point_select") => &POINT_SELECT,
            Some("read_write") => &READ_WRITE,
            Some(other) => return Err(format!("WORKLOAD is point_select or read_write, not {other}")),
        },
    })
}

struct Conn {
    sock: TcpStream,
    stmts: Statements,
    workload: &'static [Kind],
    table_size: u32,
    /// Where the next statement is in the workload's transaction.
    step: usize,
    /// The table of the current statement group, and the id the DELETE drew (the INSERT's).
    table: usize,
    deleted: u32,
    protocol: Protocol,
    /// Where the reply is (MySQL: past its first packet, a result set's column count;
    /// PostgreSQL: past an error sysbench retries, waiting for ReadyForQuery).
    mid_reply: bool,
    buf: Vec<u8>,
    len: usize,
    /// The next statement's messages (kept here: io_uring reads them after the push).
    out: Vec<u8>,
    /// c and pad strings, reused.
    text: [u8; 119],
    sent_at: Instant,
    /// Statements that failed with an error sysbench retries.
    retried: u64,
    /// Transactions (oltp_point_select: statements) run to their end.
    transactions: u64,
}

/// What one loop measured: queries and latency counts by power-of-two microseconds.
#[derive(Default)]
struct Tally {
    queries: u64,
    retried: u64,
    transactions: u64,
    buckets: [u64; 32],
}

fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

impl Conn {
    fn new(sock: TcpStream, stmts: Statements, a: &Args) -> Conn {
        Conn {
            sock,
            stmts,
            workload: a.workload,
            table_size: a.table_size,
            step: 0,
            table: 0,
            deleted: 0,
            protocol: a.protocol,
            mid_reply: false,
            buf: vec![0; 64 * 1024],
            len: 0,
            out: Vec::with_capacity(512),
            text: [0; 119],
            sent_at: Instant::now(),
            retried: 0,
            transactions: 0,
        }
    }

    /// Encodes the workload's next statement into `out` and reads the clock. Tables
    /// are drawn once per statement group, ids uniformly, as sysbench does.
    fn encode(&mut self, rng: &mut u64) {
        let kind = self.workload[self.step];
        let first_of_group = self.step == 0 || self.workload[self.step - 1] != kind;
        if first_of_group && !matches!(kind, BEGIN | COMMIT | INSERT) {
            self.table = (xorshift(rng) % self.stmts.0.len() as u64) as usize;
        }
        let stmt = self.stmts.of(kind, self.table);
        let id = (xorshift(rng) % self.table_size as u64) as u32 + 1;
        if matches!(kind, NON_INDEX_UPDATE | INSERT) {
            random_digits(&mut self.text, rng);
        }
        if kind == DELETE {
            self.deleted = id;
        }
        let (c, pad) = (&self.text[..], &self.text[60..]);
        let params: &[Param] = match kind {
            BEGIN | COMMIT => &[],
            POINT | INDEX_UPDATE | DELETE => &[Param::Int(id)],
            SIMPLE_RANGE | SUM_RANGE | ORDER_RANGE | DISTINCT_RANGE => {
                &[Param::Int(id), Param::Int(id + RANGE_SIZE - 1)]
            }
            NON_INDEX_UPDATE => &[Param::Text(c), Param::Int(id)],
            _ => &[Param::Int(self.deleted), Param::Int(id), Param::Text(c), Param::Text(pad)], // INSERT
        };
        match self.protocol {
            Protocol::Mysql => mysql::encode_execute(&mut self.out, stmt, params),
            Protocol::Postgres => pg::encode_execute(&mut self.out, stmt, params),
        }
        self.mid_reply = false;
        self.sent_at = Instant::now();
    }

    /// Sends the next statement with one `send`.
    fn send(&mut self, rng: &mut u64) -> Fallible<()> {
        self.encode(rng);
        let n =
            unsafe { libc::send(self.sock.as_raw_fd(), self.out.as_ptr().cast(), self.out.len(), libc::MSG_NOSIGNAL) };
        if n != self.out.len() as isize {
            return Err(format!("send: {}", std::io::Error::last_os_error()));
        }
        Ok(())
    }

    /// Reads what arrived with one `recv`; true once the reply is complete.
    fn receive(&mut self) -> Fallible<bool> {
        let free = &mut self.buf[self.len..];
        let n = unsafe { libc::recv(self.sock.as_raw_fd(), free.as_mut_ptr().cast(), free.len(), 0) };
        if n <= 0 {
            let e = std::io::Error::last_os_error();
            return if n < 0 && e.kind() == std::io::ErrorKind::WouldBlock {
                Ok(false)
            } else {
                Err(format!("recv: {e}"))
            };
        }
        self.received(n as usize)
    }

    /// `n` more bytes are in `buf`; true once the reply is complete and the workload moved on.
    /// Complete messages are dropped from the buffer as they are seen.
    fn received(&mut self, n: usize) -> Fallible<bool> {
        self.len += n;
        let seen = &self.buf[..self.len];
        let scan = match self.protocol {
            Protocol::Mysql => mysql::scan(seen, &mut self.mid_reply),
            Protocol::Postgres => pg::scan(seen, &mut self.mid_reply),
        };
        match scan {
            Scan::Partial(whole) => {
                self.buf.copy_within(whole..self.len, 0);
                self.len -= whole;
                if self.len == self.buf.len() {
                    return Err("a message larger than the buffer".into());
                }
                Ok(false)
            }
            Scan::Complete { retried } => {
                self.retried += retried as u64;
                Ok(self.done(retried))
            }
            Scan::Failed(message) => Err(message),
        }
    }

    /// Past the end and between transactions (as sysbench, a transaction runs to its end: one
    /// left open would hold its locks until every loop ends).
    fn finished(&self, now: Instant, end: Instant) -> bool {
        now >= end && self.step == 0
    }

    fn done(&mut self, failed: bool) -> bool {
        self.len = 0;
        let last = self.workload.len() - 1;
        self.step = if failed && self.step < last { last } else { (self.step + 1) % self.workload.len() };
        self.transactions += (self.step == 0) as u64;
        true
    }
}

impl Tally {
    fn record(&mut self, sent_at: Instant, now: Instant) {
        let us = now.duration_since(sent_at).as_micros() as u64;
        self.buckets[(64 - us.leading_zeros() as usize).min(31)] += 1;
        self.queries += 1;
    }

    /// A connection's counts, once its loop is done with it.
    fn add_conn(&mut self, c: &Conn) {
        self.retried += c.retried;
        self.transactions += c.transactions;
    }

    fn add(&mut self, other: &Tally) {
        self.queries += other.queries;
        self.retried += other.retried;
        self.transactions += other.transactions;
        self.buckets.iter_mut().zip(other.buckets).for_each(|(a, b)| *a += b);
    }
}

/// One epoll loop over `conns` until `end`.
fn run_loop(mut conns: Vec<Conn>, end: Instant, seed: u64) -> Fallible<Tally> {
    let ep = unsafe { libc::epoll_create1(0) };
    let mut rng = seed | 1;
    for (i, c) in conns.iter_mut().enumerate() {
        let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: i as u64 };
        unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, c.sock.as_raw_fd(), &mut ev) };
        c.send(&mut rng)?;
    }
    let mut tally = Tally::default();
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; conns.len()];
    let mut open = conns.len();
    while open > 0 {
        let n = unsafe { libc::epoll_wait(ep, events.as_mut_ptr(), events.len() as i32, 100) };
        for ev in &events[..n.max(0) as usize] {
            let c = &mut conns[ev.u64 as usize];
            if !c.receive()? {
                continue;
            }
            let now = Instant::now();
            tally.record(c.sent_at, now);
            if !c.finished(now, end) {
                c.send(&mut rng)?;
            } else {
                open -= 1;
            }
        }
    }
    unsafe { libc::close(ep) };
    conns.iter().for_each(|c| tally.add_conn(c));
    Ok(tally)
}

/// The same over io_uring: per reply one `io_uring_enter` submits the next send and receive
/// of every connection served and waits for the next completion (no epoll, no send or recv
/// system calls of their own).
fn run_uring_loop(mut conns: Vec<Conn>, end: Instant, seed: u64) -> Fallible<Tally> {
    let entries = (conns.len() as u32 * 2).next_power_of_two().max(8);
    let mut ring = io_uring::IoUring::new(entries).map_err(|e| format!("io_uring: {e}"))?;
    let mut rng = seed | 1;
    let mut tally = Tally::default();
    let mut open = conns.len();
    let mut done: Vec<(u64, i32)> = Vec::with_capacity(entries as usize);
    // user_data: connection * 2, + 1 for its receive.
    let push = |ring: &mut io_uring::IoUring, c: &mut Conn, i: usize, send: bool| -> Fallible<()> {
        let fd = io_uring::types::Fd(c.sock.as_raw_fd());
        let free = &mut c.buf[c.len..];
        let recv =
            io_uring::opcode::Recv::new(fd, free.as_mut_ptr(), free.len() as u32).build().user_data(i as u64 * 2 + 1);
        let send_sqe =
            io_uring::opcode::Send::new(fd, c.out.as_ptr(), c.out.len() as u32).build().user_data(i as u64 * 2);
        let mut sq = ring.submission();
        // Safety: `out` and `buf` live in `conns`, untouched until the completions come.
        unsafe {
            if send {
                sq.push(&send_sqe).map_err(|_| "submission queue full")?;
            }
            sq.push(&recv).map_err(|_| "submission queue full")?;
        }
        Ok(())
    };
    for (i, c) in conns.iter_mut().enumerate() {
        c.encode(&mut rng);
        push(&mut ring, c, i, true)?;
    }
    while open > 0 {
        ring.submit_and_wait(1).map_err(|e| format!("io_uring_enter: {e}"))?;
        done.clear();
        done.extend(ring.completion().map(|c| (c.user_data(), c.result())));
        for &(data, result) in &done {
            let (i, is_recv) = ((data / 2) as usize, data % 2 == 1);
            if result < 0 || (is_recv && result == 0) {
                let what = if is_recv { "recv" } else { "send" };
                return Err(format!("{what}: {}", std::io::Error::from_raw_os_error(-result.min(0))));
            }
            if !is_recv {
                continue;
            }
            let c = &mut conns[i];
            if !c.received(result as usize)? {
                push(&mut ring, c, i, false)?;
                continue;
            }
            let now = Instant::now();
            tally.record(c.sent_at, now);
            if !c.finished(now, end) {
                c.encode(&mut rng);
                push(&mut ring, c, i, true)?;
            } else {
                open -= 1;
            }
        }
    }
    conns.iter().for_each(|c| tally.add_conn(c));
    Ok(tally)
}

/// The same client as tasks on tokio (a current-thread runtime and a LocalSet, as
/// fairbench's event loops), one task per connection: what the async runtime alone adds.
fn run_tokio_loop(conns: Vec<Conn>, end: Instant, seed: u64) -> Fallible<Tally> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    let local = tokio::task::LocalSet::new();
    let tally = std::rc::Rc::new(std::cell::RefCell::new(Tally::default()));
    for (i, c) in conns.into_iter().enumerate() {
        let tally = tally.clone();
        local.spawn_local(async move {
            if let Err(e) = tokio_client(c, end, seed ^ (i as u64) << 20, &tally).await {
                eprintln!("floor_client: {e}");
                std::process::exit(1);
            }
        });
    }
    rt.block_on(local); // every task has ended, and dropped its handle on the tally
    std::rc::Rc::try_unwrap(tally).map(std::cell::RefCell::into_inner).map_err(|_| "a task outlived its loop".into())
}

async fn tokio_client(mut c: Conn, end: Instant, seed: u64, tally: &std::cell::RefCell<Tally>) -> Fallible<()> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s =
        tokio::net::TcpStream::from_std(c.sock.try_clone().map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
    let mut rng = seed | 1;
    loop {
        c.encode(&mut rng);
        s.write_all(&c.out).await.map_err(|e| format!("send: {e}"))?;
        loop {
            let n = s.read(&mut c.buf[c.len..]).await.map_err(|e| format!("recv: {e}"))?;
            if n == 0 {
                return Err("connection closed".into());
            }
            if c.received(n)? {
                break;
            }
        }
        // The reply is complete and the server says nothing more: drop the readiness without
        // a recv that would find nothing (as fairbench's Socket::drained).
        let _ = s.try_io(tokio::io::Interest::READABLE, || Err::<(), _>(std::io::ErrorKind::WouldBlock.into()));
        let now = Instant::now();
        tally.borrow_mut().record(c.sent_at, now);
        if c.finished(now, end) {
            tally.borrow_mut().add_conn(&c);
            return Ok(());
        }
    }
}

fn main() {
    if let Err(e) = run() {
        eprintln!("floor_client: {e}");
        std::process::exit(1);
    }
}

fn run() -> Fallible<()> {
    let a = args()?;
    let mut per_loop: Vec<Vec<Conn>> = (0..a.loops.max(1)).map(|_| Vec::new()).collect();
    for i in 0..a.connections {
        let (sock, stmts) = match a.protocol {
            Protocol::Mysql => mysql::connect(&a)?,
            Protocol::Postgres => pg::connect(&a)?,
        };
        let conn = Conn::new(sock, stmts, &a);
        per_loop[i % a.loops.max(1)].push(conn);
    }
    let start = Instant::now();
    let end = start + Duration::from_secs_f64(a.seconds);
    let threads: Vec<_> = per_loop
        .into_iter()
        .enumerate()
        .map(|(i, conns)| {
            let (seed, mode) = (0x9e37_79b9_7f4a_7c15 ^ i as u64, a.mode);
            std::thread::spawn(move || match mode {
                Mode::Epoll => run_loop(conns, end, seed),
                Mode::Uring => run_uring_loop(conns, end, seed),
                Mode::Tokio => run_tokio_loop(conns, end, seed),
            })
        })
        .collect();
    let mut total = Tally::default();
    for t in threads {
        total.add(&t.join().map_err(|_| "a loop panicked")??);
    }
    let seconds = start.elapsed().as_secs_f64();
    // The median's bucket: latencies in [2^(b-1), 2^b) microseconds.
    let (mut seen, mut median) = (0, 0);
    for (b, n) in total.buckets.iter().enumerate() {
        seen += n;
        if seen * 2 >= total.queries {
            median = b;
            break;
        }
    }
    println!(
        "queries {} transactions {} seconds {seconds:.3} qps {:.1} median latency in [{}, {}) us retried {}",
        total.queries,
        total.transactions,
        total.queries as f64 / seconds,
        (1u64 << median) >> 1,
        1u64 << median,
        total.retried
    );
    Ok(())
}
