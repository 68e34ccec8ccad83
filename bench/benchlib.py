"""Shared by the bench drivers: the two servers (admin SQL, counters, sysbench's and
fairbench's connection arguments), one measured run of a client (rusage, perf stat), the
header and fixed-width tables they print, and how a driver runs and stops."""
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass
from typing import Optional

USER = os.environ.get("FB_USER", "fairbench_test")
PASSWORD = os.environ.get("FB_PASSWORD", "fairbench_test")
FB = "target/release/fairbench"
GNU_TIME = "/usr/bin/time"
SYSBENCH_TLS_DIR = "FB_BENCH_SYSBENCH_TLS_DIR"  # sysbench's TLS files for MySQL (FB_BENCH_TLS=on)
PERF_EVENTS = "raw_syscalls:sys_enter"


# ---------------------------------------------------------------------------- servers

def admin(name, cmd, busy, env=None):
    """Runs an admin client's cmd; retried for 30 s while the server answers with one of the
    `busy` messages (right after thousands of connections close, or while it restarts)."""
    for attempt in range(30):
        p = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if p.returncode == 0:
            return p.stdout.strip()
        if not any(b in p.stderr for b in busy) or attempt == 29:
            raise RuntimeError(f"{name}: {cmd[-1]}: {p.stderr.strip()}")
        time.sleep(1)


class Server:
    """What the two servers share: the URL fairbench takes, sysbench's options, the version."""
    name, port, scheme, driver, version_sql = "", 0, "", "", ""

    def sql(self, q):
        raise NotImplementedError

    def version(self):
        return self.sql(self.version_sql)

    def url(self, db, tls=False):
        """fairbench's target, its transport stated rather than left to a default."""
        return f"{self.scheme}://{USER}:{PASSWORD}@127.0.0.1:{self.port}/{db}?tls={'require' if tls else 'off'}"

    def sysbench_args(self, db, tls=False):
        d = self.driver
        return [f"--db-driver={d}", f"--{d}-host=127.0.0.1", f"--{d}-port={self.port}", f"--{d}-user={USER}",
                f"--{d}-password={PASSWORD}", f"--{d}-db={db}"]

    def sysbench_env(self, tls=False):
        """What goes before sysbench on its command line (an `env` that sets its client library's
        transport), or nothing."""
        return []

    def sessions(self, db):
        """{session id: transport} of the sessions on db, as the server sees them: 'plaintext',
        the TLS version and cipher, or None when the server cannot say."""
        raise NotImplementedError


