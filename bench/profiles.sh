#!/usr/bin/env bash
# What the fast-to-build `release` profile costs at run time against `dist` (fat LTO, one
# codegen unit: the packaged binary): builds both, then runs the same oltp_point_select load
# with each against MariaDB over TCP 127.0.0.1 — client CPU per query at 8 threads (3 rounds,
# alternating which goes first) and peak RSS holding 100 and 1,000 connections — and prints
# each figure and the release/dist ratio. Uses a database of its own (fb_profiles), dropped at
# the end; raises max_connections for the runs and puts it back.
# Usage: bench/profiles.sh [SECONDS_PER_RUN]   (default 5)
# Environment: FB_BENCH_SERVERS=mariadb,postgresql (default mariadb). See docs/performance.md.
set -euo pipefail
. "$(dirname "$0")/setup.sh"
export FB_BENCH_SERVERS=${FB_BENCH_SERVERS:-mariadb}
case ",$FB_BENCH_SERVERS," in *,postgresql,*) ensure_postgres ;; esac
cargo build --profile dist --locked -q
exec python3 bench/profiles.py "${1:-5}"
