"""Idempotent appends to cdclake's own logs (``Txn.append``): a replayed batch appends nothing,
without the state reconstruction that Delta's ``txnAppId``/``txnVersion`` costs (issue 36)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from delta.tables import DeltaTable
from jobs import count_jobs
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import IntegerType, LongType, StructField, StructType, TimestampType

from cdclake.apply.results import Txn
from cdclake.apply.tables import TXN_KEY, commit_info


def _rows(spark: SparkSession, *values: int) -> DataFrame:
    return spark.createDataFrame([(v,) for v in values], "n INT").coalesce(1)


def _stored(spark: SparkSession, path: Path) -> list[int]:
    return sorted(r["n"] for r in spark.read.format("delta").load(str(path)).collect())


def test_a_replayed_batch_appends_nothing_and_later_batches_append(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = tmp_path / "log"
    first = Txn(spark, "app", 3).append(_rows(spark, 1, 2), str(path), "sources")
    again = Txn(spark, "app", 3).append(_rows(spark, 1, 2), str(path), "sources")
    other_step = Txn(spark, "app", 3).append(_rows(spark, 7), str(path), "tombstones")
    nxt = Txn(spark, "app", 4).append(_rows(spark, 3), str(path), "sources")
    older = Txn(spark, "app", 2).append(_rows(spark, 9), str(path), "sources")

    assert (first, again, other_step, nxt, older) == (True, False, True, True, False)
    assert _stored(spark, path) == [1, 2, 3, 7]
    meta = json.loads(commit_info(spark, str(path), 2)["userMetadata"])
    assert meta == {TXN_KEY: "app/sources", "version": 4}


def test_other_writers_commits_do_not_hide_the_batch(spark: SparkSession, tmp_path: Path) -> None:
    path = str(tmp_path / "log")
    Txn(spark, "app", 5).append(_rows(spark, 1), path, "sources")
    for i in range(3):  # another query's batches, and a plain write
        Txn(spark, "other", i).append(_rows(spark, 10 + i), path, "sources")
    _rows(spark, 20).write.format("delta").mode("append").save(path)

    assert Txn(spark, "app", 5).append(_rows(spark, 1), path, "sources") is False
    assert _stored(spark, path) == [1, 10, 11, 12, 20]


def test_a_batch_an_earlier_cdclake_wrote_with_deltas_options_is_not_written_again(
    spark: SparkSession, tmp_path: Path
) -> None:
    """An earlier cdclake recorded its batches with ``txnAppId``/``txnVersion`` only: the
    table's log names no batch, so Delta's own check decides (a stream upgraded between a
    batch's write and its replay)."""
    path = str(tmp_path / "log")
    old = _rows(spark, 1).write.format("delta").mode("append")
    old.option("txnAppId", "app/sources").option("txnVersion", "7").save(path)

    Txn(spark, "app", 7).append(_rows(spark, 1), path, "sources")
    Txn(spark, "app", 8).append(_rows(spark, 2), path, "sources")
    Txn(spark, "app", 8).append(_rows(spark, 2), path, "sources")

    assert _stored(spark, path) == [1, 2]


def test_an_append_whose_batch_the_log_names_reads_no_table_state(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Delta answers ``txnVersion`` from the table's whole state: three more jobs (``Compute
    snapshot for version N``) for a three-row append."""
    path = str(tmp_path / "log")
    for v in range(3):
        Txn(spark, "app", v).append(_rows(spark, v), path, "sources")

    ours, _ = count_jobs(
        spark, "i36-append", lambda: Txn(spark, "app", 3).append(_rows(spark, 3), path, "sources")
    )
    options = {"txnAppId": "x/sources", "txnVersion": "1"}
    with_txn, _ = count_jobs(
        spark,
        "i36-txn",
        lambda: _rows(spark, 4).write.format("delta").mode("append").options(**options).save(path),
    )

    assert _stored(spark, path) == [0, 1, 2, 3, 4]
    assert with_txn >= ours + 2, (ours, with_txn)


ROWS = StructType([StructField("n", LongType()), StructField("at", TimestampType())])
INTS = StructType([StructField("n", IntegerType())])


def _row(n: int) -> dict[str, object]:
    return {"n": n, "at": datetime(2026, 11, 30, 12, 0, n, tzinfo=UTC)}


def test_rows_from_the_driver_commit_without_a_spark_job_once_per_batch(
    spark: SparkSession, tmp_path: Path
) -> None:
    """A batch's bookkeeping rows (``Txn.append_rows``) are committed by the driver (delta-rs)
    on a local path: no Spark job, Delta's own ``txn`` action and cdclake's ``userMetadata``
    in the commit, and a replay, in either writer, appends nothing."""
    path = str(tmp_path / "log")
    jobs, first = count_jobs(
        spark, "rows-first", lambda: Txn(spark, "app", 3).append_rows([_row(1)], ROWS, path, "s")
    )
    jobs_next, nxt = count_jobs(
        spark, "rows-next", lambda: Txn(spark, "app", 4).append_rows([_row(2)], ROWS, path, "s")
    )
    again = Txn(spark, "app", 4).append_rows([_row(2)], ROWS, path, "s")
    spark_again = Txn(spark, "app", 4).append(_rows(spark, 2), path, "s")  # Spark's append

    assert (jobs, jobs_next) == (0, 0)
    assert (first, nxt, again, spark_again) == (True, True, False, False)
    stored = spark.read.format("delta").load(path).orderBy("n").collect()
    assert [(r["n"], r["at"].second) for r in stored] == [(1, 1), (2, 2)]
    info = commit_info(spark, path, 1)
    assert info["engineInfo"].startswith("delta-rs")
    assert json.loads(info["userMetadata"]) == {TXN_KEY: "app/s", "version": 4}
    txn = DeltaTable.forPath(spark, path).detail()  # Spark reads the table's log as its own
    assert txn.first()["numFiles"] == 2


def test_rows_after_spark_appended_the_batch_are_not_written_again(
    spark: SparkSession, tmp_path: Path
) -> None:
    """A log whose newest batch an earlier cdclake appended with Spark (``userMetadata`` only,
    no ``txn`` action after its first batch): the driver's commit finds it there."""
    path = str(tmp_path / "log")
    Txn(spark, "app", 1).append(_rows(spark, 1), path, "s")
    Txn(spark, "app", 2).append(_rows(spark, 2), path, "s")  # userMetadata only

    assert Txn(spark, "app", 2).append_rows([{"n": 2}], INTS, path, "s") is False
    assert Txn(spark, "app", 3).append_rows([{"n": 3}], INTS, path, "s") is True
    assert _stored(spark, path) == [1, 2, 3]


def test_the_driver_commits_keep_sparks_checkpoint_interval(
    spark: SparkSession, tmp_path: Path
) -> None:
    """delta-rs checkpoints every 100 commits by default; a log of one commit a batch declares
    Spark's 10, so no reader replays more than 10 commits (a log Spark created gains it)."""
    for start, path in ((None, tmp_path / "new"), (0, tmp_path / "spark")):
        if start is not None:
            spark.createDataFrame([(start,)], "n INT").write.format("delta").save(str(path))
        for batch in range(1, 12):
            Txn(spark, "app", batch).append_rows([{"n": batch}], INTS, str(path), "s")
        log = path / "_delta_log"
        assert sorted(p.name for p in log.glob("*.checkpoint.parquet")), f"no checkpoint in {log}"
        props = {
            r["key"]: r["value"] for r in spark.sql(f"SHOW TBLPROPERTIES delta.`{path}`").collect()
        }
        assert props["delta.checkpointInterval"] == "10"
