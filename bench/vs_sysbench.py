"""Driver of bench/vs-sysbench.sh: sysbench 1.0.20 and fairbench alternately on the same
tables of MariaDB and PostgreSQL; per run the queries, QPS and the client's cost per query
(CPU user and system, syscalls, context switches) and peak RSS; per configuration the ratios
fairbench/sysbench over the rounds against the goals, printed only when the server saw both
tools' connections use the same transport; then prepare's rows/s of both tools."""
import json
import os
import re
import sys
import tempfile
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(__file__))
from benchlib import (FB, Table, Usage, machine_lines, measure, per, perf_available,  # noqa: E402
                      print_header, run_driver, spread, sysbench)
from transport import Watch, mismatch  # noqa: E402

DB = "fb_vs_sysbench"
TABLES, TABLE_SIZE = 8, 100_000
WORKLOADS = ["oltp_point_select", "oltp_read_write"]
THREADS = [8, 64]
PREPARES = [(8, 100_000), (1, 1_000_000)]  # tables x rows of the prepare section
PREPARE_THREADS = 8
RAND_TYPE = "uniform"  # the same ids on both (sysbench's default would be 'special')
TOOLS = ["sysbench", "fairbench"]
GOAL_QPS, GOAL_CPU, GOAL_PREPARE = 1.1, 0.5, 3.0


@dataclass
class Run:
    """One tool's run: `queries` is the count every per-query figure divides by."""
    queries: int
    seconds: float  # the tool's own measured time (connect and setup outside it)
    extra: int  # the server's count minus the tool's own (see the header)
    usage: Usage
    transport: object = None  # transport.Transport as the server saw the run's sessions

    def qps(self):
        return self.queries / self.seconds

    def us_per_query(self, value):
        return per(value, self.queries, 1e6)

    def per_query(self, value):
        return per(value, self.queries)

    def metrics(self):
        """The figures the ratios are taken of, by name."""
        u = self.usage
        return {"QPS": self.qps(), "CPU/query": self.us_per_query(u.cpu_s),
                "user/query": self.us_per_query(u.user_s), "sys/query": self.us_per_query(u.sys_s),
                "syscalls/query": self.per_query(u.syscalls), "ctx switches/query": self.per_query(u.ctx_switches)}


class ToolFailed(Exception):
    pass


# ---------------------------------------------------------------------------- commands

def fairbench_cmd(server, action, workload, threads, tables, size, extra=()):
    return [FB, action, workload, f"--target={server.url(DB, TLS)}", f"--tables={tables}", f"--table-size={size}",
            f"--threads={threads}", "-q"] + list(extra)


def run_cmd(tool, server, workload, threads, out, seconds=None):
    seconds = seconds or SECONDS
    if tool == "sysbench":
        return sysbench(server, DB, workload, "run", threads, TABLES, TABLE_SIZE, seconds, [f"--rand-type={RAND_TYPE}"],
                        tls=TLS)
    return fairbench_cmd(server, "run", workload, threads, TABLES, TABLE_SIZE,
                         [f"--rand-type={RAND_TYPE}", f"--time={seconds}", f"--out={out}"])


def prepare_cmd(tool, server, tables, size):
    if tool == "sysbench":
        return sysbench(server, DB, "oltp_read_write", "prepare", PREPARE_THREADS, tables, size, tls=TLS)
    return fairbench_cmd(server, "prepare", "oltp_read_write", PREPARE_THREADS, tables, size)


# ---------------------------------------------------------------------------- one run of a tool

def own_counts(tool, usage, out):
    """(queries, transactions, measured seconds) as the tool itself reports them."""
    if tool == "sysbench":
        found = [re.search(p, usage.stdout) for p in (r"queries:\s+(\d+)", r"transactions:\s+(\d+)",
                                                       r"total time:\s+([\d.]+)s")]
        if not all(found):
            raise ToolFailed("sysbench printed no statistics")
        return int(found[0][1]), int(found[1][1]), float(found[2][1])
    with open(out) as f:
        doc = json.load(f)
    run = doc["conditions"]["run"]
    return doc["stats"]["total"]["count"], run["events"], run["measured_s"]


