"""Driver of bench/long-run.sh: a long run simulated cheaply with 10 ms intervals, on SQLite
and MariaDB at once, sysbench beside them; RSS and bytes written per interval at 1k, 10k and
100k intervals, and what that projects for 24 hours at 1 s: the bytes every streamed file
takes per interval, and the resident memory each interval adds once the run is going (from
the first mark to the last)."""
import gzip
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import zlib

sys.path.insert(0, os.path.dirname(__file__))
from benchlib import FB, MariaDB, sysbench  # noqa: E402

MARKS = [int(m) for m in sys.argv[1].split(",")]  # intervals at which to read RSS and sizes
ONE_SECOND_RUN = int(sys.argv[2])  # seconds of the 1 s-interval pass (bytes per real interval)
WORKLOAD, THREADS, TICK = "oltp_point_select", 1, 0.01
MARIADB, DB, TABLE_SIZE = MariaDB(), "fb_long_run", 100_000
TARGET = MARIADB.url(DB)
# The 1 s pass: every statement class (the largest histograms), planned as a day.
DAY_WORKLOAD = "oltp_read_write"
DAY = 86_400
# Seconds of the heap pass under heaptrack (0: none).
HEAP_S = int(sys.argv[3]) if len(sys.argv) > 3 else 0


def rss_mb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            return next(int(l.split()[1]) for l in f if l.startswith("VmRSS:")) / 1024
    except (FileNotFoundError, StopIteration, ProcessLookupError):
        return None


def streamed(out):
    """The files beside the result: intervals and record (streamed), interval log (written
    from the record when the run ends)."""
    stem = out[: -len(".json")]
    return [stem + ".intervals.jsonl.gz", stem + ".hlog", stem + ".record.jsonl.gz"]


def record_entries(record):
    """The record's entry lines (whole ones), each deflated on its own: how many, and the
    largest's bytes (an upper bound of what it takes in the stream)."""
    sizes = []
    with gzip.open(record, "rb") as f:
        try:
            for line in f:
                if line.startswith(b'{"record":"entry"'):
                    sizes.append(len(zlib.compress(line, 6)))
        except (EOFError, OSError, zlib.error):
            pass
    return len(sizes), max(sizes, default=0)


def growth(samples, first=0):
    """Per interval from mark `first` to the last: (bytes written, bytes of RSS added)."""
    (_, n0, rss0, size0, _), (_, n1, rss1, size1, _) = samples[first], samples[-1]
    n = max(n1 - n0, 1)
    return (size1 - size0) / n, (rss1 - rss0) * 2**20 / n


