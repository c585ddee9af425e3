#!/usr/bin/env bash
# Kafka Connect standalone workers running the real Debezium connectors into the local broker.
#
#   scripts/debezium.sh install
#   scripts/debezium.sh start  <pg|mariadb> [--schemas true|false] [--topic-prefix P] [--fresh]
#                              [--bootstrap HOST:PORT] [--rest-port N] [--run-dir DIR]
#                              [--pg-schema NAME]
#   scripts/debezium.sh wait-streaming <pg|mariadb> [--schemas true|false] [--timeout S]
#   (start and wait-streaming give up after --timeout seconds, default $DEBEZIUM_START_TIMEOUT
#   or 300: a busy CI machine took over 120 s to bring a worker's task up)
#   scripts/debezium.sh stop   <pg|mariadb> [--schemas true|false]
#   scripts/debezium.sh status <pg|mariadb> [--schemas true|false]
#
# install resolves Kafka Connect (connect-runtime, version = the broker's Kafka) and the Debezium
# PostgreSQL and MariaDB connectors from Maven Central with scripts/debezium/pom.xml into
# ${CDCLAKE_CACHE}/debezium/<debezium version>/lib (cached: a second install does nothing).
#
# One worker per (database, schemas) pair, so both JsonConverter settings can run side by side:
#   run dir     ${CDCLAKE_CACHE}/debezium-runs/<db>-<schemas|noschemas>/ (worker + connector
#               properties, offsets.dat, schema-history.dat, connect.log, pid)
#   topic prefix <db>_<schemas|noschemas> (pg_schemas, mariadb_noschemas, ...)
#   REST        127.0.0.1:18083 pg/true, 18084 pg/false, 18085 mariadb/true, 18086 mariadb/false
# JsonConverter replace.null.with.default=false: by default Kafka Connect writes a column's DEFAULT
# in place of an explicit NULL (INSERT ... c_added = NULL into `c_added varchar DEFAULT 'dflt'`
# arrived as "dflt"), so the lake would hold a value the database does not.
# Connector settings: snapshot.mode=initial, heartbeats off, tombstones.on.delete=true,
# skipped.operations=none (so PostgreSQL TRUNCATE is emitted), provide.transaction.metadata=true
# (each event's `transaction.total_order` orders the events of one MariaDB transaction, which all
# share source.pos; BEGIN/END records go to <prefix>.transaction), MariaDB
# bigint.unsigned.handling.mode=precise (the default `long` wraps values >= 2^63 to negatives and
# the int64 schema does not say the column is unsigned), every other option at Debezium's
# default (decimal.handling.mode=precise, time.precision.mode=adaptive / adaptive_time_microseconds,
# binary.handling.mode=bytes, interval.handling.mode=numeric). PostgreSQL: pgoutput, publication cdclake_pub (made by
# scripts/postgres.sh), slot cdclake_<prefix>. MariaDB: file schema history in the run dir.
# --fresh deletes the run dir's offsets/history and drops the replication slot first, so the
# connector snapshots again.
#
# Environment: CDCLAKE_CACHE, KAFKA_PORT (19092) or KAFKA_BOOTSTRAP, PG_PORT/PG_USER/PG_PASSWORD/
# PG_DB, MARIADB_PORT/MARIADB_USER/MARIADB_PASSWORD/MARIADB_DB (the defaults of postgres.sh and
# mariadb.sh), DEBEZIUM_HEAP (384m).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${CDCLAKE_CACHE:-$HOME/.cache/cdclake}"
POM="$HERE/debezium/pom.xml"
DEBEZIUM_VERSION="$(sed -n 's:.*<debezium.version>\(.*\)</debezium.version>.*:\1:p' "$POM")"
KAFKA_VERSION="$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$POM")"
LIB="$CACHE/debezium/$DEBEZIUM_VERSION/lib"

log() { echo "[debezium.sh] $*" >&2; }
die() { log "$*"; exit 1; }

cmd_install() {
    if [[ -f "$LIB/.complete" ]]; then
        log "installed: Debezium $DEBEZIUM_VERSION on Kafka Connect $KAFKA_VERSION ($LIB)"
        return 0
    fi
    command -v mvn >/dev/null || die "mvn is not installed (apt-get install maven)"
    rm -rf "$LIB"
    mkdir -p "$LIB"
    mvn -B -q -f "$POM" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$LIB" \
        || die "could not resolve the jars of $POM from Maven Central"
    touch "$LIB/.complete"
    log "installed: Debezium $DEBEZIUM_VERSION on Kafka Connect $KAFKA_VERSION ($LIB)"
}

# ---- argument parsing shared by start/stop/status --------------------------------------------
DB=""
SCHEMAS="true"
TOPIC_PREFIX=""
FRESH=0
BOOTSTRAP="${KAFKA_BOOTSTRAP:-127.0.0.1:${KAFKA_PORT:-19092}}"
REST_PORT=""
RUN_DIR=""
TIMEOUT="${DEBEZIUM_START_TIMEOUT:-300}"
PG_SCHEMA="public"

