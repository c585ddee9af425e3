#!/usr/bin/env bash
# The benchmark in one command: bench/run.sh [--smoke] [other options of python -m bench.run]
# Installs the Spark Connect client libraries that Spark Declarative Pipelines (AUTO CDC) need
# into $CDCLAKE_CACHE/bench-pipelines (not into the project venv), then runs the harness.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
EXTRA="$CDCLAKE_CACHE/bench-pipelines"
if [ ! -d "$EXTRA/grpc" ]; then
  "$VENV/bin/python" -m pip install -q --target "$EXTRA" \
    "grpcio>=1.76.0" "grpcio-status>=1.76.0" "googleapis-common-protos>=1.71.0" "zstandard>=0.25.0"
fi
PYTHONPATH="src:.${PYTHONPATH:+:$PYTHONPATH}" exec "$VENV/bin/python" -m bench.run "$@"
