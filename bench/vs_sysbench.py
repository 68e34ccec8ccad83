"""Driver of bench/vs-sysbench.sh: runs both tools alternately and prints ratios."""
import os
import resource
import subprocess
import sys
import time

# Its own arguments when run; other drivers import the helpers and pass their own.
SECONDS, ROUNDS = (int(sys.argv[1]), int(sys.argv[2])) if __name__ == "__main__" else (10, 2)
USER = os.environ.get("FB_USER", "fairbench_test")
PASSWORD = os.environ.get("FB_PASSWORD", "fairbench_test")
DB = "fb_vs_sysbench"
TABLE_SIZE = 100_000
FB = "target/release/fairbench"
OUT = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"fairbench-vs-sysbench-{os.getpid()}.json")
TARGET = f"mysql://{USER}:{PASSWORD}@127.0.0.1:3306/{DB}"
MYSQL = ["mariadb", "--protocol=tcp", "-h127.0.0.1", "-P3306", f"-u{USER}", f"-p{PASSWORD}", "-N", "-e"]


def sql(q):
    # Right after thousands of connections close, the server may still refuse new ones.
    for _ in range(30):
        try:
            return subprocess.check_output(MYSQL + [q], text=True, stderr=subprocess.PIPE).strip()
        except subprocess.CalledProcessError as e:
            if "Too many connections" not in (e.stderr or ""):
                raise
            time.sleep(1)
    return subprocess.check_output(MYSQL + [q], text=True).strip()


def status(name):
    return int(sql(f"SHOW GLOBAL STATUS LIKE '{name}'").split()[1])


def measure(cmd):
    """Runs cmd; returns (queries counted by the server, wall s, cpu s, peak RSS bytes, rc)."""
    before = status("Questions")
    t = time.time()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, rc, ru = os.wait4(p.pid, 0)
    err = p.stderr.read().decode(errors="replace")
    wall = time.time() - t
    # Minus the one SHOW STATUS of this script.
    queries = status("Questions") - before - 1
    return queries, wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss * 1024, os.waitstatus_to_exitcode(rc), err


def sysbench(workload, threads, seconds=None):
    seconds = seconds or SECONDS
    return ["sysbench", "--db-driver=mysql", "--mysql-host=127.0.0.1", "--mysql-port=3306",
            f"--mysql-user={USER}", f"--mysql-password={PASSWORD}", f"--mysql-db={DB}",
            "--tables=1", f"--table-size={TABLE_SIZE}", workload, f"--threads={threads}",
            f"--time={seconds}", "run"]


def fairbench(workload, threads, seconds=SECONDS):
    return [FB, "run", workload, f"--target={TARGET}", "--tables=1", f"--table-size={TABLE_SIZE}",
            f"--threads={threads}", f"--time={seconds}", f"--out={OUT}"]


def main():
    sql(f"DROP DATABASE IF EXISTS {DB}; CREATE DATABASE {DB}")
    try:
        subprocess.run([FB, "prepare", "oltp_read_write", f"--target={TARGET}", f"--table-size={TABLE_SIZE}"],
                       check=True, stderr=subprocess.DEVNULL)
        print(f"MariaDB {sql('SELECT VERSION()')} over TCP 127.0.0.1:3306, 1 table x {TABLE_SIZE} rows, "
              f"{SECONDS} s per run, {ROUNDS} rounds, tools alternating; {os.cpu_count()} cores shared with the server")
        print(f"{'workload':<18}{'thr':>4}  {'tool':<10}{'QPS':>10}{'CPU us/query':>14}{'RSS MB':>8}")
        for workload in ["oltp_point_select", "oltp_read_write"]:
            for threads in [8, 64]:
                totals = {"sysbench": [0, 0.0, 0.0, 0], "fairbench": [0, 0.0, 0.0, 0]}
                for _ in range(ROUNDS):
                    for tool, cmd in [("sysbench", sysbench(workload, threads)), ("fairbench", fairbench(workload, threads))]:
                        q, wall, cpu, rss, rc, err = measure(cmd)
                        if rc != 0:
                            sys.exit(f"{tool} failed ({rc}): {err.strip()[-300:]}")
                        t = totals[tool]
                        t[0] += q; t[1] += wall; t[2] += cpu; t[3] = max(t[3], rss)
                rows = {}
                for tool, (q, wall, cpu, rss) in totals.items():
                    rows[tool] = (q / wall, cpu / q * 1e6)
                    print(f"{workload:<18}{threads:>4}  {tool:<10}{q / wall:>10.0f}{cpu / q * 1e6:>14.2f}{rss / 1e6:>8.1f}")
                qps_ratio = rows["fairbench"][0] / rows["sysbench"][0]
                cpu_ratio = rows["fairbench"][1] / rows["sysbench"][1]
                print(f"{'':<22}ratio fairbench/sysbench: QPS {qps_ratio:.2f} (goal >= 1.0), "
                      f"CPU per query {cpu_ratio:.2f} (goal <= 0.8)")

        # Connection scaling: the server must allow them, and so must the open-files limit.
        old_max = sql("SELECT @@GLOBAL.max_connections")
        try:
            sql("SET GLOBAL max_connections = 10100")
            _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard if hard != resource.RLIM_INFINITY else 65536, hard))
        except Exception as e:  # noqa: BLE001 - reported, not fatal
            print(f"could not raise limits for connection scaling: {e}")
        for conns in [1000, 10000]:
            q, wall, cpu, rss, rc, err = measure(fairbench("oltp_point_select", conns, seconds=5))
            verdict = "ok" if rc == 0 else f"failed: {err.strip().splitlines()[-1] if err.strip() else rc}"
            print(f"fairbench {conns:>6} connections from one process: peak RSS {rss / 1e6:.1f} MB, "
                  f"{q / wall:.0f} QPS, {verdict}" + (" (goal <= 100 MB)" if conns == 1000 else ""))
        sql(f"SET GLOBAL max_connections = {old_max}")
    finally:
        sql(f"DROP DATABASE IF EXISTS {DB}")
        if os.path.exists(OUT):
            os.remove(OUT)


if __name__ == "__main__":
    main()
