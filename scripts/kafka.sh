#!/usr/bin/env bash
# A real single-node Apache Kafka broker (KRaft, combined broker+controller) for tests and demos.
#
#   scripts/kafka.sh install                 fetch the broker jars from Maven Central (cached)
#   scripts/kafka.sh start [--port N] [--fresh]
#                                            start on 127.0.0.1:N (default $KAFKA_PORT or 19092);
#                                            --fresh wipes the data dir first; starting a running
#                                            broker again does nothing (with --fresh too)
#   scripts/kafka.sh stop [--port N]         stop it and wait until it has exited
#   scripts/kafka.sh status [--port N]       exit 0 when running, 3 when not
#
# Environment: KAFKA_VERSION (default 4.1.1), KAFKA_PORT, KAFKA_DATA (data dir, default
# $CDCLAKE_CACHE/kafka-data/<port>), KAFKA_HEAP (default 512m), MAVEN_CENTRAL (the repository
# checked with curl before mvn runs), KAFKA_START_TIMEOUT (seconds, default 60).
# Jars go to $CDCLAKE_CACHE/kafka/<version>/libs; the data dir holds the KRaft log, the generated
# server.properties, logs/server.log, kafka.out (the JVM's stdout/stderr) and kafka.pid.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/env.sh
source "$ROOT/scripts/env.sh"

KAFKA_VERSION="${KAFKA_VERSION:-4.1.1}"
MAVEN_CENTRAL="${MAVEN_CENTRAL:-https://repo.maven.apache.org/maven2}"
INSTALL_DIR="$CDCLAKE_CACHE/kafka/$KAFKA_VERSION"
LIBS="$INSTALL_DIR/libs"
HEAP="${KAFKA_HEAP:-512m}"
START_TIMEOUT="${KAFKA_START_TIMEOUT:-180}"

say() { printf 'kafka: %s\n' "$*"; }
die() { printf 'kafka: error: %s\n' "$*" >&2; exit 1; }
usage() { sed -n '4,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

# --- arguments ---------------------------------------------------------------------------------
[ $# -ge 1 ] || usage
command="$1"; shift
PORT="${KAFKA_PORT:-19092}"
FRESH=0
while [ $# -gt 0 ]; do
  case "$1" in
    --port) [ $# -ge 2 ] || die "--port needs a value"; PORT="$2"; shift 2 ;;
    --port=*) PORT="${1#--port=}"; shift ;;
    --fresh) FRESH=1; shift ;;
    -h|--help) usage ;;
    *) die "unknown argument '$1'; expected --port N or --fresh" ;;
  esac
done
if ! [[ "$PORT" =~ ^[0-9]+$ ]] || [ "$PORT" -lt 1 ] || [ "$PORT" -gt 65535 ]; then
  die "port '$PORT' is not a TCP port number (1-65535)"
fi
DATA="${KAFKA_DATA:-$CDCLAKE_CACHE/kafka-data/$PORT}"
PIDFILE="$DATA/kafka.pid"

# --- helpers -----------------------------------------------------------------------------------
installed() { [ -f "$INSTALL_DIR/.installed" ]; }

# The pid in the pid file, if that process is alive and is a Kafka broker (pids get reused).
running_pid() {
  [ -f "$PIDFILE" ] || return 1
  local pid; pid="$(cat "$PIDFILE")"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  alive "$pid" || return 1
  tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -qF "kafka.Kafka $DATA/server.properties" \
    || return 1
  echo "$pid"
}

