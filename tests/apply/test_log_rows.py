"""cdclake's own logs read straight from the files their Delta log lists (``tables.log_rows``):
the rows of the newest version, without the state rebuild Spark's Delta reader runs for every
new version it scans (issue 36), and through Delta where the files alone would not say."""

from __future__ import annotations

from pathlib import Path

from delta.tables import DeltaTable
from jobs import count_jobs
from pyspark.sql import SparkSession

from cdclake.apply.tables import log_rows


def _append(spark: SparkSession, path: Path, *rows: tuple[int, str]) -> None:
    df = spark.createDataFrame(list(rows), "id INT, name STRING").coalesce(1)
    df.write.format("delta").mode("append").save(str(path))


def _rows(spark: SparkSession, path: Path) -> tuple[int, list[tuple[object, ...]]]:
    jobs, rows = count_jobs(
        spark, f"log-rows-{path.name}", lambda: log_rows(spark, str(path)).collect()
    )
    return jobs, sorted(tuple(r) for r in rows)


def test_the_newest_version_is_read_in_one_job_without_a_state_rebuild(
    spark: SparkSession, tmp_path: Path
) -> None:
    log = tmp_path / "log"
    _append(spark, log, (1, "a"))
    _append(spark, log, (2, "b"), (3, "c"))
    jobs, rows = _rows(spark, log)
    assert rows == [(1, "a"), (2, "b"), (3, "c")]
    assert jobs == 1  # the scan; Delta's reader adds three "Compute snapshot" jobs

    spark.sql(f"ALTER TABLE delta.`{log}` ADD COLUMNS (qty BIGINT)")
    more = spark.createDataFrame([(4, "d", 7)], "id INT, name STRING, qty BIGINT").coalesce(1)
    more.write.format("delta").mode("append").save(str(log))
    assert _rows(spark, log)[1] == [(1, "a", None), (2, "b", None), (3, "c", None), (4, "d", 7)]


def test_a_frame_made_before_an_append_reads_what_it_read(
    spark: SparkSession, tmp_path: Path
) -> None:
    """What a batch read stays what it read once it appends to the log itself."""
    log = tmp_path / "log"
    _append(spark, log, (1, "a"))
    before = log_rows(spark, str(log))
    _append(spark, log, (2, "b"))
    assert sorted(tuple(r) for r in before.collect()) == [(1, "a")]


def test_deletion_vectors_and_column_mapping_are_read_through_delta(
    spark: SparkSession, tmp_path: Path
) -> None:
    """A file's deletion vector, or physical column names, are not in the Parquet files: Delta
    reads such a log, and the rows are the table's."""
    dv = tmp_path / "dv"
    _append(spark, dv, (1, "a"), (2, "b"))
    spark.sql(
        f"ALTER TABLE delta.`{dv}` SET TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"
    )
    DeltaTable.forPath(spark, str(dv)).delete("id = 1")
    assert _rows(spark, dv)[1] == [(2, "b")]

    mapped = tmp_path / "mapped"
    _append(spark, mapped, (1, "a"))
    spark.sql(
        f"ALTER TABLE delta.`{mapped}` SET TBLPROPERTIES ('delta.columnMapping.mode' = 'name', "
        "'delta.minReaderVersion' = '2', 'delta.minWriterVersion' = '5')"
    )
    spark.sql(f"ALTER TABLE delta.`{mapped}` RENAME COLUMN name TO label")
    assert _rows(spark, mapped)[1] == [(1, "a")]
    assert log_rows(spark, str(mapped)).columns == ["id", "label"]


def test_a_log_without_files_is_empty_with_its_schema(spark: SparkSession, tmp_path: Path) -> None:
    log = tmp_path / "log"
    DeltaTable.create(spark).location(str(log)).addColumn("id", "INT").execute()
    df = log_rows(spark, str(log))
    assert df.collect() == [] and df.columns == ["id"]
