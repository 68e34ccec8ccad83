#!/usr/bin/env bash
# fairbench's fast tier: no server needed. Unit tests, the layering and schema checks, and
# every test against the embedded SQLite target (test names starting with sqlite_), plus
# flag and URL errors, and fake hostile servers (tests/hostile_server.rs). The full suite (scripts/test.sh) stays the test command of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --locked -q --lib --test module_graph --test schema --test hostile_server --test workload_files --test cli_output --test hints "$@"
cargo test --locked -q --test lifecycle --test audit --test measurement --test errors --test secrets -- \
  sqlite_ bad_urls invalid_flags_and_values argv_hides password_file_errors malformed_targets "$@"
