"""Debezium encoder: canonical changes -> Debezium JSON records (see :mod:`.debezium`).

Column types are written as the connectors write them with their default options
(``decimal.handling.mode=precise``, ``time.precision.mode=adaptive``):

=================== ============================================ ===========================
Spark type          Kafka Connect schema                         JSON value
=================== ============================================ ===========================
byte/short/int/long int8/int16/int32/int64                       number
float/double        float/double                                 number
boolean / string    boolean / string                             as is
binary              bytes                                        base64
decimal(p,s)        bytes, ``org.apache.kafka.connect.data.      base64 of the big-endian
                    Decimal`` {scale, connect.decimal.precision} two's-complement unscaled
date                int32 ``io.debezium.time.Date``              days since 1970-01-01
timestamp_ntz       int64 ``io.debezium.time.MicroTimestamp``    µs since 1970-01-01
timestamp           string ``io.debezium.time.ZonedTimestamp``   ISO-8601 in UTC (``...Z``)
=================== ============================================ ===========================

Other types (array, map, struct, variant) are quarantined with the column named.

Positions are written into the connector's ``source`` fields, left-aligned (a shorter position
is padded with zeros, so order is kept): SQL Server ``commit_lsn`` (3 numbers), ``change_lsn``
(3), ``event_serial_no``; MySQL binlog file number, ``pos``, ``transaction.total_order`` (-1:
no transaction block), ``row``; PostgreSQL ``lsn`` (a two-number position ``[a, b]``, such as
``publish`` writes, becomes ``a * 2^32 + b``). The envelope ``ts_ms`` (the connector's
processing time, which no change carries) is written as ``source.ts_ms``.

What each connector spells as it is (``convert``; see :func:`.._encode.map_positions` and
README "convert: positions"), and how it writes the sequence ``(epoch, rank)`` of the others:

=========== ========================================== =======================================
connector   spelled as it is                           sequence
=========== ========================================== =======================================
sqlserver   up to 7 numbers >= -1 (SQL Server's own,   ``commit_lsn`` = epoch's high and low
            and every other family's but input order)  32 bits, 0; ``change_lsn`` = rank's, 0
mysql       up to 4 numbers, the first >= 0, all >= -1 file ``mysql-bin.<epoch>``, ``pos``
            (MySQL's own, CKafka's, DataWorks', a      rank, no transaction block
            PostgreSQL lsn)
postgresql  one number >= 0; ``[a < 2^31, b < 2^32]``  ``lsn`` = epoch * 10^6 + rank (a rank of
                                                       10^6 or more in one batch is quarantined)
=========== ========================================== =======================================

A change ordered by input order only (Flink CDC's ``source`` without position) is always
sequenced. ``EncodeOptions.connector`` None follows the source (:func:`source_connector`).
"""

from __future__ import annotations

import json
from dataclasses import replace
from decimal import Decimal
from typing import Any

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
from cdclake.formats import values as V
from cdclake.model import Op

CONNECTORS: tuple[E.Connector, ...] = ("sqlserver", "postgresql", "mysql")
OP_CODES = {Op.INSERT: "c", Op.UPDATE: "u", Op.DELETE: "d", Op.READ: "r", Op.TRUNCATE: "t"}
DECIMAL = "org.apache.kafka.connect.data.Decimal"
_SIMPLE: dict[type[DataType], str] = {
    ByteType: "int8",
    ShortType: "int16",
    IntegerType: "int32",
    LongType: "int64",
    FloatType: "float",
    DoubleType: "double",
    BooleanType: "boolean",
    StringType: "string",
    BinaryType: "bytes",
}
_EPOCH_NTZ = "1970-01-01 00:00:00"
_TWO_64 = Decimal(2**64)