def fail(what, usage):
    lines = (usage.stderr.strip() or usage.stdout.strip()).splitlines()[-5:]
    return ToolFailed(f"{what} exited {usage.rc}:\n      " + "\n      ".join(lines))


def run_tool(tool, server, workload, threads, tmp, perf=False):
    out = os.path.join(tmp, "fairbench.json")
    if os.path.exists(out):
        os.remove(out)
    before = server.counter(DB)
    with Watch(server, DB, expected=threads) as watch:
        usage = measure(run_cmd(tool, server, workload, threads, out), perf=perf)
    if usage.rc != 0:
        raise fail(tool, usage)
    delta = server.counter_delta(before, server.counter(DB))
    queries, transactions, seconds = own_counts(tool, usage, out)
    if server.counts == "queries":  # the server's count is the one used; the tool's checks it
        return Run(delta, seconds, delta - queries, usage, watch.result())
    return Run(queries, seconds, delta - transactions, usage, watch.result())


# ---------------------------------------------------------------------------- one configuration

RUN_TABLE = Table([("round", 5, "s"), ("tool", 9, ""), ("queries", 10, "d"), ("time s", 7, ".2f"),
                   ("QPS", 8, ".0f"), ("CPU us/q", 9, ".2f"), ("user", 7, ".2f"), ("sys", 7, ".2f"),
                   ("ctxsw/q", 8, ".2f"), ("syscalls/q", 10, ".2f"), ("RSS MB", 7, ".1f"), ("extra", 7, "d"),
                   ("transport", 10, "")], indent="  ")
RATIO_TABLE = Table([("fairbench/sysbench", 19, ""), ("median", 7, ".2f"), ("min", 6, ".2f"), ("max", 6, ".2f"),
                     ("goal", 7, "s"), ("verdict", 14, "")], indent="  ")
METRIC_NAMES = ["QPS", "CPU/query", "user/query", "sys/query", "syscalls/query", "ctx switches/query"]
GOALS = {"QPS": (">=", GOAL_QPS), "CPU/query": ("<=", GOAL_CPU)}


def verdict(stats, goal):
    """pass: every round meets the goal; pass (median): the median does, not every round."""
    if stats is None or goal is None:
        return ""
    op, bound = goal
    meets = (lambda v: v >= bound) if op == ">=" else (lambda v: v <= bound)
    worst = stats[1] if op == ">=" else stats[2]
    return "pass" if meets(worst) else "pass (median)" if meets(stats[0]) else "FAIL"


def ratio_stats(rounds, name):
    """Per round fairbench's figure over sysbench's (the pair run back to back), then their spread."""
    ratios = []
    for runs in rounds:
        if len(runs) == 2:
            sb, fb = runs["sysbench"].metrics()[name], runs["fairbench"].metrics()[name]
            ratios.append(fb / sb if sb and fb is not None else None)
    return spread(ratios)


def print_ratios(rounds, counted, goals):
    """syscalls/query from the runs under perf (counted), everything else from the rounds."""
    print()
    RATIO_TABLE.header()
    for name in METRIC_NAMES:
        stats = ratio_stats([counted] if name == "syscalls/query" else rounds, name)
        goal = goals.get(name)
        RATIO_TABLE.row([name] + list(stats or (None, None, None))
                        + [f"{goal[0]} {goal[1]}" if goal else "", verdict(stats, goal)])


def pair(label, order, server, workload, threads, tmp, perf=False):
    """Both tools once, in the given order; prints a row for each; returns their runs."""
    runs = {}
    for tool in order:
        try:
            run = run_tool(tool, server, workload, threads, tmp, perf)
        except (ToolFailed, OSError, ValueError, KeyError) as e:
            FAILURES.append(f"{server.name} {workload} {threads} threads, {label}: {tool}")
            print(f"  {label:>5} {tool:<9} FAILED: {e}", flush=True)
            continue
        runs[tool] = run
        u = run.usage
        syscalls = run.per_query(u.syscalls) if perf or not PERF else "-"  # '-': in the perf row
        RUN_TABLE.row([label, tool, run.queries, run.seconds, run.qps(), run.us_per_query(u.cpu_s),
                       run.us_per_query(u.user_s), run.us_per_query(u.sys_s), run.per_query(u.ctx_switches),
                       syscalls, u.rss_bytes / 1e6, run.extra, run.transport.short()])
    return runs