parse_args() {
    DB="${1:-}"
    [[ "$DB" == pg || "$DB" == mariadb ]] || die "expected 'pg' or 'mariadb', got '${DB}'"
    shift
    while [[ $# -gt 0 ]]; do
        case "$1" in
            --schemas) SCHEMAS="$2"; shift 2 ;;
            --topic-prefix) TOPIC_PREFIX="$2"; shift 2 ;;
            --fresh) FRESH=1; shift ;;
            --bootstrap) BOOTSTRAP="$2"; shift 2 ;;
            --rest-port) REST_PORT="$2"; shift 2 ;;
            --run-dir) RUN_DIR="$2"; shift 2 ;;
            --timeout) TIMEOUT="$2"; shift 2 ;;
            --pg-schema) PG_SCHEMA="$2"; shift 2 ;;
            *) die "unknown option '$1'" ;;
        esac
    done
    [[ "$SCHEMAS" == true || "$SCHEMAS" == false ]] || die "--schemas expects true or false, got '$SCHEMAS'"
    local tag
    tag="$([[ "$SCHEMAS" == true ]] && echo schemas || echo noschemas)"
    TOPIC_PREFIX="${TOPIC_PREFIX:-${DB}_${tag}}"
    RUN_DIR="${RUN_DIR:-$CACHE/debezium-runs/$DB-$tag}"
    if [[ -z "$REST_PORT" ]]; then
        case "$DB-$SCHEMAS" in
            pg-true) REST_PORT=18083 ;;
            pg-false) REST_PORT=18084 ;;
            mariadb-true) REST_PORT=18085 ;;
            mariadb-false) REST_PORT=18086 ;;
        esac
    fi
    CONNECTOR_NAME="cdclake-$TOPIC_PREFIX"
}

write_worker_properties() {
    cat >"$RUN_DIR/worker.properties" <<EOF
bootstrap.servers=$BOOTSTRAP
key.converter=org.apache.kafka.connect.json.JsonConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
key.converter.schemas.enable=$SCHEMAS
value.converter.schemas.enable=$SCHEMAS
key.converter.replace.null.with.default=false
value.converter.replace.null.with.default=false
offset.storage.file.filename=$RUN_DIR/offsets.dat
offset.flush.interval.ms=1000
listeners=http://127.0.0.1:$REST_PORT
rest.advertised.host.name=127.0.0.1
rest.advertised.port=$REST_PORT
EOF
    cat >"$RUN_DIR/log4j2.properties" <<EOF
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = $RUN_DIR/connect.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c{1})%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
logger.reflections.name = org.reflections
logger.reflections.level = ERROR
EOF
}

slot_name() { echo "cdclake_${TOPIC_PREFIX}" | tr -c 'a-zA-Z0-9_\n' '_' | tr 'A-Z' 'a-z'; }

write_connector_properties() {
    local f="$RUN_DIR/connector.properties"
    cat >"$f" <<EOF
name=$CONNECTOR_NAME
tasks.max=1
topic.prefix=$TOPIC_PREFIX
snapshot.mode=initial
heartbeat.interval.ms=0
tombstones.on.delete=true
skipped.operations=none
provide.transaction.metadata=true
topic.creation.default.replication.factor=1
topic.creation.default.partitions=1
database.hostname=127.0.0.1
EOF
    if [[ "$DB" == pg ]]; then
        cat >>"$f" <<EOF
connector.class=io.debezium.connector.postgresql.PostgresConnector
plugin.name=pgoutput
database.port=${PG_PORT:-15432}
database.user=${PG_USER:-cdclake}
database.password=${PG_PASSWORD:-cdclake}
database.dbname=${PG_DB:-cdclake}
schema.include.list=$PG_SCHEMA
publication.name=cdclake_pub
publication.autocreate.mode=disabled
slot.name=$(slot_name)
EOF
    else
        local server_id=$((5400 + $(printf '%s' "$TOPIC_PREFIX" | cksum | cut -d' ' -f1) % 500))
        cat >>"$f" <<EOF
connector.class=io.debezium.connector.mariadb.MariaDbConnector
database.port=${MARIADB_PORT:-13306}
database.user=${MARIADB_USER:-cdclake}
database.password=${MARIADB_PASSWORD:-cdclake}
database.include.list=${MARIADB_DB:-cdclake}
database.server.id=$server_id
bigint.unsigned.handling.mode=precise
database.ssl.mode=disable
schema.history.internal=io.debezium.storage.file.history.FileSchemaHistory
schema.history.internal.file.filename=$RUN_DIR/schema-history.dat
EOF
    fi
}

pid_alive() { [[ -f "$RUN_DIR/pid" ]] && kill -0 "$(cat "$RUN_DIR/pid")" 2>/dev/null; }

