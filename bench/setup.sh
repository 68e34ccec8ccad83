# Sourced by the bench scripts: from the repository's root, with MariaDB, sysbench and GNU time
# installed and started when absent, the test targets exported, the release binary built.
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. scripts/servers.sh
ensure_mariadb
ensure_sysbench
[ -x /usr/bin/time ] || { echo "== installing GNU time"; apt_install time; }
export_test_targets
cargo build --release --locked -q
