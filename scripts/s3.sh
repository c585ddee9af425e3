#!/usr/bin/env bash
# A real S3-compatible server on 127.0.0.1 for tests and demos: s3proxy (Maven Central), objects
# in memory (jclouds "transient" backend) unless S3_BACKEND=filesystem. The filesystem backend
# keeps each bucket as a folder, but Spark's streaming metadata log cannot use its directories (a
# checkpoint's sources/0 is reported missing right after it was written) and files put in its
# folder by hand have no ETag, which S3A requires; the in-memory backend has neither problem.
#
#   scripts/s3.sh install                    fetch the s3proxy jar from Maven Central (cached)
#   scripts/s3.sh start [--port N] [--bucket NAME]...
#                                            start on http://127.0.0.1:N (default $S3_PORT or
#                                            19000) and create the buckets; starting a running
#                                            server again only creates the buckets
#   scripts/s3.sh stop [--port N]            stop it and wait until it has exited
#   scripts/s3.sh status [--port N]          exit 0 when running, 3 when not
#
# Environment: S3PROXY_VERSION (default 2.9.0), S3_BACKEND, S3_HEAP (default 512m), S3_PORT,
# S3_DATA (default
# $CDCLAKE_CACHE/s3-data/<port>), AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (the one identity it
# accepts; default cdclake / cdclake-secret), MAVEN_CENTRAL, S3_START_TIMEOUT (default 60).
# The data dir holds s3proxy.conf, s3proxy.out, s3proxy.pid (and data/ with the filesystem backend).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/env.sh
source "$ROOT/scripts/env.sh"

VERSION="${S3PROXY_VERSION:-2.9.0}"
MAVEN_CENTRAL="${MAVEN_CENTRAL:-https://repo.maven.apache.org/maven2}"
JAR="$CDCLAKE_CACHE/s3proxy/$VERSION/s3proxy-$VERSION-jar-with-dependencies.jar"
URL="$MAVEN_CENTRAL/org/gaul/s3proxy/$VERSION/s3proxy-$VERSION-jar-with-dependencies.jar"
START_TIMEOUT="${S3_START_TIMEOUT:-180}"
BACKEND="${S3_BACKEND:-transient}"
IDENTITY="${AWS_ACCESS_KEY_ID:-cdclake}"
CREDENTIAL="${AWS_SECRET_ACCESS_KEY:-cdclake-secret}"

say() { printf 's3: %s\n' "$*"; }
die() { printf 's3: error: %s\n' "$*" >&2; exit 1; }
usage() { sed -n '4,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

[ $# -ge 1 ] || usage
command="$1"; shift
PORT="${S3_PORT:-19000}"
BUCKETS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --port) [ $# -ge 2 ] || die "--port needs a value"; PORT="$2"; shift 2 ;;
    --port=*) PORT="${1#--port=}"; shift ;;
    --bucket) [ $# -ge 2 ] || die "--bucket needs a value"; BUCKETS+=("$2"); shift 2 ;;
    --bucket=*) BUCKETS+=("${1#--bucket=}"); shift ;;
    -h|--help) usage ;;
    *) die "unknown argument '$1'; expected --port N or --bucket NAME" ;;
  esac
done
if ! [[ "$PORT" =~ ^[0-9]+$ ]] || [ "$PORT" -lt 1 ] || [ "$PORT" -gt 65535 ]; then
  die "port '$PORT' is not a TCP port number (1-65535)"
fi
for b in "${BUCKETS[@]}"; do
  [[ "$b" =~ ^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$ ]] || die "bucket '$b' is not a valid S3 bucket name"
done
DATA="${S3_DATA:-$CDCLAKE_CACHE/s3-data/$PORT}"
PIDFILE="$DATA/s3proxy.pid"