# kill -0 also succeeds on a zombie (a broker that died while this shell is its parent).
alive() {
  local state
  state="$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)" || return 1
  [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

log_tail() {
  local f
  for f in "$DATA/logs/server.log" "$DATA/kafka.out"; do
    if [ -s "$f" ]; then printf -- '--- last lines of %s ---\n' "$f" >&2; tail -n 30 "$f" >&2; fi
  done
}

java_cp() { java -Xmx"$1" -cp "$LIBS/*" "${@:2}"; }

# --- install -----------------------------------------------------------------------------------
do_install() {
  if installed; then say "Kafka $KAFKA_VERSION already installed ($LIBS)"; return; fi
  command -v mvn >/dev/null 2>&1 || die "mvn not found on PATH; it fetches the Kafka jars"
  command -v curl >/dev/null 2>&1 || die "curl not found on PATH"
  local artifact url
  # The Maven Central here can be a partial mirror: fail early and by name on a missing jar.
  for artifact in kafka_2.13 kafka-server kafka-tools kafka-clients; do
    url="$MAVEN_CENTRAL/org/apache/kafka/$artifact/$KAFKA_VERSION/$artifact-$KAFKA_VERSION.jar"
    curl -sfI --max-time 30 "$url" >/dev/null \
      || die "$url is not available; expected the jars of Kafka $KAFKA_VERSION (set KAFKA_VERSION to one that $MAVEN_CENTRAL serves)"
  done
  say "fetching Kafka $KAFKA_VERSION jars from Maven Central into $LIBS"
  mkdir -p "$INSTALL_DIR"
  local tmp="$INSTALL_DIR/libs.tmp.$$"
  rm -rf "$tmp"
  if ! mvn -q -B -f "$ROOT/scripts/kafka/pom.xml" dependency:copy-dependencies \
      -Dkafka.version="$KAFKA_VERSION" -DincludeScope=runtime -DoutputDirectory="$tmp" \
      >"$INSTALL_DIR/mvn.log" 2>&1; then
    tail -n 30 "$INSTALL_DIR/mvn.log" >&2
    rm -rf "$tmp"
    die "mvn could not fetch the Kafka $KAFKA_VERSION jars; full output in $INSTALL_DIR/mvn.log"
  fi
  rm -rf "$LIBS"
  mv "$tmp" "$LIBS"
  touch "$INSTALL_DIR/.installed"
  say "installed Kafka $KAFKA_VERSION ($(find "$LIBS" -name '*.jar' | wc -l) jars)"
}

# --- start -------------------------------------------------------------------------------------
write_config() {
  local controller_port="$1"
  cat > "$DATA/server.properties" <<EOF
# Written by scripts/kafka.sh start: one node that is both broker and KRaft controller.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$controller_port
listeners=PLAINTEXT://127.0.0.1:$PORT,CONTROLLER://127.0.0.1:$controller_port
advertised.listeners=PLAINTEXT://127.0.0.1:$PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$DATA/kraft-logs
auto.create.topics.enable=true
num.partitions=1
default.replication.factor=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
EOF
  cat > "$DATA/log4j2.properties" <<EOF
# Written by scripts/kafka.sh start: INFO to logs/server.log, warnings also to kafka.out.
status = warn
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = $DATA/logs/server.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
appender.out.type = Console
appender.out.name = OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
appender.out.filter.threshold.type = ThresholdFilter
appender.out.filter.threshold.level = warn
rootLogger.level = info
rootLogger.appenderRef.file.ref = FILE
rootLogger.appenderRef.out.ref = OUT
logger.kafka.name = kafka
logger.kafka.level = info
logger.request.name = kafka.request.logger
logger.request.level = warn
EOF
}

# A client listing topics is the readiness test (the port opens before the broker serves).
wait_ready() {
  local pid="$1" deadline=$((SECONDS + START_TIMEOUT))
  while [ "$SECONDS" -lt "$deadline" ]; do
    if ! alive "$pid"; then
      log_tail
      rm -f "$PIDFILE"
      die "the broker exited during start-up (port $PORT, data $DATA)"
    fi
    if port_open "$PORT" && timeout 20 java -Xmx128m -cp "$LIBS/*" \
        -Dlog4j2.configurationFile="$DATA/log4j2-client.properties" \
        org.apache.kafka.tools.TopicCommand --bootstrap-server "127.0.0.1:$PORT" --list \
        >/dev/null 2>&1; then
      return 0
    fi
    sleep 1
  done
  log_tail
  die "the broker did not answer a topic listing on 127.0.0.1:$PORT within ${START_TIMEOUT}s (pid $pid still running; stop it with: $0 stop --port $PORT)"
}

do_start() {
  local pid
  # A running broker is never restarted or wiped here: it may be someone else's.
  if pid="$(running_pid)"; then
    if [ "$FRESH" = 1 ]; then
      say "already running (pid $pid) on 127.0.0.1:$PORT; --fresh ignored (stop it first to wipe its data)"
    else
      say "already running (pid $pid) on 127.0.0.1:$PORT"
    fi
    return
  fi
  installed || do_install
  if port_open "$PORT"; then
    die "port $PORT on 127.0.0.1 is in use by another process; choose another with --port N"
  fi
  if [ "$FRESH" = 1 ] && [ -d "$DATA" ]; then
    # Only a data dir this script made (or an empty one) is wiped: KAFKA_DATA could be mistyped.
    if [ -n "$(ls -A "$DATA")" ] && [ ! -e "$DATA/server.properties" ] && [ ! -e "$DATA/kraft-logs" ]; then
      die "refusing to wipe $DATA: it is not a data dir made by kafka.sh (no server.properties or kraft-logs)"
    fi
    say "wiping $DATA"
    rm -rf "$DATA"
  fi
  mkdir -p "$DATA/logs"

  # The controller listener needs a second port; keep the one from last time when it is free.
  local controller_port=""
  [ -f "$DATA/controller.port" ] && controller_port="$(cat "$DATA/controller.port")"
  if [ -z "$controller_port" ] || [ "$controller_port" = "$PORT" ] || port_open "$controller_port"; then
    controller_port="$(free_port)"
  fi
  echo "$controller_port" > "$DATA/controller.port"
  write_config "$controller_port"
  printf 'rootLogger.level = error\n' > "$DATA/log4j2-client.properties"

  if [ ! -f "$DATA/kraft-logs/meta.properties" ]; then
    # A random UUID in URL-safe base64, as Kafka's own `random-uuid` makes it, and like it never
    # starting with "-": the storage tool would read such an id as an option (1 start in 64).
    local cluster_id
    cluster_id="$(python3 -c '
import base64, uuid
while (cid := base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")).startswith("-"):
    pass
print(cid)')"
    if ! java_cp 256m -Dlog4j2.configurationFile="$DATA/log4j2-client.properties" \
        kafka.tools.StorageTool format -t "$cluster_id" -c "$DATA/server.properties" \
        >"$DATA/format.out" 2>&1; then
      cat "$DATA/format.out" >&2
      die "formatting the storage dir $DATA/kraft-logs failed"
    fi
    say "formatted $DATA/kraft-logs (cluster $cluster_id)"
  fi

  say "starting Kafka $KAFKA_VERSION on 127.0.0.1:$PORT (data $DATA)"
  nohup java -Xmx"$HEAP" -Xms128m -XX:+UseG1GC -Djava.awt.headless=true \
    -Dkafka.logs.dir="$DATA/logs" -Dlog4j2.configurationFile="$DATA/log4j2.properties" \
    -cp "$LIBS/*" kafka.Kafka "$DATA/server.properties" \
    >"$DATA/kafka.out" 2>&1 </dev/null &
  pid=$!
  echo "$pid" > "$PIDFILE"
  wait_ready "$pid"
  say "ready: bootstrap 127.0.0.1:$PORT (pid $pid)"
}

# --- stop / status -----------------------------------------------------------------------------
do_stop() {
  local pid
  if ! pid="$(running_pid)"; then
    rm -f "$PIDFILE"
    say "not running on 127.0.0.1:$PORT"
    return
  fi
  say "stopping pid $pid"
  kill -TERM "$pid"
  local deadline=$((SECONDS + 30))
  while alive "$pid" && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done
  if alive "$pid"; then
    say "pid $pid did not exit within 30 s of SIGTERM; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    while alive "$pid"; do sleep 0.2; done
  fi
  rm -f "$PIDFILE"
  say "stopped"
}

do_status() {
  local pid
  if pid="$(running_pid)"; then
    say "running (pid $pid) on 127.0.0.1:$PORT, Kafka $KAFKA_VERSION, data $DATA"
  else
    say "not running on 127.0.0.1:$PORT (data $DATA)"
    exit 3
  fi
}

case "$command" in
  install) do_install ;;
  start) do_start ;;
  stop) do_stop ;;
  status) do_status ;;
  -h|--help|help) usage ;;
  *) printf 'kafka: error: unknown command %s\n' "'$command'" >&2; usage ;;
esac
