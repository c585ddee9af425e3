#!/usr/bin/env bash
# A Spark standalone cluster on this machine, from the pinned pyspark: one master and N workers.
#
#   scripts/spark-cluster.sh start [--port N] [--workers N]
#                                  master on spark://127.0.0.1:N (default $SPARK_MASTER_PORT or
#                                  7077), N workers (default 2) of 1 core and 2 GiB each; starting
#                                  a running cluster again does nothing
#   scripts/spark-cluster.sh stop [--port N]     stop the workers and the master, wait for exit
#   scripts/spark-cluster.sh status [--port N]   exit 0 when the master runs, 3 when not
#
# Environment: SPARK_MASTER_PORT, SPARK_WORKER_CORES (default 1), SPARK_WORKER_MEMORY (default
# 2g), SPARK_CLUSTER_DIR (default $CDCLAKE_CACHE/spark-cluster/<port>), SPARK_START_TIMEOUT
# (seconds, default 60). The cluster dir holds master.pid, worker-<i>.pid, the daemons' logs
# (master.out, worker-<i>.out) and the workers' work dirs (executor logs: work-<i>/app-*/*/stderr).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/env.sh
source "$ROOT/scripts/env.sh"

CORES="${SPARK_WORKER_CORES:-1}"
MEMORY="${SPARK_WORKER_MEMORY:-2g}"
START_TIMEOUT="${SPARK_START_TIMEOUT:-180}"

say() { printf 'spark-cluster: %s\n' "$*"; }
die() { printf 'spark-cluster: error: %s\n' "$*" >&2; exit 1; }
usage() { sed -n '4,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

# --- arguments ---------------------------------------------------------------------------------
[ $# -ge 1 ] || usage
command="$1"; shift
PORT="${SPARK_MASTER_PORT:-7077}"
WORKERS=2
while [ $# -gt 0 ]; do
  case "$1" in
    --port) [ $# -ge 2 ] || die "--port needs a value"; PORT="$2"; shift 2 ;;
    --port=*) PORT="${1#--port=}"; shift ;;
    --workers) [ $# -ge 2 ] || die "--workers needs a value"; WORKERS="$2"; shift 2 ;;
    --workers=*) WORKERS="${1#--workers=}"; shift ;;
    -h|--help) usage ;;
    *) die "unknown argument '$1'; expected --port N or --workers N" ;;
  esac
done
if ! [[ "$PORT" =~ ^[0-9]+$ ]] || [ "$PORT" -lt 1 ] || [ "$PORT" -gt 65535 ]; then
  die "port '$PORT' is not a TCP port number (1-65535)"
fi
[[ "$WORKERS" =~ ^[1-9][0-9]*$ ]] || die "--workers '$WORKERS' is not a positive whole number"
DIR="${SPARK_CLUSTER_DIR:-$CDCLAKE_CACHE/spark-cluster/$PORT}"
MASTER_URL="spark://127.0.0.1:$PORT"

# --- helpers -----------------------------------------------------------------------------------
spark_home() {
  "$VENV/bin/python" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))' 2>/dev/null \
    || die "pyspark is not installed in $VENV; run scripts/bootstrap.sh first"
}

