#!/usr/bin/env bash
# Installs Debian's Chromium for the browser test of the approvals web page
# (approve/inbox/inboxhttp, TestBrowserApprovesOneRequest), idempotently and
# quietly: nothing happens when chromium or chromium-headless-shell is
# already on PATH. apt-get update runs only when the first install fails
# (stale package lists). Needs root, or sudo without a password.
#
# Usage: scripts/install-chromium.sh
# Prints the path of the browser on its last line.
set -euo pipefail
for name in chromium chromium-headless-shell; do
  if p="$(command -v "$name" 2>/dev/null)"; then
    echo "$p"
    exit 0
  fi
done
sudo=()
if [[ "$(id -u)" != 0 ]]; then
  command -v sudo >/dev/null || { echo "install-chromium: not root and no sudo: install chromium (apt-get install chromium)" >&2; exit 1; }
  sudo=(sudo -n)
fi
command -v apt-get >/dev/null || { echo "install-chromium: no apt-get: install Chromium and put chromium on PATH (or set TOOLGATE_CHROMIUM)" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
install() { "${sudo[@]}" apt-get install -y -q --no-install-recommends chromium >"$log" 2>&1; }
if ! install; then
  "${sudo[@]}" apt-get update -q >>"$log" 2>&1 || true
  if ! install; then
    cat "$log" >&2
    echo "install-chromium: apt-get install chromium failed (above)" >&2
    exit 1
  fi
fi
command -v chromium
