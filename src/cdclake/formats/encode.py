"""Canonical changes -> messages: what every format's encoder shares.

An encoder reads changes (:data:`cdclake.model.CHANGE_SCHEMA`) and returns messages
(:data:`MESSAGE_SCHEMA`): one row per message to write, with the record ``key`` and ``value`` as
JSON text, the source ``table`` (the caller turns it into a topic) and the ``position`` and
``part`` that order the messages of one table. A change the format cannot carry becomes a row with
``error`` set (quarantine); a control record the format has no message for becomes a row with
``skipped`` set (counted, not written).

Row images are variants whose columns the change's ``row_schema`` types. As in decoding, the few
distinct ``(table, row_schema)`` groups are collected on the driver (one row per table and schema
version), and each group's images are read into typed structs with ``try_variant_get``: Spark
column expressions only, one projection for all groups.

Positions (``convert``, see :func:`map_positions` and README "convert: positions"): each format
says which positions it *spells*, writes so that its decoder reads them back in the same order
(its own, and others' that fit its fields whatever their values); with
:attr:`EncodeOptions.epoch` set, every other position becomes the *sequence* ``(epoch, rank)``:
the batch's input-order epoch, then the change's dense rank by position among the batch's
changes of its table, spelled in the format's fields. Without an epoch (``publish``), a position
that does not fit is quarantined.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from cdclake.model import DATA_OPS, DEFAULTS_KEY, INPUT_ORDERED, LINEAGE_TYPE, ORDERING_KEY, Op

Connector = Literal["sqlserver", "postgresql", "mysql"]

MESSAGE_SCHEMA = StructType(
    [
        StructField("table", StringType()),  # source table identifier (db[.schema].table)
        StructField("key", StringType()),  # record key as JSON text; null: no key
        StructField("value", StringType()),  # record value as JSON text; null: a tombstone
        StructField("position", ArrayType(LongType())),  # the change's position
        StructField("part", IntegerType()),  # order of the messages of one change
        StructField("error", StringType()),  # why the change cannot be encoded (quarantine)
        StructField("skipped", StringType()),  # a control record the format has no message for
        StructField("lineage", LINEAGE_TYPE),  # where the change came from (null: generated)
    ]
)
"""What an encoder returns. Messages of one table are written in (``position``, ``part``) order."""

JSON_NULLS = {"ignoreNullFields": "false"}
"""``to_json`` options that keep null fields: the producers write ``"before": null``."""


@dataclass(frozen=True)
class EncodeOptions:
    """How to write messages (all optional; defaults follow each producer's defaults).

    - ``connector``: Debezium connector kind whose ``source`` block and positions are written.
    - ``schemas`` / ``key_schemas``: Debezium JsonConverter ``schemas.enable`` for value / key.
    - ``tombstones``: Debezium's ``tombstones.on.delete``: a null-valued record after a delete.
    - ``server_name`` / ``version``: Debezium ``source.name`` (topic prefix) and
      ``source.version``.
    - ``update_pairs``: DataWorks writes an update as UPDATE_BEFOR + UPDATE_AFTER (False: one
      UPDATE_AFTER carrying both images, "one record per update").
    - ``heartbeat_interval_ms``: DataWorks MHEARTBEAT messages, one per interval of source time
      in which changes happened (None: none).
    - ``source_timezone``: the zone canal/CKafka render ``timestamp`` values and ``TIME`` in.
    - ``epoch``: the batch's input-order epoch (ms, :data:`cdclake.model.INPUT_ORDER_DOC`); set,
      a position the format cannot spell is written as the sequence ``(epoch, rank)``
      (:func:`map_positions`); None, it is quarantined.

    ``connector`` None: the connector the changes name (see
    :func:`cdclake.formats.debezium.encode.source_connector`).
    """

    connector: Connector | None = "postgresql"
    schemas: bool = True
    key_schemas: bool = True
    tombstones: bool = True
    server_name: str = "cdclake"
    version: str = "cdclake"
    update_pairs: bool = True
    heartbeat_interval_ms: int | None = None
    source_timezone: str = "UTC"
    epoch: int | None = None


@dataclass(frozen=True)
class RowGroup:
    """The changes of one table with one row schema: ``columns`` types their images."""

    index: int
    table: str
    row_schema: str
    columns: StructType
    key_columns: tuple[str, ...]


def row_columns(row_schema: str) -> StructType:
    """The struct of a change's ``row_schema`` (the column defaults key left out)."""
    doc = json.loads(row_schema)
    doc.pop(DEFAULTS_KEY, None)
    struct = StructType.fromJson(doc)
    return struct


def row_groups(changes: DataFrame) -> list[RowGroup]:
    """The distinct ``(table, row_schema)`` of the good data changes (a small collect)."""
    rows = (
        changes.filter(is_data() & F.col("row_schema").isNotNull())
        .select("table", "row_schema", "key_columns")
        .distinct()
        .collect()
    )
    keyed = sorted((r["table"] or "", r["row_schema"], tuple(r["key_columns"] or ())) for r in rows)
    return [RowGroup(i, t, s, row_columns(s), k) for i, (t, s, k) in enumerate(keyed)]


def is_data() -> Column:
    return F.col("error").isNull() & F.col("op").isin(*DATA_OPS)


def image(variant: Column, columns: StructType) -> Column:
    """A row image (variant) -> a struct typed by ``columns``; null stays null."""
    fields = [
        F.try_variant_get(variant, _path(f.name), f.dataType.simpleString()).alias(f.name)
        for f in columns.fields
    ]
    return F.when(variant.isNotNull(), F.struct(*fields))


def _path(name: str) -> str:
    return "$['" + name.replace("\\", "\\\\").replace("'", "\\'") + "']"


def changed(columns: StructType, before: Column, after: Column) -> list[tuple[str, Column]]:
    """Per column, whether an update changed it (``before`` and ``after`` are typed structs)."""
    return [(f.name, ~before[f.name].eqNullSafe(after[f.name])) for f in columns.fields]


Build = Callable[[RowGroup, Column, Column], tuple[Column, Column]]
"""(group, typed before, typed after) -> (messages array<struct<key, value>>, error)."""


def encode_groups(
    changes: DataFrame,
    groups: list[RowGroup],
    build: Build,
    control: tuple[Column, Column, Column],
) -> DataFrame:
    """Messages of every change: data changes by their group's ``build``, the others by
    ``control`` = (messages, error, skipped) Columns over the change's own fields."""
    group = F.lit(None).cast("int")
    for g in reversed(groups):
        mine = (
            is_data()
            & (F.col("table") == g.table)
            & (F.col("row_schema") == g.row_schema)
            & (F.col("key_columns") == F.array(*map(F.lit, g.key_columns)).cast("array<string>"))
        )
        group = F.when(mine, F.lit(g.index)).otherwise(group)
    messages, error, skipped = control
    no_schema = F.when(
        is_data(), F.concat(F.lit("a "), F.col("op"), F.lit(" change without row_schema"))
    )
    error = F.when(is_data(), no_schema).otherwise(error)
    skipped = F.when(is_data(), F.lit(None)).otherwise(skipped)
    messages = F.when(is_data(), F.lit(None)).otherwise(messages)
    staged = changes.withColumn("_group", group)
    images: dict[str, Column] = {}  # each group's images read once, in a projection of their own
    for g in groups:
        mine = F.col("_group") == g.index
        images[f"_b{g.index}"] = F.when(mine, image(F.col("before"), g.columns))
        images[f"_a{g.index}"] = F.when(mine, image(F.col("after"), g.columns))
    if images:
        staged = staged.withColumns(images)
    for g in groups:
        mine = F.col("_group") == g.index
        before, after = F.col(f"_b{g.index}"), F.col(f"_a{g.index}")
        g_messages, g_error = build(g, before, after)
        messages = F.when(mine, F.when(g_error.isNull(), g_messages)).otherwise(messages)
        error = F.when(mine, g_error).otherwise(error)
    message_type = "array<struct<key: string, value: string>>"
    out = staged.select(
        "table",
        "position",
        "lineage",
        F.coalesce(F.col("error"), error).alias("error"),
        F.when(F.col("error").isNull(), skipped).alias("skipped"),
        messages.cast(message_type).alias("_messages"),
    )
    exploded = out.select(
        "*",
        F.posexplode_outer(
            F.when(F.col("error").isNull() & F.col("skipped").isNull(), F.col("_messages"))
        ).alias("part", "_m"),
    )
    return exploded.select(
        F.col("table"),
        F.col("_m")["key"].alias("key"),
        F.col("_m")["value"].alias("value"),
        F.col("position"),
        F.coalesce(F.col("part"), F.lit(0)).alias("part"),
        F.col("error"),
        F.col("skipped"),
        F.col("lineage"),
    )


def not_carried(format_name: str) -> Column:
    """``skipped`` of a control record the format has no message for."""
    return F.concat(F.lit("a "), F.col("op"), F.lit(f" record has no {format_name} message"))


def table_parts(table: Column) -> tuple[Column, Column, Column]:
    """``db.schema.table`` or ``db.table`` -> (db, schema or null, table)."""
    parts = F.split(table, r"\.")
    three = F.size(parts) >= 3
    db = F.get(parts, 0)
    schema = F.when(three, F.get(parts, 1))
    name = F.when(three, F.array_join(F.slice(parts, 3, 1000), ".")).otherwise(
        F.array_join(F.slice(parts, 2, 1000), ".")
    )
    return db, schema, name


def epoch_ms(ts: Column) -> Column:
    return F.unix_millis(ts)


def slots_error(position: Column, slots: int, what: str) -> Column:
    """Why a position does not fit a format's ``slots`` numbers (null when it fits)."""
    return F.when(position.isNull(), F.lit(f"no position: cannot write {what}")).when(
        F.size(position) > slots,
        F.concat(
            F.lit("position ["),
            F.array_join(position.cast("array<string>"), ","),
            F.lit(f"] has more than {slots} numbers: cannot write it as {what}"),
        ),
    )


def binlog_name(file_no: Column) -> Column:
    """``mysql-bin.`` and the file number on at least 6 digits (``F.lpad`` would cut a longer
    number, such as a sequence's epoch, to 6)."""
    digits = file_no.cast("string")
    return F.concat(
        F.lit("mysql-bin."), F.when(F.length(digits) >= 6, digits).otherwise(F.lpad(digits, 6, "0"))
    )


def slot(position: Column, i: int) -> Column:
    """Element ``i`` of a position, 0 when the position is shorter (left-aligned)."""
    return F.coalesce(F.get(position, i), F.lit(0).cast("bigint"))


def input_ordered() -> Column:
    """Whether a change is ordered by input order only (its source gave no position)."""
    return F.coalesce(F.col("meta")[ORDERING_KEY] == INPUT_ORDERED, F.lit(False))


Sequence = Callable[[Column, Column], tuple[Column, Column]]
"""(epoch, rank) -> (the position a format writes for that sequence, error when it cannot)."""


def plain_sequence(epoch: Column, rank: Column) -> tuple[Column, Column]:
    """The sequence as the two numbers ``[epoch, rank]``."""
    return F.array(epoch, rank), F.lit(None).cast("string")


def map_positions(
    changes: DataFrame, spells: Column, sequence: Sequence, epoch: int | None
) -> DataFrame:
    """``changes`` with each position the format does not ``spell`` replaced by its sequence.

    The sequence of a change is ``(epoch, rank)``: ``epoch`` the batch's input-order epoch, the
    same for all its changes and larger for every later batch or run; ``rank`` the dense rank
    of the change's position among the batch's changes of its table (equal positions, the same
    event delivered twice, share a rank). Lexicographic order of ``(epoch, rank)`` is the order
    of the source positions inside a batch and the order of the batches across them, so the
    target orders the changes as the source did. What it cannot tell, as input order cannot: an
    event delivered again in a later batch is newer there. Nothing changes without ``epoch``.

    ``spells`` must hold for every position of a source family or for none (it looks at the
    shape of positions, not at values that vary), so that one table is never written half in
    its own positions and half in sequences. Input-ordered changes are always sequenced.
    """
    if epoch is None:
        return changes
    position = F.col("position")
    rank = F.dense_rank().over(Window.partitionBy("table").orderBy(position))
    mapped = position.isNotNull() & ~F.coalesce(spells & ~input_ordered(), F.lit(False))
    seq_position, seq_error = sequence(F.lit(epoch).cast("bigint"), rank.cast("bigint"))
    return changes.withColumns(
        {
            "position": F.when(mapped, seq_position.cast("array<bigint>")).otherwise(position),
            "error": F.coalesce(F.col("error"), F.when(mapped, seq_error)),
        }
    )


def one_image_updates(changes: DataFrame, insert_after_only: bool = False) -> DataFrame:
    """Updates with one image (the halves of a DataWorks UPDATE_BEFOR/UPDATE_AFTER pair) for a
    format whose updates carry both: one without after image deletes the row of its before
    image (as the applier reads it) and is written as a delete; with ``insert_after_only``, one
    without before image, which upserts its after image, is written as an insert."""
    op, before, after = F.col("op"), F.col("before"), F.col("after")
    update = op == Op.UPDATE
    written = F.when(update & after.isNull() & before.isNotNull(), F.lit(Op.DELETE.value))
    if insert_after_only:
        written = written.when(update & before.isNull(), F.lit(Op.INSERT.value))
    return changes.withColumn("op", written.otherwise(op))


def ordered(messages: DataFrame) -> DataFrame:
    """Messages in write order: by table, position, part (errors and skips last)."""
    return messages.orderBy(
        F.col("error").isNotNull(),
        F.col("skipped").isNotNull(),
        "table",
        "position",
        "part",
    )


def message_only(messages: DataFrame) -> DataFrame:
    return messages.filter(F.col("error").isNull() & F.col("skipped").isNull())


def control_none(format_name: str) -> tuple[Column, Column, Column]:
    """Control records of a format that writes none of them."""
    return F.lit(None), F.lit(None), not_carried(format_name)


def is_op(*ops: str) -> Column:
    return F.col("op").isin(*ops)


__all__ = [
    "JSON_NULLS",
    "MESSAGE_SCHEMA",
    "EncodeOptions",
    "Op",
    "RowGroup",
    "encode_groups",
    "row_groups",
]