alive() {
  local state
  state="$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)" || return 1
  [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

running_pid() {
  [ -f "$PIDFILE" ] || return 1
  local pid; pid="$(cat "$PIDFILE")"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  alive "$pid" || return 1
  tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -qF "$DATA/s3proxy.conf" || return 1
  echo "$pid"
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

do_install() {
  if [ -f "$JAR" ]; then say "s3proxy $VERSION already installed ($JAR)"; return; fi
  command -v curl >/dev/null 2>&1 || die "curl not found on PATH"
  say "fetching s3proxy $VERSION from Maven Central"
  mkdir -p "$(dirname "$JAR")"
  curl -sSf --max-time 300 -o "$JAR.part" "$URL" || die "could not fetch $URL"
  mv "$JAR.part" "$JAR"
  say "installed s3proxy $VERSION ($JAR)"
}

# PUT Bucket signed with AWS signature v2 (s3proxy takes v2 and v4; v2 fits in curl + openssl).
# A bucket we already own answers 409 BucketAlreadyOwnedByYou, which is fine.
make_buckets() {
  local b date sig code
  for b in "${BUCKETS[@]}"; do
    date="$(LC_ALL=C date -u '+%a, %d %b %Y %H:%M:%S GMT')"
    sig="$(printf 'PUT\n\n\n%s\n/%s' "$date" "$b" \
      | openssl dgst -sha1 -hmac "$CREDENTIAL" -binary | base64)"
    code="$(curl -s -o "$DATA/bucket.out" -w '%{http_code}' -X PUT -H "Date: $date" \
      -H "Authorization: AWS $IDENTITY:$sig" "http://127.0.0.1:$PORT/$b")"
    case "$code" in
      200|409) ;;
      *) cat "$DATA/bucket.out" >&2; die "creating bucket '$b' failed (HTTP $code)" ;;
    esac
  done
  [ ${#BUCKETS[@]} -eq 0 ] || say "buckets: ${BUCKETS[*]}"
}

do_start() {
  local pid
  if pid="$(running_pid)"; then
    say "already running (pid $pid) on http://127.0.0.1:$PORT"
    make_buckets
    return
  fi
  [ -f "$JAR" ] || do_install
  port_open "$PORT" && die "port $PORT on 127.0.0.1 is in use by another process; choose another with --port N"
  mkdir -p "$DATA/data"
  cat > "$DATA/s3proxy.conf" <<EOF
# Written by scripts/s3.sh start.
s3proxy.endpoint=http://127.0.0.1:$PORT
s3proxy.authorization=aws-v2-or-v4
s3proxy.identity=$IDENTITY
s3proxy.credential=$CREDENTIAL
jclouds.provider=$BACKEND
jclouds.filesystem.basedir=$DATA/data
EOF
  say "starting s3proxy $VERSION on http://127.0.0.1:$PORT ($BACKEND backend)"
  nohup java -Xmx"${S3_HEAP:-512m}" -jar "$JAR" --properties "$DATA/s3proxy.conf" \
    >"$DATA/s3proxy.out" 2>&1 </dev/null &
  pid=$!
  echo "$pid" > "$PIDFILE"
  local deadline=$((SECONDS + START_TIMEOUT))
  until grep -qF "Started Server" "$DATA/s3proxy.out" 2>/dev/null; do
    if ! alive "$pid" || [ "$SECONDS" -ge "$deadline" ]; then
      tail -n 30 "$DATA/s3proxy.out" >&2 || true
      die "s3proxy did not start on port $PORT (log $DATA/s3proxy.out)"
    fi
    sleep 0.5
  done
  make_buckets
  say "ready: http://127.0.0.1:$PORT (pid $pid)"
}

do_stop() {
  local pid
  if ! pid="$(running_pid)"; then rm -f "$PIDFILE"; say "not running on 127.0.0.1:$PORT"; return; fi
  kill -TERM "$pid"
  local deadline=$((SECONDS + 30))
  while alive "$pid" && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done
  if alive "$pid"; then kill -KILL "$pid" 2>/dev/null || true; while alive "$pid"; do sleep 0.2; done; fi
  rm -f "$PIDFILE"
  say "stopped (pid $pid)"
}

do_status() {
  local pid
  if pid="$(running_pid)"; then
    say "running (pid $pid) on http://127.0.0.1:$PORT ($BACKEND backend), data $DATA"
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
  *) printf 's3: error: unknown command %s\n' "'$command'" >&2; usage ;;
esac
