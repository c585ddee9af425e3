"""A batch's wall time by step (:class:`cdclake.apply.results.Laps`) and the line a person reads
(:func:`cdclake.run.summary.timing`): pure logic, no Spark. The steps of real batches are
checked in tests/run/test_batch_commits.py (a Kafka stream's) and tests/ops/test_metrics.py
(what Prometheus is served)."""

from __future__ import annotations

import time

import pytest

from cdclake.apply.results import BatchResult, Laps, TableResult, timed
from cdclake.run.summary import timing


def test_laps_cut_the_wall_time_into_steps_that_add_up_to_it() -> None:
    started = time.perf_counter()
    laps = Laps()
    time.sleep(0.02)
    laps.lap("decode")
    time.sleep(0.01)
    laps.lap("tables")
    time.sleep(0.01)
    laps.lap("decode")  # a step met again (a batch decoded again in two passes) adds up
    wall = time.perf_counter() - started
    assert list(laps.seconds) == ["decode", "tables"]
    assert laps.seconds["decode"] >= 0.03 and laps.seconds["tables"] >= 0.01
    assert sum(laps.seconds.values()) == pytest.approx(wall, abs=0.005)


def test_timed_adds_a_blocks_time_even_when_it_raises() -> None:
    seconds: dict[str, float] = {"write": 1.0}
    with pytest.raises(ValueError), timed(seconds, "write"):
        time.sleep(0.01)
        raise ValueError("a failed MERGE")
    assert 1.01 <= seconds["write"] < 1.5


def _batch(seconds: dict[str, float], tables: dict[str, dict[str, float]]) -> BatchResult:
    return BatchResult(
        tables={t: TableResult(t, seconds=s) for t, s in tables.items()}, seconds=seconds
    )


def test_the_line_shows_each_step_with_what_the_tables_writes_took() -> None:
    result = _batch(
        {"decode": 2.04, "quarantine": 0.01, "tables": 1.93, "record": 0.12},
        {"a": {"tombstones": 0.2, "write": 1.0}, "b": {"write": 0.5}},
    )
    assert timing(result) == (
        "4.1 s: decode 2.0 s, tables 1.9 s (tombstones 0.2 s, write 1.5 s), record 0.1 s"
    )
    assert timing(BatchResult()) == ""  # a result built by hand: not timed


def test_merged_results_add_their_steps_and_their_tables_steps() -> None:
    total = BatchResult()
    total.merge(_batch({"decode": 1.0, "tables": 2.0}, {"a": {"write": 1.5}}))
    total.merge(_batch({"decode": 0.5, "record": 0.1}, {"a": {"write": 0.5, "tombstones": 0.1}}))
    assert total.seconds == {"decode": 1.5, "tables": 2.0, "record": 0.1}
    assert total.tables["a"].seconds == {"write": 2.0, "tombstones": 0.1}
    assert total.table_seconds() == {"write": 2.0, "tombstones": 0.1}
