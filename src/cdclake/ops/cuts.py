"""The cuts of a ``--consistent`` target (:mod:`cdclake.apply.consistency`) without a JVM:
``cdclake snapshot``, ``cdclake status``, and a reader in a process or engine of its own, which
reads every table of :func:`read_cut` at the version the cut names.

>>> cut = read_cut("/lake")  # doctest: +SKIP
>>> cut["tables"]  # doctest: +SKIP
{'shop.public.order_lines': 12, 'shop.public.orders': 12}
"""

from __future__ import annotations

from typing import Any

from cdclake import delta_rs
from cdclake.paths import to_uri
from cdclake.target_layout import CUTS, TargetPaths

COLUMNS = ("cut", "batch_id", "tables", "source_ts", "position", "held", "timed_out", "cut_at")


def cut_records(target: str, columns: tuple[str, ...] = COLUMNS) -> list[dict[str, Any]]:
    """Every cut recorded under ``target`` (``tables`` as a dict name -> Delta version,
    ``timed_out`` as a list); none when no ``--consistent`` batch ran."""
    table = delta_rs.read(TargetPaths(to_uri(target)).system_path(CUTS), list(columns))
    records = [] if table is None else delta_rs.records(table)
    for r in records:
        if "tables" in r:
            r["tables"] = dict(r["tables"] or [])
        if "timed_out" in r:
            r["timed_out"] = list(r["timed_out"] or [])
    return records


def read_cut(target: str, at: str | None = None) -> dict[str, Any]:
    """The latest cut of ``target``, or the one ``at`` names (a cut number, a source time or a
    position: :func:`cdclake.apply.consistency.parse_at`); a one-line error when there is none."""
    from cdclake.apply.consistency import choose_cut, parse_at

    return choose_cut(cut_records(target), parse_at(at), target)
