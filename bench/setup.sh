# Sourced by the bench scripts: from the repository's root, with MariaDB and sysbench
# installed and started when absent, the test targets exported, the release binary built.
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. scripts/servers.sh
ensure_mariadb
ensure_sysbench
export_test_targets
cargo build --release --locked -q
