"""The Spark implementation of ``cdclake status``, ``quarantine list`` and the report's series,
as they were before issue 38 moved them to delta-rs: the reference the new path is compared with
(tests/ops/test_status_delta_rs.py) and the "before" of ``bench/status.py``. Not used by cdclake.
"""

from __future__ import annotations

import fnmatch
from datetime import UTC, datetime
from typing import Any

from delta.tables import DeltaTable
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from cdclake.apply import tables as tbl
from cdclake.apply.liveness import SOURCES
from cdclake.errors import ConfigError
from cdclake.ops.quarantine import Selection
from cdclake.ops.status import RECENT_BATCHES, Status, TableStatus, utc

MAX_BATCHES = 60
MAX_REASONS = 6


def _label(moment: datetime | None) -> str:
    return "" if moment is None else f"{utc(moment):%H:%M:%S}"


def _glob(pattern: str) -> str:
    return "^" + fnmatch.translate(pattern).removeprefix("(?s:").removesuffix(")\\Z") + "$"


def _load(spark: SparkSession, target: tbl.Target, name: str) -> DataFrame | None:
    path = target.system_path(name)
    return spark.read.format("delta").load(path) if DeltaTable.isDeltaTable(spark, path) else None


def _batches(spark: SparkSession, target: tbl.Target) -> DataFrame | None:
    """A Kafka stream's batch records: the ``batch`` rows of ``_cdc_sources``."""
    sources = _load(spark, target, SOURCES)
    if sources is None or "batch" not in sources.columns:
        return None
    return sources.filter("kind = 'batch'").select("batch.*")


def target_status(
    spark: SparkSession, target: str, now: datetime | None = None, recent: int = RECENT_BATCHES
) -> Status:
    """The status of every table cdclake applied to under ``target`` (see the module doc)."""
    tgt = tbl.Target(target)
    status = Status(now=now or datetime.now(UTC))
    sources = _load(spark, tgt, SOURCES)
    quarantine = _load(spark, tgt, tbl.QUARANTINE)
    if quarantine is not None:
        reasons = quarantine.groupBy("reason").count().collect()
        status.quarantine = {r["reason"]: r["count"] for r in sorted(reasons, key=lambda r: -r[1])}
    if sources is None:
        return status
    batches = [
        r[0] for r in sources.select("recorded_at").distinct().orderBy(F.desc("recorded_at"))
        .limit(recent + 1).collect()
    ]  # fmt: skip
    cutoff = batches[recent] if len(batches) > recent else None
    live = {
        r["source_id"]: r["ts"]
        for r in sources.filter(F.col("kind") == "source")
        .groupBy("source_id")
        .agg(F.max("last_message_ts").alias("ts"))
        .collect()
    }
    in_window = F.lit(True) if cutoff is None else F.col("recorded_at") > F.lit(cutoff)
    per_table = (
        sources.filter(F.col("kind") == "table")
        .groupBy("table")
        .agg(
            F.max_by("source_id", "recorded_at").alias("source_id"),
            F.max("last_position").alias("last_position"),
            F.max_by("last_position_ts", "last_position").alias("last_position_ts"),
            F.max("last_message_ts").alias("last_message_ts"),
            F.max_by("key_columns", "recorded_at").alias("key_columns"),
            F.max_by("key_source", "recorded_at").alias("key_source"),
            F.max_by("last_ddl", F.when(F.col("last_ddl").isNotNull(), F.col("recorded_at"))).alias(
                "last_ddl"
            ),
            F.sum(F.when(in_window, F.col("applied"))).alias("recent_applied"),
            F.sum(F.when(in_window, F.col("ignored"))).alias("recent_ignored"),
        )
        .orderBy("table")
        .collect()
    )
    q_by_table = _quarantine_by_table(quarantine, cutoff)
    for r in per_table:
        status.tables.append(_table_status(spark, tgt, r, live, q_by_table, status.now))
    status.stream = _stream(spark, tgt, batches, status.tables)
    return status


def _quarantine_by_table(
    quarantine: DataFrame | None, cutoff: datetime | None
) -> dict[str, tuple[int, int]]:
    if quarantine is None:
        return {}
    recent = F.lit(True) if cutoff is None else F.col("quarantined_at") > F.lit(cutoff)
    rows = (
        quarantine.filter(F.col("table").isNotNull())
        .groupBy("table")
        .agg(F.count(F.lit(1)).alias("n"), F.count_if(recent).alias("recent"))
        .collect()
    )
    return {r["table"]: (r["n"], r["recent"]) for r in rows}


def _table_status(
    spark: SparkSession,
    tgt: tbl.Target,
    r: Any,
    live: dict[str, datetime | None],
    quarantined: dict[str, tuple[int, int]],
    now: datetime,
) -> TableStatus:
    path = tgt.table_path(r["table"])
    exists = DeltaTable.isDeltaTable(spark, path)
    rows = spark.read.format("delta").load(path).count() if exists else 0
    props = tbl.table_properties(spark, path) if exists else {}
    times = [
        t for t in (r["last_position_ts"], r["last_message_ts"], live.get(r["source_id"])) if t
    ]
    newest = max(times) if times else None
    n_q, recent_q = quarantined.get(r["table"], (0, 0))
    return TableStatus(
        table=r["table"],
        rows=rows,
        key_columns=list(r["key_columns"] or []),
        key_source=r["key_source"],
        scd_type=int(props.get(tbl.SCD_TYPE_PROPERTY, "1")),
        source_id=r["source_id"],
        last_position=None if r["last_position"] is None else list(r["last_position"]),
        last_source_ts=r["last_position_ts"],
        freshness_seconds=None if newest is None else _seconds(now, newest),
        quarantined=n_q,
        recent_applied=int(r["recent_applied"] or 0),
        recent_ignored=int(r["recent_ignored"] or 0),
        recent_quarantined=recent_q,
        last_ddl=r["last_ddl"],
        ordering=props.get(tbl.ORDERING_PROPERTY, "source"),
    )


