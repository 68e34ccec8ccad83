"""Driver of bench/cpu-breakdown.sh: where each tool's client CPU per query goes. sysbench
1.0.20 and fairbench run oltp_point_select under `perf record -g` on the same tables; the
samples are split into the kernel's send path, its receive path, waiting for replies (poll /
epoll_wait and the switches they cause), the rest of the kernel, and user space; each share
times the run's CPU per query (rusage) gives microseconds per query. The floor is what any
client sending one statement per connection at a time over TCP pays: the send path (TCP
transmit, loopback delivery into the server's socket and waking the server's thread all run in
the sender's context) and the receive path. A client that sleeps while no reply is ready also
pays one wake-up per reply that finds it asleep: "+wait/sb" adds the waiting to that floor, and
"gap us" is how long, on average, one of fairbench's event loops waits between two replies (the
CPU a loop would burn spinning instead of sleeping, against the "us/wake" that sleeping costs)."""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import vs_sysbench as vs  # noqa: E402
from benchlib import Table, measure, perf_available, print_header, machine_lines, run_driver  # noqa: E402

DB = "fb_cpu_breakdown"  # its own: a concurrent vs-sysbench.sh drops fb_vs_sysbench
WORKLOAD = "oltp_point_select"
THREADS = [8, 64]
# Kernel functions whose inclusive time is each part (none calls another of the list).
PARTS = {
    "send": ["__sys_sendto", "__sys_sendmsg", "ksys_write"],
    "receive": ["__sys_recvfrom", "__sys_recvmsg", "ksys_read"],
    "wait": ["do_sys_poll", "do_epoll_wait"],
}
LINE = re.compile(r"^\s+([\d.]+)%\s+([\d.]+)%\s+\S+\s+\[([k.])\]\s+(\S+)")


def shares(data):
    """Per part the share of all samples (0..1), from perf report's inclusive ('children') times."""
    report = subprocess.run(["perf", "report", "-i", data, "--stdio", "--children", "--sort", "dso,sym",
                             "--percent-limit", "0"], capture_output=True, text=True).stdout
    inclusive, kernel_self, user_self = {}, 0.0, 0.0
    for line in report.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        children, self_, space, sym = float(m[1]), float(m[2]), m[3], m[4]
        inclusive[sym] = max(inclusive.get(sym, 0.0), children)
        if space == "k":
            kernel_self += self_
        else:
            user_self += self_
    parts = {name: sum(inclusive.get(s, 0.0) for s in syms) / 100 for name, syms in PARTS.items()}
    parts["other kernel"] = max(kernel_self / 100 - sum(parts.values()), 0.0)
    parts["user"] = user_self / 100
    return parts


def run(tool, server, threads, tmp):
    """(queries, measured s, CPU s, context switches, parts) of one perf-recorded run."""
    out, data = os.path.join(tmp, "fairbench.json"), os.path.join(tmp, "perf.data")
    for f in (out, data):
        if os.path.exists(f):
            os.remove(f)
    before = server.counter(DB)
    usage = measure(["perf", "record", "-q", "-F", "499", "-g", "-o", data, "--"]
                    + vs.run_cmd(tool, server, WORKLOAD, threads, out))
    if usage.rc != 0:
        raise vs.fail(tool, usage)
    delta = server.counter_delta(before, server.counter(DB))
    queries, _, seconds = vs.own_counts(tool, usage, out)
    queries = delta if server.counts == "queries" else queries
    return queries, seconds, usage.cpu_s, usage.ctx_switches, shares(data)


TABLE = Table([("threads", 7, "d"), ("tool", 9, ""), ("CPU us/q", 9, ".2f"), ("send", 6, ".2f"),
               ("receive", 7, ".2f"), ("wait", 6, ".2f"), ("kernel", 7, ".2f"), ("user", 6, ".2f"),
               ("floor/sb", 8, ".2f"), ("switch/q", 8, ".2f"), ("us/wake", 7, ".1f"), ("+wait/sb", 8, ".2f"),
               ("kernel/sb", 9, ".2f"), ("gap us", 6, ".0f")], indent="  ")


