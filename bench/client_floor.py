"""Driver of bench/client-floor.sh: sysbench, fairbench and the floor client (the least a
client can do per query: examples/floor_client/) alternately on the same tables of MariaDB
and PostgreSQL, every one in plaintext as the server saw it; per run QPS and CPU per query, per
configuration the ratios to sysbench and fairbench's to the floor."""
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import vs_sysbench as vs  # noqa: E402
from benchlib import (PASSWORD, USER, Table, machine_lines, measure, per, print_header,  # noqa: E402
                      run_driver, spread)
from transport import Watch, mismatch  # noqa: E402

SCHEMES = {"queries": "mysql", "transactions": "postgres"}  # by what the server counts

DB = "fb_client_floor"  # its own: a concurrent vs-sysbench.sh drops fb_vs_sysbench
FLOOR = "target/release/examples/floor_client"
WORKLOADS = ["oltp_point_select", "oltp_read_write"]
THREADS = [8, 64]
TOOLS = ["sysbench", "fairbench", "floor", "floor-uring", "floor-tokio"]  # the floor client's three loops
FLOOR_GOAL = 1.1  # issue 64: fairbench's CPU per query at most 1.1x the floor's


def floor_run(server, workload, threads, mode):
    """A vs.Run of the floor client (mode epoll, uring or tokio), counted as vs_sysbench counts
    the tools (MariaDB: the server's queries; PostgreSQL: the client's own, the server's
    transactions for `extra`), over the client's own seconds."""
    before = server.counter(DB)
    address = f"{SCHEMES[server.counts]}://127.0.0.1:{server.port}"
    with Watch(server, DB, expected=threads) as watch:
        usage = measure([FLOOR, address, USER, DB, str(threads), str(vs.SECONDS), str(vs.TABLES),
                         str(vs.TABLE_SIZE), "2", mode, workload.removeprefix("oltp_")],
                        env={**os.environ, "FB_FLOOR_PASSWORD": PASSWORD})
    if usage.rc != 0:
        raise vs.fail("floor_client", usage)
    delta = server.counter_delta(before, server.counter(DB))
    m = re.search(r"queries (\d+) transactions (\d+) seconds ([\d.]+)", usage.stdout)
    if not m:
        raise vs.ToolFailed("floor_client printed no count")
    queries, transactions, seconds = int(m[1]), int(m[2]), float(m[3])
    if server.counts == "queries":
        return vs.Run(delta, seconds, delta - queries, usage, watch.result())
    return vs.Run(queries, seconds, delta - transactions, usage, watch.result())


RUNS = Table([("round", 5, "d"), ("tool", 11, ""), ("queries", 9, "d"), ("QPS", 7, ".0f"), ("CPU us/q", 9, ".2f"),
              ("user", 6, ".2f"), ("sys", 6, ".2f"), ("ctxsw/q", 7, ".2f"), ("extra", 6, "d"), ("transport", 10, "")], indent="  ")
OVER_FLOOR = Table([("fairbench over", 15, ""), ("CPU/q", 17, "s"), ("goal", 6, "s"), ("verdict", 13, ""),
                    ("fairbench's own us/q", 20, "s")], indent="  ")
RATIOS = Table([("over sysbench's", 15, ""), ("QPS", 17, "s"), ("CPU/q", 17, "s"), ("user/q", 17, "s"),
                ("sys/q", 17, "s")], indent="  ")


def cell(values):
    return cell_of(spread(values))


def compare(server, workload, threads, tmp):
    print(f"\n{server.name}  {workload}  {threads} threads")
    RUNS.header()
    rounds = []
    for r in range(vs.ROUNDS):
        runs = {}
        for tool in TOOLS[r % len(TOOLS):] + TOOLS[:r % len(TOOLS)]:  # the first tool rotates
            if tool.startswith("floor"):
                run = floor_run(server, workload, threads, tool.partition("-")[2] or "epoll")
            else:
                run = vs.run_tool(tool, server, workload, threads, tmp)
            runs[tool] = run
            u = run.usage
            RUNS.row([r + 1, tool, run.queries, run.qps(), run.us_per_query(u.cpu_s), run.us_per_query(u.user_s),
                      run.us_per_query(u.sys_s), run.per_query(u.ctx_switches), run.extra, run.transport.short()])
        rounds.append(runs)
    refused = transport_refusal(rounds)
    if refused:
        vs.FAILURES.append(f"{server.name} {workload} {threads} threads: no ratio, {refused}")
        print(f"\n  NO RATIO: {refused}", flush=True)
        return
    print_over_sysbench(rounds)
    print_over_floor(rounds)


def transport_refusal(rounds):
    """Why no ratio may be taken (a round whose tools' connections did not all use the transport
    the server confirmed for the floor: plaintext), or None."""
    for r, runs in enumerate(rounds):
        for tool in TOOLS:
            if tool != "floor" and (why := mismatch(tool, runs[tool].transport, "floor", runs["floor"].transport)):
                return f"round {r + 1}: {why}"
    return None


