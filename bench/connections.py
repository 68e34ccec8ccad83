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
MEMORY_SHARE = 0.8  # the most of the available memory a run may be expected to take


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
    """Samples, every 2 s while a run lasts, how many connections the server has to the
    benchmark's database and the memory it holds for them: the most of each."""

    def __init__(self, server):
        super().__init__(daemon=True)
        self.server, self.stop, self.peak = server, threading.Event(), 0
        self.mem_before = self.mem_peak = server.memory(DB)

    def run(self):
        while not self.stop.wait(2.0):
            try:
                self.peak = max(self.peak, self.server.connections(DB))
                self.mem_peak = max(self.mem_peak, self.server.memory(DB))
            except RuntimeError:
                pass  # a refused admin session: the next sample tells

    def used(self):
        """Memory the server took for the run's connections, bytes."""
        return self.mem_peak - self.mem_before


def fitting(connections):
    """The most of `connections` the open-files limit lets fairbench hold: a socket per
    connection and 64 besides (its own check; an open loop's timers are one per worker)."""
    return min(connections, resource.getrlimit(resource.RLIMIT_NOFILE)[0] - 64)


def fairbench_cmd(server, connections, out):
    return [FB, "run", "oltp_point_select", f"--target={server.url(DB)}", "--tables=1",
            f"--table-size={TABLE_SIZE}", f"--threads={connections}", f"--rate={RATE}", f"--time={SECONDS}",
            "--connect-timeout=120", f"--out={out}", "-q"]


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


TABLE = Table([("server", 10, ""), ("connections", 11, ","), ("server saw", 10, ","), ("events/s", 8, ".0f"),
               ("errors", 6, "d"), ("peak RSS MB", 11, ".1f"), ("KB/conn", 7, ".1f"), ("KB/conn>100", 11, ".1f"),
               ("server MB", 9, ".0f"), ("goal", 9, "s"), ("verdict", 7, "")])


def too_big(connections, last):
    """Why a run of `connections` would not fit in memory, judged from the last run's (count,
    memory it took), or None."""
    if not last:
        return None
    count, used = last
    expected = used / count * connections
    if expected <= MEMORY_SHARE * mem_available():
        return None
    return (f"the server would take ~{expected / 2**30:.1f} GiB for {connections:,} connections (from "
            f"{used / 2**20:.0f} MiB for {count:,}), over {MEMORY_SHARE:.0%} of the {mem_available() / 2**30:.1f} "
            "GiB available")


def judged(rss, wanted, held, marginal):
    """(goal text, verdict) for `wanted` connections, from a run that held `held` of them (the
    open-files limit): then the RSS they would take is projected with the marginal KB."""
    goal = GOALS.get(wanted)
    if not goal:
        return "", ""
    if held < wanted:
        rss += (wanted - held) * (marginal or 0) * 1e3
    return f"<= {goal / 1e6:.0f} MB", ("pass" if rss <= goal else "FAIL") + (" (proj.)" if held < wanted else "")


def measure_server(server, tmp):
    """Every count on one server, a row each."""
    base_rss, last = None, None
    for wanted in COUNTS:
        connections = fitting(wanted)
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
        TABLE.row([server.name, connections, watcher.peak, run["events"] / run["measured_s"],
                   doc["errors"]["total"], rss / 1e6, rss / connections / 1e3, marginal, watcher.used() / 1e6,
                   *judged(rss, wanted, connections, marginal)])
        if connections < wanted:
            print(f"{'':<10} {'':>11} {connections:,}, not {wanted:,}: the most the open-files limit holds; at "
                  f"{wanted:,} ~{(rss + (wanted - connections) * marginal * 1e3) / 1e6:.1f} MB (+{marginal:.1f} KB "
                  "for each connection more)", flush=True)
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
    short = [c for c in COUNTS if fitting(c) < c]
    fallback = (f"; instead of {', '.join(f'{c:,}' for c in short)}: {fitting(max(COUNTS)):,} (fairbench takes "
                f"a descriptor per connection and 64 besides, and the hard open-files limit is {nofile}, which this machine does "
                "not let even root raise), the RSS at the full count projected from its growth per connection"
                if short else "")
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
                    "(sampled every 2 s); server MB: the most memory the server held for them (PostgreSQL: PSS "
                    "of their backends; MariaDB: growth of mariadbd's PSS); a count for which the server would "
                    f"need more than {MEMORY_SHARE:.0%} of the memory available (projected from the count "
                    "before) is skipped"),
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
