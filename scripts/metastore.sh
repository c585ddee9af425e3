#!/usr/bin/env bash
# A Hive metastore in PostgreSQL shared by Spark applications, and Spark's Thrift JDBC server on
# it, so that BI tools (beeline here) query cdclake's tables by name.
#
#   scripts/metastore.sh conf DIR [--base FILE] [--warehouse PATH] [--fresh]
#                               start the project's PostgreSQL (scripts/postgres.sh), create the
#                               metastore database and its schema if missing, fetch the JDBC
#                               driver once, and write DIR/hive-site.xml and DIR/spark-defaults.conf:
#                               every pyspark, spark-submit or cdclake run with SPARK_CONF_DIR=DIR
#                               uses that metastore. --base FILE: a spark-defaults.conf whose
#                               settings come first; --warehouse: spark.sql.warehouse.dir (default
#                               DIR/warehouse); --fresh: drop the metastore database first
#   scripts/metastore.sh drop   drop the metastore database (forgets every table, deletes no data)
#   scripts/metastore.sh thrift start|stop|status [--port N]
#                               Spark's Thrift JDBC/ODBC server on 127.0.0.1:N (default
#                               $THRIFT_PORT or 20000) with Delta Lake, on the metastore of
#                               $SPARK_CONF_DIR; start waits until it answers (exit 0 when it
#                               does), stop until it exits; status exits 3 when it is not running
#   scripts/metastore.sh beeline [--port N] [BEELINE ARGS]
#                               pyspark's beeline, connected to that server, e.g.
#                               --outputformat=csv2 -e 'SHOW TABLES IN shop' (csv2 output is
#                               quoted as CSV)
#
# Environment: PG_PORT / PG_USER / PG_PASSWORD as for scripts/postgres.sh (15432 / cdclake /
# cdclake; the superuser `postgres` has PG_PASSWORD too), METASTORE_DB (database, default
# metastore), THRIFT_PORT, THRIFT_MEMORY (driver memory, default 1g), THRIFT_START_TIMEOUT
# (seconds, default 120), THRIFT_DIR (the server's folder, default $CDCLAKE_CACHE/thrift/<port>),
# SPARK_CONF_DIR (read by the Thrift server), CDCLAKE_CACHE. The JDBC driver goes to
# $CDCLAKE_CACHE/jars/. THRIFT_DIR holds the server's pid file, its log (thrift.log) and Hive's
# scratch and operation logs; it is also the server's working directory.
#
# Applications at the same time: `conf` creates every table of the metastore at once, with
# DataNucleus' SchemaTool (the object-relational mapper of Hive's metastore, shipped with
# pyspark), and the rows DataNucleus numbers new objects from. Spark would otherwise create them
# one by one on first use (datanucleus.schema.autoCreateAll), and two applications doing that at
# the same moment would both run the same CREATE TABLE or INSERT, and one of them would fail.
# After `conf` any number of applications may start together; Hive retries its own first rows
# (the default database, the admin and public roles) when another application wrote them first.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/env.sh
source "$ROOT/scripts/env.sh"

PG_PORT="${PG_PORT:-15432}"
PG_USER="${PG_USER:-cdclake}"
PG_PASSWORD="${PG_PASSWORD:-cdclake}"
METASTORE_DB="${METASTORE_DB:-metastore}"
PG_JDBC_VERSION=42.7.14
PG_JDBC_SHA1=0e7c94ce80cb1dd9875ff44ffe6a40a8aaa3eefd
MAVEN_CENTRAL="${MAVEN_CENTRAL:-https://repo1.maven.org/maven2}"
PG_JDBC_JAR="$CDCLAKE_CACHE/jars/postgresql-$PG_JDBC_VERSION.jar"
# What Hive 2.3's own schema scripts record; Spark's built-in metastore client is Hive 2.3.
HIVE_SCHEMA_VERSION=2.3.0
THRIFT_MEMORY="${THRIFT_MEMORY:-1g}"
START_TIMEOUT="${THRIFT_START_TIMEOUT:-300}"

say() { printf 'metastore: %s\n' "$*" >&2; }
die() { printf 'metastore: error: %s\n' "$*" >&2; exit 1; }
usage() { sed -n '5,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

[[ "$METASTORE_DB" =~ ^[a-z_][a-z0-9_]*$ ]] \
  || die "METASTORE_DB '$METASTORE_DB' is not a plain PostgreSQL name (a-z, 0-9, _)"

spark_home() {
  "$VENV/bin/python" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))' 2>/dev/null \
    || die "pyspark is not installed in $VENV; run scripts/bootstrap.sh first"
}

