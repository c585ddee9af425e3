"""Building a SparkSession with Delta Lake, the Kafka connector and S3A, jars from Maven Central.

The jars are resolved once by Spark's own resolver (Ivy) into ``$CDCLAKE_CACHE/spark-jars/<key>``
(default cache ``~/.cache/cdclake``) and every session cdclake builds lists them in ``spark.jars``.
That is what ships them to executors' class loaders on a cluster: ``spark.jars.packages`` from a
Python builder does not (PySpark's own ``spark.jars`` overrides the list that spark-submit
resolved, which then reaches executors as plain files only, and the first Delta task fails with
``ClassCastException: cannot assign instance of …SerializedLambda``). Jars that PySpark already
ships (Hadoop, Jackson, Parquet, log4j …, older versions pulled in transitively) are left out.

A session the caller built is never changed: :func:`get_or_create` returns the active session as
it is; master, jars and memory are set only on sessions cdclake builds.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pyspark.sql import SparkSession

from cdclake import paths

SPARK_VERSION = "4.2.0"
DELTA_VERSION = "4.4.0"
# The Hadoop inside the pinned pyspark (pyspark/jars/hadoop-client-api-3.5.0.jar); hadoop-aws
# must match it, and the AWS SDK v2 is the one its build names (hadoop-project's
# aws-java-sdk-v2.version), as single modules rather than the 650 MB bundle.
HADOOP_VERSION = "3.5.0"
AWS_SDK_VERSION = "2.35.4"
DELTA_PACKAGE = f"io.delta:delta-spark_4.2_2.13:{DELTA_VERSION}"
KAFKA_PACKAGE = f"org.apache.spark:spark-sql-kafka-0-10_2.13:{SPARK_VERSION}"
S3_PACKAGES = (
    f"org.apache.hadoop:hadoop-aws:{HADOOP_VERSION}",
    f"software.amazon.awssdk:s3:{AWS_SDK_VERSION}",
    f"software.amazon.awssdk:s3-transfer-manager:{AWS_SDK_VERSION}",
)
# spark-sql-kafka 4.2.0 depends on spark-token-provider-kafka 4.2.0, which the Maven Central we
# reach does not serve; 4.0.0 is binary compatible for what the Kafka source uses of it.
TOKEN_PROVIDER = "org.apache.spark:spark-token-provider-kafka-0-10_2.13"
TOKEN_PROVIDER_PACKAGE = f"{TOKEN_PROVIDER}:4.0.0"
EXCLUDES = (TOKEN_PROVIDER, "software.amazon.awssdk:bundle")
# spark.jars.excludes drops every version of it, so the 4.0.0 jar is fetched once by URL.
TOKEN_PROVIDER_URL = (
    "https://repo1.maven.org/maven2/org/apache/spark/spark-token-provider-kafka-0-10_2.13/4.0.0/"
    "spark-token-provider-kafka-0-10_2.13-4.0.0.jar"
)
PACKAGES = (DELTA_PACKAGE, KAFKA_PACKAGE, *S3_PACKAGES)
# Delta's log store that is safe on S3 from a single writer (one cdclake driver per table).
S3_LOG_STORE = "io.delta.storage.S3SingleDriverLogStore"
_MANIFEST = "jars.json"
CATALOG_IMPLEMENTATION = "spark.sql.catalogImplementation"


def cache_dir() -> Path:
    """Where jars, the virtualenv and the Kafka install are cached between runs."""
    return Path(os.environ.get("CDCLAKE_CACHE", Path.home() / ".cache" / "cdclake"))


def log_dir() -> Path:
    """Where the JVM's console output of CLI runs goes (see :func:`quiet_jvm`)."""
    return cache_dir() / "logs"


def jars_dir() -> Path:
    """The resolved jars of this cdclake version: one folder per set of coordinates."""
    key = hashlib.sha1(" ".join((*PACKAGES, *EXCLUDES, TOKEN_PROVIDER_URL)).encode())
    return cache_dir() / "spark-jars" / key.hexdigest()[:12]