# kill -0 also succeeds on a zombie (a daemon that died while this shell is its parent).
alive() {
  local state
  state="$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)" || return 1
  [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

# The pid in a pid file, if that process is alive and is this cluster's daemon (pids get reused).
running_pid() {
  local file="$DIR/$1.pid" pattern="$2" pid
  [ -f "$file" ] || return 1
  pid="$(cat "$file")"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  alive "$pid" || return 1
  tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$pattern" || return 1
  echo "$pid"
}
master_pid() { running_pid master "deploy.master.Master --host 127.0.0.1 --port $PORT"; }
worker_pid() { running_pid "worker-$1" "deploy.worker.Worker $MASTER_URL"; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Daemons share one launcher: no REST submission server (its fixed port 6066 would clash between
# clusters), web UIs on free ports, heap of the daemon itself kept small.
daemon() {
  local name="$1"; shift
  SPARK_HOME="$SPARK_HOME" SPARK_LOG_DIR="$DIR" SPARK_DAEMON_MEMORY=256m SPARK_LOCAL_IP=127.0.0.1 \
    SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false" \
    nohup "$SPARK_HOME/bin/spark-class" "$@" >"$DIR/$name.out" 2>&1 </dev/null &
  echo $! > "$DIR/$name.pid"
}

wait_log() {
  local name="$1" pattern="$2" pid="$3" deadline=$((SECONDS + START_TIMEOUT))
  while [ "$SECONDS" -lt "$deadline" ]; do
    grep -qF -- "$pattern" "$DIR/$name.out" 2>/dev/null && return 0
    if ! alive "$pid"; then
      tail -n 30 "$DIR/$name.out" >&2 || true
      die "the $name exited during start-up (log $DIR/$name.out)"
    fi
    sleep 0.5
  done
  tail -n 30 "$DIR/$name.out" >&2 || true
  die "the $name did not log '$pattern' within ${START_TIMEOUT}s (log $DIR/$name.out)"
}

# --- start / stop / status ---------------------------------------------------------------------
do_start() {
  SPARK_HOME="$(spark_home)"
  mkdir -p "$DIR"
  local pid
  if pid="$(master_pid)"; then
    say "master already running (pid $pid) at $MASTER_URL"
  else
    port_open "$PORT" && die "port $PORT on 127.0.0.1 is in use by another process; choose another with --port N"
    daemon master org.apache.spark.deploy.master.Master --host 127.0.0.1 --port "$PORT" --webui-port 0
    pid="$(cat "$DIR/master.pid")"
    wait_log master "I have been elected leader" "$pid"
    say "master started (pid $pid) at $MASTER_URL"
  fi
  local i
  for i in $(seq 1 "$WORKERS"); do
    if pid="$(worker_pid "$i")"; then
      say "worker $i already running (pid $pid)"
      continue
    fi
    mkdir -p "$DIR/work-$i"
    daemon "worker-$i" org.apache.spark.deploy.worker.Worker "$MASTER_URL" --host 127.0.0.1 \
      --cores "$CORES" --memory "$MEMORY" --webui-port 0 --work-dir "$DIR/work-$i"
    pid="$(cat "$DIR/worker-$i.pid")"
    wait_log "worker-$i" "Successfully registered with master" "$pid"
    say "worker $i started (pid $pid, $CORES core(s), $MEMORY)"
  done
  say "ready: $MASTER_URL with $WORKERS worker(s) (logs in $DIR)"
}

stop_one() {
  local name="$1" pid="$2"
  kill -TERM "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + 30))
  while alive "$pid" && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done
  if alive "$pid"; then
    say "$name (pid $pid) did not exit within 30 s of SIGTERM; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    while alive "$pid"; do sleep 0.2; done
  fi
  rm -f "$DIR/$name.pid"
  say "stopped $name (pid $pid)"
}

do_stop() {
  local f name i pid stopped=0
  for f in "$DIR"/worker-*.pid; do
    [ -e "$f" ] || continue
    name="$(basename "$f" .pid)"; i="${name#worker-}"
    if pid="$(worker_pid "$i")"; then stop_one "$name" "$pid"; stopped=1; else rm -f "$f"; fi
  done
  if pid="$(master_pid)"; then stop_one master "$pid"; stopped=1; else rm -f "$DIR/master.pid"; fi
  [ "$stopped" = 1 ] || say "not running at $MASTER_URL"
}

do_status() {
  local pid f name i
  if ! pid="$(master_pid)"; then
    say "not running at $MASTER_URL (dir $DIR)"
    exit 3
  fi
  say "master running (pid $pid) at $MASTER_URL, dir $DIR"
  for f in "$DIR"/worker-*.pid; do
    [ -e "$f" ] || continue
    name="$(basename "$f" .pid)"; i="${name#worker-}"
    if pid="$(worker_pid "$i")"; then say "worker $i running (pid $pid)"; else say "worker $i not running"; fi
  done
}

case "$command" in
  start) do_start ;;
  stop) do_stop ;;
  status) do_status ;;
  -h|--help|help) usage ;;
  *) printf 'spark-cluster: error: unknown command %s\n' "'$command'" >&2; usage ;;
esac
