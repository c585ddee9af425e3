"""Inspect the quarantine (``<target>/_cdc_quarantine``): which records, why, from where.

``quarantine list`` (:func:`counts`) reads it with delta-rs, without a JVM; ``quarantine show``
reads it with Spark (imported there only). Replays: :mod:`cdclake.run.quarantine_replay`.

>>> counts("/lake", Selection(reason="key column*"))  # doctest: +SKIP
[('key column(s) item_id not in the row of shop.public.items ...', 'shop.public.items', 2)]
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from cdclake import delta_rs, globs
from cdclake.errors import ConfigError
from cdclake.target_layout import QUARANTINE, TargetPaths

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession


@dataclass(frozen=True)
class Selection:
    """Which quarantined records: globs on reason and table, and quarantined at or after
    ``since`` (ISO time, UTC)."""

    reason: str | None = None
    table: str | None = None
    since: str | None = None

    def since_time(self) -> datetime | None:
        """``since`` as a time (UTC when it names no zone); an error naming it when it is none."""
        if not self.since:
            return None
        try:
            moment = datetime.fromisoformat(self.since)
        except ValueError:
            raise ConfigError(
                f"--since {self.since!r}: expected an ISO time such as 2026-11-23T10:00:00"
            ) from None
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)

    def predicate(self) -> Column:
        """The selection as a Spark filter."""
        from pyspark.sql import functions as F

        cond = F.lit(True)
        if self.reason:
            cond &= F.coalesce(F.col("reason"), F.lit("")).rlike(globs.regex(self.reason))
        if self.table:
            cond &= F.coalesce(F.col("table"), F.lit("")).rlike(globs.regex(self.table))
        if self.since_time():
            cond &= F.col("quarantined_at") >= F.to_timestamp(F.lit(self.since))
        return cond

    def matcher(self) -> Callable[[str | None, str | None, datetime | None], bool]:
        """Whether a record (reason, table, quarantined_at) is selected, as :meth:`predicate`
        selects it."""
        reason = re.compile(globs.regex(self.reason)) if self.reason else None
        table = re.compile(globs.regex(self.table)) if self.table else None
        since = self.since_time()

        def selects(r: str | None, t: str | None, at: datetime | None) -> bool:
            return (
                (reason is None or reason.search(r or "") is not None)
                and (table is None or table.search(t or "") is not None)
                and (since is None or (at is not None and at >= since))
            )

        return selects


def _no_quarantine(target: str) -> ConfigError:
    path = TargetPaths(target).system_path(QUARANTINE)
    return ConfigError(f"no quarantine under {target!r} (expected a Delta table at {path})")


def quarantined(spark: SparkSession, target: str) -> DataFrame:
    """The quarantine table of ``target``; an error naming it when there is none."""
    from delta.tables import DeltaTable

    path = TargetPaths(target).system_path(QUARANTINE)
    if not DeltaTable.isDeltaTable(spark, path):
        raise _no_quarantine(target)
    return spark.read.format("delta").load(path)


def counts(target: str, selection: Selection) -> list[tuple[str, str, int]]:
    """(reason, table, count) of the selected records, most frequent first (then by reason and
    table); read with delta-rs, no JVM."""
    records = delta_rs.read(
        TargetPaths(target).system_path(QUARANTINE), ["reason", "table", "quarantined_at"]
    )
    if records is None:
        raise _no_quarantine(target)
    selects = selection.matcher()
    grouped = delta_rs.count_rows(records, "reason", "table", "quarantined_at")
    rows: dict[tuple[str | None, str | None], int] = {}
    for (reason, table, at), n in grouped.items():
        if selects(reason, table, at):
            rows[reason, table] = rows.get((reason, table), 0) + n
    ordered = [(reason, table, n) for (reason, table), n in rows.items()]
    # Spark's order: count descending, then reason and table ascending with nulls first
    ordered.sort(key=lambda r: (-r[2], r[0] is not None, r[0] or "", r[1] is not None, r[1] or ""))
    return [(reason or "", table or "", n) for reason, table, n in ordered]


def show(
    spark: SparkSession, target: str, selection: Selection, limit: int
) -> list[dict[str, Any]]:
    """The selected records with their lineage, oldest first (at most ``limit``); a Kafka
    record's ``key`` and ``headers`` (None where it had none, or where the quarantine was
    written before it kept them)."""
    records = quarantined(spark, target)
    kept = {name: name in records.columns for name in ("key", "headers")}
    rows = (
        records.filter(selection.predicate())
        .orderBy("quarantined_at", "lineage")
        .limit(limit)
        .collect()
    )
    return [
        {
            "source": r["lineage"]["source"],
            "partition": r["lineage"]["partition"],
            "offset": r["lineage"]["offset"],
            "table": r["table"],
            "reason": r["reason"],
            "batch_id": r["batch_id"],
            "quarantined_at": r["quarantined_at"],
            "raw": r["raw"],
            "key": r["key"] if kept["key"] else None,
            "headers": (r["headers"] or None) if kept["headers"] else None,
        }
        for r in rows
    ]
