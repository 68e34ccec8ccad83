#!/usr/bin/env bash
# For every OLTP workload: N events from fairbench and N events from sysbench 1.0.20 against
# the same MariaDB, each counted by the server itself (SHOW GLOBAL STATUS deltas), side by side.
# Usage: bench/mix-vs-sysbench.sh [EVENTS]   (default 1000). Uses databases of its own.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/servers.sh
ensure_mariadb
ensure_sysbench
cargo build --release --locked -q
FB=target/release/fairbench
EVENTS=${1:-1000}
COUNTERS="Com_select Com_insert Com_update Com_delete Com_begin Com_commit"
SQL="mariadb --protocol=tcp -h127.0.0.1 -P3306 -u$FB_TEST_USER -p$FB_TEST_PASSWORD"
$SQL -e "DROP DATABASE IF EXISTS fb_mix_fairbench; CREATE DATABASE fb_mix_fairbench; DROP DATABASE IF EXISTS fb_mix_sysbench; CREATE DATABASE fb_mix_sysbench"
OUT=$(mktemp -d)
trap '$SQL -e "DROP DATABASE IF EXISTS fb_mix_fairbench; DROP DATABASE IF EXISTS fb_mix_sysbench"; rm -rf "$OUT"' EXIT

counters() { $SQL -N -e "SHOW GLOBAL STATUS WHERE Variable_name IN ('${COUNTERS// /\',\'}')" | sort; }
delta() { join <(echo "$1") <(echo "$2") | awk '{printf "%s=%d ", $1, $3-$2}'; }
SB="sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=3306 --mysql-user=$FB_TEST_USER --mysql-password=$FB_TEST_PASSWORD --mysql-db=fb_mix_sysbench --tables=2 --table-size=10000"

printf "%-22s %-8s %s\n" workload tool "server counter deltas for $EVENTS events (1 thread)"
for w in oltp_read_write oltp_read_only oltp_write_only oltp_point_select oltp_update_index oltp_update_non_index oltp_insert oltp_delete; do
  $SB $w prepare >/dev/null
  b=$(counters); $SB $w --threads=1 --events=$EVENTS --time=0 run >/dev/null; a=$(counters)
  printf "%-22s %-8s %s\n" $w sysbench "$(delta "$b" "$a")"
  $SB $w cleanup >/dev/null

  T="--target=$FAIRBENCH_TEST_MYSQL/fb_mix_fairbench"
  $FB prepare $w "$T" --tables=2 --table-size=10000 2>/dev/null
  b=$(counters); $FB run $w "$T" --tables=2 --table-size=10000 --threads=1 --events=$EVENTS --out=$OUT/r.json >/dev/null 2>&1 || true; a=$(counters)
  printf "%-22s %-8s %s\n" "" fairbench "$(delta "$b" "$a")"
  $FB cleanup "$T" 2>/dev/null
done