def transport_refusal(rounds):
    """Why no ratio may be taken of these rounds (in one, the tools' connections used different
    transports, or one the server did not confirm), or None."""
    for label, runs in rounds:
        if len(runs) == 2:
            why = mismatch("fairbench", runs["fairbench"].transport, "sysbench", runs["sysbench"].transport)
            if why:
                return f"{label}: {why}"
    return None


def transports_seen(rounds):
    """Each tool's transports over the runs, as the server saw them."""
    parts = []
    for tool in TOOLS:
        seen = [runs[tool].transport for _, runs in rounds if tool in runs]
        counts = sorted(sum(t.sessions.values()) for t in seen) or [0]
        what = " / ".join(dict.fromkeys(t.what() for t in seen)) or "not run"
        parts.append(f"{tool} {what} in {len(seen)} of {len(rounds)} runs ({counts[0]}-{counts[-1]} sessions each)")
    return "; ".join(parts)


def compare(server, workload, threads, tmp):
    """ROUNDS rounds of both tools, alternating which goes first, then one run of each under
    perf stat for its syscalls; returns each round's runs and why its ratios were refused (None:
    they were printed)."""
    print(f"\n{server.name}  {workload}  {threads} threads")
    RUN_TABLE.header()
    rounds = [pair(str(r + 1), TOOLS if r % 2 == 0 else TOOLS[::-1], server, workload, threads, tmp)
              for r in range(ROUNDS)]
    counted = pair("perf", TOOLS, server, workload, threads, tmp, perf=True) if PERF else {}
    labelled = [(f"round {r + 1}", runs) for r, runs in enumerate(rounds)] + ([("perf run", counted)] if counted else [])
    print(f"\n  transport as the server saw it: {transports_seen(labelled)}")
    refused = transport_refusal(labelled)
    if refused:
        FAILURES.append(f"{server.name} {workload} {threads} threads: no ratio, {refused}")
        print(f"  NO RATIO: {refused}", flush=True)
    else:
        print_ratios(rounds, counted, GOALS)
    return rounds, refused


# ---------------------------------------------------------------------------- prepare

def prepare_for_runs(server):
    """fairbench prepares the runs' tables in DB (untimed)."""
    print(f"\n== {server.name}: fairbench prepare {TABLES} x {TABLE_SIZE:,} rows (untimed) for the runs", flush=True)
    usage = measure(fairbench_cmd(server, "prepare", "oltp_read_write", PREPARE_THREADS, TABLES, TABLE_SIZE))
    if usage.rc != 0:
        raise fail("fairbench prepare", usage)


PREPARE_TABLE = Table([("round", 5, "d"), ("tool", 9, ""), ("rows", 9, "d"), ("time s", 7, ".2f"),
                       ("rows/s", 8, ".0f"), ("CPU s", 6, ".2f"), ("rest s", 6, ".2f"), ("busy", 5, ".0%"),
                       ("RSS MB", 7, ".1f"), ("transport", 10, "")], indent="  ")


def machine_cpu_s():
    """CPU seconds all processes have used since boot (/proc/stat's user, nice, system, irq and
    softirq ticks)."""
    with open("/proc/stat") as f:
        fields = f.readline().split()
    return sum(int(fields[i]) for i in (1, 2, 3, 6, 7)) / os.sysconf("SC_CLK_TCK")


