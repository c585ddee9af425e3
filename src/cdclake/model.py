"""The canonical change model: the one schema every format decodes into and the applier consumes.

A *change* is one row of a DataFrame with :data:`CHANGE_SCHEMA`:

=============== =============================== ==================================================
column          type                            meaning
=============== =============================== ==================================================
``table``       string                          source table identifier, ``db.schema.table`` where
                                                the source has schemas, else ``db.table``
``op``          string                          one of :class:`Op` (data ops and control kinds)
``key_columns`` array<string>                   names of the key columns, in key order; empty when
                                                the table has no key (the whole row identifies it)
``key_source``  string                          where the key came from (:class:`KeySource`)
``before``      variant                         row image before the change: an object whose
                                                values are already typed (decimal, date, ...)
``after``       variant                         row image after the change
``row_schema``  string                          JSON of the Spark struct ``before``/``after`` are
                                                read as (``StructType.json()``); the key
                                                ``cdclake.defaults`` holds the source's column
                                                defaults, typed (see :data:`DEFAULTS_KEY`)
``unavailable`` array<string>                   columns whose value in ``after`` is not known (the
                                                PostgreSQL TOAST placeholder): keep the stored one
``position``    array<bigint>                   where the event sits in the source's log; compares
                                                element by element, numerically. Events of one
                                                table are totally ordered by it; equal positions
                                                on one row mean the same event delivered twice
``seq``         struct<source,partition,offset> input order (file + line, or topic + partition +
                                                offset): the tie-breaker only within a batch
``source_ts``   timestamp                       when the change happened in the source
``lineage``     struct<source,partition,offset> where the message came from (same as ``seq``)
``raw``         string                          the message as read, for the quarantine;
                                                ``decode`` keeps it only where the envelope
                                                failed: a change that fails its typing finds it
                                                again by lineage when apply quarantines it
                                                (``cdclake.decode.with_records``)
``key``         string                          the Kafka record's key as read (kept for
                                                quarantine); null for a file's line, whose
                                                ``raw`` holds it
``headers``     map<string,string>              the Kafka record's headers, likewise
``detail``      string                          control payload: the DDL statement, the message
                                                prefix, the transaction id...
``meta``        map<string,string>              format-specific extras (GTID, scn, ...)
``error``       string                          null for a good change; else why it is quarantined
=============== =============================== ==================================================

Inside a run, a batch typed by one plan may carry ``before``/``after`` as structs of that plan's
columns instead (see :func:`cdclake.decode.type_known`'s ``struct_images``); what cdclake hands
to users (``read_changes``, the consistency gate's pending table) always has the VARIANTs.

Example::

    >>> from cdclake import read_changes
    >>> changes = read_changes(spark, ["events.jsonl"], format="debezium")
    >>> changes.select("table", "op", "position").show()
"""

from __future__ import annotations

from enum import StrEnum

from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
    VariantType,
)


class Op(StrEnum):
    """What a change does. Data ops change rows; the others are control records."""

    INSERT = "insert"
    UPDATE = "update"
    DELETE = "delete"
    READ = "read"  # snapshot read: an insert that is part of the initial snapshot
    TRUNCATE = "truncate"
    # control kinds: recorded and counted, never written to a table's rows
    DDL = "ddl"
    HEARTBEAT = "heartbeat"
    BEGIN = "begin"
    COMMIT = "commit"
    MESSAGE = "message"
    TOMBSTONE = "tombstone"  # a null-valued record after a delete: the delete did the work


DATA_OPS: tuple[str, ...] = (Op.INSERT, Op.UPDATE, Op.DELETE, Op.READ)
CONTROL_OPS: tuple[str, ...] = (
    Op.DDL,
    Op.HEARTBEAT,
    Op.BEGIN,
    Op.COMMIT,
    Op.MESSAGE,
    Op.TOMBSTONE,
)


class KeySource(StrEnum):
    """Where the key columns of a change came from, in order of precedence."""

    CONFIG = "config"  # --primary-key
    RECORD_KEY = "record-key"  # the Kafka record key
    MESSAGE = "message"  # the message names them (pkNames, primaryKey)
    DDL = "ddl"  # a CREATE TABLE seen earlier
    NONE = "none"  # no key: the whole row identifies it


LINEAGE_TYPE = StructType(
    [
        StructField("source", StringType()),  # file path or topic
        StructField("partition", IntegerType()),  # Kafka partition; null for files
        StructField("offset", LongType()),  # Kafka offset, or 1-based line number in the file
    ]
)

POSITION_TYPE = ArrayType(LongType())

CHANGE_SCHEMA = StructType(
    [
        StructField("table", StringType()),
        StructField("op", StringType()),
        StructField("key_columns", ArrayType(StringType())),
        StructField("key_source", StringType()),
        StructField("before", VariantType()),
        StructField("after", VariantType()),
        StructField("row_schema", StringType()),
        StructField("unavailable", ArrayType(StringType())),
        StructField("position", POSITION_TYPE),
        StructField("seq", LINEAGE_TYPE),
        StructField("source_ts", TimestampType()),
        StructField("lineage", LINEAGE_TYPE),
        StructField("raw", StringType()),
        StructField("key", StringType()),
        StructField("headers", MapType(StringType(), StringType())),
        StructField("detail", StringType()),
        StructField("meta", MapType(StringType(), StringType())),
        StructField("error", StringType()),
    ]
)

