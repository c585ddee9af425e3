"""A class-data archive (JDK AppCDS) of the Spark driver, for the drivers the tests start.

The suite starts some forty driver JVMs (every kill -9 point, every CLI and cluster case), and
each one loaded and verified Spark's and Delta's classes from their jars again: a CLI run of one
Kafka batch took 44-46 s without the archive and 31-34 s with it. ``python tests/jvm_archive.py``
(``make test`` runs it) records the classes that the demo and a Kafka batch load into
``$CDCLAKE_CACHE/jvm-archive/<key>/driver.jsa``, once per JDK and Spark; the drivers then map them
from that file (``-XX:SharedArchiveFile``).

The JDK checks that a driver's class path is the one the archive was made with and that the
folders on it are empty. Spark puts ``SPARK_CONF_DIR`` first on that path, so the drivers the
tests start get an empty ``conf`` folder of the archive's own as ``SPARK_CONF_DIR``, and the
tests' settings (``tests/spark-conf/spark-defaults.conf``) through ``--properties-file``. Where
the archive does not match (another JDK, a changed jar), the JVM loads the classes from the jars
as before, silently.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ports import free_port

TESTS = Path(__file__).resolve().parent
DEFAULTS = TESTS / "spark-conf" / "spark-defaults.conf"
DRIVER_OPTIONS = "spark.driver.extraJavaOptions"
QUIET = "-Xshare:auto -Xlog:cds=off -Xlog:cds+dynamic=off"
"""A driver whose archive does not match falls back to the jars without a word on stderr."""


def _java_version() -> str:
    java = Path(os.environ.get("JAVA_HOME", "/usr")) / "bin" / "java"
    done = subprocess.run([str(java), "-version"], capture_output=True, text=True, check=False)
    return done.stderr


@functools.cache
def folder() -> Path:
    """Where the archive for this JDK and this pyspark lives."""
    import pyspark

    jars = sorted(p.name for p in (Path(pyspark.__file__).parent / "jars").glob("*.jar"))
    key = hashlib.sha256("\n".join([_java_version(), pyspark.__version__, *jars]).encode())
    cache = Path(os.environ.get("CDCLAKE_CACHE", Path.home() / ".cache" / "cdclake"))
    return cache / "jvm-archive" / key.hexdigest()[:16]


def _properties(extra: str, path: Path) -> Path:
    """The tests' settings with ``extra`` added to the driver's JVM options, written to ``path``
    (whole or not at all: every xdist worker writes it)."""
    lines = []
    for line in DEFAULTS.read_text().splitlines():
        if line.split(None, 1)[:1] == [DRIVER_OPTIONS]:
            line = f"{line} {extra}"
        lines.append(line)
    partial = path.with_name(f"{path.name}.{os.getpid()}")
    partial.write_text("\n".join(lines) + "\n")
    partial.replace(path)
    return path


def java_options() -> str:
    """The driver's JVM options that map the archive; empty when it has not been built."""
    archive = folder() / "driver.jsa"
    return f"-XX:SharedArchiveFile={archive} {QUIET}" if archive.is_file() else ""


def properties_file() -> Path:
    """The tests' settings for a driver that spark-submit starts (``--properties-file``): with
    the archive's options once it is built, else ``tests/spark-conf``'s own file."""
    options = java_options()
    if not options:
        return DEFAULTS
    digest = hashlib.sha256(DEFAULTS.read_bytes()).hexdigest()[:8]
    props = folder() / f"spark-defaults-{digest}.conf"
    return props if props.is_file() else _properties(options, props)


def environment() -> dict[str, str]:
    """What a process the tests start needs in its environment: the archive's empty conf folder
    and settings once it is built, else ``SPARK_CONF_DIR=tests/spark-conf`` as before."""
    props = properties_file()
    if props == DEFAULTS:
        return {"SPARK_CONF_DIR": str(DEFAULTS.parent)}
    return {
        "SPARK_CONF_DIR": str(folder() / "conf"),
        "PYSPARK_SUBMIT_ARGS": f"--properties-file {props} pyspark-shell",
    }


WORKLOAD = """
import sys
from cdclake.cli import app
bootstrap, topic, tmp = sys.argv[1:]
app(["demo", "--verbose", "--target", f"{tmp}/demo"], standalone_mode=False)
app(
    ["apply", "--verbose", "--kafka-bootstrap", bootstrap, "--topic", topic, "--available-now",
     "--checkpoint", f"{tmp}/checkpoint", "--target", f"{tmp}/lake"],
    standalone_mode=False,
)
"""
"""What the archived driver runs: the demo (files, every Debezium example, MERGE, the tables
printed), then the orders sample from a topic (Kafka's source, the streaming batch). Its output
goes to this process's pipes, so that the run returns only when the JVM has exited, its archive
written."""


def _kafka(*args: str, env: dict[str, str]) -> None:
    cmd = ["bash", str(TESTS.parent / "scripts" / "kafka.sh"), *args]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        sys.exit(f"jvm archive: kafka.sh {' '.join(args)} failed:\n{done.stdout}{done.stderr}")


def _json_lines(path: Path) -> list[str]:
    out = []
    for line in path.read_text().splitlines(keepends=True):
        try:
            json.loads(line)
        except ValueError:
            continue
        out.append(line)
    return out


def build() -> None:
    """Run :data:`WORKLOAD` once in a driver that writes the archive when it exits (a minute or
    two, once per key)."""
    from cdclake.run.demo import SAMPLES
    from cdclake.run.kafka_tools import create_topic, produce

    where = folder()
    if (where / "driver.jsa").is_file():
        print(f"jvm archive: {where / 'driver.jsa'} (built before)")
        return
    conf = where / "conf"
    conf.mkdir(parents=True, exist_ok=True)
    partial = where / "driver.jsa.partial"
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        port, topic = str(free_port()), "jvm-archive-orders"
        kafka_env = {**os.environ, "KAFKA_DATA": f"{tmp}/kafka"}
        _kafka("start", "--port", port, "--fresh", env=kafka_env)
        try:
            bootstrap = f"127.0.0.1:{port}"
            create_topic(bootstrap, topic)
            good = Path(tmp) / "orders.jsonl"  # the sample's bad line stays out of the topic
            good.write_text("".join(_json_lines(SAMPLES / "010_postgres_orders.jsonl")))
            produce(good, topic, bootstrap)
            dump = _properties(f"-XX:ArchiveClassesAtExit={partial}", Path(tmp) / "dump.conf")
            env = {
                **os.environ,
                "SPARK_CONF_DIR": str(conf),
                "PYSPARK_SUBMIT_ARGS": f"--properties-file {dump} pyspark-shell",
            }
            cmd = [sys.executable, "-c", WORKLOAD, bootstrap, topic, tmp]
            done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        finally:
            _kafka("stop", "--port", port, env=kafka_env)
    if done.returncode != 0 or not partial.is_file():
        tail = (done.stdout + done.stderr)[-2000:]
        sys.exit(f"jvm archive: the run did not write {partial} (exit {done.returncode}):\n{tail}")
    partial.rename(where / "driver.jsa")
    size = (where / "driver.jsa").stat().st_size / 2**20
    print(f"jvm archive: {where / 'driver.jsa'} ({size:.0f} MB) in {time.monotonic() - t0:.0f}s")


if __name__ == "__main__":
    build()
