#!/usr/bin/env bash
# fairbench's peak RSS holding 100, 1,000 and 10,000 connections (oltp_point_select, open loop
# at --rate 200 over all of them) on MariaDB and PostgreSQL over TCP 127.0.0.1, against the
# goals (1,000 <= 25 MB, 10,000 <= 100 MB). Raises RLIMIT_NOFILE, and each server's
# max_connections for the runs, putting it back after (PostgreSQL: with a restart each way,
# only when it is lower). Uses a database of its own (fb_connections), dropped at the end.
# Usage: bench/connections.sh [SECONDS_PER_RUN]   (default 5)
# Environment: FB_BENCH_SERVERS=mariadb,postgresql (which servers). See docs/performance.md.
set -euo pipefail
. "$(dirname "$0")/setup.sh"
ensure_postgres
exec python3 bench/connections.py "${1:-5}"
