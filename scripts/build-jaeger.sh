#!/usr/bin/env bash
# build-jaeger.sh: build Jaeger v2 (github.com/jaegertracing/jaeger/cmd/jaeger,
# the version pinned in tools/jaeger/go.mod) into bin/jaeger.
#
# Usage: scripts/build-jaeger.sh [--force]
#
# `go install github.com/jaegertracing/jaeger/cmd/jaeger@v1.76.0` is refused
# because Jaeger's go.mod has replace directives, so the binary is built from the
# tool module tools/jaeger (created with `go get -tool ...@v1.76.0`). The binary is
# cached: bin/.jaeger.key holds a SHA-256 over tools/jaeger/go.{mod,sum} and
# `go version`. A cold build takes about 5 minutes on 2 cores and needs about
# 2.3 GB of RAM. The Go module carries no built web UI; use the HTTP query API
# (/api/traces) or the official image (deploy/otel-collector/compose.yaml) for the UI.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

FORCE=0
case "${1:-}" in
--force) FORCE=1 ;;
"") ;;
-h | --help) sed -n '2,13p' "$0"; exit 0 ;;
*) echo "build-jaeger: unknown argument: $1 (see --help)" >&2; exit 2 ;;
esac

die() { echo "build-jaeger: error: $*" >&2; exit 1; }
say() { echo "build-jaeger: $*"; }

command -v go >/dev/null || die "go is not on PATH (Go 1.26 is required)"
[[ -f tools/jaeger/go.mod ]] || die "tools/jaeger/go.mod is missing"

BIN="$ROOT/bin"
TARGET="$BIN/jaeger"
STAMP="$BIN/.jaeger.key"
LOGDIR="$ROOT/.cache/jaeger-build"
LOG="$LOGDIR/build.log"
mkdir -p "$BIN" "$LOGDIR"

exec 9>"$BIN/.build-jaeger.lock"
flock 9

VERSION="$(awk '$1 == "github.com/jaegertracing/jaeger" {print $2}' tools/jaeger/go.mod)"
[[ -n "$VERSION" ]] || die "tools/jaeger/go.mod does not require github.com/jaegertracing/jaeger"
key="$(cat tools/jaeger/go.mod tools/jaeger/go.sum <(go env GOVERSION) | sha256sum | cut -d' ' -f1)"

if [[ $FORCE -eq 0 && -x "$TARGET" && -f "$STAMP" && "$(cat "$STAMP")" == "$key" ]] &&
	"$TARGET" version >/dev/null 2>&1; then
	say "$TARGET is up to date (jaeger $VERSION)"
	exit 0
fi

say "building jaeger $VERSION from tools/jaeger (cold: ~5 min on 2 cores; log: ${LOG#"$ROOT"/}) ..."
start=$(date +%s)
# The version package reads these ldflags (internal/version in jaeger v1.76.0).
ldflags="-s -w"
ldflags+=" -X github.com/jaegertracing/jaeger/internal/version.latestVersion=$VERSION"
if ! go build -C tools/jaeger -trimpath -ldflags="$ldflags" -o "$TARGET.tmp.$$" \
	github.com/jaegertracing/jaeger/cmd/jaeger >"$LOG" 2>&1; then
	rm -f "$TARGET.tmp.$$"
	echo "----- last lines of $LOG -----" >&2
	tail -n 25 "$LOG" >&2
	die "go build of jaeger $VERSION failed (full log: $LOG)"
fi
mv -f "$TARGET.tmp.$$" "$TARGET"
"$TARGET" version >/dev/null 2>&1 || die "$TARGET does not run"
echo "$key" >"$STAMP"
say "built $TARGET in $(($(date +%s) - start)) s ($(du -h "$TARGET" | cut -f1))"
