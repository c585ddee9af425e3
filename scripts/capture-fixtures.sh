#!/usr/bin/env bash
# Capture golden fixtures from the real producers: Debian's PostgreSQL and MariaDB, Debezium's
# connectors on Kafka Connect (JsonConverter with schemas on and off), the project's Kafka broker.
#
#   scripts/capture-fixtures.sh [--transactions N] [--initial-rows N] [--seed N] [--max-lines N]
#                               [--out DIR] [--kafka-port N]
#
# Steps: install what is missing (apt, Maven Central), start a fresh broker on 127.0.0.1:
# $CAPTURE_KAFKA_PORT (19192: not the default 19092, so a broker someone else uses is left alone),
# start PostgreSQL and MariaDB (reused if already up), run the workload's setup (tables + initial
# rows), start four connectors with --fresh (pg/mariadb x schemas true/false; each snapshots the
# initial rows), wait until all stream, run the seeded transactions, wait until the topics are
# quiet, and write every topic to
#   <out>/<pg|mariadb>_<schemas|noschemas>/<topic>.jsonl      (record objects, <= max-lines each)
#   <out>/<pg|mariadb>_workload.sql                          (the exact SQL that produced them)
# Default out: tests/data/debezium_real. Then it stops everything it started (also on failure)
# and drops the replication slots it made.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/env.sh
source "$ROOT/scripts/env.sh"

TRANSACTIONS=40
INITIAL_ROWS=6
SEED=7
MAX_LINES=300
OUT="$ROOT/tests/data/debezium_real"
KPORT="${CAPTURE_KAFKA_PORT:-19192}"
while [[ $# -gt 0 ]]; do
    case "$1" in
        --transactions) TRANSACTIONS="$2"; shift 2 ;;
        --initial-rows) INITIAL_ROWS="$2"; shift 2 ;;
        --seed) SEED="$2"; shift 2 ;;
        --max-lines) MAX_LINES="$2"; shift 2 ;;
        --out) OUT="$2"; shift 2 ;;
        --kafka-port) KPORT="$2"; shift 2 ;;
        *) echo "capture-fixtures: unknown option '$1'" >&2; exit 2 ;;
    esac
done
export KAFKA_PORT="$KPORT"
BOOTSTRAP="127.0.0.1:$KPORT"
PY="$VENV/bin/python"
export PYTHONPATH="$ROOT/tests${PYTHONPATH:+:$PYTHONPATH}"
say() { printf 'capture-fixtures: %s\n' "$*" >&2; }

STARTED=()
cleanup() {
    local rc=$?
    set +e
    for db in pg mariadb; do
        for s in true false; do
            "$ROOT/scripts/debezium.sh" stop "$db" --schemas "$s" 2>/dev/null
        done
    done
    if [[ " ${STARTED[*]-} " == *" pg "* ]] || "$ROOT/scripts/postgres.sh" status >/dev/null 2>&1; then
        for slot in cdclake_pg_schemas cdclake_pg_noschemas; do
            "$ROOT/scripts/postgres.sh" psql -q -tAc \
                "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '$slot'" \
                >/dev/null 2>&1
        done
    fi
    for svc in "${STARTED[@]-}"; do
        case "$svc" in
            kafka) "$ROOT/scripts/kafka.sh" stop --port "$KPORT" ;;
            pg) "$ROOT/scripts/postgres.sh" stop ;;
            mariadb) "$ROOT/scripts/mariadb.sh" stop ;;
        esac
    done
    exit "$rc"
}
trap cleanup EXIT

say "installing (cached after the first run)"
"$ROOT/scripts/postgres.sh" install
"$ROOT/scripts/mariadb.sh" install
"$ROOT/scripts/kafka.sh" install
"$ROOT/scripts/debezium.sh" install

"$ROOT/scripts/kafka.sh" status --port "$KPORT" >/dev/null 2>&1 || STARTED+=(kafka)
"$ROOT/scripts/kafka.sh" start --port "$KPORT" --fresh
"$ROOT/scripts/postgres.sh" status >/dev/null 2>&1 || STARTED+=(pg)
"$ROOT/scripts/postgres.sh" start
"$ROOT/scripts/mariadb.sh" status >/dev/null 2>&1 || STARTED+=(mariadb)
"$ROOT/scripts/mariadb.sh" start

mkdir -p "$OUT"
for db in pg mariadb; do
    "$PY" -m conformance.workload setup --db "$db" --seed "$SEED" --initial-rows "$INITIAL_ROWS" \
        --save-sql "$OUT/${db}_workload.sql"
done
for db in pg mariadb; do
    for s in true false; do
        "$ROOT/scripts/debezium.sh" stop "$db" --schemas "$s"
        "$ROOT/scripts/debezium.sh" start "$db" --schemas "$s" --fresh --bootstrap "$BOOTSTRAP"
    done
done
for db in pg mariadb; do
    for s in true false; do
        "$ROOT/scripts/debezium.sh" wait-streaming "$db" --schemas "$s"
    done
done

for db in pg mariadb; do
    "$PY" -m conformance.workload stream --db "$db" --seed "$SEED" --initial-rows "$INITIAL_ROWS" \
        --transactions "$TRANSACTIONS" --save-sql "$OUT/${db}_workload.stream.sql"
    cat "$OUT/${db}_workload.stream.sql" >>"$OUT/${db}_workload.sql"
    rm -f "$OUT/${db}_workload.stream.sql"
done

args=()
for db in pg mariadb; do
    for tag in schemas noschemas; do
        args+=(--prefix "${db}_${tag}" --out "$OUT/${db}_${tag}")
    done
done
"$PY" -m conformance.capture --bootstrap "$BOOTSTRAP" --max-lines "$MAX_LINES" "${args[@]}"
say "fixtures written under $OUT"
