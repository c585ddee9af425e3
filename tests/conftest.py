"""One Spark session for the whole test run: UTC, 2 shuffle partitions, UI off, Delta on."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import jvm_archive
import pytest
from pyspark.sql import SparkSession

from cdclake import _spark

TESTS = Path(__file__).resolve().parent
SRC = TESTS.parent / "src"
# CLI subprocesses started by tests import this checkout too, not another clone's install.
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(SRC), os.environ.get("PYTHONPATH")) if p)
DATA = TESTS / "data"
SPARK_CONF_DIR = TESTS / "spark-conf"
"""Spark settings for tiny test data (see its spark-defaults.conf); the drivers the tests start
as subprocesses get them through ``SPARK_CONF_DIR``, or with the class-data archive of
tests/jvm_archive.py through ``--properties-file`` (a test may point one elsewhere)."""
os.environ.update(jvm_archive.environment())
C2_LATER = (
    "-XX:Tier4InvocationThreshold=15000 -XX:Tier4MinInvocationThreshold=1800 "
    "-XX:Tier4CompileThreshold=45000 -XX:Tier4BackEdgeThreshold=120000"
)
"""C2 compiles a method after three times the JVM's default calls (C1's thresholds unchanged).
The suite is bound by CPU, and a fifth of it was JIT compilation (C2 alone 537 of 3,906
CPU-seconds in a full run): the session sees Spark's and Delta's planning code go by once per
case, and C2 compiled 14,206 methods 26,817 times in 17 minutes of one session. Five apply
modules in two sessions side by side (the suite's load), each pair alone on the machine:
default against this, 406 and 382 CPU-seconds, 472 s wall both (C2 103 and 77 s); against ten
times the defaults, 376 and 332 CPU-seconds, but 411 and 427 s wall (the slower code shows)."""
FULL_JIT = f"-XX:+TieredCompilation -XX:+UseParallelGC {C2_LATER}"
"""The test session's JVM options: both JIT compilers, where its subprocesses' drivers have C1
only (spark-defaults.conf), as it lives for the whole run; and the parallel collector instead of
G1, whose concurrent marking and write barriers cost more than its short pauses save on tiny
data: tests/apply/test_apply_scd1.py, test_apply_scd2.py and test_schema_changes.py took 322 s
and 500 CPU-seconds with G1, 306 s and 457 with ParallelGC (453 with SerialGC, 316 s)."""


def tiny_data_settings() -> dict[str, str]:
    """The settings of ``tests/spark-conf/spark-defaults.conf`` for the test session (whose
    JVM keeps both JIT compilers)."""
    lines = (SPARK_CONF_DIR / "spark-defaults.conf").read_text().splitlines()
    pairs = (line.split(None, 1) for line in lines if line.strip() and not line.startswith("#"))
    settings = {key: value.strip() for key, value in pairs}
    return {**settings, "spark.driver.extraJavaOptions": f"{FULL_JIT} {jvm_archive.java_options()}"}


SERVICES = ("conformance", "e2e")
"""The folders whose cases use real services: one group, run on one worker, one case at a time.

The group takes about 29 minutes, the other modules as long on the other worker. It was split in
two (the kill -9, Prometheus, fuzz, metastore and consistent-mode cases apart) when it took an
hour; the halves ran one after the other all the same (xdist hands out the group of more cases
first), and side by side they were slower: their cases took 7-33 % longer beside each other than
beside the unit modules, whose worker leaves part of a core idle (pytest 32:47 against 30:35).
One group also starts the broker and services its cases share once, not once per half."""


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist (``--dist loadgroup``) the cases with real services run in one group
    (:data:`SERVICES`), and every other module's cases on one worker.

    They start brokers, databases, a cluster and CLI JVMs of their own; one at a time per worker
    keeps them within the machine while the unit tests share out over the workers. This is what
    xdist does for its ``xdist_group`` mark (a ``@group`` suffix on the node id, read by its
    scheduler), which has no effect with pytest 9.2: node ids are objects there, so xdist's own
    rewrite of the string is lost.
    """
    if not config.getoption("loadgroup", False):  # set in xdist workers with --dist loadgroup
        return
    from _pytest.nodeid import coerce_node_id

    for item in items:
        parts = item.path.relative_to(TESTS).parts
        # any other module's cases on one worker, as ``--dist loadfile`` would: a module-scoped
        # fixture (test_convert_pairs' sixteen conversions, 125 s) was built once per worker
        group = "services" if parts[0] in SERVICES else "/".join(parts)
        item._id = coerce_node_id(f"{item.nodeid}@{group}")


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    session = (
        _spark.builder("cdclake-tests", shuffle_partitions=2)
        # Delta keeps every table's log and snapshot (query plans, ~0.5 MB a table) for an hour;
        # a test run makes thousands of tables, which filled a 4 GB driver after an hour. A job
        # touches a handful of tables; the suite's cache is kept to the latest 50.
        .config("spark.databricks.delta.delta.log.cacheSize", "50")
        .config(map=tiny_data_settings())
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture
def data_dir() -> Path:
    return DATA


class Lake:
    """A target folder for one test: apply lines, read tables back (live rows, no _cdc_ columns)."""

    def __init__(self, spark: SparkSession, root: Path) -> None:
        self.spark, self.root = spark, root

    def apply(
        self,
        lines: list[str],
        *,
        keys: dict[str, tuple[str, ...]] | None = None,
        format: str = "debezium",
        fail_on_bad_input: bool = False,
        source: str = "test.jsonl",
        **options: object,
    ):  # type: ignore[no-untyped-def]
        from cdclake.config import ApplyConfig
        from cdclake.run.runner import apply_raw
        from cdclake.sources import raw_from_lines

        config = ApplyConfig(
            format=format,
            inputs=(source,),
            target=str(self.root),
            keys=keys or {},
            fail_on_bad_input=fail_on_bad_input,
            **options,
        )
        return apply_raw(raw_from_lines(self.spark, lines, source), config)

    def df(self, table: str):  # type: ignore[no-untyped-def]
        from cdclake.apply.tables import Target

        return self.spark.read.format("delta").load(Target(str(self.root)).table_path(table))

    def rows(self, table: str, *columns: str) -> list[tuple[object, ...]]:
        df = self.df(table)
        cols = list(columns) or [c for c in df.columns if not c.startswith("_cdc_")]
        return sorted(tuple(r) for r in df.select(*cols).collect())

    def quarantine(self) -> list[tuple[object, ...]]:
        df = self.spark.read.format("delta").load(str(self.root / "_cdc_quarantine"))
        return sorted((r["lineage"]["offset"], r["reason"]) for r in df.collect())

    def quarantined_raw(self) -> dict[object, str | None]:
        """Line number -> the message the quarantine keeps for it."""
        df = self.spark.read.format("delta").load(str(self.root / "_cdc_quarantine"))
        return {r["lineage"]["offset"]: r["raw"] for r in df.collect()}


@pytest.fixture
def lake(spark: SparkSession, tmp_path: Path) -> Lake:
    return Lake(spark, tmp_path / "lake")
