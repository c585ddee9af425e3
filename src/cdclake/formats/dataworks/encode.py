"""DataWorks encoder: canonical changes -> DataWorks "sync to Kafka" JSON.

Column types (DataWorks has six):

=========================== ======== =====================================================
Spark type                  type     value
=========================== ======== =====================================================
byte/short/int/long         LONG     number
float/double                DOUBLE   number
boolean                     BOOLEAN  true/false
string                      STRING   text
decimal(p,s)                STRING   plain text (a DOUBLE would round it)
binary                      BYTES    base64
timestamp                   DATE     ms since the epoch; a value with µs is quarantined
timestamp_ntz, date         DATE     ms since the epoch of the wall clock read as UTC
=========================== ======== =====================================================

``sequenceId`` is the position: one number as is, ``[a, b(, 0|1)]`` as ``a`` followed by ``b``
on 18 digits (the decoder's split); a third element other than 0/1 does not fit. In ``convert``
(:func:`.._encode.map_positions`, README "convert: positions") those are spelled as they are
(DataWorks' own, CKafka's binlog file and position, a PostgreSQL lsn); any other position
becomes the sequence ``(epoch, rank)``, written as the epoch followed by the rank on 18 digits
(``1765432100000`` ``000000000000000042``), which the decoder reads back as ``[epoch, rank, half]``.
An update is an
UPDATE_BEFOR + UPDATE_AFTER pair sharing the ``sequenceId`` (``update_pairs``), or one
UPDATE_AFTER with both images. ``eventTime``/``systemTime``/``checkpointTime`` are the source
time. With ``heartbeat_interval_ms``, one MHEARTBEAT per interval in which changes happened, at
the interval's end.
"""

from __future__ import annotations

import json

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    TimestampNTZType,
    TimestampType,
)

from cdclake.formats import encode as E
from cdclake.formats.dataworks import ROW_ID
from cdclake.model import Op

_TYPES: dict[type[DataType], str] = {
    ByteType: "LONG",
    ShortType: "LONG",
    IntegerType: "LONG",
    LongType: "LONG",
    FloatType: "DOUBLE",
    DoubleType: "DOUBLE",
    BooleanType: "BOOLEAN",
    StringType: "STRING",
    DecimalType: "STRING",
    BinaryType: "BYTES",
    TimestampType: "DATE",
    TimestampNTZType: "DATE",
    DateType: "DATE",
}
DDL_OPS = ("CREATE", "ALTER", "ERASE", "QUERY", "RENAME", "CINDEX", "DINDEX")
VERSION = "0.0.1"
_EPOCH_NTZ = "1970-01-01 00:00:00"


def _value(data_type: DataType, value: Column) -> tuple[Column, Column]:
    """(JSON value, error) of a typed value."""
    no_error = F.lit(None).cast("string")
    if isinstance(data_type, DecimalType):
        return value.cast("string"), no_error
    if isinstance(data_type, BinaryType):
        return F.base64(value), no_error
    if isinstance(data_type, TimestampType):
        micros = F.unix_micros(value)
    elif isinstance(data_type, TimestampNTZType):
        micros = F.timestamp_diff("MICROSECOND", F.lit(_EPOCH_NTZ).cast("timestamp_ntz"), value)
    elif isinstance(data_type, DateType):
        micros = F.unix_date(value).cast("bigint") * 86_400_000_000
    else:
        return value, no_error
    lossy = F.pmod(micros, F.lit(1000)) != 0
    return F.floor(micros / 1000).cast("bigint"), F.when(lossy, F.lit("µs"))


def _sequence_id() -> tuple[Column, Column]:
    """(sequenceId text, error) from the position."""
    p = F.col("position")
    size = F.size(p)
    a, b, c = F.get(p, 0), F.get(p, 1), F.get(p, 2)
    two = F.when(a == 0, b.cast("string")).otherwise(
        F.concat(a.cast("string"), F.lpad(b.cast("string"), 18, "0"))
    )
    fits = (a >= 0) & b.between(0, 10**18 - 1) & ((size == 2) | c.isin(0, 1))
    text = F.when((size == 1) & (a >= 0), a.cast("string")).when(size.isin(2, 3) & fits, two)
    error = F.when(
        text.isNull(),
        F.concat(
            F.lit("position ["),
            F.coalesce(F.array_join(p.cast("array<string>"), ","), F.lit("")),
            F.lit(
                "] cannot be written as a DataWorks sequenceId (expected [n], [a, b] or "
                "[a, b, 0|1] with a, b >= 0 and b < 10^18)"
            ),
        ),
    )
    return text, error


