"""Where each source and table stands after every batch: the log ``<target>/_cdc_sources``.

Every batch appends, from the one aggregate :func:`cdclake.apply.batch.apply_changes` already
runs (no extra pass over the data), a few rows, in one commit: one per source, one per input
(file or Kafka topic) and one per table it touched:

============== =============================================================================
column         meaning
============== =============================================================================
kind           ``source`` (one source id), ``input`` (one input file or topic), ``table``
               (one target table) or ``batch`` (one micro-batch of a Kafka stream)
source_id      the source: see :func:`source_id`; for ``input`` the file's URI or the topic
table          the target table (``table`` rows only)
batch_id       the streaming batch id (null for a batch over files)
recorded_at    when the batch was applied (one value per batch: its rows share it)
messages       good records of the source (``source``) or changes of the table (``table``)
heartbeats     heartbeat records of the source
txn_markers    transaction begin/commit records of the source
last_message_ts  source time of the newest record of any kind (changes, heartbeats, markers)
last_heartbeat_ts  source time of the newest heartbeat
applied, ignored   changes of the table applied / ignored as stale
last_position  the newest position among the table's changes (= the newest one applied: a
               stale change is never newer than the one that made it stale)
last_position_ts   the source time of that change
key_columns, key_source  the key used and where it came from
last_ddl       the newest DDL statement of the table in the batch
last_offset    the newest line number or Kafka offset read from the input (``input`` rows)
batch          a Kafka stream's micro-batch as a whole (``batch`` rows only, see
               :data:`BATCH_SCHEMA`): its counts, times and lag
============== =============================================================================

A Kafka stream's batch writes its rows and its ``batch`` row in one commit, after its tables
(:func:`write`): cdclake's bookkeeping of a batch is one commit. (Targets written before
kept the ``batch`` rows in a table of their own, ``_cdc_batches``, which is still read.)

**Freshness** of a table (seconds it is behind its source) at time ``now``::

    now - max(last_position_ts of the table,
              last_message_ts of the table's source)

A quiet table of a live source (heartbeats or other changes of the same source still arriving)
stays fresh; when its source goes silent it goes stale.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pyspark.sql import Column, Row, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    DoubleType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from cdclake.model import SOURCE_ID_KEY, Op
from cdclake.target_layout import BATCH
from cdclake.target_layout import SOURCES as SOURCES  # re-exported

if TYPE_CHECKING:
    from cdclake.apply.results import BatchResult, Txn
    from cdclake.apply.tables import Target

FILES_SOURCE = "(files)"
BATCH_SCHEMA = StructType(
    [
        StructField("batch_id", LongType()),
        StructField("app_id", StringType()),
        StructField("started_at", TimestampType()),
        StructField("finished_at", TimestampType()),
        StructField("messages", LongType()),
        StructField("changes", LongType()),
        StructField("applied", LongType()),
        StructField("ignored", LongType()),
        StructField("control", LongType()),
        StructField("quarantined", LongType()),
        StructField("oversize", LongType()),
        StructField("inserted", LongType()),
        StructField("updated", LongType()),
        StructField("deleted", LongType()),
        StructField("tables", ArrayType(StringType())),
        StructField("control_by_op", MapType(StringType(), LongType())),
        StructField("quarantine_reasons", MapType(StringType(), LongType())),
        StructField("end_offsets", StringType()),  # JSON {"topic": {"partition": offset}}
        StructField("offsets_behind", LongType()),
        StructField("max_offsets_behind", LongType()),
        StructField("seconds_behind", DoubleType()),
        StructField("newest_message_at", TimestampType()),
    ]
)
"""The ``batch`` column: one Kafka micro-batch (see :mod:`cdclake.run.stream_metrics`)."""
WRITTEN = StructType(
    [
        StructField("kind", StringType()),
        StructField("source_id", StringType()),
        StructField("table", StringType()),
        StructField("batch_id", LongType()),
        StructField("messages", LongType()),
        StructField("heartbeats", LongType()),
        StructField("txn_markers", LongType()),
        StructField("last_message_ts", TimestampType()),
        StructField("last_heartbeat_ts", TimestampType()),
        StructField("applied", LongType()),
        StructField("ignored", LongType()),
        StructField("last_position", ArrayType(LongType())),
        StructField("last_position_ts", TimestampType()),
        StructField("key_columns", ArrayType(StringType())),
        StructField("key_source", StringType()),
        StructField("last_ddl", StringType()),
        StructField("last_offset", LongType()),
        StructField(BATCH, BATCH_SCHEMA),
        StructField("recorded_at", TimestampType()),
    ]
)
"""A row of ``_cdc_sources``: the columns above, and when its batch was applied."""


def source_id() -> Column:
    """The source a record comes from: the connector's logical name when the format names one
    (``meta.source_id``, see :data:`cdclake.model.SOURCE_ID_KEY`), else the Kafka topic
    (``topic:<name>``), else ``(files)``: every input file of a target is one source."""
    lineage = F.col("lineage")
    return F.coalesce(
        F.col("meta")[SOURCE_ID_KEY],
        F.when(lineage["partition"].isNotNull(), F.concat(F.lit("topic:"), lineage["source"])),
        F.lit(FILES_SOURCE),
    )


def aggregates() -> list[Column]:
    """The aggregates :func:`record` needs, computed with the batch's one grouping."""
    op = F.col("op")
    return [
        F.max("_source_id").alias("table_source_id"),
        F.count_if(op == Op.HEARTBEAT).alias("n_heartbeats"),
        F.count_if(op.isin(Op.BEGIN, Op.COMMIT)).alias("n_txn_markers"),
        F.max("position").alias("max_position"),
        F.max_by("source_ts", "position").alias("max_position_ts"),
        F.max_by(F.when(op == Op.DDL, F.col("detail")), "seq").alias("last_ddl"),
    ]