port_arg() {
  if ! [[ "$1" =~ ^[0-9]+$ ]] || [ "$1" -lt 1 ] || [ "$1" -gt 65535 ]; then
    die "port '$1' is not a TCP port number (1-65535)"
  fi
  echo "$1"
}

# --- PostgreSQL --------------------------------------------------------------------------------
# psql as the superuser on database $1 (postgres.sh gives `postgres` the password PG_PASSWORD).
su_psql() {
  local db="$1"; shift
  PGPASSWORD="$PG_PASSWORD" psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PG_PORT" -U postgres \
    -d "$db" "$@"
}

db_exists() {
  [ "$(su_psql postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$METASTORE_DB'")" = 1 ]
}

drop_db() {
  if db_exists; then
    su_psql postgres -c "DROP DATABASE \"$METASTORE_DB\" WITH (FORCE)"
    say "dropped database $METASTORE_DB"
  fi
}

fetch_driver() {
  [ -f "$PG_JDBC_JAR" ] && return
  local url="$MAVEN_CENTRAL/org/postgresql/postgresql/$PG_JDBC_VERSION/postgresql-$PG_JDBC_VERSION.jar"
  say "fetching $url"
  mkdir -p "$(dirname "$PG_JDBC_JAR")"
  curl -sfL --max-time 300 -o "$PG_JDBC_JAR.part.$$" "$url" \
    || { rm -f "$PG_JDBC_JAR.part.$$"; die "could not download $url"; }
  if [ "$(sha1sum "$PG_JDBC_JAR.part.$$" | cut -d' ' -f1)" != "$PG_JDBC_SHA1" ]; then
    rm -f "$PG_JDBC_JAR.part.$$"
    die "$url does not have the SHA-1 $PG_JDBC_SHA1 of PostgreSQL's JDBC driver $PG_JDBC_VERSION"
  fi
  mv "$PG_JDBC_JAR.part.$$" "$PG_JDBC_JAR"
}

# Every table of Hive's package.jdo (the mapping inside hive-metastore.jar), created in one go,
# named as Hive's metastore names them (its identifier factory is datanucleus1), and the
# schema version row that Hive's own schema scripts insert.
create_schema() {
  local jars tmp
  jars="$(spark_home)/jars"
  tmp="$(mktemp -d)"
  # shellcheck disable=SC2064
  trap "rm -rf '$tmp'" RETURN
  (cd "$tmp" && unzip -q "$(ls "$jars"/hive-metastore-*.jar)" package.jdo)
  cat >"$tmp/datanucleus.properties" <<EOF
javax.jdo.option.ConnectionURL=jdbc:postgresql://127.0.0.1:$PG_PORT/$METASTORE_DB
javax.jdo.option.ConnectionDriverName=org.postgresql.Driver
javax.jdo.option.ConnectionUserName=$PG_USER
javax.jdo.option.ConnectionPassword=$PG_PASSWORD
datanucleus.identifierFactory=datanucleus1
datanucleus.rdbms.useLegacyNativeValueStrategy=true
datanucleus.storeManagerType=rdbms
datanucleus.plugin.pluginRegistryBundleCheck=LOG
EOF
  say "creating the metastore schema in database $METASTORE_DB"
  if ! java -Xmx256m -cp "$jars/*:$PG_JDBC_JAR" org.datanucleus.store.schema.SchemaTool \
      -create -api JDO -props "$tmp/datanucleus.properties" "$tmp/package.jdo" \
      >"$tmp/schematool.log" 2>&1; then
    tail -n 30 "$tmp/schematool.log" >&2
    die "DataNucleus SchemaTool could not create the metastore schema in $METASTORE_DB"
  fi
  # DataNucleus numbers the rows of each class from a row of SEQUENCE_TABLE, which it creates
  # (table and rows) on the first insert: first inserts at the same moment would clash too.
  local classes sql
  classes="$(grep -o '<class name="M[A-Za-z]*"[^>]*>' "$tmp/package.jdo" \
    | grep -v -e 'identity-type="application"' -e 'embedded-only="true"' \
    | sed 's/^<class name="\([A-Za-z]*\)".*/\1/')"
  sql='CREATE TABLE "SEQUENCE_TABLE" ("SEQUENCE_NAME" varchar(255) NOT NULL, "NEXT_VAL" bigint NOT NULL,
         CONSTRAINT "SEQUENCE_TABLE_PK" PRIMARY KEY ("SEQUENCE_NAME"));'
  for class in $classes; do
    # the version row below takes number 1
    sql+="INSERT INTO \"SEQUENCE_TABLE\" VALUES ('org.apache.hadoop.hive.metastore.model.$class',
          $([ "$class" = MVersionTable ] && echo 2 || echo 1));"
  done
  sql+="INSERT INTO \"VERSION\" (\"VER_ID\", \"SCHEMA_VERSION\", \"VERSION_COMMENT\")
        VALUES (1, '$HIVE_SCHEMA_VERSION', 'Hive release version $HIVE_SCHEMA_VERSION');"
  PGPASSWORD="$PG_PASSWORD" psql -X -q -v ON_ERROR_STOP=1 -1 -h 127.0.0.1 -p "$PG_PORT" \
    -U "$PG_USER" -d "$METASTORE_DB" -c "$sql"
}