def benchmark_server(server, tmp):
    server.create_db(DB)
    try:
        vs.prepare_for_runs(server)
        TABLE.header()
        for threads in THREADS:
            sysbench_us = None
            for tool in vs.TOOLS:
                queries, seconds, cpu_s, switches, parts = run(tool, server, threads, tmp)
                us = cpu_s / queries * 1e6
                sysbench_us = us if tool == "sysbench" else sysbench_us
                floor = (parts["send"] + parts["receive"]) * us
                wait, per_query = parts["wait"] * us, switches / queries
                kernel = (1 - parts["user"]) * us
                # fairbench's event loops: one per core, at most one per client (runner::Workers).
                gap = min(threads, os.cpu_count()) * seconds / queries * 1e6 if tool == "fairbench" else None
                TABLE.row([threads, tool, us] + [parts[p] * us for p in
                                                 ("send", "receive", "wait", "other kernel", "user")]
                          + [floor / sysbench_us, per_query, wait / per_query if per_query else None,
                             (floor + wait) / sysbench_us, kernel / sysbench_us, gap])
    finally:
        server.drop_db(DB)


PING_PONGS = 100_000


def wake_cost():
    """CPU per sleep-and-wake-up on this machine, without perf's sampling: `perf bench sched
    pipe`, two processes on different cores handing a byte back and forth; both processes' CPU
    (rusage) over their 2 x PING_PONGS wake-ups, the pipe's reads and writes included."""
    usage = measure(["perf", "bench", "sched", "pipe", "-l", str(PING_PONGS)])
    if usage.rc != 0:
        return None
    return usage.cpu_s / (2 * PING_PONGS) * 1e6


def benchmark(servers):
    vs.SECONDS = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    vs.DB = DB  # the commands vs_sysbench builds name it
    if not perf_available():
        sys.exit("perf is needed (and root): apt-get install linux-perf")
    print_header("Where the client's CPU per query goes (perf record -g), sysbench and fairbench", [
        *machine_lines(),
        ("runs", f"{WORKLOAD}, {vs.SECONDS} s per run, --rand-type={vs.RAND_TYPE}, TCP 127.0.0.1, "
                 f"{vs.TABLES} tables x {vs.TABLE_SIZE:,} rows"),
        ("columns", "us of client CPU per query (rusage of the whole process, perf's overhead included) "
                    "split by perf's samples: send = the send syscalls inclusive (TCP transmit, loopback "
                    "delivery into the server's socket, waking the server's thread), receive = the receive "
                    "syscalls, wait = poll/epoll_wait inclusive (sleeping, switching back), kernel = the rest "
                    "of the kernel (syscall entry and exit, preemption), user = the tool's own code"),
        ("floor/sb", "(send + receive) of the tool over sysbench's whole CPU per query: what a client sending "
                     "one statement at a time over TCP cannot avoid, against the 0.5x goal"),
        ("switches", "switch/q = context switches per query (rusage, voluntary + involuntary); us/wake = wait "
                     "over switch/q; +wait/sb = (send + receive + wait) over sysbench's CPU per query; kernel/sb = all of "
                     "the tool's kernel time over sysbench's CPU per query; gap us = "
                     "fairbench's event loops x measured seconds / queries: the mean time between two replies "
                     "on one loop, which a loop that spun instead of sleeping would burn"),
    ])
    wake = wake_cost()
    print(f"A sleep and a wake-up across cores costs {wake:.1f} us of CPU here (perf bench sched pipe, "
          f"{PING_PONGS:,} round trips): the least any client pays per reply that finds it "
          "asleep." if wake is not None else "perf bench sched pipe failed: the cost of a wake-up is n/a", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for server in servers:
            benchmark_server(server, tmp)


if __name__ == "__main__":
    run_driver(benchmark)