def heap_over_time(name, target, tmp, seconds):
    """The heap, as heaptrack sees every allocation and free, of a run at 10 ms intervals:
    what it holds at a quarter of the run and just before it ends, and the bytes added per
    interval between (RSS also counts pages the allocator keeps after a free)."""
    out, trace = os.path.join(tmp, f"{name}-heap.json"), os.path.join(tmp, f"{name}-heap")
    subprocess.run(["heaptrack", "-o", trace] + fairbench(target, out, seconds, TICK), check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    massif = trace + ".massif"
    subprocess.run(["heaptrack_print", "-f", trace + ".zst", "-M", massif, "--massif-threshold", "100",
                    "--massif-detailed-freq", "1000000000"], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    snapshots, at = [], None
    with open(massif) as f:
        for line in f:
            if line.startswith("time="):
                at = float(line.split("=")[1])
            elif line.startswith("mem_heap_B="):
                snapshots.append((at, int(line.split("=")[1])))
    for f in (massif, trace + ".zst", out):
        if os.path.exists(f):
            os.remove(f)
    # heaptrack's clock starts with the process: connecting takes well under a second, and
    # after the run's `seconds` comes the result's build from the record (a heap of its own),
    # so the snapshots from a quarter of the run to 98% of it are the run's own.
    mid = [(t, b) for t, b in snapshots if seconds * 0.25 <= t <= seconds * 0.98]
    (t0, b0), (t1, b1) = mid[0], mid[-1]
    intervals = (t1 - t0) / TICK
    top = max(b for _, b in mid)
    per = (b1 - b0) / max(intervals, 1)
    print(f"  {name}: heap {b0 / 1e6:.3f} MB at {t0:.0f} s, {b1 / 1e6:.3f} MB at {t1:.0f} s (largest between: "
          f"{top / 1e6:.3f} MB): {per:+.2f} B an interval over {intervals:.0f} intervals -> {per * DAY / 1e6:+.3f} MB a "
          f"day at 1 s (goal: 1 MB)")


def lines(path):
    """Whole lines of the gzip stream so far (flushed after each; the end may be missing)."""
    n = 0
    with gzip.open(path, "rb") as f:
        try:
            for _ in f:
                n += 1
        except (EOFError, OSError, zlib.error):
            pass
    return n


def histogram_entries(hlog):
    """The interval log's entries (one per start time): how many, and the largest's bytes."""
    sizes = {}
    with open(hlog) as f:
        for line in f:
            if line.startswith("Tag="):
                start = line.split(",")[1]
                sizes[start] = sizes.get(start, 0) + len(line)
    return len(sizes), max(sizes.values(), default=0)


def fairbench(target, out, seconds, interval, workload=WORKLOAD):
    cmd = [FB, "run", workload, f"--target={target}", f"--table-size={TABLE_SIZE}", f"--threads={THREADS}",
           f"--time={seconds}", f"--out={out}", "-q"]
    return cmd + ([f"--report-interval={interval}"] if interval else [])


def watch(procs, outs):
    """Samples each fairbench at every mark (its streamed intervals counted) and sysbench then."""
    rows = {name: [] for name in outs}
    pending = {name: list(MARKS) for name in outs}
    while any(p.poll() is None for p in procs.values()):
        time.sleep(0.5)
        for name, out in outs.items():
            if not pending[name] or procs[name].poll() is not None or not os.path.exists(streamed(out)[0]):
                continue
            n = lines(streamed(out)[0])
            if n >= pending[name][0]:
                size = sum(os.path.getsize(f) for f in streamed(out) if os.path.exists(f))
                rows[name].append((pending[name].pop(0), n, rss_mb(procs[name].pid), size,
                                   rss_mb(procs["sysbench"].pid)))
    for name, p in procs.items():
        if p.returncode != 0:
            sys.exit(f"{name} failed ({p.returncode}): {p.stderr.read().decode(errors='replace')[-300:]}")
    return rows


def day(targets, tmp, rows):
    """Bytes per real 1 s interval, from a run planned as a day (its scatter share and entry
    width, 289 s, are a day's) stopped by Ctrl-C after ONE_SECOND_RUN s: the intervals
    file's bytes per line, and the interval log's largest entry (a whole one when
    ONE_SECOND_RUN > 289) for each of a day's 300."""
    print(f"24 hours at 1 s intervals ({DAY} intervals), projected from {DAY_WORKLOAD} planned as a day "
          f"(--time {DAY}) and stopped after {ONE_SECOND_RUN} s:")
    runs = {}
    for name, target in targets.items():
        subprocess.run([FB, "prepare", DAY_WORKLOAD, f"--target={target}", f"--table-size={TABLE_SIZE}",
                        "--overwrite"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        out = os.path.join(tmp, f"{name}-1s.json")
        runs[name] = (out, subprocess.Popen(fairbench(target, out, DAY, None, DAY_WORKLOAD),
                                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
    time.sleep(ONE_SECOND_RUN)
    for name, (out, p) in runs.items():
        p.send_signal(signal.SIGINT)
        p.wait()
        jsonl, hlog, record = streamed(out)
        n = lines(jsonl)
        entries, per_entry = histogram_entries(hlog)
        recorded, per_record = record_entries(record)
        per_line = os.path.getsize(jsonl) / n
        # The record and the log hold at most 300 entries however long the run: a run planned
        # as a week spreads them over 7 days.
        total = (per_line * DAY + (per_entry + per_record) * 300) / 1e6
        week = (per_line * DAY + (per_entry + per_record) * 300 / 7) / 1e6
        print(f"  {name}: intervals file {per_line:.0f} B a line x {DAY}, interval log (written at the end) "
              f"{per_entry / 1e3:.1f} KB for its largest entry (of {entries}) x 300, record "
              f"{per_record / 1e3:.1f} KB for its largest entry (of {recorded}) x 300 -> {total:.1f} MB a day, "
              f"{total * 1e6 / DAY:.0f} B an interval; a run planned as a week: {week:.1f} MB a day, "
              f"{week * 1e6 / DAY:.0f} B an interval (goal: 25 MB, 300 B)")
    print(f"Resident memory at 1 s intervals, from the 10 ms run's growth between its first mark (and, once its "
          f"buffers are full, its middle one) and its last:")
    for name, samples in rows.items():
        if name == "sysbench" or len(samples) < 2:
            continue
        written, rss = growth(samples)
        (_, n0, rss0, _, _), (_, n1, rss1, _, _) = samples[0], samples[-1]
        later = ""
        if len(samples) >= 3:
            half = len(samples) // 2
            _, rss_half = growth(samples, half)
            (_, nh, rssh, _, _) = samples[half]
            later = (f"; from {nh} ({rssh:.1f} MB) to {n1}: {rss_half:+.0f} B an interval -> "
                     f"{rss_half * DAY / 1e6:+.1f} MB a day")
        print(f"  {name}: RSS {rss0:.1f} MB at {n0} intervals, {rss1:.1f} MB at {n1}: {rss:+.0f} B an interval "
              f"-> {rss * DAY / 1e6:+.1f} MB a day at 1 s{later} (goal: 1 MB); streamed {written:.0f} B an "
              f"interval -> {written * DAY / 1e6:.1f} MB a day")


def main():
    MARIADB.create_db(DB)
    tmp = tempfile.mkdtemp()
    targets = {"SQLite": f"sqlite://{tmp}/bench.db", "MariaDB": TARGET}
    try:
        for target in targets.values():
            subprocess.run([FB, "prepare", WORKLOAD, f"--target={target}", f"--table-size={TABLE_SIZE}"],
                           check=True, stderr=subprocess.DEVNULL)
        seconds = int(MARKS[-1] * TICK * 1.05) + 5
        print(f"{WORKLOAD}, {THREADS} client, 1 table x {TABLE_SIZE} rows; fairbench on SQLite and on MariaDB "
              f"{MARIADB.version()} (TCP) with --report-interval {TICK} ({int(1 / TICK)} intervals a second) "
              f"and sysbench 1.0.20 on MariaDB (--report-interval=1), all at once for {seconds} s on "
              f"{os.cpu_count()} cores")
        outs = {name: os.path.join(tmp, f"{name}.json") for name in targets}
        procs = {name: subprocess.Popen(fairbench(t, outs[name], seconds, TICK), stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE) for name, t in targets.items()}
        sb = sysbench(MARIADB, DB, WORKLOAD, "run", THREADS, 1, TABLE_SIZE, seconds)
        sb.insert(-1, "--report-interval=1")
        procs["sysbench"] = subprocess.Popen(sb, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        rows = watch(procs, outs)
        print(f"{'target':<9}{'intervals':>10}{'fairbench RSS MB':>18}{'sysbench RSS MB':>17}"
              f"{'streamed MB':>13}{'bytes/interval':>16}")
        for name, samples in rows.items():
            for _, n, rss, size, sb_rss in samples:
                print(f"{name:<9}{n:>10}{rss:>18.1f}{sb_rss:>17.1f}{size / 1e6:>13.1f}{size / n:>16.0f}")
        for name, out in outs.items():
            doc = json.load(open(out))
            widths = sorted({round(i["duration_s"], 2) for i in doc["intervals"] if not i["warmup"]})
            print(f"{name}: result {os.path.getsize(out) / 1e3:.0f} KB with {len(doc['intervals'])} timeline "
                  f"entries of {widths[0]}-{widths[-1]} s (every interval is in the streamed files)")

        day(targets, tmp, rows)
        if HEAP_S:
            print(f"Heap (heaptrack: every allocation and free) of {WORKLOAD} at {TICK} s intervals for {HEAP_S} s, "
                  f"each target alone:")
            for name, target in targets.items():
                heap_over_time(name, target, tmp, HEAP_S)
    finally:
        MARIADB.drop_db(DB)
        for f in os.listdir(tmp):
            os.remove(os.path.join(tmp, f))
        os.rmdir(tmp)


if __name__ == "__main__":
    main()
