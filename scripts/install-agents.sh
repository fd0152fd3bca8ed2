#!/usr/bin/env bash
# Installs the coding agents' CLIs the hook integration tests drive
# (cmd/toolgate: TestAgentHooks) from the npm registry into a cache OUTSIDE
# the repository, idempotently, pinned:
#   $TOOLGATE_AGENTS_DIR (default ~/.cache/toolgate/agents)/<pkg>@<version>/
# Each install is complete only when its .ok stamp exists (an interrupted
# install is redone). Prints one line per agent: NAME=PATH-OF-ITS-BINARY.
#
# Usage: scripts/install-agents.sh            (all three)
#        scripts/install-agents.sh claude     (one: claude | codex | gemini)
set -euo pipefail
CLAUDE_CODE_VERSION="${CLAUDE_CODE_VERSION:-2.1.328}"
CODEX_VERSION="${CODEX_VERSION:-0.169.0}"
GEMINI_CLI_VERSION="${GEMINI_CLI_VERSION:-0.61.0}"
cache="${TOOLGATE_AGENTS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/toolgate/agents}"

command -v npm >/dev/null || { echo "install-agents: npm is required (apt-get install npm)" >&2; exit 1; }

install_one() { # name pkg version bin
  local name="$1" pkg="$2" version="$3" bin="$4"
  local dest="$cache/${pkg//\//+}@$version"
  if [[ ! -f "$dest/.ok" ]]; then
    echo "install-agents: npm install $pkg@$version into $dest ..." >&2
    rm -rf "$dest"
    mkdir -p "$dest"
    # --prefix with --global lays out bin/ and lib/node_modules/ (the
    # packages' postinstall steps fetch their native binary from the
    # registry as optional dependencies).
    npm install --global --prefix "$dest" --no-audit --no-fund --loglevel=error "$pkg@$version" >&2
    [[ -x "$dest/bin/$bin" ]] || { echo "install-agents: $dest/bin/$bin missing after install" >&2; exit 1; }
    touch "$dest/.ok"
  fi
  echo "$name=$dest/bin/$bin"
}

want="${1:-all}"
[[ "$want" == all || "$want" == claude ]] && install_one claude @anthropic-ai/claude-code "$CLAUDE_CODE_VERSION" claude
[[ "$want" == all || "$want" == codex ]] && install_one codex @openai/codex "$CODEX_VERSION" codex
[[ "$want" == all || "$want" == gemini ]] && install_one gemini @google/gemini-cli "$GEMINI_CLI_VERSION" gemini
exit 0
