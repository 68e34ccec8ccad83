"""Driver of bench/status-line.sh: CPU per query with and without the status line."""
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from benchlib import FB, MariaDB, measure, sysbench  # noqa: E402

SECONDS, ROUNDS = int(sys.argv[1]), int(sys.argv[2])
WORKLOAD, THREADS = "oltp_point_select", 8
MARIADB, DB, TABLE_SIZE = MariaDB(), "fb_status_line", 100_000
TARGET = MARIADB.url(DB)


def measured(cmd):
    """(queries the server counted, wall s, CPU s, rc, stderr) of one run of cmd."""
    before = MARIADB.counter(DB)
    usage = measure(cmd)
    return MARIADB.counter_delta(before, MARIADB.counter(DB)), usage.wall_s, usage.cpu_s, usage.rc, usage.stderr


def fairbench(out):
    return [FB, "run", WORKLOAD, f"--target={TARGET}", "--tables=1", f"--table-size={TABLE_SIZE}",
            f"--threads={THREADS}", f"--time={SECONDS}", f"--out={out}"]


def on_terminal(cmd):
    # A 200-column pseudo-terminal: the status line is drawn in full every second.
    return ["script", "-q", "-e", "-c", "stty rows 50 cols 200; " + " ".join(cmd), "/dev/null"]


def main():
    MARIADB.create_db(DB)
    out = tempfile.mkdtemp()
    try:
        subprocess.run([FB, "prepare", WORKLOAD, f"--target={TARGET}", f"--table-size={TABLE_SIZE}"],
                       check=True, stderr=subprocess.DEVNULL)
        print(f"MariaDB {MARIADB.version()} over TCP, {WORKLOAD}, {THREADS} threads, "
              f"{SECONDS} s per run, {ROUNDS} rounds alternating; {os.cpu_count()} cores shared with the server")
        runs = {"sysbench": [], "fairbench piped": [], "fairbench terminal": [], "fairbench terminal -q": []}
        for r in range(ROUNDS):
            q, wall, cpu, rc, err = measured(sysbench(MARIADB, DB, WORKLOAD, "run", THREADS, 1, TABLE_SIZE, SECONDS))
            if rc != 0:
                sys.exit(f"sysbench failed: {err[-300:]}")
            runs["sysbench"].append((q / wall, cpu / q * 1e6))
            # On the terminal with --quiet: script(1)'s pseudo-terminal without the status line.
            variants = [("fairbench piped", lambda c: c), ("fairbench terminal", on_terminal),
                        ("fairbench terminal -q", lambda c: on_terminal(c + ["--quiet"]))]
            for i, (name, wrap) in enumerate(variants):
                path = os.path.join(out, f"{r}-{i}.json")
                q, wall, cpu, rc, err = measured(wrap(fairbench(path)))
                if rc != 0:
                    sys.exit(f"{name} failed: {err[-300:]}")
                # The client's own CPU (the result's), not script(1)'s relaying.
                cost = json.load(open(path))["client_cost"]
                runs[name].append((q / wall, cost["cpu_per_query_us"]))
        print(f"{'':<23}{'QPS mean':>10}{'CPU us/query mean':>19}{'min':>8}{'max':>8}")
        for name, rows in runs.items():
            cpus = [c for _, c in rows]
            print(f"{name:<23}{statistics.mean(q for q, _ in rows):>10.0f}{statistics.mean(cpus):>19.2f}"
                  f"{min(cpus):>8.2f}{max(cpus):>8.2f}")
        term = [c for _, c in runs["fairbench terminal"]]
        for base in ["fairbench piped", "fairbench terminal -q"]:
            other = [c for _, c in runs[base]]
            diff = statistics.mean(term) / statistics.mean(other) - 1
            noise = (max(other) - min(other)) / statistics.mean(other)
            print(f"status line: CPU per query {diff:+.1%} against {base}; its run-to-run spread {noise:.1%} "
                  f"({'within' if abs(diff) < noise else 'OUTSIDE'} the noise)")
    finally:
        MARIADB.drop_db(DB)
        subprocess.run(["rm", "-rf", out])


main()