def rows(
    target: Target,
    per_source: list[Row],
    per_input: list[Row],
    per_op: list[Row],
    result: BatchResult,
    batch_id: int | None,
) -> list[dict[str, Any]]:
    """This batch's source, input and table rows of ``<target>/_cdc_sources``."""
    rows = [_source_row(r, batch_id) for r in per_source]
    rows += [_input_row(r, batch_id) for r in per_input]
    tables: dict[str, list[Row]] = {}
    for r in per_op:
        if r["table"] is not None:
            tables.setdefault(r["table"], []).append(r)
    for name, parts in sorted(tables.items()):
        rows.append(_table_row(target.name(name), parts, result, batch_id))
    return rows


def batch_row(record: dict[str, Any]) -> dict[str, Any]:
    """The ``batch`` row of a micro-batch's ``record`` (a row of :data:`BATCH_SCHEMA`)."""
    return {"kind": BATCH, "batch_id": record["batch_id"], BATCH: record}


def write(spark: SparkSession, target: Target, rows: list[dict[str, Any]], txn: Txn) -> None:
    """Append ``rows`` (see :func:`rows`, :func:`batch_row`) to ``<target>/_cdc_sources`` in one
    commit, once however often the batch runs again (:meth:`Txn.append_rows`: the driver
    commits them itself where it can). A log written before a column was added
    (``last_offset``) gains it."""
    if not rows:
        return
    now = datetime.now(UTC)
    txn.append_rows(
        [{**r, "recorded_at": now} for r in rows], WRITTEN, target.system_path(SOURCES), "sources"
    )


def _source_row(r: Row, batch_id: int | None) -> dict[str, Any]:
    return {
        "kind": "source",
        "source_id": r["_source_id"],
        "batch_id": batch_id,
        "messages": r["n"],
        "heartbeats": r["n_heartbeats"],
        "txn_markers": r["n_txn_markers"],
        "last_message_ts": r["last_event_time"],
        "last_heartbeat_ts": r["last_heartbeat"],
    }


def _input_row(r: Row, batch_id: int | None) -> dict[str, Any]:
    return {
        "kind": "input",
        "source_id": r["_source"],
        "batch_id": batch_id,
        "messages": r["n"],
        "last_message_ts": r["last_event_time"],
        "last_heartbeat_ts": r["last_heartbeat"],
        "last_position": None if r["last_position"] is None else list(r["last_position"]),
        "last_offset": r["last_offset"],
    }


def _table_row(
    name: str, parts: list[Row], result: BatchResult, batch_id: int | None
) -> dict[str, Any]:
    data = [r for r in parts if r["op"] not in (Op.DDL, Op.MESSAGE) and r["max_position"]]
    newest = max(data, key=lambda r: list(r["max_position"]), default=None)
    ddl = [r for r in parts if r["last_ddl"] is not None]
    applied = result.tables.get(parts[0]["table"])
    return {
        "kind": "table",
        "source_id": max(r["table_source_id"] for r in parts),
        "table": name,
        "batch_id": batch_id,
        "messages": sum(r["n"] for r in parts),
        "last_message_ts": max(
            (r["last_event_time"] for r in parts if r["last_event_time"]), default=None
        ),
        "applied": None if applied is None else applied.changes - applied.ignored,
        "ignored": None if applied is None else applied.ignored,
        "last_position": None if newest is None else list(newest["max_position"]),
        "last_position_ts": None if newest is None else newest["max_position_ts"],
        "key_columns": None if applied is None else list(applied.key_columns),
        "key_source": None if applied is None else applied.key_source,
        "last_ddl": max(ddl, key=lambda r: r["last_seq"])["last_ddl"] if ddl else None,
    }
