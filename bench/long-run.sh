#!/usr/bin/env bash
# A long run simulated cheaply: fairbench with --report-interval 0.01 (100 intervals a
# second) on SQLite and on MariaDB, sysbench 1.0.20 on MariaDB beside them, all at once;
# RSS and bytes streamed per interval at each mark, the result's size and entries, then a
# run at 1 s intervals planned as a day and stopped after ONE_SECOND_RUN_S for the bytes a
# real interval and a day's histogram entry take, and the projection for 24 hours at 1 s;
# then each target alone under heaptrack for HEAP_S seconds at 10 ms intervals: the heap
# from a quarter of the run to its end.
# Usage: bench/long-run.sh [MARKS] [ONE_SECOND_RUN_S] [HEAP_S]   (defaults 6000,24000,100000, 300 and 120)
set -euo pipefail
. "$(dirname "$0")/setup.sh"
command -v heaptrack >/dev/null 2>&1 || { echo "== installing heaptrack"; apt_install heaptrack; }
exec python3 bench/long_run.py "${1:-6000,24000,100000}" "${2:-300}" "${3:-120}"
