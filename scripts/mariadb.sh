#!/usr/bin/env bash
# A throw-away MariaDB server (Debian's mariadb-server) for the Debezium conformance runs.
#
#   scripts/mariadb.sh install      # apt-get mariadb-server + client, once
#   scripts/mariadb.sh start        # mariadb-install-db if needed, start, wait (no-op if running)
#   scripts/mariadb.sh stop         # clean shutdown (no-op if not running)
#   scripts/mariadb.sh status       # exit 0 and print "running" when up
#   scripts/mariadb.sh client ...   # the mariadb client as the workload user on its database
#
# Environment: MARIADB_PORT (13306), CDCLAKE_CACHE (~/.cache/cdclake), MARIADB_USER /
# MARIADB_PASSWORD / MARIADB_DB (cdclake / cdclake / cdclake). Everything lives in
# ${CDCLAKE_CACHE}/mariadb-<port>/ (my.cnf, data/, binlogs, error log, socket). TCP on 127.0.0.1
# only; binlog in ROW format with binlog_row_image=FULL, server_id 184054, time zone UTC. The
# server runs as the invoking OS user (as root, with an explicit --user=root, which mariadbd
# accepts). The workload user has the replication grants Debezium's MariaDB connector needs.
set -euo pipefail

MARIADB_PORT="${MARIADB_PORT:-13306}"
MARIADB_USER="${MARIADB_USER:-cdclake}"
MARIADB_PASSWORD="${MARIADB_PASSWORD:-cdclake}"
MARIADB_DB="${MARIADB_DB:-cdclake}"
CACHE="${CDCLAKE_CACHE:-$HOME/.cache/cdclake}"
BASE="$CACHE/mariadb-$MARIADB_PORT"
CNF="$BASE/my.cnf"
SOCK="$BASE/mariadbd.sock"

log() { echo "[mariadb.sh] $*" >&2; }

cmd_install() {
    if command -v mariadbd >/dev/null 2>&1 || [[ -x /usr/sbin/mariadbd ]]; then
        if command -v mariadb >/dev/null 2>&1 && command -v mariadb-install-db >/dev/null 2>&1; then
            log "installed: $(/usr/sbin/mariadbd --version)"
            return 0
        fi
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q mariadb-server mariadb-client
    log "installed: $(/usr/sbin/mariadbd --version)"
}

admin() { mariadb-admin --no-defaults --socket="$SOCK" -uroot "$@"; }
root_sql() { mariadb --no-defaults --socket="$SOCK" -uroot "$@"; }

is_running() { [[ -S "$SOCK" ]] && admin ping >/dev/null 2>&1; }

write_cnf() {
    mkdir -p "$BASE/data"
    cat >"$CNF" <<EOF
[mariadbd]
user = $(id -un)
datadir = $BASE/data
socket = $SOCK
pid-file = $BASE/mariadbd.pid
log-error = $BASE/error.log
port = $MARIADB_PORT
bind-address = 127.0.0.1
skip-name-resolve
server_id = 184054
log_bin = $BASE/mariadb-bin
binlog_format = ROW
binlog_row_image = FULL
expire_logs_days = 2
default-time-zone = '+00:00'
character-set-server = utf8mb4
collation-server = utf8mb4_general_ci
innodb_buffer_pool_size = 64M
innodb_flush_log_at_trx_commit = 2
sync_binlog = 0
max_connections = 50
EOF
}

cmd_start() {
    command -v mariadb-install-db >/dev/null || { log "MariaDB is not installed: run '$0 install' first"; exit 1; }
    if is_running; then
        log "already running on 127.0.0.1:$MARIADB_PORT ($BASE)"
        return 0
    fi
    write_cnf
    if [[ ! -d "$BASE/data/mysql" ]]; then
        log "mariadb-install-db $BASE/data"
        mariadb-install-db --defaults-file="$CNF" --auth-root-authentication-method=normal \
            --skip-test-db >"$BASE/install-db.log" 2>&1 \
            || { log "mariadb-install-db failed"; tail -n 20 "$BASE/install-db.log" >&2; exit 1; }
    fi
    setsid nohup /usr/sbin/mariadbd --defaults-file="$CNF" >>"$BASE/stdout.log" 2>&1 </dev/null &
    for _ in $(seq 1 120); do
        is_running && break
        sleep 0.5
    done
    is_running || { log "server did not come up; error log follows"; tail -n 30 "$BASE/error.log" >&2; exit 1; }
    root_sql <<EOF
CREATE DATABASE IF NOT EXISTS \`$MARIADB_DB\`;
CREATE USER IF NOT EXISTS '$MARIADB_USER'@'127.0.0.1' IDENTIFIED BY '$MARIADB_PASSWORD';
CREATE USER IF NOT EXISTS '$MARIADB_USER'@'localhost' IDENTIFIED BY '$MARIADB_PASSWORD';
GRANT SELECT, RELOAD, SHOW DATABASES, LOCK TABLES, REPLICATION SLAVE, BINLOG MONITOR ON *.* TO '$MARIADB_USER'@'127.0.0.1', '$MARIADB_USER'@'localhost';
GRANT ALL PRIVILEGES ON \`$MARIADB_DB\`.* TO '$MARIADB_USER'@'127.0.0.1', '$MARIADB_USER'@'localhost';
FLUSH PRIVILEGES;
EOF
    log "running on 127.0.0.1:$MARIADB_PORT, database $MARIADB_DB, user $MARIADB_USER ($BASE)"
}

cmd_stop() {
    if ! is_running; then
        log "not running"
        return 0
    fi
    admin shutdown
    for _ in $(seq 1 60); do
        [[ -f "$BASE/mariadbd.pid" ]] || break
        sleep 0.5
    done
    log "stopped"
}

cmd_status() {
    if is_running; then
        echo "running 127.0.0.1:$MARIADB_PORT $BASE"
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
    client)
        shift
        exec mariadb --no-defaults -h 127.0.0.1 -P "$MARIADB_PORT" -u"$MARIADB_USER" -p"$MARIADB_PASSWORD" "$MARIADB_DB" "$@"
        ;;
    *)
        echo "usage: $0 install|start|stop|status|client [args]" >&2
        exit 2
        ;;
esac
