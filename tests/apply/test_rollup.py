"""The batch summary's rollups (:mod:`cdclake.apply.rollup`) against the same aggregates taken
directly over the changes, in plain Python: no Spark (issue 36)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from pyspark.sql import Row

from cdclake.apply.rollup import roll_up

T0 = datetime(2026, 1, 1, tzinfo=UTC)

change = st.fixed_dictionaries(
    {
        "table": st.sampled_from(["a", "b"]),
        "op": st.sampled_from(["c", "u", "d"]),
        "_source": st.sampled_from(["f1", "f2", "f3"]),
        "_source_id": st.sampled_from(["s1", "s2"]),
        "position": st.one_of(st.none(), st.lists(st.integers(0, 3), min_size=1, max_size=2)),
        "ts": st.one_of(st.none(), st.integers(0, 100)),
        "schema": st.sampled_from(["v1", "v2", ""]),
        "key": st.sampled_from(["id", "code"]),
        "ordered": st.booleans(),
        "offset": st.integers(0, 1000),
    }
)


def _aggregate(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """What the Spark aggregate computes for one group (the subset the rollup combines)."""
    newest = max(rows, key=lambda r: r["seq"])
    positioned = [r for r in rows if r["position"] is not None]
    top = max(positioned, key=lambda r: r["position"]) if positioned else None
    times = [T0 + timedelta(seconds=r["ts"]) for r in rows if r["ts"] is not None]
    return {
        "n": len(rows),
        "n_new": 0,
        "n_before": sum(r["op"] == "u" for r in rows),
        "n_unavailable": 0,
        "n_heartbeats": 0,
        "n_txn_markers": 0,
        "table_source_id": max(r["_source_id"] for r in rows),
        "max_position": top["position"] if top else None,
        "max_position_ts": top and top["ts"],
        "last_seq": newest["seq"],
        "last_event_time": max(times, default=None),
        "last_heartbeat": None,
        "last_offset": max(r["offset"] for r in rows),
        "keys": newest["key"],
        "key_source": newest["key"],
        "last_position": newest["position"],
        "last_ddl": None,
        "schemas": sorted({r["schema"] for r in rows}),
        "input_ordered": any(r["ordered"] for r in rows),
    }


def _group(rows: list[dict[str, Any]], by: tuple[str, ...]) -> dict[tuple[Any, ...], Any]:
    out: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for r in rows:
        out.setdefault(tuple(r[k] for k in by), []).append(r)
    return {k: _aggregate(v) for k, v in out.items()}


@settings(max_examples=200, deadline=None)
@given(st.lists(change, min_size=1, max_size=30))
def test_rolled_up_groups_equal_the_aggregate_taken_directly(changes: list[dict]) -> None:
    rows = [{**c, "seq": i} for i, c in enumerate(changes)]
    finest = ("table", "op", "_source", "_source_id")
    finest_groups = _group(rows, finest).items()
    groups = [Row(**dict(zip(finest, k, strict=True)), **v) for k, v in finest_groups]
    for by in [("table", "op"), ("_source",), ("_source_id",)]:
        rolled = {tuple(r[k] for k in by): r.asDict() for r in roll_up(groups, by)}
        direct = _group(rows, by)
        assert set(rolled) == set(direct)
        for key, expected in direct.items():
            got = {k: v for k, v in rolled[key].items() if k not in by}
            if expected["max_position"] is not None:  # ties: any row of the top position
                tied = {
                    r["ts"] for r in rows if r["position"] == expected["max_position"]
                    and all(r[k] == v for k, v in zip(by, key, strict=True))
                }  # fmt: skip
                assert got.pop("max_position_ts") in tied
                expected = {k: v for k, v in expected.items() if k != "max_position_ts"}
            assert got == expected
