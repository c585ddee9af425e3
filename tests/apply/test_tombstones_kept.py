"""The tombstones a batch joins, kept from batch to batch (:mod:`cdclake.apply.tombstones`),
against the plain-Python newest position per key of the rows the log holds.

The log is changed as it is in use: appends (a batch's deletes, by the driver or by Spark, or
another writer's), deletes of rows (maintenance pruning it, which rewrites files), and the log
dropped and written again under other keys; the check between the changes reads it twice, as
two batches with no delete between them do. Whatever the changes, the kept aggregate is the
log's; after :data:`~cdclake.apply.tombstones.REREAD_AFTER` increments it is read whole again.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from unittest import mock

from delta.tables import DeltaTable
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession
from pyspark.sql.types import ArrayType, LongType, StructField, StructType

from cdclake import delta_rs
from cdclake.apply import tombstones
from cdclake.model import POSITION_COL

Row = tuple[int, int]  # (key, position)
append = st.lists(st.tuples(st.integers(0, 6), st.integers(0, 40)), min_size=1, max_size=5)
step = st.one_of(
    st.tuples(st.just("driver"), append),
    st.tuples(st.just("spark"), append),
    st.tuples(st.just("prune"), st.integers(0, 40)),
    st.tuples(st.just("renamed"), append),
    st.tuples(st.just("check"), st.just([])),
)


def _schema(key: str) -> StructType:
    return StructType(
        [StructField(key, LongType()), StructField(POSITION_COL, ArrayType(LongType()))]
    )


def _expected(rows: list[Row]) -> dict[int, int]:
    newest: dict[int, int] = {}
    for key, position in rows:
        newest[key] = max(position, newest.get(key, position))
    return newest


def _kept(spark: SparkSession, path: str, key: str) -> dict[int, int]:
    frame = tombstones.newest_tombstones(spark, path, [key])
    return {int(r["_t0"]): int(r["_tomb"][0]) for r in frame.collect()}


@settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=st.lists(step, min_size=1, max_size=7))
def test_kept_tombstones_are_the_logs(
    spark: SparkSession, tmp_path: Path, steps: list[tuple[str, object]]
) -> None:
    path = str(tmp_path / "log")
    shutil.rmtree(path, ignore_errors=True)
    tombstones.forget(path)
    key, rows, first = "id", list[Row](), True
    with mock.patch.object(tombstones, "REREAD_AFTER", 2):
        for kind, arg in steps:
            if kind == "renamed":  # the log dropped and written again, keyed by another column
                shutil.rmtree(path, ignore_errors=True)
                key, rows = ("code" if key == "id" else "id"), []
                kind = "driver"
            if kind in ("driver", "spark") and isinstance(arg, list):
                records = [{key: k, POSITION_COL: [p]} for k, p in arg]
                if kind == "driver" or first:
                    delta_rs.append(path, records, _schema(key))
                else:
                    frame = spark.createDataFrame(records, _schema(key))
                    frame.write.format("delta").mode("append").save(path)
                rows += arg
                first = False
            elif kind == "prune" and isinstance(arg, int) and not first:
                DeltaTable.forPath(spark, path).delete(f"{POSITION_COL}[0] < {arg}")
                rows = [r for r in rows if r[1] >= arg]
            if not first:
                assert _kept(spark, path, key) == _expected(rows), steps
    tombstones.forget(path)


def test_a_batch_reads_only_the_new_files(spark: SparkSession, tmp_path: Path) -> None:
    """After an append, the kept aggregate is joined with the new file alone: the files read
    before may be gone from the disk (here, by hand) and the batch's tombstones are right."""
    path = tmp_path / "log"
    for batch in range(5):
        delta_rs.append(str(path), [{"id": batch, POSITION_COL: [batch]}], _schema("id"))
    assert _kept(spark, str(path), "id") == {b: b for b in range(5)}
    read = list(path.glob("*.parquet"))
    delta_rs.append(str(path), [{"id": 0, POSITION_COL: [9]}], _schema("id"))
    for file in read:
        file.unlink()
    assert _kept(spark, str(path), "id") == {0: 9, 1: 1, 2: 2, 3: 3, 4: 4}
    kept = tombstones._KEPT[str(path)]
    assert (kept.increments, len(kept.files)) == (1, 6)
    tombstones.forget(str(path))
