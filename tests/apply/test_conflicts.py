"""A stream beside ``cdclake maintain``: a batch whose MERGE meets a concurrent compaction of the
same table (Delta's ``ConcurrentDeleteReadException`` and kin) applies the table again instead of
failing the query, and every row stays exact (issue 37, item 2)."""

from __future__ import annotations

import logging
import random
import threading
from pathlib import Path
from typing import Any

import pytest
from builders.dbz import event
from pyspark.sql import SparkSession

from cdclake.apply.batch import retrying_conflicts
from cdclake.config import ApplyConfig
from cdclake.ops.maintain import maintain
from cdclake.run.runner import run_stream


class ConcurrentDeleteReadException(Exception):  # named as Delta's, which PySpark raises
    pass


def test_a_conflict_is_tried_again_and_other_failures_are_not() -> None:
    calls: list[int] = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise ConcurrentDeleteReadException("[DELTA_CONCURRENT_DELETE_READ] files were removed")
        return "applied"

    assert retrying_conflicts(flaky, "t", pause=0) == "applied" and len(calls) == 3

    def broken() -> str:
        calls.append(1)
        raise ValueError("a column of no known type")

    calls.clear()
    with pytest.raises(ValueError):
        retrying_conflicts(broken, "t", pause=0)
    assert len(calls) == 1  # not a conflict: no second try

    def always() -> str:
        raise ConcurrentDeleteReadException("again")

    with pytest.raises(ConcurrentDeleteReadException):
        retrying_conflicts(always, "t", attempts=2, pause=0)


def test_a_stream_beside_a_maintenance_loop_stays_exact(
    spark: SparkSession, tmp_path: Path, caplog: Any
) -> None:
    inbox, lake = tmp_path / "inbox", tmp_path / "lake"
    inbox.mkdir()
    config = ApplyConfig(
        inputs=(str(inbox),), target=str(lake), stream=True, checkpoint=str(tmp_path / "chk"),
        available_now=True,
    )  # fmt: skip
    rng = random.Random(7)
    oracle: dict[int, dict[str, Any]] = {}
    stop = threading.Event()
    other = spark.newSession()  # its own SQL conf, as another application's would be
    compactions: list[int] = []

    def maintenance() -> None:
        while not stop.is_set():
            if (lake / "shop.public.items" / "_delta_log").exists():
                report = maintain(other, str(lake))  # vacuum at 7 days: deletes nothing in use
                compactions.extend(1 for t in report if t.files_after < t.files_before)

    worker = threading.Thread(target=maintenance, daemon=True)
    worker.start()
    lsn = 0
    try:
        with caplog.at_level(logging.WARNING, logger="cdclake.apply.batch"):
            for b in range(4):
                lines = []
                for _ in range(30):
                    lsn += 1
                    i = rng.randrange(12)
                    if i in oracle and rng.random() < 0.3:
                        lines.append(event("d", before=oracle.pop(i), lsn=lsn))
                    else:
                        row = {"id": i, "name": f"b{b}", "qty": lsn}
                        lines.append(event("u" if i in oracle else "c", after=row, lsn=lsn))
                        oracle[i] = row
                (inbox / f"{b:03}.jsonl").write_text("\n".join(lines) + "\n")
                run_stream(spark, config)
    finally:
        stop.set()
        worker.join(timeout=120)
    items = spark.read.format("delta").load(str(lake / "shop.public.items"))
    assert {r["id"]: r.asDict() for r in items.select("id", "name", "qty").collect()} == oracle
    assert compactions  # the maintenance did run beside the batches
    retried = [r for r in caplog.records if "met a concurrent write" in r.getMessage()]
    print(f"compactions {len(compactions)}, batches applied again {len(retried)}")