RAW_SCHEMA = StructType(
    [
        StructField("key", StringType()),
        StructField("value", StringType()),
        StructField("headers", MapType(StringType(), StringType())),
        StructField("lineage", LINEAGE_TYPE),
        StructField("raw", StringType()),
        StructField("nested", BooleanType()),
        StructField("order", POSITION_TYPE),
    ]
)
"""What every input (files or Kafka) is turned into before a format sees it.

``key``/``value`` are the record's key and value as JSON text (``value`` null for a tombstone),
``headers`` the record headers as text, ``raw`` the input as read (the line, or the value).
``order``: the record's input order as a position (see :data:`INPUT_ORDER_DOC`).
``nested``: ``raw`` is a record object (a line that carries key, value and headers) and ``value``
is derived from it, while ``key`` and ``headers`` are null: a format reads them from ``raw`` in
the same parse as the value (:func:`cdclake.sources.record_field` reads them alone); otherwise
``raw`` *is* ``value``. Formats parse ``raw`` once either way
(:func:`cdclake.formats.base.parse_value`).
"""

INPUT_ORDER_DOC = """Input order, the position of changes whose source gives none.

``[epoch, file rank, line]`` for files, ``[epoch, partition, offset]`` for Kafka: ``epoch`` is the
batch's time in ms (a stream's batch keeps the time its offset log recorded, so a batch run again
after a crash gets the same order), the file rank is the file's place in name order among the
batch's files. A later batch or run sorts after an earlier one; inside a batch, files in name
order, lines in order. What it cannot tell: a message delivered again in a later batch is newer
than everything before it, so it is applied again.
"""
ORDERING_KEY = "ordering"
"""Key of ``meta`` set to :data:`INPUT_ORDERED` on a change ordered by input order only (its
source gives no position): the summary and status say so for its table."""
INPUT_ORDERED = "input"

# Column names written into every Delta table next to the source columns.
META_PREFIX = "_cdc_"
POSITION_COL = "_cdc_position"
OP_COL = "_cdc_op"
SOURCE_TS_COL = "_cdc_source_ts"
LINEAGE_COL = "_cdc_lineage"
# History tables (SCD type 2, see cdclake.apply.scd2): AUTO CDC's names for the validity range.
START_AT = "__START_AT"
END_AT = "__END_AT"
START_TS_COL = "_cdc_start_ts"
END_TS_COL = "_cdc_end_ts"
HISTORY_COLUMNS = (START_AT, END_AT)
"""Columns of a history table that are not source columns and do not start with META_PREFIX."""


def is_source_column(name: str) -> bool:
    """Whether a Delta table's column holds source data (not cdclake's bookkeeping)."""
    return not name.startswith(META_PREFIX) and name not in HISTORY_COLUMNS


SOURCE_ID_KEY = "source_id"
"""Key of ``meta`` naming the connector's logical source (one database server as one connector
sees it), when the message names one. Heartbeats and changes with the same source id come from
the same live source: a heartbeat proves every table of that source is current up to its time
(see :mod:`cdclake.apply.sources`). Formats whose messages name no source leave it out.
"""

DEFAULTS_KEY = "cdclake.defaults"
"""Key of ``row_schema`` holding the columns' source defaults: ``to_json`` of a struct of typed
values, written with :data:`DEFAULTS_JSON_OPTIONS` (read back exactly with ``from_json``). A
column added with a default fills the rows already in the table, as the database does."""
DEFAULTS_JSON_OPTIONS = {
    "timestampFormat": "yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX",
    "timestampNTZFormat": "yyyy-MM-dd'T'HH:mm:ss.SSSSSS",
    "ignoreNullFields": "true",
}

TRANSACTION_KEY = "transaction"
"""Key of ``meta`` holding the source transaction a change belongs to (Debezium's
``transaction.id``), and on a transaction's BEGIN/END record the transaction it marks.
Transaction-consistent batches (:mod:`cdclake.apply.consistency`) group changes by it."""
EVENT_COUNT_KEY = "event_count"
"""Key of ``meta`` on the record that closes a transaction: how many change events it made."""
TRANSACTION_END_KEY = "transaction_end"
"""Key of ``meta``, ``"true"`` on the record that closes its transaction (an END record, or the
last read of a connector's initial snapshot)."""
SNAPSHOT_TRANSACTION = "snapshot"
"""The transaction a connector's initial snapshot reads belong to: one consistent state."""
TRANSACTION_IDS = "ids"
"""A format whose changes name their transaction and whose END records count its events."""
TRANSACTION_MARKERS = "markers"
"""A format whose BEGIN/END records frame a transaction in the input's order."""
