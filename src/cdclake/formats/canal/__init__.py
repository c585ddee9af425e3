"""Canal flat-message JSON (MySQL binlog), also the DDL form of Tencent CKafka.

Producer documentation: alibaba/canal wiki "Canal Kafka RocketMQ QuickStart" (``flatMessage``),
canal's ``FlatMessage`` and ``EventType``; Tencent Cloud CKafka "Official Format Description for
MySQL Subscription Messages" (its DDL messages are canal flat messages). One message::

    {"data": [{"id": "1", "name": "a"}, {"id": "2", "name": "b"}], "database": "shop",
     "es": 1655812326000, "id": 7, "isDdl": false, "mysqlType": {"id": "int", "name":
     "varchar(20)"}, "old": [{"name": "x"}, {"name": null}], "pkNames": ["id"], "sql": "",
     "sqlType": {...}, "table": "items", "ts": 1655812326123, "type": "UPDATE"}

- ``data[]`` holds several rows of one table: each becomes one change (its index is the last
  element of the position). ``old[i]`` pairs with ``data[i]`` and holds only the changed columns;
  a key present with JSON null means "was NULL" (FLINK-19446), so the before image is ``data[i]``
  overlaid with every key of ``old[i]``.
- Row images are typed from ``mysqlType`` (:mod:`cdclake.formats.mysql_types`); keys come from
  ``pkNames``; the table is ``database.table``.
- A flat message has no binlog coordinates. The position is ``[es (ms), input order..., row
  index]`` (input order: the batch, the file in name order and the line, or the Kafka partition
  and offset; :data:`cdclake.model.INPUT_ORDER_DOC`): ``es`` has second precision, so two
  messages of the same second compare by where they sit in the input. Limit: a message
  re-delivered later in the same second as a newer one (or a key whose messages span Kafka
  partitions) is ordered by arrival, not by the binlog. ``es`` given in seconds (CKafka's DDL
  examples) is scaled to milliseconds.
- Flink's ``canal-json`` writes no ``es``, ``ts``, ``isDdl`` or ``mysqlType``: such a message is
  ordered by input order alone (``[input order..., row index]``, ``meta.ordering`` ``input``),
  its rows typed from their JSON values as a schemaless Debezium payload is, and ``isDdl``
  absent means false (``auto`` tells it by its top-level ``database`` and ``table``).
- DDL (``isDdl`` true: CREATE, ALTER, ERASE, QUERY, RENAME, CINDEX, DINDEX) is op ``ddl`` with the
  SQL as ``detail`` and ``meta`` {database, type}; TRUNCATE is op ``truncate`` of its table;
  GTID/XACOMMIT/XAROLLBACK are ``commit`` control records; MHEARTBEAT is a ``heartbeat``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, ClassVar

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from cdclake.errors import DecodeError
from cdclake.formats import mysql_types
from cdclake.formats.base import (
    ColumnSpec,
    DecodeOptions,
    Format,
    input_order,
    parse_value,
    select_envelope,
)
from cdclake.formats.values import lookup
from cdclake.model import INPUT_ORDERED, ORDERING_KEY, KeySource, Op
from cdclake.sources import value_text

if TYPE_CHECKING:
    from cdclake.formats.encode import EncodeOptions

ROW_TYPES: tuple[str, ...] = ("INSERT", "UPDATE", "DELETE")
DDL_TYPES: tuple[str, ...] = ("CREATE", "ALTER", "ERASE", "QUERY", "RENAME", "CINDEX", "DINDEX")
TYPES: dict[str, str] = {
    "INSERT": Op.INSERT,
    "UPDATE": Op.UPDATE,
    "DELETE": Op.DELETE,
    **{t: Op.DDL for t in DDL_TYPES},
    "TRUNCATE": Op.TRUNCATE,
    "GTID": Op.COMMIT,
    "XACOMMIT": Op.COMMIT,
    "XAROLLBACK": Op.COMMIT,
    "MHEARTBEAT": Op.HEARTBEAT,
}
# Binlog times below this are seconds (CKafka's DDL examples), above it milliseconds.
_SECONDS_LIMIT = 100_000_000_000

VALUE = (
    "id STRING, database STRING, `table` STRING, pkNames ARRAY<STRING>, isDdl STRING, "
    "type STRING, es STRING, ts STRING, `sql` STRING, mysqlType STRING, "
    "data ARRAY<MAP<STRING, STRING>>, old ARRAY<MAP<STRING, STRING>>, gtid STRING, "
    "_malformed STRING"
)


def _before_image(row: Column, old: Column) -> Column:
    """``data[i]`` overlaid with ``old[i]``: a key of ``old`` wins even when its value is null."""
    overlaid = F.map_zip_with(
        row,
        old,
        lambda k, new, was: F.when(F.array_contains(F.map_keys(old), k), was).otherwise(new),
    )
    return F.to_json(overlaid)


def _row_texts(raw: Column) -> Column:
    """The JSON text of each row of ``data``: a second parse, only for messages without
    ``mysqlType``."""
    return F.from_json(F.get_json_object(value_text(raw), "$.data"), "array<string>")


def _epoch_ms(es: Column) -> Column:
    return F.when(es < _SECONDS_LIMIT, es * 1000).otherwise(es)


class CanalFormat(Format):
    name: ClassVar[str] = "canal"
    description: ClassVar[str] = "Canal flat-message JSON (MySQL binlog)"

    detect_fields: ClassVar[str] = "isDdl STRING, database STRING, `table` STRING"

    def detect_parsed(self, fields: Column) -> Column:
        # every flat message canal writes has isDdl (true/false); no other format has it. Flink's
        # canal-json leaves it out: a top-level ``database`` and ``table`` are canal's alone
        # (CKafka writes upper-case names, Debezium and DataWorks nest their tables). Not
        # ``type``: Spark would not tell it from CKafka's ``TYPE`` in the merged detection.
        flink = fields["database"].isNotNull() & fields["table"].isNotNull()
        return fields["isDdl"].isNotNull() | flink

    def envelope(self, raw: DataFrame, options: DecodeOptions) -> DataFrame:
        rows, columns = envelope_columns(parse_value(raw, VALUE), F.col("_v"))
        return select_envelope(rows, **columns)

    def column_specs(self, schema_token: str, options: DecodeOptions) -> list[ColumnSpec]:
        return mysql_column_specs(schema_token, options)

    def encode(self, changes: DataFrame, options: EncodeOptions) -> DataFrame:
        from cdclake.formats.canal import encode as _encode_canal

        return _encode_canal.encode_canal(changes, options)


def envelope_columns(parsed: DataFrame, v: Column) -> tuple[DataFrame, dict[str, Column]]:
    """A canal envelope's rows (one per row of ``data``; ``parsed``: the records with ``v``, the
    value parsed with :data:`VALUE`) and its columns, for :func:`select_envelope`. A record whose
    ``v`` is null yields one row (a format that reads only some of its records as canal builds
    its envelope on all of them: see :class:`~cdclake.formats.ckafka.CKafkaFormat`)."""
    kind = v["type"]
    is_row = kind.isin(*ROW_TYPES)
    typed_rows = F.when(is_row & v["mysqlType"].isNull(), _row_texts(F.col("raw")))
    rows = parsed.select(
        "*",
        typed_rows.alias("_texts"),
        F.posexplode_outer(F.when(is_row, v["data"])).alias("_i", "_row"),
    )
    row, index = F.col("_row"), F.col("_i")
    # a message without mysqlType (Flink's canal-json) is typed from its JSON values, as a
    # schemaless Debezium payload is: its rows' own text, not the text-valued map's
    row_text = F.coalesce(F.get(F.col("_texts"), index), F.to_json(row))
    old = F.get(v["old"], index)
    op = lookup(TYPES)[kind]
    table = F.when(
        F.coalesce(v["table"], F.lit("")) != "", F.concat_ws(".", v["database"], v["table"])
    )
    es = _epoch_ms(v["es"].try_cast("bigint"))
    row_index = F.array(F.coalesce(index, F.lit(0)).cast("bigint"))
    # same-second messages by input order (batch, file in name order, line), then row
    position = F.when(v["es"].isNull(), F.concat(input_order(), row_index)).otherwise(
        F.concat(F.array(es), input_order(), row_index)
    )
    pk = F.coalesce(v["pkNames"], F.array().cast("array<string>"))
    needs_table = is_row | (kind == "TRUNCATE")
    error = _error(v, op, table, row, es)
    detail = F.when(op.isin(Op.DDL, Op.TRUNCATE), v["sql"]).when(
        op == Op.COMMIT, F.coalesce(v["gtid"], v["sql"])
    )
    meta = F.map_from_arrays(
        F.array(*map(F.lit, ("database", "type", "gtid", "batch_id", ORDERING_KEY))),
        F.array(
            v["database"],
            kind,
            v["gtid"],
            v["id"],
            F.when(needs_table & v["es"].isNull(), F.lit(INPUT_ORDERED)),
        ),
    )
    return rows, dict(
        table=table,
        op=op,
        key_columns=pk,
        key_source=F.when(F.size(pk) > 0, F.lit(KeySource.MESSAGE)).otherwise(
            F.lit(KeySource.NONE)
        ),
        before_text=F.when(kind == "DELETE", row_text).when(
            (kind == "UPDATE") & old.isNotNull(), _before_image(row, old)
        ),
        after_text=F.when(kind.isin("INSERT", "UPDATE"), row_text),
        # the JSON text as written: one parse renders it, no map is built and re-serialized
        schema_token=F.when(is_row, v["mysqlType"]),
        position=F.when(v["es"].isNull() | es.isNotNull(), position),
        seq=F.col("lineage"),
        source_ts=F.timestamp_millis(es),
        lineage=F.col("lineage"),
        raw=F.col("raw"),
        detail=detail,
        meta=meta,
        error=error,
    )


def mysql_column_specs(schema_token: str, options: DecodeOptions) -> list[ColumnSpec]:
    """A compact JSON ``{"column": "mysql type", ...}`` -> the columns, in that order."""
    try:
        types = json.loads(schema_token)
    except json.JSONDecodeError as e:
        raise DecodeError(f"mysqlType is not JSON: {schema_token[:200]!r}: {e}") from None
    if not isinstance(types, dict) or not all(isinstance(t, str) for t in types.values()):
        raise DecodeError(
            f"mysqlType must map column names to MySQL types, got {schema_token[:200]!r}"
        )
    specs = []
    for name, mysql_type in types.items():
        try:
            specs.append(
                mysql_types.column_spec(
                    name,
                    mysql_type,
                    tinyint1_as_boolean=options.tinyint1_as_boolean,
                    source_timezone=options.source_timezone,
                    binary_encoding=options.binary_encoding,
                )
            )
        except DecodeError as e:
            raise DecodeError(f"column {name}: {e}") from None
    return specs


def _error(v: Column, op: Column, table: Column, row: Column, es: Column) -> Column:
    """Why a canal message (``v``, parsed) is no change: not JSON, no or an unknown type, a
    row or truncate without its table or rows, an ``es`` that is no time in ms."""
    kind = v["type"]
    is_row = kind.isin(*ROW_TYPES)
    needs_table = is_row | (kind == "TRUNCATE")
    return (
        F.when(v["_malformed"].isNotNull() | v.isNull(), F.lit("not valid JSON"))
        .when(kind.isNull(), F.lit("not a canal flat message: no 'type' field"))
        .when(
            op.isNull(),
            F.concat(
                F.lit("unknown canal type '"),
                kind,
                F.lit(f"' (expected one of {', '.join(TYPES)})"),
            ),
        )
        .when(
            needs_table & table.isNull(),
            F.concat(F.lit("canal "), kind, F.lit(" message without database/table")),
        )
        .when(
            is_row & row.isNull(),
            F.concat(F.lit("canal "), kind, F.lit(" message without rows in 'data'")),
        )
        .when(
            needs_table & v["es"].isNotNull() & es.isNull(),
            F.concat(
                F.lit("canal es '"),
                F.coalesce(v["es"], F.lit("null")),
                F.lit("' is not a binlog time in ms: cannot order the change"),
            ),
        )
    )