class MariaDB(Server):
    name, port, scheme, driver, version_sql = "MariaDB", 3306, "mysql", "mysql", "SELECT VERSION()"
    # The server counts every statement a client sends (Questions); a reading adds one.
    counts = "queries"
    _settings = None  # have_ssl and performance_schema, read once

    def _client(self, db=None):
        return ["mariadb", "--protocol=tcp", "-h127.0.0.1", f"-P{self.port}", f"-u{USER}",
                f"-p{PASSWORD}", "-N", "-B"] + ([db] if db else [])

    def sql(self, q, db=None):
        return admin(self.name, self._client(db) + ["-e", q], ["Too many connections"])

    def create_db(self, db):
        self.sql(f"DROP DATABASE IF EXISTS {db}; CREATE DATABASE {db}")

    def drop_db(self, db):
        self.sql(f"DROP DATABASE IF EXISTS {db}")

    def status(self, name):
        return int(self.sql(f"SHOW GLOBAL STATUS LIKE '{name}'").split()[1])

    def counter(self, db):
        """Statements the server has received (all clients); this reading is one of them."""
        return self.status("Questions")

    def counter_delta(self, before, after):
        return after - before - 1  # the SHOW STATUS of the reading after

    def connections(self, db):
        """Sessions whose current database is db."""
        return int(self.sql(f"SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = '{db}'"))

    def max_connections(self):
        return int(self.sql("SELECT @@GLOBAL.max_connections"))

    def sysbench_args(self, db, tls=False):
        # 1.0.20 defaults to off; stated, as a client library may otherwise prefer TLS
        return super().sysbench_args(db) + [f"--mysql-ssl={'on' if tls else 'off'}"]

    def sysbench_env(self, tls=False):
        # sysbench 1.0.20's --mysql-ssl=on loads client-key.pem, client-cert.pem and cacert.pem
        # from its working directory
        return ["env", "-C", os.environ[SYSBENCH_TLS_DIR]] if tls else []

    def tls_refusal(self):
        """Why both tools cannot run over TLS here, or None."""
        if not self.tls_offered():
            return f"{self.name} offers no TLS (have_ssl={self._settings[0]})"
        if not os.path.isdir(os.environ.get(SYSBENCH_TLS_DIR, "")):
            return (f"sysbench 1.0.20's --mysql-ssl=on loads client-key.pem, client-cert.pem and cacert.pem from its "
                    f"working directory: set {SYSBENCH_TLS_DIR} to a directory holding a client key and certificate "
                    f"{self.name} accepts and the CA of its certificate")
        return None

    def tls_offered(self):
        """have_ssl is YES: the server can encrypt a connection (DISABLED or NO: it cannot)."""
        if self._settings is None:
            self._settings = self.sql("SELECT @@have_ssl, @@performance_schema").split()
        return self._settings[0] == "YES"

    def sessions(self, db):
        """A server that offers no TLS encrypts no session: its sessions are counted only. One
        that does: each session's Ssl_cipher (performance_schema; without it, unknown)."""
        if not self.tls_offered() or self._settings[1] != "1":
            known = None if self.tls_offered() else "plaintext"
            return {i: known for i in self.sql(f"SELECT ID FROM information_schema.PROCESSLIST WHERE DB = '{db}'").split()}
        rows = self.sql("SELECT t.PROCESSLIST_ID, COALESCE(NULLIF(s.VARIABLE_VALUE, ''), 'plaintext') "
                        "FROM performance_schema.threads t LEFT JOIN performance_schema.status_by_thread s "
                        "ON s.THREAD_ID = t.THREAD_ID AND s.VARIABLE_NAME = 'Ssl_cipher' "
                        f"WHERE t.PROCESSLIST_DB = '{db}'")
        return dict(line.split("\t", 1) for line in rows.splitlines())

    def transport_source(self):
        """How sessions() knows, for the header."""
        if not self.tls_offered():
            return f"have_ssl={self._settings[0]}: the server encrypts no connection (sessions counted in " \
                   "information_schema.PROCESSLIST)"
        if self._settings[1] != "1":
            return "have_ssl=YES but performance_schema is OFF: no session's Ssl_cipher can be read (unknown)"
        return "each session's Ssl_cipher (performance_schema.status_by_thread)"

    def memory(self, db):
        """Resident memory of the whole server process (its connections are threads in it)."""
        with open(self.sql("SELECT @@GLOBAL.pid_file")) as f:
            return proportional_set_size([int(f.read().strip())])

    def raise_max_connections(self, n):
        """Raises max_connections to n at least; returns a function that restores it."""
        old = self.max_connections()
        if old >= n:
            return lambda: None
        self.sql(f"SET GLOBAL max_connections = {n}")
        return lambda: self.sql(f"SET GLOBAL max_connections = {old}")


