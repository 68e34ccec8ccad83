#!/usr/bin/env bash
# fairbench's test command: starts (or installs and starts) MariaDB and PostgreSQL, then runs
# every test against them. Tests create databases of their own and drop them afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/servers.sh
ensure_mariadb
ensure_postgres
ensure_sysbench
# tests/ha.rs: Galera sandboxes (galera-4, rsync for the state transfer) and HAProxy (--proxy).
[ -e /usr/lib/galera/libgalera_smm.so ] || { echo "== installing galera-4"; apt_install galera-4; }
command -v rsync >/dev/null 2>&1 || { echo "== installing rsync"; apt_install rsync; }
command -v haproxy >/dev/null 2>&1 || { echo "== installing HAProxy"; apt_install haproxy; }
# tests/patroni.rs: Patroni sandboxes (Debian's patroni and a single etcd member).
{ command -v patroni >/dev/null 2>&1 && command -v etcd >/dev/null 2>&1; } || { echo "== installing Patroni and etcd"; apt_install patroni etcd-server; }
command -v chromium >/dev/null 2>&1 || { echo "== installing Chromium (tests/html_report.rs opens the HTML reports)"; apt_install chromium; }
# tests/streamed_timeline.rs reads the interval log back with HdrHistogram's Python package.
if ! python3 -c 'import hdrh' >/dev/null 2>&1; then
  echo "== installing the hdrhistogram Python package"
  command -v pip3 >/dev/null 2>&1 || apt_install python3-pip
  pip3 install -q hdrhistogram 2>/dev/null || pip3 install -q --break-system-packages hdrhistogram
fi
# tests/live_metrics.rs reads a scrape with Prometheus's own Python OpenMetrics parser.
if ! python3 -c 'import prometheus_client' >/dev/null 2>&1; then
  echo "== installing the prometheus_client Python package"
  command -v pip3 >/dev/null 2>&1 || apt_install python3-pip
  pip3 install -q prometheus_client 2>/dev/null || pip3 install -q --break-system-packages prometheus_client
fi
# tests/k8s.rs checks `fairbench k8s job`'s manifest against Kubernetes' API schemas offline.
if ! python3 -c 'import kubernetes_validate' >/dev/null 2>&1; then
  echo "== installing the kubernetes-validate Python package"
  command -v pip3 >/dev/null 2>&1 || apt_install python3-pip
  pip3 install -q kubernetes-validate 2>/dev/null || pip3 install -q --break-system-packages kubernetes-validate
fi
export_test_targets
cargo test --locked "$@"
# What a user installs (one `dist` build, ~6 min of 2 cores): the Debian package, installed into a
# scratch dpkg root, and `cargo install --path .` reusing that build. Skipped when the
# arguments pick tests.
if [ $# -eq 0 ]; then bash scripts/test-package.sh; fi
