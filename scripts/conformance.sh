#!/usr/bin/env bash
# The whole chain locally: PostgreSQL + MariaDB -> Debezium (Kafka Connect) -> Kafka -> cdclake ->
# Delta, then every Delta table compared with its source table, row for row.
#
#   scripts/conformance.sh [--transactions N] [--initial-rows N] [--seed N] [--work DIR]
#                          [--apply cli|in-process]
#
# Starts a fresh broker on a free port (its data under the work dir), PostgreSQL and MariaDB
# (reused when running; stopped at the end only when started here), four connectors
# (pg/mariadb x schemas true/false, topic prefixes conf_<db>_<schemas|noschemas>, run dirs under
# the work dir); runs the seeded workload; dumps the topics to <work>/topics/<prefix>/*.jsonl;
# runs `cdclake apply` per variant into <work>/lake/<prefix> (conf_mariadb_schemas straight from
# Kafka with --kafka-bootstrap --topic-pattern --available-now, the others from the files); prints
# per table "equal" or the first differences. Exit code 0 when every table is equal and nothing is
# quarantined. Default: 60 transactions, work dir a fresh temp dir (kept, printed at the end).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/env.sh
source "$ROOT/scripts/env.sh"
export PYTHONPATH="$ROOT/src:$ROOT/tests${PYTHONPATH:+:$PYTHONPATH}"
exec "$VENV/bin/python" -m conformance.chain "$@"
