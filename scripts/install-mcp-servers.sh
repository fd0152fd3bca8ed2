#!/usr/bin/env bash
# Installs the MCP components the gateway's integration tests run, from the
# npm registry, into a cache OUTSIDE the repository, idempotently:
#   @modelcontextprotocol/server-filesystem  (upstream: file tools, roots)
#   @modelcontextprotocol/server-everything  (upstream: every tool kind)
#   @modelcontextprotocol/inspector          (client: the Inspector CLI, --cli)
#   @modelcontextprotocol/conformance        (client: the conformance runner;
#      0.1.13 is the newest that runs on Debian's Node 20 — 0.1.14+ import
#      fs.globSync, Node >= 22)
# Versions are pinned (override with the variables below); a second run that
# finds the same versions installed does nothing.
#
# Usage: scripts/install-mcp-servers.sh [DEST_DIR]
#   (default: ${XDG_CACHE_HOME:-$HOME/.cache}/toolgate/npm/mcp)
# Prints DEST_DIR on its last line; binaries are in DEST_DIR/node_modules/.bin.
# The tests find it through $TOOLGATE_MCP_NPM (or the same default).
set -euo pipefail
FS_VERSION="${MCP_FS_VERSION:-2026.8.31}"
EVERYTHING_VERSION="${MCP_EVERYTHING_VERSION:-2026.8.31}"
INSPECTOR_VERSION="${MCP_INSPECTOR_VERSION:-2.12.0}"
CONFORMANCE_VERSION="${MCP_CONFORMANCE_VERSION:-0.1.13}"
dest="${1:-${TOOLGATE_MCP_NPM:-${XDG_CACHE_HOME:-$HOME/.cache}/toolgate/npm/mcp}}"
want="fs=$FS_VERSION everything=$EVERYTHING_VERSION inspector=$INSPECTOR_VERSION conformance=$CONFORMANCE_VERSION"
stamp="$dest/.versions"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -d "$dest/node_modules/.bin" ]]; then
  echo "$dest"
  exit 0
fi
command -v npm >/dev/null || { echo "install-mcp-servers: npm is required (apt-get install npm)" >&2; exit 1; }
mkdir -p "$dest"
cd "$dest"
[[ -f package.json ]] || echo '{"name":"toolgate-mcp-cache","private":true}' > package.json
echo "install-mcp-servers: npm install ($want) into $dest ..." >&2
npm install --no-audit --no-fund --loglevel=error --save-exact \
  "@modelcontextprotocol/server-filesystem@$FS_VERSION" \
  "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION" \
  "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" \
  "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" >&2
echo "$want" > "$stamp"
echo "install-mcp-servers: installed into $dest" >&2
echo "$dest"
