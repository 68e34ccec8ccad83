#!/usr/bin/env bash
# fairbench against sysbench 1.0.20, alternately, on the same MariaDB tables over TCP
# 127.0.0.1: queries counted by the server (SHOW GLOBAL STATUS 'Questions'), client CPU and
# peak RSS taken from the OS (wait4 rusage), then connection scaling (1,000 and 10,000).
# Usage: bench/vs-sysbench.sh [SECONDS_PER_RUN] [ROUNDS]   (defaults 10 and 2)
set -euo pipefail
. "$(dirname "$0")/setup.sh"
exec python3 bench/vs_sysbench.py "${1:-10}" "${2:-2}"
