"""A small batch writes one file per table, whatever the session's shuffle partitions.

On a cluster the session is the user's, with Spark's default of 200 shuffle partitions. What
cdclake writes comes out of a shuffle by key whose plan is cached, which adaptive execution does
not coalesce: before, a batch of 30 rows wrote 26 files into the table, and a stream added as
many at every trigger.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from delta.tables import DeltaTable
from pyspark.sql import SparkSession
from test_spark_jobs import _line

from cdclake.apply.batch import apply_changes
from cdclake.apply.liveness import SOURCES
from cdclake.apply.tables import Target
from cdclake.run.runner import read_changes

TABLE = "postgres.public.customers"
DELETE = 5  # a line of the seed that deletes its key


@pytest.fixture
def spark_default_shuffle(spark: SparkSession) -> Iterator[SparkSession]:
    before = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", "200")
    try:
        yield spark
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", str(before))


def _files(spark: SparkSession, path: str) -> int:
    """The table's data files, as ``DESCRIBE DETAIL`` counts them."""
    row = DeltaTable.forPath(spark, path).detail().select("numFiles").first()
    assert row is not None
    return int(row[0])


def _batch(spark: SparkSession, path: Path, lines: list[str], target: str, scd: int) -> None:
    path.write_text("\n".join(lines))
    apply_changes(read_changes(spark, [str(path)]), target, stored_as_scd_type=scd)


def test_small_batches_write_one_file_per_table(
    spark_default_shuffle: SparkSession, tmp_path: Path
) -> None:
    spark = spark_default_shuffle
    target = str(tmp_path / "lake")
    t = Target(target)
    first = [_line(0, k, 100 + k) for k in range(1, 31)] + [_line(DELETE, 3, 200)]
    _batch(spark, tmp_path / "1.jsonl", first, target, 1)
    assert spark.read.format("delta").load(t.table_path(TABLE)).count() == 29
    assert _files(spark, t.table_path(TABLE)) == 1
    assert _files(spark, t.tombstone_path(TABLE)) == 1
    assert _files(spark, t.system_path(SOURCES)) == 1

    # into the existing table: new keys, a delete, and an update of a stored key
    second = [_line(0, k, 300 + k) for k in range(25, 41)] + [_line(DELETE, 4, 400)]
    _batch(spark, tmp_path / "2.jsonl", second, target, 1)
    rows = spark.read.format("delta").load(t.table_path(TABLE))
    assert sorted(r["id"] for r in rows.collect()) == [k for k in range(1, 41) if k not in (3, 4)]
    # the MERGE rewrites the one file it touched and writes its inserts: two at most
    assert _files(spark, t.table_path(TABLE)) <= 2
    assert _files(spark, t.tombstone_path(TABLE)) == 2  # an append per batch with deletes

    history = str(tmp_path / "history")
    h = Target(history)
    _batch(spark, tmp_path / "3.jsonl", first, history, 2)
    assert spark.read.format("delta").load(h.table_path(TABLE)).count() == 30
    assert _files(spark, h.table_path(TABLE)) == 1
    assert _files(spark, h.history_log_path(TABLE)) == 1