def field_schema(name: str, data_type: DataType) -> dict[str, Any] | None:
    """The Kafka Connect field schema of a column; None when it has no Debezium encoding."""
    simple = _SIMPLE.get(type(data_type))
    if simple is not None:
        return {"type": simple, "optional": True, "field": name}
    logical: dict[str, Any] | None = None
    if isinstance(data_type, DecimalType):
        params = {
            "scale": str(data_type.scale),
            "connect.decimal.precision": str(data_type.precision),
        }
        logical = {"type": "bytes", "name": DECIMAL, "version": 1, "parameters": params}
    elif isinstance(data_type, DateType):
        logical = {"type": "int32", "name": "io.debezium.time.Date", "version": 1}
    elif isinstance(data_type, TimestampNTZType):
        logical = {"type": "int64", "name": "io.debezium.time.MicroTimestamp", "version": 1}
    elif isinstance(data_type, TimestampType):
        logical = {"type": "string", "name": "io.debezium.time.ZonedTimestamp", "version": 1}
    if logical is None:
        return None
    return {**logical, "optional": True, "field": name}


def twos_complement(value: Column) -> Column:
    """A decimal -> base64 of its unscaled value as minimal big-endian two's-complement bytes
    (Java's ``BigInteger.toByteArray``), through two 64-bit halves (38 digits fit)."""
    unscaled = F.regexp_replace(value.cast("string"), r"\.", "").cast(DecimalType(38, 0))
    high = F.call_function("div", unscaled, F.lit(_TWO_64))
    low = unscaled - high.cast(DecimalType(20, 0)) * F.lit(_TWO_64)
    borrow = low < 0
    high = F.when(borrow, high - 1).otherwise(high)
    low = F.when(borrow, low + F.lit(_TWO_64)).otherwise(low)
    high_hex = F.when(high < 0, F.hex(high)).otherwise(F.lpad(F.hex(high), 16, "0"))
    low_hex = F.lpad(F.conv(low.cast(DecimalType(20, 0)).cast("string"), 10, 16), 16, "0")
    digits = F.regexp_replace(
        F.concat(high_hex, low_hex), r"^(?:00)+(?=[0-7])|^(?:FF)+(?=[89A-F])", ""
    )
    return F.when(value.isNotNull(), F.base64(F.unhex(digits)))


def _iso_utc(ts: Column) -> Column:
    """An instant -> ``2020-01-01T10:00:00.5Z`` (ISO-8601 in UTC, trailing zeros dropped)."""
    wall = V.ntz_from_micros(F.unix_micros(ts)).cast("string")
    return F.concat(F.regexp_replace(wall, " ", "T"), F.lit("Z"))


def column_value(data_type: DataType, value: Column, schemas: bool = True) -> Column:
    """A typed value -> what the JSON of the record holds (see the module table). Without
    schemas a decimal is its plain text (``decimal.handling.mode=string``) and a date its ISO
    text: base64 bytes without the scale, or epoch days, could not be read back."""
    if isinstance(data_type, DecimalType):
        return twos_complement(value) if schemas else value.cast("string")
    if isinstance(data_type, DateType):
        # without schemas, epoch days could not be told from a number: ISO text (IsoDate)
        return F.unix_date(value) if schemas else value.cast("string")
    if isinstance(data_type, TimestampNTZType):
        if not schemas:  # like dates: ISO text, which a schemaless reader can type
            return value.cast("string")
        epoch = F.lit(_EPOCH_NTZ).cast(TimestampNTZType())
        return F.timestamp_diff("MICROSECOND", epoch, value)
    if isinstance(data_type, TimestampType):
        return _iso_utc(value)
    return value


def _lsn(a: Column, b: Column, c: Column) -> Column:
    return F.format_string("%08x:%08x:%04x", a, b, c)


def source_connector(changes: DataFrame) -> E.Connector:
    """The connector whose ``source`` block to write when none is named: the one the changes'
    own source blocks name (``meta['connector']``, MariaDB as MySQL) when they all name the same
    one of :data:`CONNECTORS`; else ``mysql``, whose four numbers hold canal's, CKafka's and
    DataWorks' positions or their sequences in order (a small collect)."""
    rows = (
        changes.filter(E.is_data())
        .select(V.lower_keyword(F.col("meta")["connector"], *CONNECTORS, "mariadb").alias("c"))
        .distinct()
        .limit(len(CONNECTORS) + 1)
        .collect()
    )
    named = {"mysql" if r["c"] == "mariadb" else r["c"] for r in rows}
    for connector in CONNECTORS:
        if named == {connector}:
            return connector
    return "mysql"


