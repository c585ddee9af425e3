#!/usr/bin/env bash
# What `make test` runs (and so CI): set up everything the suite needs (virtualenv and jars, a
# Kafka broker's jars, the S3 server, Chromium, Prometheus, the drivers' class-data archive), run
# the whole suite on TEST_WORKERS xdist workers (default 2; 0: one process), and end with the
# wall time of it all, whatever the outcome (pytest prints the 25 slowest tests before it).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
started=$(date +%s)

suite() {
  set -e
  bash scripts/bootstrap.sh
  bash scripts/kafka.sh install
  bash scripts/s3.sh install
  bash scripts/chromium.sh
  bash scripts/prometheus.sh
  # shellcheck source=scripts/env.sh
  source scripts/env.sh
  PYTHONPATH=src "$VENV/bin/python" tests/jvm_archive.py
  "$VENV/bin/python" -m pytest -q -n "${TEST_WORKERS:-2}" --dist loadgroup --durations=25 \
    --junitxml=test-times.xml tests
}

( suite )
status=$?
elapsed=$(( $(date +%s) - started ))
printf 'make test: %d:%02d wall time, set-up and suite (exit status %d)\n' \
  $((elapsed / 60)) $((elapsed % 60)) "$status"
exit "$status"