def _seconds(now: datetime, then: datetime) -> float:
    return round((utc(now) - utc(then)).total_seconds(), 3)


def _stream(
    spark: SparkSession, tgt: tbl.Target, batches: list[datetime], tables: list[TableStatus]
) -> dict[str, Any]:
    """The stream as a whole: the newest batch and its lag (``_cdc_batches`` when streaming
    from Kafka), else when the newest batch over files was applied."""
    stream: dict[str, Any] = {
        "last_batch_id": None,
        "last_batch_at": batches[0] if batches else None,
        "offsets_behind": None,
        "seconds_behind": None,
        "max_freshness_seconds": max(
            (t.freshness_seconds for t in tables if t.freshness_seconds is not None),
            default=None,
        ),
    }
    metrics = _batches(spark, tgt)
    if metrics is not None:
        last = metrics.orderBy(F.desc("finished_at")).first()
        if last is not None:
            stream.update(
                last_batch_id=last["batch_id"],
                last_batch_at=last["finished_at"],
                offsets_behind=last["offsets_behind"],
                seconds_behind=last["seconds_behind"],
            )
    return stream


def batches(spark: SparkSession, target: str) -> list[dict[str, Any]]:
    """Per batch, oldest first: when, messages, applied, ignored, seconds behind (the newest
    source time seen against when the batch was applied; a Kafka query's own lag wins)."""
    tgt = tbl.Target(target)
    sources = _load(spark, tgt, SOURCES)
    if sources is None:
        return []
    rows = (
        sources.groupBy("recorded_at", "batch_id")
        .agg(
            F.sum(F.when(F.col("kind") == "source", F.col("messages"))).alias("messages"),
            F.sum("applied").alias("applied"),
            F.sum("ignored").alias("ignored"),
            F.max("last_message_ts").alias("newest"),
        )
        .orderBy(F.desc("recorded_at"))
        .limit(MAX_BATCHES)
        .collect()
    )
    out = [
        {
            "at": r["recorded_at"],
            "batch_id": r["batch_id"],
            "messages": int(r["messages"] or 0),
            "applied": int(r["applied"] or 0),
            "ignored": int(r["ignored"] or 0),
            "lag": (
                max(0.0, (utc(r["recorded_at"]) - utc(r["newest"])).total_seconds())
                if r["newest"]
                else 0.0
            ),
        }
        for r in reversed(rows)
    ]
    metrics = _batches(spark, tgt)
    if metrics is not None:
        lag = {
            r["batch_id"]: r["seconds_behind"]
            for r in metrics.select("batch_id", "seconds_behind").collect()  # one row a batch
        }
        for b in out:
            if lag.get(b["batch_id"]) is not None:
                b["lag"] = float(lag[b["batch_id"]])
    return out


def quarantine_over_time(
    spark: SparkSession, target: str
) -> tuple[list[str], dict[str, list[float]]]:
    """Quarantined records per write (one per batch) and reason: the top reasons, then other."""
    q = _load(spark, tbl.Target(target), tbl.QUARANTINE)
    if q is None:
        return [], {}
    rows = q.groupBy("quarantined_at", "reason").count().orderBy("quarantined_at").collect()
    times = sorted({r["quarantined_at"] for r in rows})[-MAX_BATCHES:]
    totals: dict[str, int] = {}
    for r in rows:
        totals[r["reason"]] = totals.get(r["reason"], 0) + r["count"]
    top = sorted(totals, key=lambda k: -totals[k])[:MAX_REASONS]
    series: dict[str, list[float]] = {k: [0.0] * len(times) for k in top}
    index = {t: i for i, t in enumerate(times)}
    for r in rows:
        if r["quarantined_at"] in index:
            name = r["reason"] if r["reason"] in series else "other"
            series.setdefault(name, [0.0] * len(times))[index[r["quarantined_at"]]] += r["count"]
    return [_label(t) for t in times], series


def predicate(self: Selection) -> Column:
    cond = F.lit(True)
    if self.reason:
        cond &= F.coalesce(F.col("reason"), F.lit("")).rlike(_glob(self.reason))
    if self.table:
        cond &= F.coalesce(F.col("table"), F.lit("")).rlike(_glob(self.table))
    if self.since:
        try:
            datetime.fromisoformat(self.since)
        except ValueError:
            raise ConfigError(
                f"--since {self.since!r}: expected an ISO time such as 2026-11-23T10:00:00"
            ) from None
        cond &= F.col("quarantined_at") >= F.to_timestamp(F.lit(self.since))
    return cond


def counts(spark: SparkSession, target: str, selection: Selection) -> list[tuple[str, str, int]]:
    """(reason, table, count) of the selected records, most frequent first."""
    rows = (
        spark.read.format("delta")
        .load(tbl.Target(target).system_path(tbl.QUARANTINE))
        .filter(predicate(selection))
        .groupBy("reason", "table")
        .count()
        .orderBy(F.desc("count"), "reason", "table")
        .collect()
    )
    return [(r["reason"], r["table"] or "", r["count"]) for r in rows]
