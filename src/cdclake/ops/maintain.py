"""Keeping a target healthy while it runs for weeks: compaction, vacuum, bounded bookkeeping.

:func:`maintain` visits every Delta table cdclake keeps under a target (the target tables, and
its own ``_cdc_*`` tables: tombstones, history logs, quarantine, batch and source records, DDL,
replays) and, per table:

- **compacts** small files (Delta's ``OPTIMIZE``): a stream that commits every few seconds
  leaves a file or more per commit; readers then open thousands of small files. Compaction
  rewrites them into fewer, larger ones in a commit that changes no data (``dataChange=false``):
  readers see the same rows before, during and after.
- **vacuums** (``VACUUM``): removes files no version within the retention references any more
  (compacted or rewritten by a MERGE). The retention is each table's own
  (``delta.deletedFileRetentionDuration``, Delta's default 7 days) unless told otherwise; time
  travel and readers of an older version need the files within it. Delta refuses a retention
  below the table's unless its safety check is turned off in the session
  (``spark.databricks.delta.retentionDurationCheck.enabled=false``): ``cdclake maintain
  --retention-hours`` does that in its own session, a user's session is never changed. VACUUM
  lists files with ``spark.sql.sources.parallelPartitionDiscovery.parallelism`` tasks: Spark's
  default (10,000) costs about 20 s per small table on two cores; sessions cdclake builds use
  16 or more.
- **bounds cdclake's own records**: ``_cdc_sources`` keeps every row of its newest
  ``keep_batches`` batches and rolls each older source, input and table up into one row (its
  newest position and times, its counts summed), so ``cdclake status`` reads the same before and
  after; a Kafka batch's record (a ``batch`` row of ``_cdc_sources``, or ``_cdc_batches`` of an
  earlier cdclake) and ``_cdc_quarantine`` drop rows older than their retention, when one
  is given (default: kept). Tombstone logs keep only their live tombstones, one per key
  that is deleted now (:func:`cdclake.apply.scd1.prune_tombstones`: exact, no retention
  needed), so what each batch with a delete joins stays bounded by the deleted keys, not by
  every delete ever applied. Live tombstones are kept unless ``tombstones`` is given
  (``--tombstone-retention``): exactness needs every delete position, and an event for a
  deleted key that arrives after its tombstone is gone brings the row back (a replay, a
  connector that re-sends from an old offset). The retention trades that against a log that
  grows with every key deleted and not back; like the tombstone GC threshold of Databricks'
  AUTO CDC it should exceed the longest delay with which a stale event can still arrive.
  Tombstones written before they had a time (``_cdc_deleted_at`` null) are kept.

Maintenance is safe beside a running stream: compaction and vacuum are Delta operations with
its concurrency rules, and a table whose maintenance meets a concurrent write is reported as
such and left for the next run (``conflict``). A stream can also maintain its own target
every N batches (``ApplyConfig.maintenance``), between its batches.

>>> report = maintain(spark, "/lake")  # doctest: +SKIP
>>> [(t.table, t.files_before, t.files_after) for t in report]  # doctest: +SKIP
[('shop.public.items', 240, 1), ('_cdc_sources', 240, 1), ...]
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from delta.tables import DeltaTable
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from cdclake import paths
from cdclake.apply.scd1 import prune_tombstones
from cdclake.errors import is_write_conflict
from cdclake.jvm import HADOOP_PATH, jclass
from cdclake.names import quote
from cdclake.target_layout import (
    BATCH,
    BATCHES,
    DELETED_AT,
    HISTORY_LOG,
    KEEP_BATCHES,
    QUARANTINE,
    SOURCES,
    SYSTEM_TABLES,
    TOMBSTONES,
)

RETENTION_CHECK = "spark.databricks.delta.retentionDurationCheck.enabled"


@dataclass(frozen=True)
class Retention:
    """How long maintenance keeps what (None: Delta's default, or forever for records)."""

    vacuum_hours: float | None = None  # files no longer referenced; None: the table's own
    batches: timedelta | None = None  # Kafka batches' records by ``finished_at``
    quarantine: timedelta | None = None  # rows of ``_cdc_quarantine`` by ``quarantined_at``
    tombstones: timedelta | None = None  # tombstones by ``_cdc_deleted_at``; None: kept forever
    keep_batches: int = KEEP_BATCHES  # batches of ``_cdc_sources`` kept row by row


@dataclass
class TableMaintenance:
    """What maintenance did to one table (files and bytes: the table's current version)."""

    table: str  # its folder under the target
    kind: str  # ``table`` (a target table) or ``cdclake`` (one of cdclake's own)
    files_before: int = 0
    files_after: int = 0
    bytes_before: int = 0
    bytes_after: int = 0
    rows_removed: int = 0  # bookkeeping rows rolled up or past their retention
    files_vacuumed: int = 0  # files deleted from storage
    seconds: float = 0.0
    outcome: str = "ok"  # ok, conflict (a concurrent write: left for the next run), failed
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def delta_tables(spark: SparkSession, target: str) -> list[tuple[str, str]]:
    """(folder under ``target``, kind) of every Delta table there, target tables first."""
    root = paths.to_uri(target)
    fs, path = paths._fs(spark, root)
    if not fs.exists(path):
        return []

    def children(folder: Any) -> list[str]:
        return sorted(str(s.getPath().getName()) for s in fs.listStatus(folder) if s.isDirectory())

    path_class = jclass(spark._jvm, HADOOP_PATH)
    found: list[tuple[str, str]] = []
    for name in children(path):
        sub = path_class(path, name)
        if name in (TOMBSTONES, HISTORY_LOG):
            for inner in children(sub):
                if fs.exists(path_class(sub, f"{inner}/_delta_log")):
                    found.append((f"{name}/{inner}", "cdclake"))
        elif fs.exists(path_class(sub, "_delta_log")):
            kind = "cdclake" if name in SYSTEM_TABLES else "table"
            found.append((name, kind))
    return sorted(found, key=_order)


def maintain(
    spark: SparkSession,
    target: str,
    *,
    compact: bool = True,
    vacuum: bool = True,
    retention: Retention | None = None,
    tables: Callable[[str], bool] | None = None,
    on_table: Callable[[TableMaintenance], None] | None = None,
    start_after: tuple[str, str] | None = None,
    resume: bool = False,
    budget: float | None = None,
) -> list[TableMaintenance]:
    """Maintain every Delta table under ``target`` (see the module doc); one report per table.
    ``tables``: which folders to visit (all by default). A table that fails does not stop the
    others: its report says why.

    ``start_after`` and ``budget`` (seconds) take turns over a large target: the tables are
    visited in order from the one after ``start_after`` (a ``(folder, kind)`` of an earlier
    report, round the end back to the first), and no further table is begun once ``budget``
    has gone; at least one is. ``resume`` without ``start_after``: start after the table
    maintained last, as the tables' logs tell (:func:`last_maintained`), so that a restarted
    stream goes on where the one before stopped."""
    retention = retention or Retention()
    report: list[TableMaintenance] = []
    started = time.monotonic()
    found = [t for t in delta_tables(spark, target) if tables is None or tables(t[0])]
    if start_after is None and resume:
        start_after = last_maintained(target, found)
    for folder, kind in in_turn(found, start_after):
        if report and budget is not None and time.monotonic() - started >= budget:
            break
        done = _maintain_table(spark, paths.join(paths.to_uri(target), folder), folder, kind,
                               compact, vacuum, retention)  # fmt: skip
        report.append(done)
        if on_table is not None:
            on_table(done)
    return report


def _order(table: tuple[str, str]) -> tuple[bool, str]:
    folder, kind = table
    return kind != "table", folder


def in_turn(tables: list[tuple[str, str]], after: tuple[str, str] | None) -> list[tuple[str, str]]:
    """``tables`` (as :func:`delta_tables` orders them) starting with the first that comes after
    ``after``, then round from the first; ``after`` need not exist any more (a dropped table).

    >>> t = [("a", "table"), ("c", "table"), ("_cdc_sources", "cdclake")]
    >>> in_turn(t, ("a", "table")), in_turn(t, ("b", "table")), in_turn(t, None)[0]
    ([('c', 'table'), ('_cdc_sources', 'cdclake'), ('a', 'table')], \
[('c', 'table'), ('_cdc_sources', 'cdclake'), ('a', 'table')], ('a', 'table'))
    """
    if after is None:
        return list(tables)
    cut = next((i for i, t in enumerate(tables) if _order(t) > _order(after)), len(tables))
    return tables[cut:] + tables[:cut]


MAINTENANCE_OPERATIONS = frozenset({"OPTIMIZE", "VACUUM START", "VACUUM END"})


def last_maintained(
    target: str, tables: list[tuple[str, str]], commits: int = 20
) -> tuple[str, str] | None:
    """Of ``tables``, the one with the newest compaction or vacuum among its newest ``commits``
    commits (read with delta-rs, milliseconds a table); None when there is none, or delta-rs
    cannot read the logs (the turn then starts from the first table)."""
    from cdclake import delta_rs

    newest: tuple[int, tuple[str, str]] | None = None
    for folder, kind in tables:
        try:
            table = delta_rs.open_table(paths.join(paths.to_uri(target), folder))
            history = table.history(commits) if table is not None else []
        except Exception:  # unreadable without Spark's credentials: not known
            continue
        at = next((c.get("timestamp", 0) for c in history
                   if c.get("operation") in MAINTENANCE_OPERATIONS), None)  # fmt: skip
        if at is not None and (newest is None or at > newest[0]):
            newest = at, (folder, kind)
    return None if newest is None else newest[1]


def _maintain_table(
    spark: SparkSession,
    path: str,
    folder: str,
    kind: str,
    compact: bool,
    vacuum: bool,
    retention: Retention,
) -> TableMaintenance:
    out = TableMaintenance(folder, kind)
    started = time.perf_counter()
    try:
        out.files_before, out.bytes_before = _size(spark, path)
        out.rows_removed = _bound_records(spark, path, folder, retention)
        if compact and out.files_before > 1:
            DeltaTable.forPath(spark, path).optimize().executeCompaction()
        if vacuum:
            out.files_vacuumed = _vacuum(spark, path, retention.vacuum_hours)
        out.files_after, out.bytes_after = _size(spark, path)
    except Exception as e:  # one table's failure is reported; the others are still maintained
        out.outcome = "conflict" if is_write_conflict(e) else "failed"
        out.reason = _first_line(e)
    out.seconds = round(time.perf_counter() - started, 3)
    return out


def _size(spark: SparkSession, path: str) -> tuple[int, int]:
    """Files and bytes of the table's newest version: from its log with delta-rs (milliseconds;
    ``DESCRIBE DETAIL`` is a Spark job, about a second a table on two cores), or with Spark when
    delta-rs cannot read it (credentials only Spark's session has)."""
    try:
        from cdclake import delta_rs

        table = delta_rs.open_table(path)
        if table is not None:
            return delta_rs.files_and_bytes(table)
    except Exception:  # Spark's answer below
        pass
    row = DeltaTable.forPath(spark, path).detail().select("numFiles", "sizeInBytes").first()
    assert row is not None
    return int(row["numFiles"] or 0), int(row["sizeInBytes"] or 0)


def _vacuum(spark: SparkSession, path: str, hours: float | None) -> int:
    """Vacuum the table; how many files it deleted (from its ``VACUUM END`` commit)."""
    table = DeltaTable.forPath(spark, path)
    table.vacuum(hours) if hours is not None else table.vacuum()
    for operation, metrics in _last_commits(spark, path):
        if operation == "VACUUM END":
            return int((metrics or {}).get("numDeletedFiles", 0))
    return 0


def _last_commits(spark: SparkSession, path: str, n: int = 2) -> list[tuple[str, Any]]:
    """(operation, metrics) of the table's newest ``n`` commits, read as :func:`_size` reads."""
    try:
        from cdclake import delta_rs

        table = delta_rs.open_table(path)
        if table is not None:
            return [(c.get("operation", ""), c.get("operationMetrics")) for c in table.history(n)]
    except Exception:  # Spark's answer below
        pass
    rows = DeltaTable.forPath(spark, path).history(n).select("operation", "operationMetrics")
    return [(r["operation"], r["operationMetrics"]) for r in rows.collect()]


def _bound_records(spark: SparkSession, path: str, folder: str, retention: Retention) -> int:
    """Roll ``_cdc_sources`` up, drop records past their retention; rows removed."""
    now = datetime.now(UTC)
    if folder == SOURCES:
        removed = roll_up_sources(spark, path, retention.keep_batches)
        if retention.batches is not None:
            cutoff = now - retention.batches
            removed += _delete_before(
                spark, path, f"{BATCH}.finished_at", cutoff, f"kind = '{BATCH}'"
            )
        return removed
    if folder == BATCHES and retention.batches is not None:  # written by an earlier cdclake
        return _delete_before(spark, path, "finished_at", now - retention.batches)
    if folder == QUARANTINE and retention.quarantine is not None:
        return _delete_before(spark, path, "quarantined_at", now - retention.quarantine)
    if folder.startswith(f"{TOMBSTONES}/"):
        # the table the log belongs to: its folder under the target (see Target.tombstone_path)
        table_path = paths.join(path[: -len(folder)].rstrip("/"), folder.split("/", 1)[1])
        removed = prune_tombstones(spark, path, table_path)
        if retention.tombstones is not None:
            removed += _delete_before(spark, path, DELETED_AT, now - retention.tombstones)
        return removed
    return 0


def _delete_before(
    spark: SparkSession, path: str, column: str, cutoff: datetime, where: str = "true"
) -> int:
    """Delete the rows (of those the SQL predicate ``where`` selects) whose ``column`` (a field
    path) is before ``cutoff`` (rows where it is null stay, as do all rows of a table without
    it, such as a tombstone log no delete has reached since tombstones had a time); rows
    deleted, as the DELETE's own result says (a DELETE of no row commits nothing)."""
    if column.split(".")[0] not in spark.read.format("delta").load(path).columns:
        return 0
    field = ".".join(quote(part) for part in column.split("."))
    at = cutoff.astimezone(UTC).isoformat()
    done = spark.sql(
        f"DELETE FROM delta.{quote(path)} WHERE ({where}) AND {field} < TIMESTAMP'{at}'"
    ).first()
    return int(done["num_affected_rows"] or 0) if done is not None else 0


_SUMMED = ("messages", "heartbeats", "txn_markers", "applied", "ignored")
_NEWEST = ("source_id", "key_columns", "key_source")  # the newest batch's value
_GREATEST = ("batch_id", "last_message_ts", "last_heartbeat_ts", "last_offset", "recorded_at")


def roll_up_sources(spark: SparkSession, path: str, keep_batches: int = KEEP_BATCHES) -> int:
    """Replace the rows of ``_cdc_sources`` older than its newest ``keep_batches`` batches by one
    row per (kind, source, table): what :mod:`cdclake.ops.status` reads from them stays the same
    (newest position with its time, latest times, newest key and DDL, counts summed). One
    commit (a ``replaceWhere`` of the old rows): a reader sees either the rows or their
    roll-up. A Kafka batch's record (``kind`` ``batch``) is kept as it is: its retention is
    ``Retention.batches``. Rows removed."""
    log = spark.read.format("delta").load(path)
    not_batch = F.col("kind") != BATCH
    # the batches' times as the session writes timestamps: the same text in the predicates
    text = F.date_format("recorded_at", "yyyy-MM-dd HH:mm:ss.SSSSSS")
    newest = (
        log.filter(not_batch)
        .select("recorded_at", text.alias("t"))
        .distinct()
        .orderBy(F.desc("recorded_at"))
        .limit(keep_batches + 1)
    )
    times = [r["t"] for r in newest.collect()]  # at most keep_batches + 1 timestamps
    if len(times) <= keep_batches:
        return 0
    # this batch and older ones
    old_rows = f"recorded_at <= TIMESTAMP'{times[keep_batches]}' AND kind <> '{BATCH}'"
    old = log.filter(F.expr(old_rows))
    n_old = old.count()
    groups = old.groupBy("kind", F.coalesce("source_id", F.lit("")).alias("_s"), "table")
    rolled = groups.agg(*_rolled_columns(log)).drop("_s").select(*log.columns)
    n_rolled = rolled.count()
    if n_rolled >= n_old:
        return 0  # already one row per source, input and table
    rolled.coalesce(1).write.format("delta").mode("overwrite").option(
        "replaceWhere", old_rows
    ).save(path)
    return n_old - n_rolled


def _rolled_columns(log: DataFrame) -> list[Column]:
    """The aggregates of one (kind, source, table) group of old ``_cdc_sources`` rows."""
    by_time = F.struct("recorded_at", "batch_id")
    # the newest position and its source time; positions compare as arrays, a null one last
    at_newest = F.max_by(F.struct("last_position", "last_position_ts"), "last_position")
    cols: list[Column] = [at_newest["last_position"].alias("last_position"),
                          at_newest["last_position_ts"].alias("last_position_ts")]  # fmt: skip
    cols += [F.max_by(c, by_time).alias(c) for c in _NEWEST]
    cols.append(
        F.max_by("last_ddl", F.when(F.col("last_ddl").isNotNull(), by_time)).alias("last_ddl")
    )
    cols += [F.sum(c).alias(c) for c in _SUMMED if c in log.columns]
    cols += [F.max(c).alias(c) for c in _GREATEST if c in log.columns]
    known = {"kind", "table", "last_position", "last_position_ts", "last_ddl", *_NEWEST, *_SUMMED,
             *_GREATEST}  # fmt: skip
    cols += [F.max_by(c, by_time).alias(c) for c in log.columns if c not in known]
    return cols


def _first_line(e: Exception) -> str:
    lines = [line for line in str(e).splitlines() if line.strip()]
    return (lines[0] if lines else type(e).__name__)[:300]
