"""The Delta commits of a stream's steady batches (issue 36): one per table the batch touches (the
target, its tombstone log when the batch deletes, ``_cdc_sources``), and none for a replay."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from builders import dbz
from pyspark.sql import SparkSession

from cdclake.config import ApplyConfig
from cdclake.decode import KnownGroups
from cdclake.run.runner import apply_raw
from cdclake.sources import raw_from_lines

TABLE = "pg.public.items"


def _commits(target: Path) -> Counter[str]:
    """Commits per table folder under ``target`` (the target table by its folder's name)."""
    return Counter(
        log.parent.parent.relative_to(target).as_posix()
        for log in target.glob("**/_delta_log/*.json")
    )


def _row(i: int, lsn: int) -> dict[str, object]:
    return {"id": i, "name": f"n{i}@{lsn}", "qty": lsn}


def test_a_steady_batch_commits_once_to_each_table_and_a_replay_commits_nothing(
    spark: SparkSession, tmp_path: Path
) -> None:
    target = tmp_path / "lake"
    config = ApplyConfig(format="debezium", target=str(target))
    known = KnownGroups()
    inserts = [dbz.event("c", after=_row(i, 10 + i), lsn=10 + i) for i in range(6)]
    updates_and_deletes = [
        *[
            dbz.event("u", before=_row(i, 10 + i), after=_row(i, 20 + i), lsn=20 + i)
            for i in (0, 1)
        ],
        dbz.event("d", before=_row(2, 12), lsn=30),
    ]
    updates = [dbz.event("u", after=_row(i, 40 + i), lsn=40 + i) for i in (3, 4)]
    batches = [inserts, updates_and_deletes, updates, updates]  # the last: a replay of batch 2
    ids = [0, 1, 2, 2]

    added = []
    for batch_id, lines in zip(ids, batches, strict=True):
        before = _commits(target)
        raw = raw_from_lines(spark, lines, epoch=batch_id)
        apply_raw(raw, config, "app", batch_id, len(lines), False, known)
        added.append(+(_commits(target) - before))

    folder = next(p.name for p in target.iterdir() if not p.name.startswith("_"))
    tombstones = f"_cdc_tombstones/{folder}"
    assert added[1:] == [
        {folder: 1, tombstones: 1, "_cdc_sources": 1},
        {folder: 1, "_cdc_sources": 1},
        {},
    ]
    rows = spark.read.format("delta").load(str(target / folder)).collect()
    assert sorted((r["id"], r["qty"]) for r in rows) == [
        (0, 20),
        (1, 21),
        (3, 43),
        (4, 44),
        (5, 15),
    ]
    sources = spark.read.format("delta").load(str(target / "_cdc_sources"))
    assert sorted(r["batch_id"] for r in sources.filter("kind = 'table'").collect()) == [0, 1, 2]
