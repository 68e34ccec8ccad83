"""Driver of bench/connections.sh: fairbench's peak RSS holding 100, 1,000 and 10,000
connections at a low open-loop rate, on MariaDB and PostgreSQL, against the goals."""
import json
import os
import resource
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from benchlib import FB, Table, machine_lines, measure, print_header, run_driver  # noqa: E402

DB = "fb_connections"
COUNTS = [100, 1_000, 10_000]
RATE = 200  # events per second over all connections (open loop)
TABLE_SIZE = 10_000
MARGIN = 100  # connections above the largest count: this script's and other sessions
GOALS = {1_000: 25e6, 10_000: 100e6}  # peak RSS, bytes
NOFILE = 65_536
MEMORY_SHARE = 0.7  # the most of the available memory a run may be expected to take


def raise_nofile():
    """Open files for 10,000 sockets and more (inherited by fairbench); returns the limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (NOFILE, max(hard, NOFILE)))  # root may raise hard
    except (ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def mem_available():
    with open("/proc/meminfo") as f:
        return next(int(l.split()[1]) * 1024 for l in f if l.startswith("MemAvailable:"))


class Watcher(threading.Thread):
    """Samples, once a second while a run lasts, the connections the server has to the
    benchmark's database and the machine's available memory: their extremes."""

    def __init__(self, server):
        super().__init__(daemon=True)
        self.server, self.stop, self.peak = server, threading.Event(), 0
        self.mem_before = self.mem_low = mem_available()

    def run(self):
        while not self.stop.wait(1.0):
            try:
                self.peak = max(self.peak, self.server.connections(DB))
            except RuntimeError:
                pass  # a refused admin session: the next sample tells
            self.mem_low = min(self.mem_low, mem_available())

    def used(self):
        """Memory the run took on this machine (server and client), bytes."""
        return self.mem_before - self.mem_low


def loop(connections):
    """'open' at --rate RATE, or 'closed' when the open-files limit cannot hold what fairbench
    needs for an open loop: a socket and a timer per connection, 64 besides (its own check)."""
    return "open" if 2 * connections + 64 <= resource.getrlimit(resource.RLIMIT_NOFILE)[0] else "closed"


def fairbench_cmd(server, connections, out):
    rate = [f"--rate={RATE}"] if loop(connections) == "open" else []
    return [FB, "run", "oltp_point_select", f"--target={server.url(DB)}", "--tables=1",
            f"--table-size={TABLE_SIZE}", f"--threads={connections}", f"--time={SECONDS}",
            "--connect-timeout=120", f"--out={out}", "-q"] + rate


def hold(server, connections, out):
    """One run holding `connections`; returns (usage, watcher, result document or None)."""
    watcher = Watcher(server)
    watcher.start()
    try:
        usage = measure(fairbench_cmd(server, connections, out))
    finally:
        watcher.stop.set()
        watcher.join()
    doc = None
    if usage.rc == 0:
        with open(out) as f:
            doc = json.load(f)
    return usage, watcher, doc


TABLE = Table([("server", 10, ""), ("connections", 11, ","), ("loop", 6, ""), ("server saw", 10, ","),
               ("events/s", 8, ".0f"),
               ("errors", 6, "d"), ("peak RSS MB", 11, ".1f"), ("KB/conn", 7, ".1f"), ("KB/conn>100", 11, ".1f"),
               ("machine MB", 10, ".0f"), ("goal", 9, "s"), ("verdict", 7, "")])


def too_big(connections, last):
    """Why a run of `connections` would not fit in memory, judged from the last run's (count,
    memory it took), or None."""
    if not last:
        return None
    count, used = last
    expected = used / count * connections
    if expected <= MEMORY_SHARE * mem_available():
        return None
    return (f"{connections:,} connections would take ~{expected / 2**30:.1f} GiB (from {used / 2**20:.0f} MiB "
            f"for {count:,}), over {MEMORY_SHARE:.0%} of the {mem_available() / 2**30:.1f} GiB available")


def measure_server(server, tmp):
    """Every count on one server; returns the rows printed."""
    base_rss, last = None, None
    for connections in COUNTS:
        reason = too_big(connections, last)
        if reason:
            print(f"{server.name:<10} {connections:>11,} skipped: {reason}", flush=True)
            FAILURES.append(f"{server.name} {connections:,}: skipped ({reason})")
            continue
        usage, watcher, doc = hold(server, connections, os.path.join(tmp, f"{connections}.json"))
        if doc is None:
            tail = "\n    ".join((usage.stderr.strip() or usage.stdout.strip()).splitlines()[-5:])
            print(f"{server.name:<10} {connections:>11,} FAILED (exit {usage.rc}):\n    {tail}", flush=True)
            FAILURES.append(f"{server.name} {connections:,}: fairbench exited {usage.rc}")
            continue
        run = doc["conditions"]["run"]
        rss = usage.rss_bytes
        base_rss = base_rss or (connections, rss)
        marginal = (rss - base_rss[1]) / (connections - base_rss[0]) / 1e3 if connections > base_rss[0] else None
        goal = GOALS.get(connections)
        TABLE.row([server.name, connections, loop(connections), watcher.peak, run["events"] / run["measured_s"],
                   doc["errors"]["total"], rss / 1e6, rss / connections / 1e3, marginal, watcher.used() / 1e6,
                   f"<= {goal / 1e6:.0f} MB" if goal else "", ("pass" if rss <= goal else "FAIL") if goal else ""])
        last = (connections, max(watcher.used(), 1))


def with_server(server, tmp):
    """The database, its table and max_connections for one server, put back afterwards."""
    server.create_db(DB)
    restore = lambda: None  # noqa: E731
    try:
        usage = measure([FB, "prepare", "oltp_point_select", f"--target={server.url(DB)}",
                         f"--table-size={TABLE_SIZE}", "-q"])
        if usage.rc != 0:
            raise RuntimeError(f"fairbench prepare failed: {usage.stderr.strip()[-300:]}")
        old = server.max_connections()
        needed = max(COUNTS) + MARGIN
        if old < needed and server.name == "PostgreSQL":
            print(f"{server.name}: max_connections {old} -> {needed} takes a restart (and another to put "
                  f"{old} back afterwards)", flush=True)
        restore = server.raise_max_connections(needed)
        measure_server(server, tmp)
    finally:
        server.drop_db(DB)
        restore()


def benchmark(servers):
    global SECONDS
    SECONDS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    nofile = raise_nofile()
    closed = [c for c in COUNTS if loop(c) == "closed"]
    fallback = (f"; {', '.join(f'{c:,}' for c in closed)} connections in a CLOSED loop (no --rate, full speed): an "
                f"open loop needs 2 descriptors per connection, over the hard open-files limit {nofile} that this "
                "machine does not let even root raise (no CAP_SYS_RESOURCE)" if closed else "")
    print_header("fairbench: peak RSS holding many connections", [
        ("fairbench", f"{measure([FB, '--version']).stdout.strip()} ({FB})"),
        ("servers", "; ".join(f"{s.name} {s.version()}" for s in servers)),
        *machine_lines(),
        ("transport", "TCP 127.0.0.1 (MariaDB 3306, PostgreSQL 5432)"),
        ("runs", f"oltp_point_select, open loop --rate {RATE} over all connections, {SECONDS} s measured, "
                 f"1 table x {TABLE_SIZE:,} rows; connections: " + ", ".join(f"{c:,}" for c in COUNTS) + fallback),
        ("limits", f"RLIMIT_NOFILE {nofile}; each server's max_connections raised to {max(COUNTS) + MARGIN} for "
                   "the runs and put back after (PostgreSQL: ALTER SYSTEM and a restart, each way, only when "
                   "lower)"),
        ("RSS", "peak RSS of the fairbench process (all threads) from wait4() rusage (GNU time), MB = 10^6 bytes; "
                "KB/conn = RSS / connections; KB/conn>100 = its growth from the 100-connection run per "
                "connection added"),
        ("columns", "server saw: most connections to the benchmark's database the server listed at once "
                    "(sampled each second); machine MB: how far the machine's available memory fell (servers "
                    "and client); a count whose projected memory exceeds "
                    f"{MEMORY_SHARE:.0%} of what is available is skipped"),
    ])
    TABLE.header()
    with tempfile.TemporaryDirectory() as tmp:
        for server in servers:
            try:
                with_server(server, tmp)
            except RuntimeError as e:
                FAILURES.append(f"{server.name}: {e}")
                print(f"{server.name}: stopped: {e}", flush=True)
    if FAILURES:
        print("\nnot measured or failed:\n  " + "\n  ".join(FAILURES))
        sys.exit(1)


FAILURES = []
SECONDS = 5

if __name__ == "__main__":
    run_driver(benchmark)