def spells(connector: E.Connector) -> Column:
    """Whether the connector's ``source`` block writes a change's position as it is (see the
    module doc): the test looks at the shape, which every position of a family shares."""
    p = F.col("position")
    size, first = F.size(p), F.get(p, 0)
    if connector == "postgresql":
        second = F.get(p, 1)
        one = (size == 1) & (first >= 0)
        return one | ((size == 2) & first.between(0, 2**31 - 1) & second.between(0, 2**32 - 1))
    from_minus_one = F.forall(p, lambda x: x >= -1)
    if connector == "mysql":
        row = F.coalesce(F.get(p, 3) < 2**31, F.lit(True))
        return size.between(1, 4) & (first >= 0) & from_minus_one & row
    return size.between(1, 7) & from_minus_one


def sequence(connector: E.Connector) -> E.Sequence:
    """How the connector writes the sequence ``(epoch, rank)`` (see the module doc)."""

    def write(epoch: Column, rank: Column) -> tuple[Column, Column]:
        no_error = F.lit(None).cast("string")
        if connector == "postgresql":
            too_many = F.when(
                rank >= 10**6,
                F.concat(
                    F.lit("a PostgreSQL lsn holds the sequence as epoch * 10^6 + rank: rank "),
                    rank.cast("string"),
                    F.lit(" of this table's batch does not fit (write --connector mysql)"),
                ),
            )
            return F.array(epoch * 10**6 + rank), too_many
        if connector == "mysql":
            return F.array(epoch, rank, F.lit(-1), F.lit(0)), no_error
        low = 2**32 - 1
        halves = [F.shiftright(epoch, 32), epoch.bitwiseAND(F.lit(low)), F.lit(0)]
        ranks = [F.shiftright(rank, 32), rank.bitwiseAND(F.lit(low)), F.lit(0)]
        return F.array(*halves, *ranks, F.lit(0)), no_error

    return write


def _source(options: E.EncodeOptions) -> tuple[dict[str, Any], Column, Column]:
    """(schema, value, error) of the ``source`` block for the connector kind."""
    db, schema, table = E.table_parts(F.col("table"))
    position = F.col("position")
    ts_ms = E.epoch_ms(F.col("source_ts"))
    snapshot_text = F.coalesce(
        F.col("meta")["snapshot"], F.when(E.is_op(Op.READ), F.lit("true")), F.lit("false")
    )
    common: list[tuple[str, str, Column]] = [
        ("version", "string", F.lit(options.version)),
        ("connector", "string", F.lit(options.connector)),
        ("name", "string", F.lit(options.server_name)),
        ("ts_ms", "int64", ts_ms),
    ]
    fields: list[tuple[str, str, Column]]
    if options.connector == "sqlserver":
        p = [E.slot(position, i) for i in range(7)]
        fields = [
            *common,
            ("snapshot", "boolean", snapshot_text != "false"),
            ("db", "string", db),
            ("schema", "string", schema),
            ("table", "string", table),
            ("change_lsn", "string", _lsn(p[3], p[4], p[5])),
            ("commit_lsn", "string", _lsn(p[0], p[1], p[2])),
            ("event_serial_no", "int64", p[6]),
        ]
        error = E.slots_error(position, 7, "SQL Server LSNs")
    elif options.connector == "mysql":
        p = [E.slot(position, i) for i in range(4)]
        fields = [
            *common,
            ("snapshot", "string", snapshot_text),
            ("db", "string", db),
            ("table", "string", table),
            ("server_id", "int64", F.lit(0).cast("bigint")),
            ("gtid", "string", F.col("meta")["gtid"]),
            ("file", "string", E.binlog_name(p[0])),
            ("pos", "int64", p[1]),
            ("row", "int32", p[3].cast("int")),
        ]
        error = E.slots_error(position, 4, "a MySQL binlog file/pos/total_order/row")
    else:
        size = F.size(position)
        a, b = F.get(position, 0), F.get(position, 1)
        lsn = F.when(size == 1, a).when(
            (size == 2) & b.between(0, 2**32 - 1) & a.between(0, 2**31 - 1), a * (2**32) + b
        )
        fields = [
            *common,
            ("snapshot", "string", snapshot_text),
            ("db", "string", db),
            ("sequence", "string", F.concat(F.lit('[null,"'), lsn.cast("string"), F.lit('"]'))),
            ("schema", "string", schema),
            ("table", "string", table),
            ("txId", "int64", F.col("meta")["txId"].try_cast("bigint")),
            ("lsn", "int64", lsn),
            ("xmin", "int64", F.lit(None).cast("bigint")),
        ]
        error = F.when(
            lsn.isNull(),
            F.concat(
                F.lit("position ["),
                F.coalesce(F.array_join(position.cast("array<string>"), ","), F.lit("")),
                F.lit(
                    "] cannot be written as a PostgreSQL lsn (one number, or [a < 2^31, b < 2^32])"
                ),
            ),
        )
    schema_doc = {
        "type": "struct",
        "fields": [_source_field(n, t) for n, t, _ in fields],
        "optional": False,
        "name": f"io.debezium.connector.{options.connector}.Source",
        "field": "source",
    }
    return schema_doc, F.struct(*[c.alias(n) for n, _, c in fields]), error


