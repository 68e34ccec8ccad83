#!/usr/bin/env bash
# The least CPU per query any client can spend here, against sysbench 1.0.20 and fairbench:
# oltp_point_select and oltp_read_write on MariaDB and PostgreSQL over TCP 127.0.0.1 at 8 and 64
# threads, the clients alternating on the same tables. The floor client (examples/floor_client/)
# does only what every such client must: one prepared statement per connection at a time, a
# clock read around it, a bare epoll loop; it runs again with an io_uring loop and as tokio
# tasks. Every tool in plaintext, as the server saw each run's sessions (no ratio otherwise).
# Prints per run QPS and CPU per query (user, system), then the ratios to sysbench of fairbench
# and of the floor, and fairbench's CPU per query over each floor loop's (goal <= 1.1) with what
# its own work costs per query. FB_BENCH_SERVERS=mariadb (or postgresql) runs one server.
# Uses a database of its own (fb_client_floor), dropped at the end. See docs/performance.md.
# Usage: bench/client-floor.sh [SECONDS_PER_RUN] [ROUNDS] [WORKLOADS]
#   (defaults 10, 5, oltp_point_select,oltp_read_write)
set -euo pipefail
. "$(dirname "$0")/setup.sh"
cargo build --release --locked -q --example floor_client
exec python3 bench/client_floor.py "${1:-10}" "${2:-5}" "${3:-oltp_point_select,oltp_read_write}"
