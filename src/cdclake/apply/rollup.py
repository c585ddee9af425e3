"""A batch's summary rolled up on the driver: one Spark aggregate groups the batch by every key
any report needs at once (good or bad, table, op, input, source id); the groupings the batch
reports by (per table and op, per input, per source) are sums, maxima and "value of the newest"
of those few groups, computed here.

Spark's grouping sets gave the same from one scan, but expand every change into one row per
grouping and aggregate each: 0.8 to 0.95 s on a small batch's cache, against 0.2 s for the one
grouping (bench/README.md, "Issue 36").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pyspark.sql import Row

SUMS = ("n", "n_new", "n_before", "n_unavailable", "n_heartbeats", "n_txn_markers")
MAXIMA = (
    "table_source_id",
    "max_position",
    "last_seq",
    "last_event_time",
    "last_heartbeat",
    "last_offset",
)
AT_LAST_SEQ = ("keys", "key_source", "last_position", "last_ddl")
"""Values of a group's newest change (by ``seq``): of the rolled-up group, the newest part's."""


def roll_up(groups: Iterable[Row], by: Sequence[str]) -> list[Row]:
    """``groups`` (rows of the batch's one aggregate) rolled up to one row per value of ``by``."""
    parts: dict[tuple[Any, ...], list[Row]] = {}
    for g in groups:
        parts.setdefault(tuple(g[k] for k in by), []).append(g)
    return [Row(**dict(zip(by, key, strict=True)), **_combined(p)) for key, p in parts.items()]


def _combined(parts: list[Row]) -> dict[str, Any]:
    out: dict[str, Any] = {f: sum(p[f] for p in parts) for f in SUMS}
    for f in MAXIMA:
        out[f] = max((p[f] for p in parts if p[f] is not None), default=None)
    newest = max(parts, key=lambda p: (p["last_seq"] is not None, p["last_seq"] or 0))
    out.update({f: newest[f] for f in AT_LAST_SEQ})
    positioned = [p for p in parts if p["max_position"] is not None]
    out["max_position_ts"] = (
        max(positioned, key=lambda p: list(p["max_position"]))["max_position_ts"]
        if positioned
        else None
    )
    out["schemas"] = sorted({s for p in parts for s in p["schemas"]})
    out["input_ordered"] = any(p["input_ordered"] for p in parts)
    return out
