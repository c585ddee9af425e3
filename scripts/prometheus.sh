#!/usr/bin/env bash
# Debian's Prometheus server and promtool, for the alert-rule tests (tests/ops/test_alerts.py)
# and the metrics e2e test (tests/e2e/test_prometheus.py), which start their own server on a
# free port with their own config. Idempotent and quiet: does nothing when both are on PATH;
# prints the apt log's tail only when the install fails. Needs root (or sudo) and the Debian
# archive.
#
# The package's own service must not start (it would hold port 9090 and scrape nothing of
# ours): a policy-rc.d that refuses every start is in place during the install (Docker images
# ship one already), and a service running afterwards is stopped and disabled.
set -euo pipefail

command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1 && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
policy=/usr/sbin/policy-rc.d
own_policy=""
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
  $sudo chmod 755 "$policy"
  own_policy=1
fi
log="$(mktemp)"
status=0
{ $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
    --no-install-recommends prometheus; } >"$log" 2>&1 || status=$?
[ -z "$own_policy" ] || $sudo rm -f "$policy"
if [ "$status" -ne 0 ]; then
  tail -n 30 "$log" >&2
  echo "prometheus.sh: error: could not install Debian's prometheus (full log: $log)" >&2
  exit 1
fi
if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
  $sudo systemctl disable --now prometheus >/dev/null 2>&1 || true
fi
rm -f "$log"
for tool in prometheus promtool; do
  command -v "$tool" >/dev/null 2>&1 || { echo "prometheus.sh: error: $tool not on PATH" >&2; exit 1; }
done
