#!/usr/bin/env bash
# A throw-away PostgreSQL server (Debian's packages) for the Debezium conformance runs.
#
#   scripts/postgres.sh install   # apt-get the server (PostgreSQL 15 on Debian 12), once
#   scripts/postgres.sh start     # initdb if needed, start, wait until ready (no-op if running)
#   scripts/postgres.sh stop      # fast shutdown (no-op if not running)
#   scripts/postgres.sh status    # exit 0 and print "running" when up
#   scripts/postgres.sh psql ...  # psql as the workload user on the workload database
#
# Environment: PG_PORT (15432), CDCLAKE_CACHE (~/.cache/cdclake), PG_USER / PG_PASSWORD / PG_DB
# (cdclake / cdclake / cdclake). The server listens on 127.0.0.1 only (no Unix socket), with
# wal_level=logical, and owns a data directory of its own: ${CDCLAKE_CACHE}/pgdata-<port>.
# initdb and postgres refuse to run as root: as root the server runs as the `postgres` OS user, and
# if that user cannot reach ${CDCLAKE_CACHE} (e.g. it lies under a mode-700 /root) the data
# directory falls back to /var/tmp/cdclake/pgdata-<port>. A publication `cdclake_pub FOR ALL TABLES`
# is created for the pgoutput plugin, so the workload user needs no superuser rights.
set -euo pipefail

PG_PORT="${PG_PORT:-15432}"
PG_USER="${PG_USER:-cdclake}"
PG_PASSWORD="${PG_PASSWORD:-cdclake}"
PG_DB="${PG_DB:-cdclake}"
CACHE="${CDCLAKE_CACHE:-$HOME/.cache/cdclake}"

log() { echo "[postgres.sh] $*" >&2; }

pg_bindir() {
    local d
    d="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
    [[ -n "$d" && -x "$d/initdb" ]] || return 1
    echo "$d"
}

# Run a command as the server's OS user: ourselves, or `postgres` when we are root.
as_owner() {
    if [[ "$(id -u)" == 0 ]]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

data_dir() {
    local d="$CACHE/pgdata-$PG_PORT"
    if [[ "$(id -u)" == 0 ]]; then
        mkdir -p "$CACHE"
        if ! runuser -u postgres -- test -x "$CACHE" 2>/dev/null; then
            d="/var/tmp/cdclake/pgdata-$PG_PORT"
        fi
    fi
    echo "$d"
}

cmd_install() {
    if pg_bindir >/dev/null && command -v psql >/dev/null; then
        log "installed: $(pg_bindir)"
        return 0
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q postgresql postgresql-client
    log "installed: $(pg_bindir)"
}

is_running() {
    local bin dir
    bin="$(pg_bindir)" || return 1
    dir="$(data_dir)"
    [[ -f "$dir/PG_VERSION" ]] || return 1
    as_owner "$bin/pg_ctl" -D "$dir" status >/dev/null 2>&1
}

init_cluster() {
    local bin="$1" dir="$2" pwfile
    log "initdb $dir"
    mkdir -p "$(dirname "$dir")"
    mkdir -p "$dir"
    [[ "$(id -u)" == 0 ]] && chown postgres:postgres "$dir"
    chmod 700 "$dir"
    pwfile="$(mktemp)"
    echo "$PG_PASSWORD" >"$pwfile"
    chmod 644 "$pwfile"
    as_owner "$bin/initdb" -D "$dir" -U postgres --pwfile="$pwfile" -A scram-sha-256 \
        -E UTF8 --locale=C.UTF-8 >/dev/null
    rm -f "$pwfile"
    as_owner tee -a "$dir/postgresql.conf" >/dev/null <<EOF

# --- cdclake conformance settings ---
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = ''
wal_level = logical
max_replication_slots = 10
max_wal_senders = 10
max_connections = 50
shared_buffers = 64MB
timezone = 'UTC'
log_timezone = 'UTC'
fsync = off
synchronous_commit = off
full_page_writes = off
EOF
    as_owner tee "$dir/pg_hba.conf" >/dev/null <<EOF
# TYPE  DATABASE     USER  ADDRESS        METHOD
host    all          all   127.0.0.1/32   scram-sha-256
host    replication  all   127.0.0.1/32   scram-sha-256
EOF
}

# Superuser psql (the `postgres` role, password = PG_PASSWORD) on database $1.
su_psql() {
    local db="$1"
    shift
    PGPASSWORD="$PG_PASSWORD" psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PG_PORT" -U postgres -d "$db" "$@"
}

create_workload_role() {
    if [[ "$(su_psql postgres -tAc "SELECT 1 FROM pg_roles WHERE rolname = '$PG_USER'")" != 1 ]]; then
        su_psql postgres -c "CREATE ROLE \"$PG_USER\" LOGIN REPLICATION PASSWORD '$PG_PASSWORD'"
    fi
    if [[ "$(su_psql postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$PG_DB'")" != 1 ]]; then
        su_psql postgres -c "CREATE DATABASE \"$PG_DB\" OWNER \"$PG_USER\""
    fi
    if [[ "$(su_psql "$PG_DB" -tAc "SELECT 1 FROM pg_publication WHERE pubname = 'cdclake_pub'")" != 1 ]]; then
        su_psql "$PG_DB" -c "CREATE PUBLICATION cdclake_pub FOR ALL TABLES"
    fi
}

cmd_start() {
    local bin dir
    bin="$(pg_bindir)" || { log "PostgreSQL is not installed: run '$0 install' first"; exit 1; }
    dir="$(data_dir)"
    if is_running; then
        log "already running on 127.0.0.1:$PG_PORT ($dir)"
        return 0
    fi
    [[ -f "$dir/PG_VERSION" ]] || init_cluster "$bin" "$dir"
    as_owner "$bin/pg_ctl" -D "$dir" -l "$dir/server.log" -w -t 60 start >/dev/null \
        || { log "start failed; log follows"; tail -n 30 "$dir/server.log" >&2; exit 1; }
    for _ in $(seq 1 60); do
        if "$bin/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT"; then
            break
        fi
        sleep 0.5
    done
    "$bin/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" || { log "server not ready on port $PG_PORT"; exit 1; }
    create_workload_role
    log "running on 127.0.0.1:$PG_PORT, database $PG_DB, user $PG_USER ($dir)"
}

cmd_stop() {
    local bin dir
    bin="$(pg_bindir)" || return 0
    dir="$(data_dir)"
    if ! is_running; then
        log "not running"
        return 0
    fi
    as_owner "$bin/pg_ctl" -D "$dir" -m fast -w -t 60 stop >/dev/null
    log "stopped"
}

cmd_status() {
    if is_running; then
        echo "running 127.0.0.1:$PG_PORT $(data_dir)"
    else
        echo "stopped"
        return 1
    fi
}

case "${1:-}" in
    install) cmd_install ;;
    start) cmd_start ;;
    stop) cmd_stop ;;
    status) cmd_status ;;
    psql)
        shift
        PGPASSWORD="$PG_PASSWORD" exec psql -X -h 127.0.0.1 -p "$PG_PORT" -U "$PG_USER" -d "$PG_DB" "$@"
        ;;
    *)
        echo "usage: $0 install|start|stop|status|psql [args]" >&2
        exit 2
        ;;
esac