def spells() -> Column:
    """The positions ``sequenceId`` holds as they are (see :func:`_sequence_id`)."""
    p = F.col("position")
    size = F.size(p)
    a, b, c = F.get(p, 0), F.get(p, 1), F.get(p, 2)
    one = (size == 1) & (a >= 0)
    halves = a.between(0, 10**18 - 1) & b.between(0, 10**18 - 1)
    return one | ((size == 2) & halves) | ((size == 3) & halves & c.isin(0, 1))


def _timestamp(ms: Column) -> Column:
    return F.struct(ms.alias("eventTime"), ms.alias("systemTime"), ms.alias("checkpointTime"))


def _source(table: str) -> Column:
    """``schema.source`` JSON: ``dbType`` from the change's meta (MySQL when unknown)."""
    parts = table.split(".")
    schema_name = parts[1] if len(parts) >= 3 else None
    name = ".".join(parts[2:] if len(parts) >= 3 else parts[1:])
    return F.to_json(
        F.struct(
            F.coalesce(F.col("meta")["dbType"], F.lit("MySQL")).alias("dbType"),
            F.lit(parts[0]).alias("dbName"),
            F.lit(schema_name).cast("string").alias("schemaName"),
            F.lit(name).alias("tableName"),
        )
    )


def _message(schema: str | Column, payload: Column) -> Column:
    schema_col = F.lit(schema) if isinstance(schema, str) else schema
    version = F.regexp_extract(
        F.to_json(F.array(F.coalesce(F.col("meta")["version"], F.lit(VERSION)))), r"^\[(.*)\]$", 1
    )
    return F.concat(
        F.lit('{"schema":'),
        schema_col,
        F.lit(',"payload":'),
        F.to_json(payload, E.JSON_NULLS),
        F.lit(',"version":'),
        version,
        F.lit("}"),
    )


def _payload(before: Column, after: Column, sequence: Column, op: Column, ddl: Column) -> Column:
    return F.struct(
        before.alias("before"),
        after.alias("after"),
        sequence.alias("sequenceId"),
        _timestamp(E.epoch_ms(F.col("source_ts"))).alias("timestamp"),
        op.alias("op"),
        ddl.alias("ddl"),
    )


def _schema(g: E.RowGroup) -> Column:
    """A message's ``schema``: its columns with their DataWorks types, its primary key and its
    source."""
    columns = [{"name": f.name, "type": _TYPES[type(f.dataType)]} for f in g.columns.fields]
    # a table without primary key: the row id column identifies rows, primaryKey is null
    keys = list(g.key_columns) if list(g.key_columns) != [ROW_ID] else None
    schema_text = (
        json.dumps({"dataColumn": columns, "primaryKey": keys}, separators=(",", ":"))[:-1]
        + ',"source":'
    )
    return F.concat(F.lit(schema_text), _source(g.table), F.lit("}"))


def _images(g: E.RowGroup, before: Column, after: Column) -> tuple[dict[str, Column], list[Column]]:
    """The before and after images as DataWorks writes them (``{"dataColumn": {…}}``), and per
    column the error of a value that does not fit its type."""
    images, errors = {}, []
    for name, row in (("before", before), ("after", after)):
        values = []
        for f in g.columns.fields:
            value, error = _value(f.dataType, row[f.name])
            values.append(value.alias(f.name))
            # ``error`` is a Column: concatenated, not formatted into the text
            errors.append(
                F.concat(
                    F.lit(f"column {f.name}: a "), error, F.lit(" value does not fit DATE (ms)")
                )
            )
        images[name] = F.when(row.isNotNull(), F.struct(F.struct(*values).alias("dataColumn")))
    return images, errors