def jars() -> list[str]:
    """Local paths of every jar cdclake needs on the driver and executors, resolved once."""
    manifest = jars_dir() / _MANIFEST
    if not manifest.is_file():
        resolve_jars()
    names: list[str] = json.loads(manifest.read_text(encoding="utf-8"))
    return [str(jars_dir() / n) for n in names]


def resolve_jars() -> Path:
    """Resolve :data:`PACKAGES` with Spark's Ivy into :func:`jars_dir` (in a child process).

    The child's output (Ivy's report) goes to ``resolve.log`` there; a failure raises with its
    last lines. Returns the folder.
    """
    out = jars_dir()
    out.mkdir(parents=True, exist_ok=True)
    log = out / "resolve.log"
    code = (
        "import sys; from pyspark.sql import SparkSession\n"
        "s = (SparkSession.builder.master('local[1]').appName('cdclake-resolve')"
        f".config('spark.jars.packages', {','.join(PACKAGES)!r})"
        f".config('spark.jars.excludes', {','.join(EXCLUDES)!r})"
        f".config('spark.jars.ivy', {str(cache_dir() / 'ivy')!r})"
        ".config('spark.ui.enabled', 'false').getOrCreate())\n"
        "print('JARS=' + s.sparkContext.getConf().get('spark.jars'))\n"
        "s.stop()\n"
    )
    with log.open("w", encoding="utf-8") as f:
        done = subprocess.run(
            [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=f, text=True, check=False
        )
        f.write(done.stdout)
    found = [ln[5:] for ln in done.stdout.splitlines() if ln.startswith("JARS=")]
    if done.returncode != 0 or not found:
        tail = log.read_text(encoding="utf-8").splitlines()[-15:]
        what = ", ".join(PACKAGES)
        raise RuntimeError(f"resolving {what} failed; see {log}:\n" + "\n".join(tail))
    names = []
    for uri in [*found[0].split(","), _token_provider_jar(out).as_uri()]:
        src = Path(uri.removeprefix("file:").removeprefix("//"))
        if _provided_by_pyspark(src.name):
            continue
        if src.parent != out:
            shutil.copyfile(src, out / src.name)
        names.append(src.name)
    partial = out / (_MANIFEST + ".part")
    partial.write_text(json.dumps(sorted(names), indent=1), encoding="utf-8")
    partial.replace(out / _MANIFEST)
    return out


def _token_provider_jar(out: Path) -> Path:
    jar = out / TOKEN_PROVIDER_URL.rsplit("/", 1)[1]
    if not jar.is_file():
        import urllib.request

        partial = jar.with_suffix(".part")
        with urllib.request.urlopen(TOKEN_PROVIDER_URL, timeout=120) as r:
            partial.write_bytes(r.read())
        partial.replace(jar)
    return jar


def _artifact(jar_name: str) -> str:
    """``org.apache.hadoop_hadoop-client-api-3.4.2.jar`` (Ivy) or ``hadoop-client-api-3.5.0.jar``
    (PySpark) -> ``hadoop-client-api``."""
    name = jar_name.split("_", 1)[1] if re.match(r"^[\w.-]+?\.[\w.-]+_", jar_name) else jar_name
    return re.sub(r"-\d[\w.-]*\.jar$", "", name)


def _provided_by_pyspark(jar_name: str) -> bool:
    import pyspark

    shipped = Path(pyspark.__file__).parent / "jars"
    return _artifact(jar_name) in {_artifact(p.name) for p in shipped.glob("*.jar")}


def session_settings(shuffle_partitions: int = 4) -> dict[str, str]:
    """What cdclake sets on a session it builds, apart from master, jars and memory: Delta's
    extension and catalog, the S3 log store, UTC, no UI, no Python call sites sent with each
    DataFrame call. ``cdclake submit-args`` prints the first three for spark-submit."""
    return {
        "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
        "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
        "spark.delta.logStore.s3a.impl": S3_LOG_STORE,
        "spark.sql.session.timeZone": "UTC",
        # cdclake caches each batch's envelopes and changes once: raw messages and row images
        # are unique text, which the cache's dictionary encoder copies into a hash map per column
        # batch before giving up (~12 % of a small-message decode, in a JFR profile)
        "spark.sql.inMemoryColumnarStorage.compressed": "false",
        "spark.sql.shuffle.partitions": str(shuffle_partitions),
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        # PySpark 4 wraps each DataFrame and column function to send its Python call site to the
        # JVM for error contexts: about ten py4j round trips and a stack walk per call (F.col
        # 1.1-1.4 ms, 0.2-0.5 ms without). cdclake builds its plans from thousands of such calls
        # and reports its own errors in one line.
        "spark.python.sql.dataFrameDebugging.enabled": "false",
        # Delta rebuilds a table's state (its file list) with this many tasks for every new
        # version it reads, which each batch's MERGE does: the default 50 made every small MERGE
        # pay for 50 tasks, and one task is the quickest for the logs cdclake keeps (compacted,
        # a checkpoint every ten commits): a steady 300-event batch took 3.2-3.3 s with 1, 3.5-3.6
        # with 2, 3.8-3.9 with 4 (bench/README.md, issue 36). A table of hundreds of thousands of
        # files replays its log faster in more: --conf spark.databricks.delta.snapshotPartitions
        "spark.databricks.delta.snapshotPartitions": "1",
        # Spark keeps the classes it compiled for a plan's expressions in a cache of 100; one
        # batch of cdclake's (decode, summary, MERGE, bookkeeping) compiles about 100, so each
        # batch of a stream evicted the last one's and compiled them all again: a steady
        # 300-event batch took 3.0-3.4 s with 100, 2.4 s with 1000 (bench/README.md, issue 36)
        "spark.sql.codegen.cache.maxEntries": "1000",
        # Delta checks every commit's incrementally computed file list against a full rebuild of
        # the table's state when the JVM's or the session's time zone is not UTC (a check of
        # its own code, "forceOnNonUTC"): three Spark jobs and ~0.6 s more per commit of a small
        # batch on a machine set to Asia/Shanghai (python -m bench.steady --kafka, TZ set)
        "spark.databricks.delta.allFilesInCrc.verificationMode.forceOnNonUTC.enabled": "false",
        # Delta's VACUUM lists a table's folders with this many tasks: Spark's default 10,000
        # made `cdclake maintain` take 20 s per table of a few files on 2 cores (2 s with 16)
        "spark.sql.sources.parallelPartitionDiscovery.parallelism": str(
            max(16, 4 * shuffle_partitions)
        ),
        # Deletion vectors make MERGE mark rows instead of rewriting files, but readers such as
        # delta-rs cannot read such tables yet: off unless CDCLAKE_DELETION_VECTORS=true.
        "spark.databricks.delta.properties.defaults.enableDeletionVectors": os.environ.get(
            "CDCLAKE_DELETION_VECTORS", "false"
        ),
        **s3a_options(),
    }


def builder(
    app_name: str = "cdclake",
    *,
    master: str | None = None,
    shuffle_partitions: int = 4,
    kafka: bool = True,
    hive: bool = False,
    conf: dict[str, str] | None = None,
) -> SparkSession.Builder:
    """A SparkSession builder configured for cdclake: Delta, Kafka, S3A, UTC, no UI.

    ``master`` defaults to ``$CDCLAKE_SPARK_MASTER``, then ``local[2]``. ``kafka`` is kept for
    callers; the connector's jars are always listed (they cost nothing until used). ``hive``:
    Spark's Hive catalog (tables by name, :mod:`cdclake.ops.catalog`), its metastore as Spark is
    configured. ``conf``: the user's own settings (``cdclake apply --conf``), applied last.

    >>> spark = builder(master="spark://127.0.0.1:7077").getOrCreate()  # doctest: +SKIP
    """
    del kafka
    b = (
        SparkSession.builder.appName(app_name)
        .master(master or os.environ.get("CDCLAKE_SPARK_MASTER") or "local[2]")
        .config("spark.jars", ",".join(jars()))
        .config("spark.driver.memory", os.environ.get("CDCLAKE_DRIVER_MEMORY", "4g"))
    )
    for key, value in session_settings(shuffle_partitions).items():
        b = b.config(key, value)
    if hive:
        b = b.enableHiveSupport()
    for key, value in (conf or {}).items():
        b = b.config(key, value)
    return b


def submitted() -> bool:
    """Whether this process runs under spark-submit, whose JVM already holds master and jars."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def submitted_builder(app_name: str = "cdclake", *, hive: bool = False) -> SparkSession.Builder:
    """Under spark-submit: :func:`session_settings` that the command line did not set (and
    with ``hive`` Spark's Hive catalog, unless it names a catalog); master, jars and memory stay
    what spark-submit was given."""
    from pyspark import SparkConf

    given = SparkConf()  # loads the spark.* properties spark-submit passed to the JVM
    b = SparkSession.builder.appName(given.get("spark.app.name", app_name))
    settings = session_settings()
    if hive:
        settings[CATALOG_IMPLEMENTATION] = "hive"
    for key, value in settings.items():
        if not given.contains(key):
            b = b.config(key, value)
    return b


def s3a_options() -> dict[str, str]:
    """``spark.hadoop.fs.s3a.*`` from ``CDCLAKE_S3_ENDPOINT`` (an S3-compatible server such as
    MinIO or s3proxy: path-style access, plain HTTP when the URL says so). Credentials come from
    the usual places (``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``, instance profiles, or
    ``--conf spark.hadoop.fs.s3a.access.key=…``)."""
    s3 = paths.s3_endpoint()
    if s3.url is None:
        return {}
    return {
        "spark.hadoop.fs.s3a.endpoint": s3.url,
        "spark.hadoop.fs.s3a.path.style.access": "true",
        "spark.hadoop.fs.s3a.connection.ssl.enabled": str(s3.tls).lower(),
        "spark.hadoop.fs.s3a.endpoint.region": s3.region,
    }


def get_or_create(
    app_name: str = "cdclake", *, log_file: Path | None = None, **kwargs: object
) -> SparkSession:
    """The caller's session as it is, or a new one from :func:`builder` (under spark-submit
    from :func:`submitted_builder`).

    With ``log_file`` the new session's JVM writes its console output (start-up warnings, logs)
    to that file instead of this process's stderr.
    """
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    from pyspark import SparkContext

    if SparkContext._active_spark_context is not None:
        # a session of the caller's, not active in this thread: a builder without settings
        # returns it untouched (settings given to getOrCreate would be applied to it)
        return SparkSession.builder.getOrCreate()
    if submitted():
        b = submitted_builder(app_name, hive=bool(kwargs.get("hive")))
    else:
        b = builder(app_name, **kwargs)  # type: ignore[arg-type]
    if log_file is None:
        spark = b.getOrCreate()
    else:
        with quiet_jvm(log_file):
            spark = b.getOrCreate()
    spark.sparkContext.setLogLevel(os.environ.get("CDCLAKE_SPARK_LOG_LEVEL", "ERROR"))
    return spark


def new_log_file() -> Path:
    """A fresh file for one run's JVM output under :func:`log_dir`; keeps the newest 20."""
    d = log_dir()
    d.mkdir(parents=True, exist_ok=True)
    old = sorted(d.glob("spark-*.log"))
    for p in old[: max(0, len(old) - 19)]:
        p.unlink(missing_ok=True)
    return d / f"spark-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"


@contextmanager
def quiet_jvm(log_file: Path) -> Iterator[None]:
    """Start the JVM with ``log_file`` as its stdout and stderr: PySpark starts it as a child
    that inherits this process's file descriptors 1 and 2, so they point at the file while it
    starts and are put back after."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = (os.dup(1), os.dup(2))
    with log_file.open("ab") as f:
        os.dup2(f.fileno(), 1)
        os.dup2(f.fileno(), 2)
    try:
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        os.close(saved[0])
        os.close(saved[1])
