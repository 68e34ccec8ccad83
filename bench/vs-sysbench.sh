#!/usr/bin/env bash
# fairbench against sysbench 1.0.20, alternately, on the same tables of MariaDB and PostgreSQL
# over TCP 127.0.0.1: oltp_point_select and oltp_read_write at 8 and 64 threads; per run QPS,
# client CPU per query (user, system), syscalls and context switches per query (perf stat) and
# peak RSS; per configuration the ratios fairbench/sysbench (median, min-max) against the goals;
# then prepare's rows/s of both (8 x 100,000 and 1 x 1,000,000 rows). Both tools get the same
# transport (plaintext; FB_BENCH_TLS=on: TLS), and in every run the server is asked what each
# of the tool's connections used (pg_stat_ssl; MariaDB/MySQL: Ssl_cipher per session): printed
# per tool in the header and per run, and a configuration whose tools differ gets no ratio.
# Uses a database of its own on each server (fb_vs_sysbench), dropped at the end. See
# docs/performance.md.
# Usage: bench/vs-sysbench.sh [SECONDS_PER_RUN] [ROUNDS] [PREPARE_ROUNDS]   (defaults 10, 3, 3;
#        ROUNDS >= 3; PREPARE_ROUNDS 0 skips the prepare section)
# Environment: FB_BENCH_SERVERS=mariadb,postgresql (which servers), FB_BENCH_PERF=0 (no perf),
#        FB_BENCH_ONLY=prepare (only the prepare section), FB_BENCH_TLS=on (both tools over TLS;
#        refused on a server that offers none; MySQL/MariaDB also needs FB_BENCH_SYSBENCH_TLS_DIR,
#        a directory with the client-key.pem, client-cert.pem and cacert.pem sysbench loads).
set -euo pipefail
. "$(dirname "$0")/setup.sh"
ensure_postgres
exec python3 bench/vs_sysbench.py "${1:-10}" "${2:-3}" "${3:-3}"
