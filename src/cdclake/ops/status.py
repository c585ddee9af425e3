"""Where every table of a target stands: rows, key, position, freshness, quarantine, the stream.

Read from the metadata tables cdclake keeps next to the tables (``_cdc_sources``,
``_cdc_quarantine``, ``_cdc_batches``); only small aggregates reach the driver.

**Freshness** of a table is how many seconds it is behind its source at time ``now``::

    freshness = now - max(source time of the newest change applied to the table,
                          source time of the newest record of the table's source)

where the table's source is its connector's logical name (a Debezium ``topic.prefix``), else
its Kafka topic, else the input files (:func:`cdclake.apply.liveness.source_id`), and a record
of the source is any good record: a change of any of its tables, a heartbeat, a transaction
marker. So a quiet table of a live source (heartbeats still arriving) stays fresh, and a table
whose source went silent grows stale. A table with no source time at all has no freshness
(``None``) and counts as stale for ``--max-staleness``.

>>> s = target_status(spark, "/lake")  # doctest: +SKIP
>>> s.tables[0].freshness_seconds  # doctest: +SKIP
4.0
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from delta.tables import DeltaTable
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from cdclake.apply import tables as T
from cdclake.apply.tables import SOURCES
from cdclake.errors import ConfigError

RECENT_BATCHES = 10


@dataclass
class TableStatus:
    """One table: what it holds now and how far behind its source it is."""

    table: str
    rows: int
    key_columns: list[str]
    key_source: str | None
    scd_type: int
    source_id: str | None
    last_position: list[int] | None
    last_source_ts: datetime | None
    freshness_seconds: float | None
    quarantined: int
    recent_applied: int = 0  # in the last RECENT_BATCHES batches of the target
    recent_ignored: int = 0
    recent_quarantined: int = 0
    last_ddl: str | None = None
    ordering: str = "source"  # "input": its source gives no position (cdclake.ordering)


@dataclass
class Status:
    """The whole target: its tables, the stream, the quarantine by reason."""

    now: datetime
    tables: list[TableStatus] = field(default_factory=list)
    stream: dict[str, Any] = field(default_factory=dict)
    quarantine: dict[str, int] = field(default_factory=dict)

    def stale(self, max_seconds: float) -> list[TableStatus]:
        """Tables behind their source by more than ``max_seconds`` (or of unknown freshness)."""
        return [
            t
            for t in self.tables
            if t.freshness_seconds is None or t.freshness_seconds > max_seconds
        ]

    def to_json(self) -> dict[str, Any]:
        """``{"tables": [...], "stream": {...}, "quarantine": {reason: count}}``."""
        keys = (
            "table",
            "rows",
            "key_columns",
            "scd_type",
            "last_position",
            "last_source_ts",
            "freshness_seconds",
            "quarantined",
            "ordering",
        )
        tables = [{k: _plain(asdict(t)[k]) for k in keys} for t in self.tables]
        return {
            "tables": tables,
            "stream": {k: _plain(v) for k, v in self.stream.items()},
            "quarantine": dict(self.quarantine),
        }


def _plain(value: Any) -> Any:
    return utc(value).isoformat() if isinstance(value, datetime) else value


def utc(moment: datetime) -> datetime:
    """PySpark hands timestamps back as naive local times: make them aware, in UTC."""
    return moment.astimezone(UTC)


def parse_duration(text: str) -> float:
    """``15m`` -> 900.0; units s, m, h, d (plain numbers are seconds).

    >>> parse_duration("1h30m")
    5400.0
    """
    parts = re.findall(r"(\d+(?:\.\d+)?)\s*([smhd]?)", text.strip().lower())
    if not parts or re.sub(r"[\d.\s smhd]", "", text.lower()):
        raise ConfigError(f"--max-staleness {text!r}: expected a duration such as 90s, 15m, 2h, 1d")
    unit = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
    return float(sum(float(n) * unit[u] for n, u in parts))


def _load(spark: SparkSession, target: T.Target, name: str) -> DataFrame | None:
    path = target.system_path(name)
    return spark.read.format("delta").load(path) if DeltaTable.isDeltaTable(spark, path) else None


def target_status(
    spark: SparkSession, target: str, now: datetime | None = None, recent: int = RECENT_BATCHES
) -> Status:
    """The status of every table cdclake applied to under ``target`` (see the module doc)."""
    tgt = T.Target(target)
    status = Status(now=now or datetime.now(UTC))
    sources = _load(spark, tgt, SOURCES)
    quarantine = _load(spark, tgt, T.QUARANTINE)
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
    tgt: T.Target,
    r: Any,
    live: dict[str, datetime | None],
    quarantined: dict[str, tuple[int, int]],
    now: datetime,
) -> TableStatus:
    path = tgt.table_path(r["table"])
    exists = DeltaTable.isDeltaTable(spark, path)
    rows = spark.read.format("delta").load(path).count() if exists else 0
    props = T.table_properties(spark, path) if exists else {}
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
        scd_type=int(props.get(T.SCD_TYPE_PROPERTY, "1")),
        source_id=r["source_id"],
        last_position=None if r["last_position"] is None else list(r["last_position"]),
        last_source_ts=r["last_position_ts"],
        freshness_seconds=None if newest is None else _seconds(now, newest),
        quarantined=n_q,
        recent_applied=int(r["recent_applied"] or 0),
        recent_ignored=int(r["recent_ignored"] or 0),
        recent_quarantined=recent_q,
        last_ddl=r["last_ddl"],
        ordering=props.get(T.ORDERING_PROPERTY, "source"),
    )


def _seconds(now: datetime, then: datetime) -> float:
    return round((utc(now) - utc(then)).total_seconds(), 3)


def _stream(
    spark: SparkSession, tgt: T.Target, batches: list[datetime], tables: list[TableStatus]
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
    metrics = _load(spark, tgt, T.BATCHES)
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
