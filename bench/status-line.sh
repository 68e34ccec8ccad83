#!/usr/bin/env bash
# What the live status line costs: fairbench piped (no status line) and on a terminal (the
# status line drawn every second, through script(1)'s pseudo-terminal), alternating, with
# sysbench 1.0.20 in the same rounds as the reference; client CPU per query and QPS of each,
# and the difference with the status line against the run-to-run spread without it.
# Usage: bench/status-line.sh [SECONDS_PER_RUN] [ROUNDS]   (defaults 10 and 4)
set -euo pipefail
. "$(dirname "$0")/setup.sh"
exec python3 bench/status_line.py "${1:-10}" "${2:-4}"
