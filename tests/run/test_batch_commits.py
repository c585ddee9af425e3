"""The Delta commits of a Kafka stream's steady batches (issue 36): one per table the batch
touches (the target, and its tombstone log when the batch deletes) and one for cdclake's
bookkeeping (``_cdc_sources``: the batch's source, input and table rows with its own record);
none for a replay; and where each batch's time went, step by step."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

from builders import dbz
from pyspark.sql import SparkSession

from cdclake.config import ApplyConfig
from cdclake.decode import KnownGroups
from cdclake.run.kafka_tools import source_rows
from cdclake.run.streaming import process_batch

TABLE = "pg.public.items"


def _commits(target: Path) -> Counter[str]:
    """Commits per table folder under ``target`` (the target table by its folder's name)."""
    return Counter(
        log.parent.parent.relative_to(target).as_posix()
        for log in target.glob("**/_delta_log/*.json")
    )


def _config(tmp_path: Path) -> ApplyConfig:
    """A query's settings into ``tmp_path/lake``; the batches are given, no broker is asked."""
    return ApplyConfig(
        format="debezium",
        target=str(tmp_path / "lake"),
        checkpoint=str(tmp_path / "chk"),
        kafka_bootstrap="127.0.0.1:9",
        topics=("t",),
    )


def _row(i: int, lsn: int) -> dict[str, object]:
    return {"id": i, "name": f"n{i}@{lsn}", "qty": lsn}


def test_a_steady_batch_commits_once_to_each_table_and_a_replay_commits_nothing(
    spark: SparkSession, tmp_path: Path
) -> None:
    target = tmp_path / "lake"
    config = _config(tmp_path)
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
    ids, offsets = [0, 1, 2, 2], [0, 6, 9, 9]

    added, one_pass, steps = [], [], []
    for batch_id, lines, offset in zip(ids, batches, offsets, strict=True):
        before = _commits(target)
        kafka = source_rows(spark, lines, "t", offset)
        started = time.perf_counter()
        metrics = process_batch(kafka, batch_id, config, "app", known=known)
        wall = time.perf_counter() - started
        added.append(+(_commits(target) - before))
        one_pass.append(metrics.result.one_pass)
        steps.append(metrics.result)
        # the batch's steps cut its wall time: they add up to it, none counted twice
        assert 0.95 * wall <= sum(metrics.result.seconds.values()) <= wall, metrics.result.seconds

    folder = next(p.name for p in target.iterdir() if not p.name.startswith("_"))
    tombstones = f"_cdc_tombstones/{folder}"
    assert [set(r.seconds) for r in steps] == [{"decode", "quarantine", "tables", "record"}] * 4
    # the table's share: its write each time, its tombstones in the batch that deletes
    assert [sorted(t.seconds) for r in steps[:3] for t in r.tables.values()] == [
        ["write"],
        ["tombstones", "write"],
        ["write"],
    ]
    for r in steps[:3]:
        assert sum(r.table_seconds().values()) <= r.seconds["tables"]
    assert one_pass == [False, True, True, True]  # a steady batch: typed with the known plans
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
    records = sources.filter("kind = 'batch'").select("batch.*").orderBy("batch_id").collect()
    assert [(r["batch_id"], r["messages"], r["applied"], r["ignored"]) for r in records] == [
        (0, 6, 6, 0),
        (1, 3, 3, 0),
        (2, 2, 2, 0),
    ]


def test_an_empty_batch_is_recorded_with_no_message(spark: SparkSession, tmp_path: Path) -> None:
    """A micro-batch without records (all its offsets transaction markers, say): Spark
    completes the observation of its size with an empty row when the first action over it is
    an aggregate (adaptive execution cuts an empty plan short), and the batch is still
    recorded, with no message, then the next one applied."""
    target = tmp_path / "lake"
    config = _config(tmp_path)
    known = KnownGroups()
    empty = process_batch(source_rows(spark, [], "t", 0), 0, config, "app", known=known)
    assert (empty.result.messages, empty.result.changes, empty.oversize) == (0, 0, 0)
    lines = [dbz.event("c", after=_row(i, 10 + i), lsn=10 + i) for i in range(2)]
    process_batch(source_rows(spark, lines, "t", 0), 1, config, "app", known=known)
    sources = spark.read.format("delta").load(str(target / "_cdc_sources"))
    records = sources.filter("kind = 'batch'").select("batch.*").orderBy("batch_id").collect()
    assert [(r["batch_id"], r["messages"], r["applied"]) for r in records] == [(0, 0, 0), (1, 2, 2)]