connector_state() {
    curl -s -m 5 "http://127.0.0.1:$REST_PORT/connectors/$CONNECTOR_NAME/status" 2>/dev/null || true
}

drop_pg_slot() {
    local slot
    slot="$(slot_name)"
    PGPASSWORD="${PG_PASSWORD:-cdclake}" psql -X -q -h 127.0.0.1 -p "${PG_PORT:-15432}" -U postgres \
        -d "${PG_DB:-cdclake}" -tAc \
        "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '$slot'" \
        >/dev/null || log "could not drop replication slot $slot (is PostgreSQL running?)"
}

cmd_start() {
    parse_args "$@"
    [[ -f "$LIB/.complete" ]] || die "jars missing: run '$0 install' first"
    if pid_alive; then
        log "already running: $CONNECTOR_NAME (pid $(cat "$RUN_DIR/pid"), REST 127.0.0.1:$REST_PORT)"
        return 0
    fi
    if [[ "$FRESH" == 1 ]]; then
        rm -rf "$RUN_DIR"
        [[ "$DB" == pg ]] && drop_pg_slot
    fi
    mkdir -p "$RUN_DIR"
    write_worker_properties
    write_connector_properties
    log "starting $CONNECTOR_NAME -> $BOOTSTRAP (schemas=$SCHEMAS, run dir $RUN_DIR)"
    # Not a process-group leader here, so setsid execs in place and $! is the JVM's pid.
    setsid nohup java -Xmx"${DEBEZIUM_HEAP:-384m}" -XX:+UseSerialGC \
        -Dlog4j2.configurationFile="$RUN_DIR/log4j2.properties" \
        -cp "$LIB/*" org.apache.kafka.connect.cli.ConnectStandalone \
        "$RUN_DIR/worker.properties" "$RUN_DIR/connector.properties" \
        >"$RUN_DIR/stdout.log" 2>&1 </dev/null &
    echo $! >"$RUN_DIR/pid"
    local deadline=$((SECONDS + TIMEOUT)) st
    while ((SECONDS < deadline)); do
        pid_alive || { tail -n 40 "$RUN_DIR/stdout.log" "$RUN_DIR/connect.log" >&2 || true; die "worker exited"; }
        st="$(connector_state)"
        if [[ "$st" == *'"tasks":[{"id":0,"state":"RUNNING"'* ]]; then
            log "running: $CONNECTOR_NAME (pid $(cat "$RUN_DIR/pid"))"
            return 0
        fi
        if [[ "$st" == *FAILED* ]]; then
            echo "$st" >&2
            die "connector $CONNECTOR_NAME failed (see $RUN_DIR/connect.log)"
        fi
        sleep 1
    done
    die "connector $CONNECTOR_NAME not running after ${TIMEOUT}s (see $RUN_DIR/connect.log)"
}

# Streaming has begun once the snapshot is over and the coordinator logged the switch.
cmd_wait_streaming() {
    parse_args "$@"
    local deadline=$((SECONDS + TIMEOUT))
    while ((SECONDS < deadline)); do
        pid_alive || die "worker $CONNECTOR_NAME is not running"
        if grep -q "Starting streaming" "$RUN_DIR/connect.log" 2>/dev/null; then
            log "streaming: $CONNECTOR_NAME"
            return 0
        fi
        sleep 1
    done
    die "$CONNECTOR_NAME did not start streaming within ${TIMEOUT}s (see $RUN_DIR/connect.log)"
}

cmd_stop() {
    parse_args "$@"
    if ! pid_alive; then
        log "not running: $CONNECTOR_NAME"
        rm -f "$RUN_DIR/pid"
        return 0
    fi
    local pid
    pid="$(cat "$RUN_DIR/pid")"
    kill -TERM "$pid"
    for _ in $(seq 1 60); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.5
    done
    if kill -0 "$pid" 2>/dev/null; then
        log "worker $pid ignored TERM for 30 s: killing it"
        kill -KILL "$pid"
    fi
    rm -f "$RUN_DIR/pid"
    log "stopped: $CONNECTOR_NAME"
}

cmd_status() {
    parse_args "$@"
    if pid_alive; then
        echo "running $CONNECTOR_NAME pid $(cat "$RUN_DIR/pid") $(connector_state)"
    else
        echo "stopped $CONNECTOR_NAME"
        return 1
    fi
}

case "${1:-}" in
    install) cmd_install ;;
    start) shift; cmd_start "$@" ;;
    wait-streaming) shift; cmd_wait_streaming "$@" ;;
    stop) shift; cmd_stop "$@" ;;
    status) shift; cmd_status "$@" ;;
    *)
        echo "usage: $0 install | start|stop|status|wait-streaming <pg|mariadb> [--schemas true|false] [options]" >&2
        exit 2
        ;;
esac
