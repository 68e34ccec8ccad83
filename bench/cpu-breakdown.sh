#!/usr/bin/env bash
# Where the client CPU per query goes, sysbench 1.0.20 and fairbench side by side:
# oltp_point_select at 8 and 64 threads on MariaDB and PostgreSQL over TCP 127.0.0.1, each run
# under `perf record -g`; per tool the microseconds per query in the kernel's send path, its
# receive path, waiting (poll/epoll_wait), the rest of the kernel and user space, and the floor
# (send + receive) over sysbench's whole CPU per query; context switches per query, the cost of
# a wake-up (in the runs, and alone: perf bench sched pipe), the floor with waiting and all the
# kernel time over sysbench's CPU per query. Uses a database of its own on each
# server (fb_cpu_breakdown), dropped at the end. See docs/performance.md.
# Usage: bench/cpu-breakdown.sh [SECONDS_PER_RUN]   (default 10)
# Environment: FB_BENCH_SERVERS=mariadb,postgresql (which servers).
set -euo pipefail
. "$(dirname "$0")/setup.sh"
ensure_postgres
exec python3 bench/cpu_breakdown.py "${1:-10}"
