#!/usr/bin/env bash
# What a user installs works: builds the Debian package (scripts/package-deb.sh: one `dist`
# build), checks its contents, installs it with dpkg into a scratch root (this machine's own
# dpkg database and /usr are not touched), runs the installed binary, reads its manual page,
# checks the completions' syntax and the size limit, and removes it again. The package's binary
# is what `cargo install --path . --profile dist` installs (package-deb.sh builds with it), so
# the documented install is tested too, with one build. Called by scripts/test.sh (the full tier); runs alone too.
# Leaves nothing behind but the build in the target directory.
set -euo pipefail
cd "$(dirname "$0")/.."
MAX_BYTES=$((25 * 1024 * 1024)) # the installed binary, without debug line tables
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
passed=0
failed=0
check() { # check NAME CMD...: one line per check
  local name=$1; shift
  if "$@" >"$TMP/out" 2>&1; then
    passed=$((passed + 1)); echo "ok: $name"
  else
    failed=$((failed + 1)); echo "FAILED: $name"; sed 's/^/    /' "$TMP/out" | tail -20
  fi
}

start=$SECONDS
DEB=$(bash scripts/package-deb.sh "$TMP/out-deb" | tail -1)
echo "== $DEB ($(du -h "$DEB" | cut -f1), built in $((SECONDS - start)) s)"

has_paths() {
  local list
  list=$(dpkg-deb -c "$DEB" | awk '{print $6}')
  for p in ./usr/bin/fairbench ./usr/share/man/man1/fairbench.1.gz ./usr/share/man/man1/fairbench-run.1.gz \
    ./usr/share/bash-completion/completions/fairbench ./usr/share/zsh/vendor-completions/_fairbench \
    ./usr/share/fish/vendor_completions.d/fairbench.fish ./usr/share/doc/fairbench/copyright; do
    grep -qx "$p" <<<"$list" || { echo "missing from the package: $p"; return 1; }
  done
}
check "the package holds the binary, manual pages, completions and copyright" has_paths
check "its control file names the version of Cargo.toml" bash -c \
  "dpkg-deb -f '$DEB' Version | grep -qx \"\$(grep -m1 '^version' Cargo.toml | cut -d'\"' -f2)-1\""

# A scratch dpkg root: dpkg's own database, empty, inside TMP.
ROOT="$TMP/root"
mkdir -p "$ROOT/var/lib/dpkg/info" "$ROOT/var/lib/dpkg/updates"
touch "$ROOT/var/lib/dpkg/status"
# --force-depends: the scratch database knows no libc6 (this machine's libc runs the binary).
check "dpkg installs it" dpkg --root="$ROOT" --force-depends --force-not-root -i "$DEB"
BIN="$ROOT/usr/bin/fairbench"
check "the installed binary runs (--version)" bash -c "'$BIN' --version | grep -q '^fairbench '"
check "the installed binary runs a SQLite benchmark" bash -c \
  "cd '$TMP' && '$BIN' bench oltp_point_select --table-size 100 --time 1 --quiet > report.txt && grep -q 'queries' report.txt"
check "the installed binary is at most 25 MiB ($(stat -c %s "$BIN" 2>/dev/null) bytes)" test "$(stat -c %s "$BIN")" -le "$MAX_BYTES"
check "the installed binary has no debug line tables" bash -c "! readelf -S '$BIN' | grep -q '\.debug_line'"
check "man -l reads its manual page" bash -c \
  "MANWIDTH=80 man -l '$ROOT/usr/share/man/man1/fairbench.1.gz' 2>/dev/null | grep -q 'fairbench'"
check "the bash completion parses" bash -n "$ROOT/usr/share/bash-completion/completions/fairbench"
if command -v zsh >/dev/null 2>&1; then check "the zsh completion parses" zsh -n "$ROOT/usr/share/zsh/vendor-completions/_fairbench"; fi
if command -v fish >/dev/null 2>&1; then check "the fish completion parses" fish -n "$ROOT/usr/share/fish/vendor_completions.d/fairbench.fish"; fi
check "dpkg removes it, leaving no file of it" bash -c \
  "dpkg --root='$ROOT' --force-not-root -r fairbench && test -z \"\$(find '$ROOT' -path '$ROOT/var/lib/dpkg' -prune -o -type f -print)\""

echo "package: $passed passed, $failed failed"
[ "$failed" = 0 ]