def encode(changes: DataFrame, options: E.EncodeOptions) -> DataFrame:
    """Canonical changes -> DataWorks messages (:data:`.._encode.MESSAGE_SCHEMA`)."""
    changes = E.map_positions(changes, spells(), E.plain_sequence, options.epoch)
    sequence, sequence_error = _sequence_id()

    def build(g: E.RowGroup, before: Column, after: Column) -> tuple[Column, Column]:
        unknown = [f for f in g.columns.fields if type(f.dataType) not in _TYPES]
        if unknown:
            f = unknown[0]
            return F.lit(None), F.lit(
                f"column {f.name}: type {f.dataType.simpleString()} has no DataWorks type"
            )
        schema = _schema(g)
        images, errors = _images(g, before, after)
        no_ddl = F.lit(None).cast("struct<text:string,ddlMeta:string>")
        is_update = E.is_op(Op.UPDATE)
        code = (
            F.when(E.is_op(Op.INSERT, Op.READ), F.lit("INSERT"))
            .when(E.is_op(Op.DELETE), F.lit("DELETE"))
            .otherwise(F.lit("UPDATE_AFTER"))
        )
        single = _message(
            schema,
            _payload(
                F.when(~E.is_op(Op.INSERT, Op.READ), images["before"]),
                F.when(~E.is_op(Op.DELETE), images["after"]),
                sequence,
                code,
                no_ddl,
            ),
        )
        first = _message(
            schema,
            _payload(images["before"], F.lit(None), sequence, F.lit("UPDATE_BEFOR"), no_ddl),
        )
        second = _message(schema, _payload(F.lit(None), images["after"], sequence, code, no_ddl))
        key = _key(g, F.coalesce(after, before))
        one = F.array(F.struct(key.alias("key"), single.alias("value")))
        if options.update_pairs:
            pair = F.array(
                F.struct(key.alias("key"), first.alias("value")),
                F.struct(key.alias("key"), second.alias("value")),
            )
            both = is_update & before.isNotNull() & after.isNotNull()
            only_before = is_update & after.isNull()
            halves = F.array(F.struct(key.alias("key"), first.alias("value")))
            messages = F.when(both, pair).when(only_before, halves).otherwise(one)
        else:
            messages = one
        unavailable = F.when(
            F.size(F.col("unavailable")) > 0,
            F.concat(
                F.lit("columns not sent by the source (TOAST): "),
                F.array_join(F.col("unavailable"), ", "),
            ),
        )
        return messages, F.coalesce(sequence_error, *errors, unavailable)

    messages = E.encode_groups(changes, E.row_groups(changes), build, _control(sequence))
    if options.heartbeat_interval_ms:
        messages = messages.unionByName(_heartbeats(changes, options.heartbeat_interval_ms))
    return messages


def _key(g: E.RowGroup, row: Column) -> Column:
    if not g.key_columns or any(k not in g.columns.fieldNames() for k in g.key_columns):
        return F.lit(None).cast("string")
    values = [_value(g.columns[k].dataType, row[k])[0].alias(k) for k in g.key_columns]
    return F.to_json(F.struct(*values), E.JSON_NULLS)


def _control(sequence: Column) -> tuple[Column, Column, Column]:
    """DDL, TRUNCATE, transaction markers and heartbeats as DataWorks writes them."""
    code = (
        F.when(E.is_op(Op.TRUNCATE), F.lit("TRUNCATE"))
        .when(E.is_op(Op.BEGIN), F.lit("TRANSACTION_BEGIN"))
        .when(E.is_op(Op.COMMIT), F.lit("TRANSACTION_END"))
        .when(E.is_op(Op.HEARTBEAT), F.lit("MHEARTBEAT"))
        .when(
            E.is_op(Op.DDL),
            F.when(F.col("meta")["type"].isin(*DDL_OPS), F.col("meta")["type"]).otherwise(
                F.lit("ALTER")
            ),
        )
    )
    ddl = F.when(
        E.is_op(Op.DDL, Op.TRUNCATE),
        F.struct(F.col("detail").alias("text"), F.lit(None).cast("string").alias("ddlMeta")),
    )
    empty = '{"dataColumn":null,"primaryKey":null,"source":null}'
    value = _message(empty, _payload(F.lit(None), F.lit(None), sequence, code, ddl))
    one = F.array(F.struct(F.lit(None).cast("string").alias("key"), value.alias("value")))
    return (
        F.when(code.isNotNull(), one),
        F.lit(None),
        F.when(code.isNull(), E.not_carried("DataWorks")),
    )


def _heartbeats(changes: DataFrame, interval_ms: int) -> DataFrame:
    """One MHEARTBEAT per interval of source time that has changes, at the interval's end."""
    bucket = F.floor(E.epoch_ms(F.col("source_ts")) / interval_ms)
    ends = changes.filter(F.col("source_ts").isNotNull()).select(bucket.alias("b")).distinct()
    ms = ((F.col("b") + 1) * interval_ms).cast("bigint")
    payload = F.struct(
        F.lit(None).alias("before"),
        F.lit(None).alias("after"),
        F.lit(None).cast("string").alias("sequenceId"),
        _timestamp(ms).alias("timestamp"),
        F.lit("MHEARTBEAT").alias("op"),
        F.lit(None).alias("ddl"),
    )
    empty = '{"dataColumn":null,"primaryKey":null,"source":null}'
    return ends.select(
        F.lit(None).cast("string").alias("table"),
        F.lit(None).cast("string").alias("key"),
        _message(empty, payload).alias("value"),
        F.array(ms).cast("array<bigint>").alias("position"),
        F.lit(0).alias("part"),
        F.lit(None).cast("string").alias("error"),
        F.lit(None).cast("string").alias("skipped"),
        F.lit(None).cast(E.MESSAGE_SCHEMA["lineage"].dataType).alias("lineage"),
    )
