"""Tables of one batch applied side by side: the same tables as one by one, and exactly once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from builders.msgs import Row, debezium
from delta.tables import DeltaTable
from pyspark.sql import SparkSession

from cdclake.apply.tables import Target
from cdclake.config import ApplyConfig
from cdclake.run.runner import apply_raw
from cdclake.sources import raw_from_lines

TABLES = ("items", "orders", "notes", "parts")


def _msg(table: str, n: int, after: Row | None, before: Row | None = None, op: str = "c") -> str:
    key = None if table == "notes" else "auto"
    line = debezium(10 * n + TABLES.index(table), after, before, op=op, key=key)
    return line.replace('"table": "items"', f'"table": "{table}"')


def _lines() -> list[str]:
    """Inserts, updates and a delete in four tables; ``notes`` has no key (whole-row deletes)."""
    lines = []
    for t in TABLES:
        a1, a3 = {"id": 1, "name": f"{t}-a", "qty": 1}, {"id": 1, "name": f"{t}-a", "qty": 3}
        b = {"id": 2, "name": f"{t}-b", "qty": 2}
        lines += [
            _msg(t, 1, a1),
            _msg(t, 2, b),
            _msg(t, 3, a3, a1, "u"),
            _msg(t, 4, None, b, "d"),
            _msg(t, 5, {"id": 3, "name": f"{t}-c", "qty": 5}),
        ]
    return lines


def _apply(spark: SparkSession, root: Path, parallel: int, batch_id: int | None = None):  # type: ignore[no-untyped-def]
    config = ApplyConfig(inputs=("t.jsonl",), target=str(root), parallel_tables=parallel)
    raw = raw_from_lines(spark, _lines(), "t.jsonl")
    return apply_raw(
        raw, config, app_id=None if batch_id is None else "cdclake-t", batch_id=batch_id
    )


def _tables(spark: SparkSession, root: Path) -> dict[str, list[tuple[object, ...]]]:
    target = Target(str(root))
    out = {}
    for table in TABLES:
        df = spark.read.format("delta").load(target.table_path(f"shop.dbo.{table}"))
        out[table] = sorted(tuple(r) for r in df.select("id", "name", "qty").collect())
    return out


def _counts(result) -> dict[str, tuple[int, int, int, int | None]]:  # type: ignore[no-untyped-def]
    return {
        name: (t.inserted, t.updated, t.deleted, t.rows_now) for name, t in result.tables.items()
    }


def _in_group(spark: SparkSession, group: str, apply: Callable[[], object]) -> tuple[object, int]:
    sc = spark.sparkContext
    sc.setJobGroup(group, group)
    try:
        return apply(), len(sc.statusTracker().getJobIdsForGroup(group))
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
        sc.setLocalProperty("spark.job.description", None)  # type: ignore[arg-type]


def test_side_by_side_gives_the_tables_and_counts_of_one_by_one(
    spark: SparkSession, tmp_path: Path
) -> None:
    one, jobs_one = _in_group(spark, "cdclake-one", lambda: _apply(spark, tmp_path / "one", 1))
    four, jobs_four = _in_group(spark, "cdclake-four", lambda: _apply(spark, tmp_path / "four", 4))
    # the tables' jobs carry the caller's job group (a streaming stop cancels by it)
    assert jobs_four >= 0.8 * jobs_one > 0
    expected = {t: [(1, f"{t}-a", 3), (3, f"{t}-c", 5)] for t in TABLES}
    assert _tables(spark, tmp_path / "one") == expected
    assert _tables(spark, tmp_path / "four") == expected
    assert _counts(four) == _counts(one)
    assert list(four.tables) == sorted(four.tables)  # the summary lists tables in order
    assert (four.changes, four.quarantined) == (one.changes, one.quarantined) == (20, 0)


def test_a_replayed_batch_changes_no_table_when_applied_side_by_side(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Each table's writes carry the batch's identifiers in their own session: a replay of the
    batch (a streaming restart) commits nothing again, and the caller's session is left clean."""
    root = tmp_path / "lake"
    _apply(spark, root, parallel=4, batch_id=7)
    target = Target(str(root))
    paths = [target.table_path(f"shop.dbo.{t}") for t in TABLES]
    versions = [DeltaTable.forPath(spark, p).history(1).first()["version"] for p in paths]
    _apply(spark, root, parallel=4, batch_id=7)
    assert [DeltaTable.forPath(spark, p).history(1).first()["version"] for p in paths] == versions
    assert _tables(spark, root) == {t: [(1, f"{t}-a", 3), (3, f"{t}-c", 5)] for t in TABLES}
    assert spark.conf.get("spark.databricks.delta.write.txnAppId", None) is None