def timed_prepare(tool, server, tables, size):
    """One prepare into a new, empty database (its creation is not timed): the tool's usage
    and the machine's CPU seconds meanwhile, all processes."""
    server.create_db(DB)
    before = machine_cpu_s()
    with Watch(server, DB) as watch:
        usage = measure(prepare_cmd(tool, server, tables, size))
    machine = machine_cpu_s() - before
    if usage.rc != 0:
        raise fail(f"{tool} prepare", usage)
    return usage, machine, watch.result()


def compare_prepare(server, tables, size):
    print(f"\n{server.name}  prepare {tables} table(s) x {size:,} rows, {PREPARE_THREADS} threads")
    PREPARE_TABLE.header()
    ratios, refused = [], None
    for r in range(PREPARE_ROUNDS):
        rate, seen = {}, {}
        for tool in TOOLS if r % 2 == 0 else TOOLS[::-1]:
            try:
                usage, machine, seen[tool] = timed_prepare(tool, server, tables, size)
            except (ToolFailed, RuntimeError) as e:
                FAILURES.append(f"{server.name} prepare {tables}x{size} round {r + 1}: {tool}")
                print(f"  {r + 1:>5} {tool:<9} FAILED: {e}", flush=True)
                continue
            rate[tool] = tables * size / usage.wall_s
            PREPARE_TABLE.row([r + 1, tool, tables * size, usage.wall_s, rate[tool], usage.cpu_s,
                               machine - usage.cpu_s, machine / (usage.wall_s * os.cpu_count()),
                               usage.rss_bytes / 1e6, seen[tool].short()])
        if len(rate) == 2:
            ratios.append(rate["fairbench"] / rate["sysbench"])
            refused = refused or mismatch("fairbench", seen["fairbench"], "sysbench", seen["sysbench"])
    if refused:
        FAILURES.append(f"{server.name} prepare {tables}x{size}: no ratio, {refused}")
        print(f"\n  NO RATIO: {refused}", flush=True)
        return None, refused
    stats = spread(ratios)
    goal = (">=", GOAL_PREPARE)
    print()
    RATIO_TABLE.header()
    RATIO_TABLE.row(["rows/s"] + list(stats or (None, None, None)) + [f">= {GOAL_PREPARE}", verdict(stats, goal)])
    return stats, None


# ---------------------------------------------------------------------------- whole

SUMMARY = Table([("server", 10, ""), ("configuration", 26, ""), ("QPS ratio", 17, "s"), ("verdict", 13, ""),
                 ("CPU/q ratio", 17, "s"), ("verdict", 13, "")])


def summary_cell(stats):
    return "n/a" if stats is None else f"{stats[0]:.2f} ({stats[1]:.2f}-{stats[2]:.2f})"


def benchmark_server(server, tmp, summary):
    """The runs' configurations, then the prepare section, on the tables set_up made."""
    for workload in [] if ONLY_PREPARE else WORKLOADS:
        for threads in THREADS:
            rounds, refused = compare(server, workload, threads, tmp)
            rounds = [] if refused else rounds
            summary.append((server.name, f"{workload} {threads} thr",
                            ratio_stats(rounds, "QPS"), ratio_stats(rounds, "CPU/query"), refused))
    for tables, size in PREPARES if PREPARE_ROUNDS else []:
        stats, refused = compare_prepare(server, tables, size)
        summary.append((server.name, f"prepare {tables}x{size:,}", stats, None, refused))


def print_summary(summary):
    print(f"\n== Summary: fairbench/sysbench, median (min-max) over the rounds; goals QPS >= {GOAL_QPS}, "
          f"CPU/query <= {GOAL_CPU}, prepare rows/s >= {GOAL_PREPARE}")
    SUMMARY.header()
    for name, config, qps, cpu, refused in summary:
        if refused:
            SUMMARY.row([name, config, "NO RATIO", "", "", ""])
            print(f"{'':>38}({refused})")
            continue
        goal = (">=", GOAL_PREPARE) if config.startswith("prepare") else GOALS["QPS"]
        SUMMARY.row([name, config, summary_cell(qps), verdict(qps, goal),
                     "" if config.startswith("prepare") else summary_cell(cpu),
                     "" if config.startswith("prepare") else verdict(cpu, GOALS["CPU/query"])])


