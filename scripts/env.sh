# Sourced (not run) by the other scripts and the Makefile: where the cache and the virtualenv are,
# the venv's bin first on PATH, and JAVA_HOME when it is not set (PySpark and Kafka need a JDK 17+).
#   source scripts/env.sh
# shellcheck shell=bash

export CDCLAKE_CACHE="${CDCLAKE_CACHE:-$HOME/.cache/cdclake}"
export VENV="$CDCLAKE_CACHE/venv"
case ":$PATH:" in
  *":$VENV/bin:"*) ;;
  *) export PATH="$VENV/bin:$PATH" ;;
esac
if [ -z "${JAVA_HOME:-}" ] && command -v java >/dev/null 2>&1; then
  # /usr/lib/jvm/<jdk>/bin/java -> /usr/lib/jvm/<jdk>
  _cdclake_java="$(readlink -f "$(command -v java)")"
  export JAVA_HOME="${_cdclake_java%/bin/java}"
  unset _cdclake_java
fi
