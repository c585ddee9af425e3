"""Building a SparkSession with Delta Lake and the Kafka connector, jars from Maven Central.

The jars are resolved by Spark's own resolver (``spark.jars.packages``) into an Ivy cache under
``$CDCLAKE_CACHE`` (default ``~/.cache/cdclake``) so that a second run reuses them.
"""

from __future__ import annotations

import os
from pathlib import Path

from pyspark.sql import SparkSession

SPARK_VERSION = "4.2.0"
DELTA_VERSION = "4.4.0"
DELTA_PACKAGE = f"io.delta:delta-spark_4.2_2.13:{DELTA_VERSION}"
KAFKA_PACKAGE = f"org.apache.spark:spark-sql-kafka-0-10_2.13:{SPARK_VERSION}"
# spark-sql-kafka 4.2.0 depends on spark-token-provider-kafka 4.2.0, which the Maven Central we
# reach does not serve; 4.0.0 is binary compatible for what the Kafka source uses of it.
TOKEN_PROVIDER = "org.apache.spark:spark-token-provider-kafka-0-10_2.13"
TOKEN_PROVIDER_PACKAGE = f"{TOKEN_PROVIDER}:4.0.0"
# spark.jars.excludes drops every version of it, so the 4.0.0 jar is fetched once by URL and added
# with spark.jars (a package coordinate alone would be excluded too).
TOKEN_PROVIDER_URL = (
    "https://repo1.maven.org/maven2/org/apache/spark/spark-token-provider-kafka-0-10_2.13/4.0.0/"
    "spark-token-provider-kafka-0-10_2.13-4.0.0.jar"
)


def cache_dir() -> Path:
    """Where jars, the virtualenv and the Kafka install are cached between runs."""
    return Path(os.environ.get("CDCLAKE_CACHE", Path.home() / ".cache" / "cdclake"))


def token_provider_jar() -> Path:
    """The spark-token-provider-kafka jar in the cache, downloaded from Maven Central once."""
    jar = cache_dir() / "jars" / TOKEN_PROVIDER_URL.rsplit("/", 1)[1]
    if not jar.is_file():
        import urllib.request

        jar.parent.mkdir(parents=True, exist_ok=True)
        partial = jar.with_suffix(".part")
        with urllib.request.urlopen(TOKEN_PROVIDER_URL, timeout=120) as r:
            partial.write_bytes(r.read())
        partial.replace(jar)
    return jar


def builder(
    app_name: str = "cdclake",
    *,
    master: str | None = None,
    shuffle_partitions: int = 4,
    kafka: bool = True,
) -> SparkSession.Builder:
    """A SparkSession builder configured for cdclake: Delta, Kafka, UTC, no UI.

    >>> spark = builder().getOrCreate()  # doctest: +SKIP
    """
    packages = [DELTA_PACKAGE]
    if kafka:
        packages += [KAFKA_PACKAGE]
    b = (
        SparkSession.builder.appName(app_name)
        .master(master or os.environ.get("CDCLAKE_SPARK_MASTER", "local[2]"))
        .config("spark.jars.packages", ",".join(packages))
        .config("spark.jars.excludes", TOKEN_PROVIDER)
        .config("spark.jars.ivy", str(cache_dir() / "ivy"))
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config(
            "spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog"
        )
        .config("spark.sql.session.timeZone", "UTC")
        # cdclake caches each batch's envelopes and changes once: raw messages and row images are
        # unique text, which the cache's dictionary encoder copies into a hash map per column
        # batch before giving up (~12 % of a small-message decode, in a JFR profile)
        .config("spark.sql.inMemoryColumnarStorage.compressed", "false")
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", os.environ.get("CDCLAKE_DRIVER_MEMORY", "4g"))
        # Delta rebuilds table state with this many tasks each time it loads a snapshot; the
        # default 50 makes every small MERGE pay for 50 tasks (see bench/README.md).
        .config("spark.databricks.delta.snapshotPartitions", str(max(2, shuffle_partitions)))
        # Deletion vectors make MERGE mark rows instead of rewriting files, but readers such as
        # delta-rs cannot read such tables yet: off unless CDCLAKE_DELETION_VECTORS=true.
        .config(
            "spark.databricks.delta.properties.defaults.enableDeletionVectors",
            os.environ.get("CDCLAKE_DELETION_VECTORS", "false"),
        )
    )
    if kafka:
        b = b.config("spark.jars", str(token_provider_jar()))
    return b


def get_or_create(app_name: str = "cdclake", **kwargs: object) -> SparkSession:
    """The active session, or a new one from :func:`builder`."""
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    spark = builder(app_name, **kwargs).getOrCreate()  # type: ignore[arg-type]
    spark.sparkContext.setLogLevel(os.environ.get("CDCLAKE_SPARK_LOG_LEVEL", "ERROR"))
    return spark
