#!/usr/bin/env bash
# Installs libchdb.so (the ClickHouse engine as a library, chDB) into a
# project-local directory, idempotently. Source: the npm package
# @chdb/lib-linux-x64-gnu, pinned to the version verified for this project.
#
# Usage: scripts/install-libchdb.sh [DEST_DIR]   (default: .cache/chdb)
# Prints the path of libchdb.so on its last line.
set -euo pipefail
CHDB_NPM_VERSION="${CHDB_NPM_VERSION:-26.5.3}"
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="${1:-$root/.cache/chdb}"
lib="$dest/libchdb.so"
stamp="$dest/.version"
if [[ -f "$lib" && -f "$stamp" && "$(cat "$stamp")" == "$CHDB_NPM_VERSION" ]]; then
  echo "$lib"
  exit 0
fi
command -v npm >/dev/null || { echo "install-libchdb: npm is required (apt-get install npm)" >&2; exit 1; }
mkdir -p "$dest"
tmp="$(mktemp -d "$dest/.dl.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
echo "install-libchdb: fetching @chdb/lib-linux-x64-gnu@$CHDB_NPM_VERSION (about 170 MB) ..." >&2
(cd "$tmp" && npm pack --silent "@chdb/lib-linux-x64-gnu@$CHDB_NPM_VERSION" >/dev/null)
tarball="$(ls "$tmp"/*.tgz | head -n1)"
tar -xzf "$tarball" -C "$tmp"
found="$(find "$tmp/package" -name 'libchdb.so' | head -n1)"
[[ -n "$found" ]] || { echo "install-libchdb: libchdb.so not found in the package" >&2; exit 1; }
mv -f "$found" "$lib.tmp" && mv -f "$lib.tmp" "$lib"
echo "$CHDB_NPM_VERSION" > "$stamp"
echo "install-libchdb: installed $lib" >&2
echo "$lib"