_REQUIRED = ("version", "connector", "name", "ts_ms", "db", "schema", "table")


def _source_field(name: str, kind: str) -> dict[str, Any]:
    """A field of the source block's schema, as the connectors declare it."""
    field: dict[str, Any] = {"type": kind, "optional": name not in _REQUIRED}
    if name == "snapshot" and kind == "boolean":
        field["default"] = False
    return {**field, "field": name}


def _transaction(options: E.EncodeOptions) -> Column | None:
    """MySQL's ``transaction`` block carries ``total_order`` (position element 3)."""
    if options.connector != "mysql":
        return None
    order = E.slot(F.col("position"), 2)
    block = F.struct(
        F.coalesce(F.col("meta")["txId"], F.lit("")).alias("id"),
        order.alias("total_order"),
        order.alias("data_collection_order"),
    )
    return F.when(order != -1, block)


def _envelope_schema(
    prefix: str, row: dict[str, Any] | None, source: dict[str, Any], options: E.EncodeOptions
) -> str:
    def image(field: str) -> dict[str, Any]:
        fields = row["fields"] if row else []
        return {
            "type": "struct",
            "fields": fields,
            "optional": True,
            "name": f"{prefix}.Value",
            "field": field,
        }

    fields = [
        image("before"),
        image("after"),
        source,
        {"type": "string", "optional": False, "field": "op"},
        {"type": "int64", "optional": True, "field": "ts_ms"},
    ]
    if options.connector == "mysql":
        tx = [
            {"type": "string", "optional": False, "field": "id"},
            {"type": "int64", "optional": False, "field": "total_order"},
            {"type": "int64", "optional": False, "field": "data_collection_order"},
        ]
        fields.append({"type": "struct", "fields": tx, "optional": True, "field": "transaction"})
    doc = {"type": "struct", "fields": fields, "optional": False, "name": f"{prefix}.Envelope"}
    return json.dumps(doc, separators=(",", ":"))


def _value(schema_text: str, payload: Column, options: E.EncodeOptions) -> Column:
    body = F.to_json(payload, E.JSON_NULLS)
    if not options.schemas:
        return body
    return F.concat(F.lit('{"schema":' + schema_text + ',"payload":'), body, F.lit("}"))


def _payload(before: Column, after: Column, source: Column, options: E.EncodeOptions) -> Column:
    parts = [
        before.alias("before"),
        after.alias("after"),
        source.alias("source"),
        _op_code().alias("op"),
        E.epoch_ms(F.col("source_ts")).alias("ts_ms"),
    ]
    tx = _transaction(options)
    if tx is not None:
        parts.append(tx.alias("transaction"))
    return F.struct(*parts)


def _op_code() -> Column:
    return V.lookup(OP_CODES)[F.col("op")]


def _prefix(table: str, options: E.EncodeOptions) -> str:
    return f"{options.server_name}.{table.split('.', 1)[-1] if table.count('.') >= 2 else table}"