# ---------------------------------------------------------------------------- set-up and header

PROBE_THREADS, PROBE_SECONDS = 8, 2


def probe_transport(server, tmp):
    """A short oltp_point_select run of each tool, its sessions read from the server: the
    header's line of what each tool's connections used."""
    seen = {}
    for tool in TOOLS:
        out = os.path.join(tmp, "probe.json")
        with Watch(server, DB, expected=PROBE_THREADS) as watch:
            usage = measure(run_cmd(tool, server, "oltp_point_select", PROBE_THREADS, out, PROBE_SECONDS))
        if usage.rc != 0:
            raise fail(f"{tool} (transport probe)", usage)
        seen[tool] = watch.result()
    why = mismatch("fairbench", seen["fairbench"], "sysbench", seen["sysbench"])
    return (f"fairbench {seen['fairbench']}; sysbench {seen['sysbench']}"
            + (f". NO RATIO will be printed: {why}" if why else "") + f" (read from {server.transport_source()})")


def set_up(server, tmp):
    """The server's database with the runs' tables, and what the server saw each tool's
    connections use; with FB_BENCH_TLS=on, refused unless the server offers TLS."""
    refusal = server.tls_refusal() if TLS else None
    if refusal:
        raise ToolFailed(f"FB_BENCH_TLS=on, but {refusal}; run without FB_BENCH_TLS (both plaintext), or "
                         f"without {server.name} (FB_BENCH_SERVERS)")
    server.create_db(DB)
    if ONLY_PREPARE:
        return "each prepare's sessions: the prepare tables' transport column"
    prepare_for_runs(server)
    return probe_transport(server, tmp)


def transport_told():
    if TLS:
        return ("TLS on both (FB_BENCH_TLS=on): sysbench --mysql-ssl=on and PGSSLMODE=require, fairbench "
                "?tls=require (encrypted, certificate not verified)")
    return ("plaintext on both (FB_BENCH_TLS=off): sysbench --mysql-ssl=off and PGSSLMODE=disable (libpq's "
            "default, sslmode=prefer, encrypts whenever the server has ssl = on), fairbench ?tls=off")


def header(servers, seen):
    versions = []
    for s in servers:
        try:
            versions.append(f"{s.name} {s.version()}")
        except RuntimeError as e:
            versions.append(f"{s.name} unreachable ({e})")
    sb = measure(["sysbench", "--version"]).stdout.strip()
    perf_note = ("perf stat -e raw_syscalls:sys_enter (all the tool's threads), in one more run of each tool "
                 "per configuration (row 'perf'; '-' in the rounds): the tracepoint slows every syscall (here "
                 "sys time +10-15%), so the rounds' CPU is taken without it; that run's CPU is not in the ratios"
                 if PERF else
                 "perf is not available here (needs perf and root), or FB_BENCH_PERF=0: syscalls are n/a")
    print_header("fairbench vs sysbench: client cost per query, alternating runs on the same tables", [
        ("tools", f"{measure([FB, '--version']).stdout.strip()} ({FB}), {sb}"),
        ("servers", "; ".join(versions)),
        *machine_lines(),
        ("transport", "TCP 127.0.0.1 (MariaDB 3306, PostgreSQL 5432), server-side prepared statements; "
                      + transport_told()),
        *[(f"{s.name} saw", line) for s, line in seen.items()],
        ("checked", "in every run the server's view of the tool's sessions is read once they are all up (column "
                    "'transport': sessions seen and their transport); a configuration whose tools differ, or "
                    "whose transport the server cannot confirm, gets NO RATIO"),
        ("runs", f"{SECONDS} s per run, {ROUNDS} rounds (odd rounds sysbench first, even rounds fairbench first), "
                 f"{TABLES} tables x {TABLE_SIZE:,} rows prepared once by fairbench, --rand-type={RAND_TYPE} on both"),
        ("prepare", f"{PREPARE_ROUNDS} round(s) of each of " + ", ".join(f"{t} x {s:,}" for t, s in PREPARES)
                    + f", --threads {PREPARE_THREADS} on both; rows/s = rows / wall time of the process "
                      "(connect, create, load, index); each into a new, empty database. CPU s = the tool's; "
                      "rest s = every other process's meanwhile (/proc/stat), the server's work and little else "
                      "on a quiet machine; busy = all CPU over wall time x cores"),
        ("queries", "MariaDB: the server's count (SHOW GLOBAL STATUS Questions delta minus this script's own "
                    "SHOW); PostgreSQL: each tool's own count (sysbench 'queries:', fairbench stats.total.count), "
                    "as PostgreSQL counts no statements without pg_stat_statements"),
        ("extra", "the server's count minus the tool's own: MariaDB Questions - the tool's queries (its setup "
                  "statements, tens, and the transport check's reads); PostgreSQL xact_commit+xact_rollback "
                  "(pg_stat_database) - the tool's transactions (each statement prepared at connect is one: ~9 "
                  "per table per connection, and every retried attempt). Much more than that: another client "
                  "was using the server"),
        ("time", "QPS = queries / the tool's own measured time (sysbench 'total time', fairbench "
                 "conditions.run.measured_s): connecting and setup are outside it"),
        ("CPU, RSS", "user and system CPU, context switches and peak RSS of the tool's process (all its threads, "
                     "its whole life including connect) from wait4() rusage (GNU time); CPU in us per query"),
        ("syscalls", perf_note),
    ])


