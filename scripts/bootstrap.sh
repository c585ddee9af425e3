#!/usr/bin/env bash
# Set up everything cdclake needs to run and test, idempotently; a second run takes seconds.
#   1. checks java 17+ and python 3.11+
#   2. creates the virtualenv $CDCLAKE_CACHE/venv (default ~/.cache/cdclake/venv) if missing
#   3. installs requirements.lock, only when its sha256 changed since the last install
#   4. installs this checkout in editable mode (again only when the checkout path or pyproject.toml
#      changed: CI clones to a new path each time)
#   5. resolves the Spark jars (Delta, Kafka connector, S3A) into $CDCLAKE_CACHE/spark-jars once
# Stamps live in the venv (steps 3-4) and in the ivy cache (step 5). Exports nothing: other scripts
# source scripts/env.sh for CDCLAKE_CACHE, VENV, PATH and JAVA_HOME.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/env.sh
source "$ROOT/scripts/env.sh"

say() { printf 'bootstrap: %s\n' "$*"; }
die() { printf 'bootstrap: error: %s\n' "$*" >&2; exit 1; }
sha() { sha256sum "$1" | cut -d' ' -f1; }
# Run a step with its (noisy) output in a log; show the log's tail only when it fails.
logged() {
  local log="$CDCLAKE_CACHE/bootstrap-$1.log"; shift
  mkdir -p "$CDCLAKE_CACHE"
  if ! "$@" >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    die "'$*' failed; full output in $log"
  fi
}

# 1. java 17+ ---------------------------------------------------------------------------------
command -v java >/dev/null 2>&1 || die "java not found on PATH; expected a JDK 17 or newer"
java_version="$(java -version 2>&1 | sed -n 's/.* version "\([^"]*\)".*/\1/p' | head -n1)"
java_major="${java_version%%.*}"
[ "$java_major" = "1" ] && java_major="$(echo "$java_version" | cut -d. -f2)"   # 1.8.0 -> 8
[[ "$java_major" =~ ^[0-9]+$ ]] || die "cannot read the java version from 'java -version' (got '$java_version')"
[ "$java_major" -ge 17 ] || die "java $java_version found; expected 17 or newer (set JAVA_HOME/PATH)"
say "java $java_version ok"

# 2. python 3.11+ and the venv ----------------------------------------------------------------
python="${PYTHON:-}"
if [ -z "$python" ]; then
  for candidate in python3.11 python3; do
    if command -v "$candidate" >/dev/null 2>&1; then python="$candidate"; break; fi
  done
fi
[ -n "$python" ] || die "python3.11 not found on PATH; expected Python 3.11 or newer (or set PYTHON)"
"$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' \
  || die "$python is Python $("$python" -c 'import platform; print(platform.python_version())'); expected 3.11 or newer"

if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c 'import sys' >/dev/null 2>&1; then
  say "venv ok ($VENV)"
else
  say "creating venv at $VENV with $python"
  rm -rf "$VENV"
  "$python" -m venv "$VENV"
fi
pip=("$VENV/bin/python" -m pip --quiet --disable-pip-version-check)

# 3. requirements.lock ------------------------------------------------------------------------
lock="$ROOT/requirements.lock"
lock_stamp="$VENV/.cdclake-requirements.sha256"
want="$(sha "$lock")"
if [ -f "$lock_stamp" ] && [ "$(cat "$lock_stamp")" = "$want" ]; then
  say "requirements.lock unchanged, skipping pip install"
else
  say "installing requirements.lock (first run takes a few minutes)"
  logged pip "${pip[@]}" install -r "$lock"
  echo "$want" > "$lock_stamp"
fi

# 4. this checkout, editable ------------------------------------------------------------------
# setuptools' editable install of a src/ layout is a .pth file naming $ROOT/src, so new modules
# show up without reinstalling; only a new checkout path or a new pyproject.toml needs one.
edit_stamp="$VENV/.cdclake-editable"
want="$ROOT $(sha "$ROOT/pyproject.toml")"
if [ -f "$edit_stamp" ] && [ "$(cat "$edit_stamp")" = "$want" ]; then
  say "cdclake already installed from $ROOT"
else
  say "installing cdclake from $ROOT (editable)"
  logged editable "${pip[@]}" install --no-deps -e "$ROOT"
  # A by-product of the build, not used at run time (the metadata is in the venv); keep the
  # checkout clean.
  rm -rf "$ROOT"/src/*.egg-info
  echo "$want" > "$edit_stamp"
fi

# 5. Spark jars -------------------------------------------------------------------------------
# Keyed on _spark.py, which names the Maven coordinates; the stamp sits in the ivy cache it
# describes, so wiping the cache also forgets the stamp.
ivy="$CDCLAKE_CACHE/ivy"
jars_stamp="$ivy/.cdclake-resolved"
want="$(sha "$ROOT/src/cdclake/_spark/__init__.py")"
if [ -f "$jars_stamp" ] && [ "$(cat "$jars_stamp")" = "$want" ]; then
  say "Spark jars already resolved ($ivy)"
else
  say "resolving Spark jars into $CDCLAKE_CACHE/spark-jars (once; about a minute)"
  logged spark "$VENV/bin/python" -c \
    "from cdclake import _spark; _spark.get_or_create('cdclake-bootstrap').range(1).count()"
  mkdir -p "$ivy"
  echo "$want" > "$jars_stamp"
fi
say "done"