def encode(changes: DataFrame, options: E.EncodeOptions) -> DataFrame:
    """Canonical changes -> Debezium records (:data:`cdclake.formats.encode.MESSAGE_SCHEMA`)."""
    connector = options.connector or source_connector(changes)
    options = replace(options, connector=connector)
    changes = E.map_positions(changes, spells(connector), sequence(connector), options.epoch)
    changes = E.one_image_updates(changes)  # a ``u`` without ``after`` is no Debezium event
    source_schema, source, position_error = _source(options)
    groups = E.row_groups(changes)

    def build(g: E.RowGroup, before: Column, after: Column) -> tuple[Column, Column]:
        return _row_messages(g, before, after, source_schema, source, position_error, options)

    truncate_schema = _envelope_schema("cdclake", None, source_schema, options)
    truncate = _value(truncate_schema, _payload(F.lit(None), F.lit(None), source, options), options)
    null_message = F.struct(F.lit(None).cast("string").alias("key"), truncate.alias("value"))
    control = (
        F.when(E.is_op(Op.TRUNCATE), F.array(null_message)),
        F.when(E.is_op(Op.TRUNCATE), position_error),
        F.when(~E.is_op(Op.TRUNCATE), E.not_carried("Debezium")),
    )
    return E.encode_groups(changes, groups, build, control)


def _row_messages(
    g: E.RowGroup,
    before: Column,
    after: Column,
    source_schema: dict[str, Any],
    source: Column,
    position_error: Column,
    options: E.EncodeOptions,
) -> tuple[Column, Column]:
    fields, values_b, values_a, bad = [], [], [], []
    for f in g.columns.fields:
        schema = field_schema(f.name, f.dataType)
        if schema is None:
            bad.append(
                f"column {f.name}: type {f.dataType.simpleString()} has no Debezium encoding"
            )
            continue
        fields.append(schema)
        values_b.append(column_value(f.dataType, before[f.name], options.schemas).alias(f.name))
        values_a.append(column_value(f.dataType, after[f.name], options.schemas).alias(f.name))
    if bad:
        return F.lit(None), F.lit(bad[0])
    prefix = _prefix(g.table, options)
    row = {"fields": fields}
    schema_text = _envelope_schema(prefix, row, source_schema, options)
    struct_b = F.when(before.isNotNull(), F.struct(*values_b)) if values_b else F.lit(None)
    struct_a = F.when(after.isNotNull(), F.struct(*values_a)) if values_a else F.lit(None)
    value = _value(schema_text, _payload(struct_b, struct_a, source, options), options)
    key = _key(g, F.coalesce(after, before), prefix, options)
    main = F.struct(key.alias("key"), value.alias("value"))
    tombstone = F.struct(key.alias("key"), F.lit(None).cast("string").alias("value"))
    with_tombstone = options.tombstones and bool(g.key_columns)
    messages = (
        F.when(E.is_op(Op.DELETE), F.array(main, tombstone)).otherwise(F.array(main))
        if with_tombstone
        else F.array(main)
    )
    unavailable = F.when(
        F.size(F.col("unavailable")) > 0,
        F.concat(
            F.lit("columns not sent by the source (TOAST): "),
            F.array_join(F.col("unavailable"), ", "),
        ),
    )
    return messages, F.coalesce(position_error, unavailable)


def _key(g: E.RowGroup, row: Column, prefix: str, options: E.EncodeOptions) -> Column:
    """The record key: the key columns of the row, with or without schema; null without key."""
    if not g.key_columns:
        return F.lit(None).cast("string")
    types = {f.name: f.dataType for f in g.columns.fields}
    if any(k not in types or field_schema(k, types[k]) is None for k in g.key_columns):
        return F.lit(None).cast("string")
    payload = F.to_json(
        F.struct(
            *[column_value(types[k], row[k], options.key_schemas).alias(k) for k in g.key_columns]
        ),
        E.JSON_NULLS,
    )
    if not options.key_schemas:
        return payload
    fields = [{**(field_schema(k, types[k]) or {}), "optional": False} for k in g.key_columns]
    doc = {"type": "struct", "fields": fields, "optional": False, "name": f"{prefix}.Key"}
    text = json.dumps(doc, separators=(",", ":"))
    return F.concat(F.lit('{"schema":' + text + ',"payload":'), payload, F.lit("}"))


__all__ = ["encode", "field_schema", "source_connector", "twos_complement"]
