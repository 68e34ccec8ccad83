#!/usr/bin/env bash
# Builds fairbench with `cargo install --path . --profile dist` (fat LTO, one codegen unit, no debug line tables) and
# assembles a Debian package with dpkg-deb alone (no cargo-deb needed):
#   /usr/bin/fairbench
#   /usr/share/man/man1/fairbench.1.gz and fairbench-COMMAND.1.gz (from `fairbench man`)
#   /usr/share/bash-completion/completions/fairbench, /usr/share/zsh/vendor-completions/_fairbench,
#   /usr/share/fish/vendor_completions.d/fairbench.fish (from `fairbench completions SHELL`)
#   /usr/share/doc/fairbench/copyright and README.md
# Usage: bash scripts/package-deb.sh [OUT_DIR]   (default: TARGET_DIR/debian)
# Prints the path of the .deb on its last line. Honours CARGO_TARGET_DIR.
# Install: sudo dpkg -i TARGET_DIR/debian/fairbench_VERSION-1_ARCH.deb (docs/install.md).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v dpkg-deb >/dev/null 2>&1 || { echo "package-deb: dpkg-deb is needed (Debian's dpkg package)" >&2; exit 1; }

TARGET_DIR=${CARGO_TARGET_DIR:-target}
OUT_DIR=${1:-$TARGET_DIR/debian}
VERSION=$(cargo metadata --no-deps --format-version 1 --locked --offline 2>/dev/null \
  | python3 -c 'import json, sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "fairbench"))')
ARCH=$(dpkg --print-architecture)
DEB_VERSION="$VERSION-1"

STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
# Built as a user installs it (`cargo install --path . --profile dist`, docs/install.md), so the
# package holds exactly what that command installs.
echo "== building fairbench $VERSION (cargo install --path . --profile dist --locked)" >&2
cargo install --path . --profile dist --locked --root "$STAGE/inst" >&2
BIN="$STAGE/inst/bin/fairbench"
ROOT="$STAGE/fairbench_${DEB_VERSION}_$ARCH"
install -D -m 0755 "$BIN" "$ROOT/usr/bin/fairbench"

# Manual pages: the top page and one per command, as `fairbench man [COMMAND]` renders them.
MAN="$ROOT/usr/share/man/man1"
install -d "$MAN"
"$BIN" man | gzip -9n > "$MAN/fairbench.1.gz"
# The commands, from the help's "Commands:" list (clap's layout: two spaces, name, description).
COMMANDS=$("$BIN" --help | awk '/^Commands:/ {on = 1; next} on && /^$/ {on = 0} on && /^  [a-z]/ {print $1}' | grep -vx help)
[ -n "$COMMANDS" ] || { echo "package-deb: found no commands in \`fairbench --help\`" >&2; exit 1; }
for c in $COMMANDS; do "$BIN" man "$c" | gzip -9n > "$MAN/fairbench-$c.1.gz"; done

# Completions, where Debian's bash-completion, zsh and fish look for packaged ones.
install -d "$ROOT/usr/share/bash-completion/completions" "$ROOT/usr/share/zsh/vendor-completions" \
  "$ROOT/usr/share/fish/vendor_completions.d"
"$BIN" completions bash > "$ROOT/usr/share/bash-completion/completions/fairbench"
"$BIN" completions zsh > "$ROOT/usr/share/zsh/vendor-completions/_fairbench"
"$BIN" completions fish > "$ROOT/usr/share/fish/vendor_completions.d/fairbench.fish"

DOC="$ROOT/usr/share/doc/fairbench"
install -d "$DOC"
install -m 0644 README.md "$DOC/README.md"
cat > "$DOC/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: fairbench
Comment: The binary links statically the Rust crates listed in the source's Cargo.lock
 (each under its own license, recorded in its Cargo.toml) and SQLite (public domain).

Files: *
Copyright: The fairbench authors
License: MIT or Apache-2.0

License: Apache-2.0
 On Debian systems, the full text of the Apache License, Version 2.0 is in
 /usr/share/common-licenses/Apache-2.0.

License: MIT
 Permission is hereby granted, free of charge, to any person obtaining a copy of this software
 and associated documentation files (the "Software"), to deal in the Software without
 restriction, including without limitation the rights to use, copy, modify, merge, publish,
 distribute, sublicense, and/or sell copies of the Software, and to permit persons to whom the
 Software is furnished to do so, subject to the following conditions:
 .
 The above copyright notice and this permission notice shall be included in all copies or
 substantial portions of the Software.
 .
 THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING
 BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND
 NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM,
 DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
 OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
EOF

# The C library the binary needs: the newest GLIBC_ symbol version it references.
GLIBC=$(objdump -T "$BIN" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
DESCRIPTION=$(cargo metadata --no-deps --format-version 1 --locked --offline 2>/dev/null \
  | python3 -c 'import json, sys; print(next(p["description"] for p in json.load(sys.stdin)["packages"] if p["name"] == "fairbench"))')
install -d "$ROOT/DEBIAN"
cat > "$ROOT/DEBIAN/control" <<EOF
Package: fairbench
Version: $DEB_VERSION
Architecture: $ARCH
Maintainer: The fairbench authors <fairbench@localhost>
Installed-Size: $(du -sk --exclude=DEBIAN "$ROOT" | cut -f1)
Depends: libc6 (>= ${GLIBC:-2.17})
Section: database
Priority: optional
Description: $DESCRIPTION
 fairbench runs sysbench's OLTP workloads (and its own) against MySQL, MariaDB,
 PostgreSQL and SQLite, records each run's conditions with its exact latency
 histograms, and audits whether the numbers can be believed.
EOF

mkdir -p "$OUT_DIR"
DEB="$OUT_DIR/fairbench_${DEB_VERSION}_$ARCH.deb"
dpkg-deb --root-owner-group -Zxz --build "$ROOT" "$DEB" >&2
echo "$DEB"
