"""The rows a table holds after a batch (``rows_now``): from the checksum's file statistics
where Delta lists every file there, else a count; the same number either way."""

from __future__ import annotations

import shutil
from pathlib import Path

from delta.tables import DeltaTable
from jobs import count_jobs
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from cdclake.apply.tables import _rows_from_checksum, rows_in


def _table(spark: SparkSession, path: Path, n: int, **props: str) -> str:
    writer = spark.range(n).withColumn("v", F.col("id") % 3).writeTo(f"delta.`{path}`")
    for k, v in props.items():
        writer = writer.tableProperty(k, v)
    writer.using("delta").create()
    return str(path)


def _append(spark: SparkSession, path: str, ids: range, v: int) -> None:
    rows = spark.range(ids.start, ids.stop).withColumn("v", F.lit(v).cast("long"))
    rows.write.format("delta").mode("append").save(path)


def test_rows_after_deletes_with_and_without_deletion_vectors(
    spark: SparkSession, tmp_path: Path
) -> None:
    for dv in ("true", "false"):
        path = _table(spark, tmp_path / dv, 30, **{"delta.enableDeletionVectors": dv})
        DeltaTable.forPath(spark, path).delete("v = 0")  # 10 of the 30
        _append(spark, path, range(100, 105), 1)
        jobs, n = count_jobs(spark, f"rows-in-{dv}", lambda p=path: rows_in(spark, p))
        assert n == spark.read.format("delta").load(path).count() == 25, dv
        assert jobs == 0, f"rows_in ran {jobs} Spark jobs (deletion vectors {dv})"


def test_a_table_whose_checksum_lists_no_files_is_counted(
    spark: SparkSession, tmp_path: Path
) -> None:
    key = "spark.databricks.delta.allFilesInCrc.enabled"
    spark.conf.set(key, "false")
    try:
        path = _table(spark, tmp_path / "t", 12)
        _append(spark, path, range(3), 0)
    finally:
        spark.conf.unset(key)
    assert _rows_from_checksum(spark, path) is None
    assert rows_in(spark, path) == 15


def test_no_table_or_a_dropped_one_has_no_rows(spark: SparkSession, tmp_path: Path) -> None:
    assert rows_in(spark, str(tmp_path / "never")) is None
    path = _table(spark, tmp_path / "dropped", 4)
    assert rows_in(spark, path) == 4
    shutil.rmtree(path)  # what a DROP TABLE of the run does with ``drop_table="drop"``
    assert rows_in(spark, path) is None