def print_over_sysbench(rounds):
    print()
    RATIOS.header()
    for tool in TOOLS[1:]:
        ratios = {name: [per(r[tool].metrics()[name], r["sysbench"].metrics()[name]) for r in rounds]
                  for name in ("QPS", "CPU/query", "user/query", "sys/query")}
        RATIOS.row([tool] + [cell(v) for v in ratios.values()])
    for tool in TOOLS[2:]:
        sys_floor = [per(r[tool].metrics()["sys/query"], r["sysbench"].metrics()["CPU/query"]) for r in rounds]
        print(f"  {tool}: its system time alone over sysbench's whole CPU per query: {cell(sys_floor)}")


def print_over_floor(rounds):
    """fairbench's CPU per query over each floor loop's in the same round, against the goal, and
    what fairbench's own work (recording, timing, the workload) costs per query above it."""
    print()
    OVER_FLOOR.header()
    for floor in TOOLS[2:]:
        ratios = spread([per(r["fairbench"].metrics()["CPU/query"], r[floor].metrics()["CPU/query"]) for r in rounds])
        own = spread([r["fairbench"].metrics()["CPU/query"] - r[floor].metrics()["CPU/query"] for r in rounds])
        verdict = vs.verdict(ratios, ("<=", FLOOR_GOAL))
        own_us = "n/a" if own is None else f"{own[0]:.2f} ({own[1]:.2f}-{own[2]:.2f})"
        OVER_FLOOR.row([floor, cell_of(ratios), f"<= {FLOOR_GOAL}", verdict, own_us])


def cell_of(s):
    return "n/a" if s is None else f"{s[0]:.2f} ({s[1]:.2f}-{s[2]:.2f})"


def benchmark(servers):
    vs.SECONDS, vs.ROUNDS = (int(a) for a in (sys.argv[1:3] + ["10", "5"][len(sys.argv[1:3]):]))
    workloads = sys.argv[3].split(",") if len(sys.argv) > 3 else WORKLOADS
    if unknown := [w for w in workloads if w not in WORKLOADS]:
        sys.exit(f"the floor client runs {' and '.join(WORKLOADS)}, not {', '.join(unknown)}")
    vs.DB = DB  # the commands vs_sysbench builds name it
    print_header("The least CPU per query a client spends here: sysbench, fairbench and a bare epoll client", [
        *machine_lines(),
        ("servers", ", ".join(f"{s.name} {s.version()}, TCP 127.0.0.1:{s.port}" for s in servers)),
        ("transport", "plaintext for every tool (the floor speaks no TLS): " + vs.transport_told()
         + "; each run's sessions read from the server while it runs (the 'transport' column), and a "
           "configuration where any tool's differ from the floor's gets NO RATIO"),
        ("runs", f"{', '.join(workloads)}, {vs.SECONDS} s per run, {vs.ROUNDS} rounds (the first tool rotates), "
                 f"{vs.TABLES} tables x {vs.TABLE_SIZE:,} rows prepared once by fairbench, ids uniform"),
        ("floor", "examples/floor_client/: sysbench's prepared statements (read_write: its 20 per "
                  "transaction, BEGIN and COMMIT included, result rows skipped unread), per connection one "
                  "statement at a time (as sysbench and fairbench; MySQL: COM_STMT_EXECUTE with the MariaDB "
                  "metadata cache and CLIENT_DEPRECATE_EOF, as fairbench; PostgreSQL: Bind, Execute and Sync in "
                  "one send, integers binary), a clock read at the send and at the reply, a power-of-two "
                  "latency bucket; two threads each with a level-triggered epoll loop (fairbench's event loops "
                  "here: one per core), one send and usually one recv per query; no async runtime, no "
                  "histograms, no workload language, no result. floor-uring: the same client with an io_uring "
                  "loop instead: per reply one io_uring_enter submits the next send and receive of every "
                  "connection served and waits for a completion. floor-tokio: the same client as one tokio task "
                  "per connection on a current-thread runtime with a LocalSet per thread, as fairbench runs its "
                  "clients: what the async runtime adds"),
        ("queries", "MariaDB: the server's count (Questions delta minus this script's own SHOW); PostgreSQL: "
                    "each tool's own count, `extra` the server's transactions minus the tool's; over the "
                    "tool's own measured seconds; CPU = rusage of the whole process (connect included) per query"),
    ])
    for server in servers:
        server.create_db(DB)
        try:
            vs.prepare_for_runs(server)
            with tempfile.TemporaryDirectory() as tmp:
                for workload in workloads:
                    for threads in THREADS:
                        compare(server, workload, threads, tmp)
        finally:
            server.drop_db(DB)
    if vs.FAILURES:
        print("\nfailed:\n  " + "\n  ".join(vs.FAILURES))
        sys.exit(1)


if __name__ == "__main__":
    run_driver(benchmark)