class PostgreSQL(Server):
    name, port, scheme, driver, version_sql = "PostgreSQL", 5432, "postgres", "pgsql", "SHOW server_version"
    # No statement counter without pg_stat_statements (a preload and a restart): the server
    # counts transactions per database (xact_commit + xact_rollback), a check on the tools'.
    counts = "transactions"

    def sql(self, q, db="postgres"):
        cmd = ["psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", USER, "-d", db, "-AtqX",
               "-v", "ON_ERROR_STOP=1", "-c", q]
        return admin(self.name, cmd, ["too many clients", "starting up", "shutting down"],
                     {**os.environ, "PGPASSWORD": PASSWORD})

    def create_db(self, db):
        self.drop_db(db)
        self.sql(f"CREATE DATABASE {db}")

    def drop_db(self, db):
        self.sql(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")

    def connections(self, db):
        return int(self.sql(f"SELECT count(*) FROM pg_stat_activity WHERE datname = '{db}'"))

    def counter(self, db):
        """Transactions of db's sessions; a session's figures are flushed when it ends, so
        this waits (up to 10 s) until none is left."""
        for _ in range(100):
            if self.connections(db) == 0:
                break
            time.sleep(0.1)
        return int(self.sql("SELECT xact_commit + xact_rollback FROM pg_stat_database "
                            f"WHERE datname = '{db}'") or 0)

    def counter_delta(self, before, after):
        return after - before

    def max_connections(self):
        return int(self.sql("SHOW max_connections"))

    def sysbench_env(self, tls=False):
        # libpq's default sslmode=prefer encrypts whenever the server has ssl = on
        return ["env", f"PGSSLMODE={'require' if tls else 'disable'}"]

    def tls_offered(self):
        return self.sql("SHOW ssl") == "on"

    def tls_refusal(self):
        return None if self.tls_offered() else f"{self.name} offers no TLS (ssl = off)"

    def sessions(self, db):
        rows = self.sql("SELECT a.pid, CASE WHEN s.ssl THEN s.version || ' ' || s.cipher "
                        "WHEN g.encrypted THEN 'GSSAPI' ELSE 'plaintext' END "
                        "FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid) JOIN pg_stat_gssapi g USING (pid) "
                        f"WHERE a.datname = '{db}' AND a.backend_type = 'client backend'")
        return dict(line.split("|", 1) for line in rows.splitlines())

    def transport_source(self):
        return "pg_stat_ssl (and pg_stat_gssapi) of each backend on the database"

    def memory(self, db):
        """Memory of the backends (one process each) connected to db, shared pages split among
        the processes that map them (PSS), so that the sum is what they take together."""
        pids = self.sql(f"SELECT pid FROM pg_stat_activity WHERE datname = '{db}'").split()
        return proportional_set_size(int(p) for p in pids)

    def raise_max_connections(self, n):
        """max_connections takes a restart: ALTER SYSTEM and restart only when it is lower
        than n; returns a function that puts the old setting back (and restarts again)."""
        old = self.max_connections()
        if old >= n:
            return lambda: None
        in_auto_conf = self.sql("SELECT sourcefile LIKE '%postgresql.auto.conf' FROM pg_settings "
                                "WHERE name = 'max_connections'") == "t"
        self.sql(f"ALTER SYSTEM SET max_connections = {n}")
        self.restart()

        def restore():
            self.sql(f"ALTER SYSTEM SET max_connections = {old}" if in_auto_conf
                     else "ALTER SYSTEM RESET max_connections")
            self.restart()
        return restore

    def restart(self):
        """Restarts the cluster that listens on this port (Debian's pg_ctlcluster)."""
        line = next(l.split() for l in subprocess.check_output(["pg_lsclusters", "-h"], text=True).splitlines()
                    if l.split()[2] == str(self.port))
        subprocess.run(["pg_ctlcluster", "--skip-systemctl-redirect", line[0], line[1], "restart"],
                       check=False, capture_output=True)
        for _ in range(120):
            if subprocess.run(["pg_isready", "-h", "127.0.0.1", "-p", str(self.port), "-q"]).returncode == 0:
                return
            time.sleep(0.5)
        raise RuntimeError("PostgreSQL did not come back after a restart")


SERVERS = [MariaDB(), PostgreSQL()]


def proportional_set_size(pids):
    """Sum of the processes' PSS in bytes (those gone meanwhile count 0)."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                total += next(int(l.split()[1]) * 1024 for l in f if l.startswith("Pss:"))
        except (OSError, StopIteration):
            pass
    return total


def sysbench(server, db, workload, action, threads, tables, table_size, seconds=None, extra=(), tls=False):
    """sysbench 1.0.20's command line for one of its oltp workloads on db, plaintext unless tls."""
    return (server.sysbench_env(tls) + ["sysbench"] + server.sysbench_args(db, tls)
            + [f"--tables={tables}", f"--table-size={table_size}", f"--threads={threads}"]
            + ([f"--time={seconds}"] if seconds else []) + list(extra) + [workload, action])


# ---------------------------------------------------------------------------- one measured run

@dataclass
class Usage:
    """What the OS saw of one client process and its threads."""
    rc: int
    wall_s: float
    user_s: float
    sys_s: float
    rss_bytes: int
    ctx_switches: int  # voluntary + involuntary, all threads (rusage)
    syscalls: Optional[int]  # None: not counted (perf not asked for, or not available)
    stdout: str
    stderr: str

    @property
    def cpu_s(self):
        return self.user_s + self.sys_s

    def stderr_tail(self, lines=5):
        return "\n".join(self.stderr.strip().splitlines()[-lines:])


def perf_available():
    """perf stat can count the events used here (tracepoints need root or a low paranoid level)."""
    try:
        p = subprocess.run(["perf", "stat", "-x,", "-e", PERF_EVENTS, "--", "true"], capture_output=True, text=True)
    except FileNotFoundError:
        return False
    return p.returncode == 0 and "not supported" not in p.stderr and "not counted" not in p.stderr


def parse_perf(path):
    counts = {}
    with open(path) as f:
        for line in f:
            fields = line.strip().split(",")
            if len(fields) < 3 or line.startswith("#"):
                continue
            try:
                counts[fields[2]] = float(fields[0])
            except ValueError:
                counts[fields[2]] = None  # <not counted> / <not supported>
    return counts


TIME_FORMAT = "%e %U %S %M %w %c"


def parse_gnu_time(path):
    """GNU time's TIME_FORMAT line (the last: a 'Command exited with...' line may precede it):
    wall s, user s, sys s, peak RSS bytes, context switches."""
    with open(path) as f:
        wall, user, sys_, rss_kb, vcsw, ivcsw = f.read().strip().splitlines()[-1].split()
    return float(wall), float(user), float(sys_), int(rss_kb) * 1024, int(vcsw) + int(ivcsw)


def measure(cmd, perf=False, env=None):
    """Runs cmd to its end. GNU time wait4()s for it and writes its rusage (CPU, peak RSS and
    context switches of the process and all its threads); perf stat, when asked, wraps GNU
    time and counts syscalls (GNU time's own few dozen among them). perf's tracepoint slows
    every syscall of the process: its runs are not the ones to take CPU from."""
    with tempfile.TemporaryDirectory() as tmp:
        rusage, counts = os.path.join(tmp, "rusage"), os.path.join(tmp, "perf")
        full = [GNU_TIME, "-f", TIME_FORMAT, "-o", rusage, "--"] + list(cmd)
        if perf:
            full = ["perf", "stat", "-x,", "-o", counts, "-e", PERF_EVENTS, "--"] + full
        stdout, stderr, rc = run_in_own_group(full, env)
        try:
            wall, user, sys_, rss, ctx = parse_gnu_time(rusage)
        except (OSError, ValueError):
            wall = user = sys_ = float("nan")
            rss = ctx = 0
        syscalls = parse_perf(counts).get("raw_syscalls:sys_enter") if perf and os.path.exists(counts) else None
    return Usage(rc, wall, user, sys_, rss, ctx, syscalls, stdout, stderr)


def run_in_own_group(cmd, env=None):
    """Runs cmd in a process group of its own, killed whole if the driver is stopped (a tool
    must not go on loading the server after Ctrl-C); returns (stdout, stderr, exit code)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         start_new_session=True)
    try:
        stdout, stderr = p.communicate()
    except BaseException:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        raise
    return stdout, stderr, p.returncode


# ---------------------------------------------------------------------------- the machine and stops

def machine_lines():
    mem = next((int(l.split()[1]) for l in open("/proc/meminfo") if l.startswith("MemTotal:")), 0)
    return [("kernel", f"{platform.system()} {platform.release()}"),
            ("cores", f"{os.cpu_count()} (clients and servers share them), {mem / 2**20:.0f} GiB memory")]


def stop_on_signals():
    """Ctrl-C, SIGTERM and SIGHUP raise KeyboardInterrupt, so that the drivers' finally blocks
    clean up (SIGINT too: a shell starting the driver in the background ignores it)."""
    def stop(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, stop)


def run_driver(benchmark):
    """Runs a driver's benchmark(servers): the servers FB_BENCH_SERVERS names (default both);
    a stop by a signal ends it with 130, its finally blocks having cleaned up."""
    stop_on_signals()
    wanted = os.environ.get("FB_BENCH_SERVERS", "mariadb,postgresql").lower().split(",")
    try:
        benchmark([s for s in SERVERS if s.name.lower() in wanted])
    except KeyboardInterrupt:
        print("\ninterrupted: the tool was stopped and the benchmark's databases dropped", flush=True)
        sys.exit(130)


# ---------------------------------------------------------------------------- numbers and tables

def spread(values):
    """(median, min, max) of the values that exist, or None."""
    values = [v for v in values if v is not None]
    return (statistics.median(values), min(values), max(values)) if values else None


def per(count, n, scale=1.0):
    return None if count is None or not n else count / n * scale


def fmt(value, spec):
    """value as spec says; None or NaN: n/a; a string as it is."""
    if value is None or value != value:
        return "n/a"
    return value if isinstance(value, str) else format(value, spec)


class Table:
    """A fixed-width table printed row by row as results arrive. columns: (title, width,
    spec); a spec of '' prints the value as it is, left-aligned."""

    def __init__(self, columns, indent=""):
        self.columns, self.indent = columns, indent

    def _line(self, cells):
        out = []
        for (_, width, spec), cell in zip(self.columns, cells):
            out.append(f"{cell:<{width}}" if not spec else f"{cell:>{width}}")
        return self.indent + " ".join(out).rstrip()

    def header(self):
        print(self._line([title for title, _, _ in self.columns]))
        print(self.indent + "-" * (sum(w for _, w, _ in self.columns) + len(self.columns) - 1))

    def row(self, values):
        print(self._line([fmt(v, spec) if spec else str(v) for (_, _, spec), v in zip(self.columns, values)]),
              flush=True)


def print_header(title, lines):
    """The title, then each (key, text) with the text wrapped beside its key."""
    print(title)
    width = max(len(k) for k, _ in lines)
    for key, value in lines:
        print(textwrap.fill(value, 110, initial_indent=f"  {key:<{width}}  ", subsequent_indent=" " * (width + 4)))
    print(flush=True)
