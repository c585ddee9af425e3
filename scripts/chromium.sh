#!/usr/bin/env bash
# Debian's headless Chromium for the HTML report's browser test (tests/ops/test_html_report.py).
# Idempotent and quiet: does nothing when `chromium` is already on PATH; prints the apt log's
# tail only when the install fails. Needs root (or sudo) and the Debian archive.
set -euo pipefail

command -v chromium >/dev/null 2>&1 && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
log="$(mktemp)"
if ! { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
    --no-install-recommends chromium; } >"$log" 2>&1; then
  tail -n 30 "$log" >&2
  echo "chromium.sh: error: could not install Debian's chromium (full log: $log)" >&2
  exit 1
fi
rm -f "$log"
command -v chromium >/dev/null 2>&1 || { echo "chromium.sh: error: chromium not on PATH" >&2; exit 1; }