schema_exists() {
  [ "$(PGPASSWORD="$PG_PASSWORD" psql -X -h 127.0.0.1 -p "$PG_PORT" -U "$PG_USER" \
      -d "$METASTORE_DB" -tAc "SELECT count(*) FROM \"VERSION\"" 2>/dev/null)" = 1 ]
}

# --- conf --------------------------------------------------------------------------------------
xml_escape() {
  local s="$1"
  s="${s//&/&amp;}"; s="${s//</&lt;}"; s="${s//>/&gt;}"
  printf '%s' "$s"
}

write_hive_site() {
  local file="$1" url="jdbc:postgresql://127.0.0.1:$PG_PORT/$METASTORE_DB"
  {
    printf '<?xml version="1.0"?>\n'
    printf '<!-- Written by scripts/metastore.sh conf: the Hive metastore in PostgreSQL. -->\n'
    printf '<configuration>\n'
    local pair
    for pair in \
        "javax.jdo.option.ConnectionURL=$url" \
        "javax.jdo.option.ConnectionDriverName=org.postgresql.Driver" \
        "javax.jdo.option.ConnectionUserName=$PG_USER" \
        "javax.jdo.option.ConnectionPassword=$PG_PASSWORD" \
        "datanucleus.schema.autoCreateAll=true" \
        "hive.metastore.schema.verification=false"; do
      printf '  <property><name>%s</name><value>%s</value></property>\n' \
        "${pair%%=*}" "$(xml_escape "${pair#*=}")"
    done
    printf '</configuration>\n'
  } >"$file"
  chmod 600 "$file"  # it holds the database password
}

# The base file's lines first; its own driver class path, if any, gets the JDBC driver appended.
write_spark_defaults() {
  local file="$1" base="$2" warehouse="$3" merged=0 key rest
  {
    if [ -n "$base" ]; then
      printf '# --- from %s ---\n' "$base"
      while IFS= read -r line || [ -n "$line" ]; do
        read -r key rest <<<"$line" || true
        if [ "$key" = spark.driver.extraClassPath ]; then
          printf 'spark.driver.extraClassPath  %s:%s\n' "$rest" "$PG_JDBC_JAR"
          merged=1
        else
          printf '%s\n' "$line"
        fi
      done <"$base"
    fi
    printf '# --- written by scripts/metastore.sh conf: the Hive metastore in PostgreSQL ---\n'
    [ "$merged" = 1 ] || printf 'spark.driver.extraClassPath  %s\n' "$PG_JDBC_JAR"
    printf 'spark.sql.catalogImplementation  hive\n'
    printf 'spark.sql.warehouse.dir  %s\n' "$warehouse"
  } >"$file"
}

do_conf() {
  local dir="" base="" warehouse="" fresh=0
  while [ $# -gt 0 ]; do
    case "$1" in
      --base) [ $# -ge 2 ] || die "--base needs a file"; base="$2"; shift 2 ;;
      --warehouse) [ $# -ge 2 ] || die "--warehouse needs a path"; warehouse="$2"; shift 2 ;;
      --fresh) fresh=1; shift ;;
      -*) die "unknown argument '$1'; expected --base FILE, --warehouse PATH or --fresh" ;;
      *) [ -z "$dir" ] || die "one DIR only (got '$dir' and '$1')"; dir="$1"; shift ;;
    esac
  done
  [ -n "$dir" ] || die "conf needs the folder to write the configuration into"
  [ -z "$base" ] || [ -f "$base" ] || die "--base '$base' is not a file"
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  [ -n "$warehouse" ] || warehouse="$dir/warehouse"
  # A relative warehouse would be each application's own working directory.
  [[ "$warehouse" == /* || "$warehouse" == *://* ]] || warehouse="$(pwd)/$warehouse"

  bash "$ROOT/scripts/postgres.sh" install >/dev/null
  bash "$ROOT/scripts/postgres.sh" start
  if [ "$fresh" = 1 ]; then drop_db; fi
  if ! db_exists; then
    su_psql postgres -c "CREATE DATABASE \"$METASTORE_DB\" OWNER \"$PG_USER\""
    say "created database $METASTORE_DB (owner $PG_USER)"
  fi
  fetch_driver
  schema_exists || create_schema
  write_hive_site "$dir/hive-site.xml"
  write_spark_defaults "$dir/spark-defaults.conf" "$base" "$warehouse"
  say "database $METASTORE_DB on 127.0.0.1:$PG_PORT; warehouse $warehouse"
  say "wrote $dir/hive-site.xml and $dir/spark-defaults.conf; use: export SPARK_CONF_DIR=$dir"
}

# --- thrift ------------------------------------------------------------------------------------
# kill -0 also succeeds on a zombie (a server that died while this shell is its parent).
alive() {
  local state
  state="$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)" || return 1
  [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# The pid in the pid file, if that process is alive and is this port's Thrift server.
thrift_pid() {
  local pid
  [ -f "$STATE/thrift.pid" ] || return 1
  pid="$(cat "$STATE/thrift.pid")"
  [[ "$pid" =~ ^[0-9]+$ ]] && alive "$pid" || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null \
    | grep -qF -- "hive.server2.thrift.port=$PORT" || return 1
  echo "$pid"
}

log_tail() {
  if [ -s "$STATE/thrift.log" ]; then
    printf -- '--- last lines of %s ---\n' "$STATE/thrift.log" >&2
    grep -v '^\s*at ' "$STATE/thrift.log" | tail -n 30 >&2
  fi
}

# Python code run with cdclake's _spark imported (from this checkout unless installed).
cdclake_python() {
  PYTHONPATH="$ROOT/src${PYTHONPATH:+:$PYTHONPATH}" "$VENV/bin/python" -c \
    "from cdclake import _spark
$1"
}

thrift_start() {
  local pid conf="${SPARK_CONF_DIR:-}"
  if pid="$(thrift_pid)"; then
    say "Thrift server already running (pid $pid) on 127.0.0.1:$PORT"
    return
  fi
  port_open "$PORT" && die "port $PORT on 127.0.0.1 is in use; choose another with --port N"
  if [ -z "$conf" ]; then
    say "SPARK_CONF_DIR is not set: the metastore is an embedded Derby in $STATE/metastore_db"
  else
    [ -d "$conf" ] || die "SPARK_CONF_DIR '$conf' is not a folder"
    # the server runs in $STATE: a relative folder would be looked up there
    SPARK_CONF_DIR="$(cd "$conf" && pwd)"
    export SPARK_CONF_DIR
  fi
  if [ -n "$conf" ] && [ ! -f "$conf/hive-site.xml" ]; then
    say "no hive-site.xml in SPARK_CONF_DIR=$conf: the metastore is an embedded Derby in $STATE"
  fi
  # cdclake's jars (Delta among them, resolved once into the cache) and the settings of the
  # sessions cdclake builds: Delta's extension and catalog, UTC, few shuffle partitions and
  # snapshot tasks (the defaults, 200 and 50, make every small query pay for hundreds of tasks).
  local spark jars lines settings=() line
  spark="$(spark_home)"
  jars="$(cdclake_python 'print(",".join(_spark.jars()))')" \
    || die "could not list cdclake's jars (python -c 'from cdclake import _spark')"
  lines="$(cdclake_python '
for k, v in _spark.session_settings(shuffle_partitions=2).items():
    print(f"{k}={v}")')" || die "could not read cdclake's Spark settings"
  while IFS= read -r line; do
    settings+=(--conf "$line")
  done <<<"$lines"
  mkdir -p "$STATE"
  say "starting Spark's Thrift server on 127.0.0.1:$PORT (log $STATE/thrift.log)"
  # Its working directory is the state dir: a Derby metastore or spark-warehouse lands there.
  # The jars go on the JVM's class path, not in --jars: each JDBC session is opened on a Thrift
  # worker thread, whose class loader does not see --jars (ClassNotFoundException: DeltaCatalog).
  # SPARK_DIST_CLASSPATH adds to it without replacing spark.driver.extraClassPath (the JDBC
  # driver, from SPARK_CONF_DIR).
  (cd "$STATE" && SPARK_DIST_CLASSPATH="${jars//,/:}${SPARK_DIST_CLASSPATH:+:$SPARK_DIST_CLASSPATH}" \
      exec nohup "$spark/bin/spark-submit" \
      --class org.apache.spark.sql.hive.thriftserver.HiveThriftServer2 \
      --name "cdclake Thrift server ($PORT)" --master 'local[1]' --driver-memory "$THRIFT_MEMORY" \
      "${settings[@]}" \
      spark-internal \
      --hiveconf "hive.server2.thrift.port=$PORT" \
      --hiveconf hive.server2.thrift.bind.host=127.0.0.1 \
      --hiveconf "hive.server2.logging.operation.log.location=$STATE/operation_logs" \
      --hiveconf "hive.exec.local.scratchdir=$STATE/scratch" \
      --hiveconf "hive.downloaded.resources.dir=$STATE/resources/\${hive.session.id}" \
      >"$STATE/thrift.log" 2>&1 </dev/null) &
  pid=$!
  echo "$pid" >"$STATE/thrift.pid"
  local deadline=$((SECONDS + START_TIMEOUT))
  until port_open "$PORT"; do
    if ! alive "$pid"; then
      log_tail
      rm -f "$STATE/thrift.pid"
      die "the Thrift server exited during start-up (port $PORT)"
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      log_tail
      die "the Thrift server did not open 127.0.0.1:$PORT within ${START_TIMEOUT}s (pid $pid still running; stop it with: $0 thrift stop --port $PORT)"
    fi
    sleep 0.5
  done
  say "ready: jdbc:hive2://127.0.0.1:$PORT/default (pid $pid)"
}

thrift_stop() {
  local pid
  if ! pid="$(thrift_pid)"; then
    rm -f "$STATE/thrift.pid"
    say "Thrift server not running on 127.0.0.1:$PORT"
    return
  fi
  say "stopping the Thrift server (pid $pid)"
  kill -TERM "$pid"
  local deadline=$((SECONDS + 30))
  while alive "$pid" && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done
  if alive "$pid"; then
    say "pid $pid did not exit within 30 s of SIGTERM; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    while alive "$pid"; do sleep 0.2; done
  fi
  rm -f "$STATE/thrift.pid"
  say "stopped"
}

thrift_status() {
  local pid
  if pid="$(thrift_pid)"; then
    say "Thrift server running (pid $pid) on 127.0.0.1:$PORT (log $STATE/thrift.log)"
  else
    say "Thrift server not running on 127.0.0.1:$PORT"
    exit 3
  fi
}

# --- commands ----------------------------------------------------------------------------------
[ $# -ge 1 ] || usage
command="$1"; shift
case "$command" in
  conf) do_conf "$@" ;;
  drop)
    [ $# -eq 0 ] || die "drop takes no arguments (the database is \$METASTORE_DB)"
    drop_db
    ;;
  thrift|beeline)
    action=""
    if [ "$command" = thrift ]; then
      [ $# -ge 1 ] || usage
      action="$1"; shift
    fi
    PORT="$(port_arg "${THRIFT_PORT:-20000}")"
    if [ "${1:-}" = --port ]; then
      [ $# -ge 2 ] || die "--port needs a value"
      PORT="$(port_arg "$2")"; shift 2
    fi
    STATE="${THRIFT_DIR:-$CDCLAKE_CACHE/thrift/$PORT}"
    case "$command:$action" in
      thrift:start|thrift:stop|thrift:status)
        [ $# -eq 0 ] || die "unknown argument '$1'; expected --port N"
        "thrift_$action"
        ;;
      beeline:)
        # csv2 and tsv2 quote as CSV does, not with NUL characters (Hive 2's default)
        SPARK_BEELINE_OPTS="-Ddisable.quoting.for.sv=false${SPARK_BEELINE_OPTS:+ $SPARK_BEELINE_OPTS}" \
          exec "$(spark_home)/bin/beeline" -u "jdbc:hive2://127.0.0.1:$PORT/default" \
          -n "${USER:-$(id -un)}" "$@"
        ;;
      *) die "unknown thrift command '$action'; expected start, stop or status" ;;
    esac
    ;;
  -h|--help|help) usage ;;
  *) die "unknown command '$command'" ;;
esac
