#!/usr/bin/env bash
# build-collector.sh: build toolgate's OpenTelemetry Collector distribution with the
# OpenTelemetry Collector Builder (ocb) into bin/.
#
# Usage: scripts/build-collector.sh [--manifest FILE] [--out DIR] [--force]
#   --manifest FILE  builder manifest (default deploy/otel-collector/builder.yaml;
#                    deploy/otel-collector/builder-cluster.yaml builds the
#                    load-balancing tier binary bin/otelcol-toolgate-cluster)
#   --out DIR        install into DIR instead of bin/ (env TOOLGATE_BIN_DIR too),
#                    e.g. to try a new release without touching bin/
#   --force          rebuild even if the cached binary is up to date
#
# The binary is <DIR>/<dist.name> from the manifest. It is cached: a stamp file
# <DIR>/.<dist.name>.key holds a SHA-256 over the manifest, the builder's tool module
# and `go version`; when it matches and the binary runs, the script exits in well
# under a second. Module and build caches are Go's defaults (GOMODCACHE, GOCACHE),
# so CI on the same machine reuses them. A cold build takes about 5 minutes on
# 2 cores and needs about 1 GB of RAM.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

MANIFEST="deploy/otel-collector/builder.yaml"
BIN="${TOOLGATE_BIN_DIR:-$ROOT/bin}"
FORCE=0
while [[ $# -gt 0 ]]; do
	case "$1" in
	--manifest) MANIFEST="${2:?--manifest needs a file}"; shift 2 ;;
	--out) BIN="${2:?--out needs a directory}"; shift 2 ;;
	--force) FORCE=1; shift ;;
	-h | --help) sed -n '2,18p' "$0"; exit 0 ;;
	*) echo "build-collector: unknown argument: $1 (see --help)" >&2; exit 2 ;;
	esac
done

die() { echo "build-collector: error: $*" >&2; exit 1; }
say() { echo "build-collector: $*"; }

command -v go >/dev/null || die "go is not on PATH (Go 1.26 is required)"
[[ -f "$MANIFEST" ]] || die "manifest not found: $MANIFEST"

# dist.name and dist.output_path from the manifest (plain `key: value` lines).
yaml_dist() {
	awk -v key="$1" '
		/^dist:/ {in_dist=1; next}
		/^[^ #]/ {in_dist=0}
		in_dist && $1 == key":" {sub(/^[^:]*:[ ]*/, ""); print; exit}
	' "$MANIFEST"
}
NAME="$(yaml_dist name)"
OUT_PATH="$(yaml_dist output_path)"
[[ -n "$NAME" ]] || die "$MANIFEST: dist.name is missing"
[[ -n "$OUT_PATH" ]] || die "$MANIFEST: dist.output_path is missing"

mkdir -p "$BIN"
BIN="$(cd "$BIN" && pwd)"
TARGET="$BIN/$NAME"
STAMP="$BIN/.$NAME.key"
BUILDER="$BIN/builder"
BUILDER_STAMP="$BIN/.builder.key"
LOGDIR="$ROOT/.cache/otelcol-build"
LOG="$LOGDIR/$NAME.log"
mkdir -p "$BIN" "$LOGDIR"

# One build at a time (make test and make demo may race on a fresh machine).
exec 9>"$BIN/.build-collector.lock"
flock 9

GOVERSION="$(go env GOVERSION)"
builder_key="$(cat tools/builder/go.mod tools/builder/go.sum <(echo "$GOVERSION") | sha256sum | cut -d' ' -f1)"
key="$(cat "$MANIFEST" tools/builder/go.mod tools/builder/go.sum <(echo "$GOVERSION") | sha256sum | cut -d' ' -f1)"

if [[ $FORCE -eq 0 && -x "$TARGET" && -f "$STAMP" && "$(cat "$STAMP")" == "$key" ]] &&
	"$TARGET" --version >/dev/null 2>&1; then
	say "$TARGET is up to date ($("$TARGET" --version 2>/dev/null | head -1))"
	exit 0
fi

# 1. The builder (ocb), pinned by tools/builder/go.mod.
if [[ ! -x "$BUILDER" || ! -f "$BUILDER_STAMP" || "$(cat "$BUILDER_STAMP")" != "$builder_key" ]]; then
	say "building ocb from tools/builder ..."
	go build -C tools/builder -trimpath -o "$BUILDER" go.opentelemetry.io/collector/cmd/builder ||
		die "could not build ocb (go.opentelemetry.io/collector/cmd/builder); check network access to the Go module proxy"
	echo "$builder_key" >"$BUILDER_STAMP"
fi
say "using $("$BUILDER" version 2>&1 | head -1)"

# 2. Generate, resolve modules and compile. ocb writes sources and the binary to output_path.
say "building $NAME from $MANIFEST (cold: ~5 min on 2 cores; log: ${LOG#"$ROOT"/}) ..."
start=$(date +%s)
if ! "$BUILDER" --config "$MANIFEST" >"$LOG" 2>&1; then
	echo "----- last lines of $LOG -----" >&2
	tail -n 25 "$LOG" >&2
	if grep -q "not available\|403" "$LOG"; then
		refused="$(grep -o 'proxy.golang.org/[^ ]*/@v/[^ :]*' "$LOG" | sed 's|proxy.golang.org/||; s|/@v/| |; s#\.\(mod\|zip\|info\)$##' | sort -u | paste -sd, - | sed "s/,/, /g")"
		echo "hint: the Go module proxy refuses ${refused:-a module this manifest needs}" \
			"(see docs/deployment.md, \"Building the collector and Jaeger\"); keep every collector module" \
			"at the one release that builds (core/contrib v0.161.0, stable v1.67.0)." >&2
	fi
	die "ocb failed for $MANIFEST (full log: $LOG)"
fi
built="$OUT_PATH/$NAME"
[[ -x "$built" ]] || die "ocb finished but $built is missing (log: $LOG)"

# 3. Install atomically, then record the key.
cp "$built" "$TARGET.tmp.$$"
mv -f "$TARGET.tmp.$$" "$TARGET"
"$TARGET" --version >/dev/null 2>&1 || die "$TARGET does not run"
echo "$key" >"$STAMP"
say "built $TARGET in $(($(date +%s) - start)) s ($(du -h "$TARGET" | cut -f1))"