def parse_args():
    global SECONDS, ROUNDS, PREPARE_ROUNDS, TLS
    args = [int(a) for a in sys.argv[1:4]]
    SECONDS, ROUNDS, PREPARE_ROUNDS = (args + [10, 3, 3][len(args):])[:3]
    if ROUNDS < 3:
        sys.exit(f"ROUNDS is {ROUNDS}: at least 3 are needed for a median and a spread "
                 "(the machine swings +-30% between identical runs)")
    if 0 < PREPARE_ROUNDS < 3:
        print(f"warning: {PREPARE_ROUNDS} prepare round(s): the prepare ratio's spread means little below 3\n")
    tls = os.environ.get("FB_BENCH_TLS", "off")
    if tls not in ("on", "off"):
        sys.exit(f"FB_BENCH_TLS={tls}: use FB_BENCH_TLS=on (TLS on both tools) or off (plaintext on both, the default)")
    TLS = tls == "on"


def set_up_all(servers, tmp, created):
    """{server: what it saw of each tool's transport} of the servers set up; created collects
    those whose database exists (to be dropped)."""
    seen = {}
    for server in servers:
        try:
            created.append(server)
            seen[server] = set_up(server, tmp)
        except (ToolFailed, RuntimeError) as e:
            FAILURES.append(f"{server.name}: {e}")
            print(f"\n{server.name}: stopped: {e}", flush=True)
    return seen


def benchmark(servers):
    parse_args()
    summary, created = [], []
    with tempfile.TemporaryDirectory() as tmp:
        try:
            seen = set_up_all(servers, tmp, created)
            print()
            header(servers, seen)
            for server in seen:
                try:
                    benchmark_server(server, tmp, summary)
                except (ToolFailed, RuntimeError) as e:
                    FAILURES.append(f"{server.name}: {e}")
                    print(f"\n{server.name}: stopped: {e}", flush=True)
        finally:
            for server in created:
                server.drop_db(DB)
    print_summary(summary)
    if FAILURES:
        print("\nfailed:\n  " + "\n  ".join(FAILURES))
        sys.exit(1)


FAILURES = []
PERF = os.environ.get("FB_BENCH_PERF", "1") != "0" and perf_available()
# FB_BENCH_ONLY=prepare: only the prepare section (no runs).
ONLY_PREPARE = os.environ.get("FB_BENCH_ONLY") == "prepare"
SECONDS = ROUNDS = PREPARE_ROUNDS = 0
TLS = False  # FB_BENCH_TLS=on: both tools over TLS (parse_args)

if __name__ == "__main__":
    run_driver(benchmark)
