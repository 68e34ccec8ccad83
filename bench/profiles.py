"""Driver of bench/profiles.sh: what the fast-to-build `release` profile costs at run time
against `dist` (fat LTO, one codegen unit), the profile of packaged binaries. The same
binaries' point-select load against each server: client CPU per query at 8 threads (rounds
alternating which profile goes first), and peak RSS holding 100 and 1,000 connections at a low
open-loop rate; per figure the release/dist ratio."""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from benchlib import Table, machine_lines, measure, print_header, run_driver, spread  # noqa: E402
from connections import raise_nofile  # noqa: E402

DB = "fb_profiles"
TARGET_DIR = os.environ.get("CARGO_TARGET_DIR", "target")
PROFILES = [("release", os.path.join(TARGET_DIR, "release", "fairbench")),
            ("dist", os.path.join(TARGET_DIR, "dist", "fairbench"))]
TABLES, TABLE_SIZE, THREADS = 2, 50_000, 8
CONNECTIONS = [100, 1_000]
RATE = 200  # events per second over all connections, for the RSS runs (open loop)
ROUNDS = 3
SECONDS = 5


def run(binary, server, extra, tmp):
    """(usage, result document) of one `fairbench run oltp_point_select`."""
    out = os.path.join(tmp, "result.json")
    if os.path.exists(out):
        os.remove(out)
    usage = measure([binary, "run", "oltp_point_select", f"--target={server.url(DB)}", f"--tables={TABLES}",
                     f"--table-size={TABLE_SIZE}", "--connect-timeout=120", f"--out={out}", "-q"] + extra)
    if usage.rc != 0:
        raise RuntimeError(f"{binary} exited {usage.rc}: {usage.stderr_tail()}")
    with open(out) as f:
        return usage, json.load(f)


def cpu_rounds(server, tmp):
    """{profile: [CPU us per query of each round]}, {profile: [QPS]}; the order alternates."""
    cpu, qps = {p: [] for p, _ in PROFILES}, {p: [] for p, _ in PROFILES}
    for r in range(ROUNDS):
        for name, binary in (PROFILES if r % 2 == 0 else PROFILES[::-1]):
            usage, doc = run(binary, server, [f"--threads={THREADS}", f"--time={SECONDS}"], tmp)
            queries, seconds = doc["stats"]["total"]["count"], doc["conditions"]["run"]["measured_s"]
            cpu[name].append(usage.cpu_s / queries * 1e6)
            qps[name].append(queries / seconds)
    return cpu, qps


def rss_runs(server, tmp):
    """{profile: {connections: peak RSS bytes}}."""
    rss = {}
    for name, binary in PROFILES:
        rss[name] = {}
        for n in CONNECTIONS:
            usage, _ = run(binary, server, [f"--threads={n}", f"--rate={RATE}", f"--time={SECONDS}"], tmp)
            rss[name][n] = usage.rss_bytes
    return rss


TABLE = Table([("server", 10, ""), ("profile", 8, ""), ("binary MB", 9, ".1f"), ("CPU us/query", 12, ".2f"),
               ("min-max", 11, ""), ("QPS", 7, ".0f"), ("RSS 100 MB", 10, ".1f"), ("RSS 1k MB", 9, ".1f"),
               ("KB/conn", 7, ".1f"), ("KB/conn>100", 11, ".1f")])


def report(server, cpu, qps, rss):
    lo, hi = CONNECTIONS
    for name, binary in PROFILES:
        med, mn, mx = spread(cpu[name])
        r = rss[name]
        TABLE.row([server.name, name, os.path.getsize(binary) / 1e6, med, f"{mn:.2f}-{mx:.2f}",
                   spread(qps[name])[0], r[lo] / 1e6, r[hi] / 1e6, r[hi] / hi / 1e3, (r[hi] - r[lo]) / (hi - lo) / 1e3])
    ratios = sorted(a / b for a, b in zip(cpu["release"], cpu["dist"]))
    print(f"  {server.name} release/dist: CPU per query {spread(cpu['release'])[0] / spread(cpu['dist'])[0]:.2f}x "
          f"(per round {', '.join(f'{x:.2f}' for x in ratios)}), QPS "
          f"{spread(qps['release'])[0] / spread(qps['dist'])[0]:.2f}x, peak RSS at {hi:,} connections "
          f"{rss['release'][hi] / rss['dist'][hi]:.2f}x (+{(rss['release'][hi] - rss['dist'][hi]) / 2**20:.1f} MiB)",
          flush=True)


def benchmark(servers):
    global SECONDS
    SECONDS = int(sys.argv[1]) if len(sys.argv) > 1 else SECONDS
    raise_nofile()
    missing = [b for _, b in PROFILES if not os.path.exists(b)]
    if missing:
        sys.exit(f"missing {', '.join(missing)}: build both profiles first (bench/profiles.sh does)")
    print_header("fairbench's build profiles at run time: release (fast to build) against dist (packaged)", [
        ("binaries", "; ".join(f"{n}: {measure([b, '--version']).stdout.strip()} ({b})" for n, b in PROFILES)),
        ("servers", "; ".join(f"{s.name} {s.version()}" for s in servers)),
        *machine_lines(),
        ("transport", "TCP 127.0.0.1, ?tls=off"),
        ("CPU", f"oltp_point_select, {THREADS} threads closed loop, {SECONDS} s measured, {TABLES} tables x "
                f"{TABLE_SIZE:,} rows; {ROUNDS} rounds, the first profile alternating; CPU = user + system of the "
                "process (GNU time's rusage) / the queries fairbench counted; median of the rounds"),
        ("RSS", f"peak RSS (rusage) holding {' and '.join(f'{c:,}' for c in CONNECTIONS)} connections, open loop "
                f"--rate {RATE} over all, {SECONDS} s; KB/conn = RSS / connections; KB/conn>100 = growth per "
                "connection added over the 100-connection run"),
        ("noise", "clients and servers share the machine's cores (and other work on it): a CPU ratio within "
                  "the rounds' spread is no difference"),
    ])
    TABLE.header()
    with tempfile.TemporaryDirectory() as tmp:
        for server in servers:
            server.create_db(DB)
            restore = lambda: None  # noqa: E731
            try:
                usage = measure([PROFILES[0][1], "prepare", "oltp_point_select", f"--target={server.url(DB)}",
                                 f"--tables={TABLES}", f"--table-size={TABLE_SIZE}", "-q"])
                if usage.rc != 0:
                    raise RuntimeError(f"fairbench prepare failed: {usage.stderr_tail()}")
                restore = server.raise_max_connections(max(CONNECTIONS) + 100)
                cpu, qps = cpu_rounds(server, tmp)
                report(server, cpu, qps, rss_runs(server, tmp))
            finally:
                server.drop_db(DB)
                restore()


if __name__ == "__main__":
    run_driver(benchmark)
