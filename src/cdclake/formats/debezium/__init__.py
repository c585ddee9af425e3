"""Debezium JSON change events (SQL Server, PostgreSQL, MySQL/MariaDB connectors).

Producer documentation: Debezium connector reference, "Data change events" (SQL Server,
PostgreSQL, MySQL), and Kafka Connect's JsonConverter (``schemas.enable``).

A value with the schema envelope (``schemas.enable=true``)::

    {"schema": {"type": "struct", "fields": [{"field": "before", ...}, {"field": "after",
     "fields": [{"type": "int32", "field": "id"}, ...]}, ...]},
     "payload": {"before": null, "after": {"id": 1005, ...}, "op": "c", "ts_ms": 1559729471739,
                 "source": {"connector": "sqlserver", "db": "testDB", "schema": "dbo",
                            "table": "customers", "commit_lsn": "00000027:00000758:0005",
                            "change_lsn": "00000027:00000758:0003", "event_serial_no": "1"}}}

or the bare payload (``schemas.enable=false``). A null value is a tombstone.

Positions (compared element by element as numbers, never as text):

- SQL Server: commit_lsn, change_lsn (each as its three hex parts), event_serial_no
- PostgreSQL: lsn (every change has its own WAL position; the delete and insert of a primary-key
  update share one, which is harmless: they have different keys)
- MySQL / MariaDB: binlog file number, pos, ``transaction.total_order``, row. Events of one
  transaction may share ``pos`` (``row`` only counts rows of one binlog rows event), so the order
  inside a transaction needs ``provide.transaction.metadata=true``; without it ``total_order`` is
  -1 and a delete + re-insert of one key in one transaction tie (only the input order of one batch
  separates them). Snapshot rows all carry the binlog position at snapshot start.
- A ``source`` with no connector and no log position (Flink CDC's Kafka pipeline sink writes only
  ``db`` and ``table``): the input order (:data:`cdclake.model.INPUT_ORDER_DOC`), and
  ``meta.ordering`` is ``input``.

Control records: a null value is a tombstone; ``status`` BEGIN/END (transaction metadata topic)
are begin/commit; a MySQL/MariaDB *schema-change* record (``ddl``, ``databaseName``,
``tableChanges``, no ``op``: the topic named after the prefix) is a ``message`` whose ``detail``
is ``ddl:`` + the statement and whose ``meta.database`` is ``databaseName``. It is not an
``Op.DDL``: the row events carry their own schema, and the MySQL types of the statement (``bit``
-> bigint, ``tinyint`` -> byte) would contradict the Kafka Connect types of the rows (``Bits`` ->
binary, int16). ``source.snapshot`` (``first``, ``first_in_data_collection``, ``true``,
``last_in_data_collection``, ``last``, ``false``, ``incremental``) is kept in ``meta.snapshot``;
op ``r`` alone makes a snapshot read.

Debezium flattened by Kafka Connect's ``ExtractNewRecordState`` (the row alone, ``__op``,
``__deleted`` and other added fields) is read too: see :mod:`cdclake.formats.debezium.flat`.

With the schema envelope the row images are typed from the field schemas
(:mod:`cdclake.formats.debezium.types`); bare payloads are typed from the target table or inferred.
MySQL/MariaDB ``bigint unsigned`` needs ``bigint.unsigned.handling.mode=precise`` (Decimal(20,0)):
with the default ``long`` the schema is a plain int64 and values >= 2^63 arrive negative, which no
decoder can tell apart from a signed bigint.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import reduce
from typing import TYPE_CHECKING, ClassVar

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import DataType, StringType, StructField, StructType

from cdclake.formats.base import (
    IMAGE_COLUMNS,
    LANE,
    MALFORMED,
    REPARSE,
    TOMBSTONE,
    ColumnSpec,
    DecodeOptions,
    Format,
    Lane,
    input_order,
    json_list_token,
    parse_value,
    select_envelope,
)
from cdclake.formats.debezium import flat
from cdclake.formats.debezium import types as debezium_types
from cdclake.formats.values import lookup, lower_keyword
from cdclake.model import (
    EVENT_COUNT_KEY,
    INPUT_ORDERED,
    ORDERING_KEY,
    SNAPSHOT_TRANSACTION,
    SOURCE_ID_KEY,
    TRANSACTION_END_KEY,
    TRANSACTION_IDS,
    TRANSACTION_KEY,
    KeySource,
    Op,
)

if TYPE_CHECKING:
    from cdclake.formats.encode import EncodeOptions

OPS: dict[str, str] = {
    "c": Op.INSERT,
    "u": Op.UPDATE,
    "d": Op.DELETE,
    "r": Op.READ,
    "t": Op.TRUNCATE,
    "m": Op.MESSAGE,
}
FLAT_OPS: dict[str, str] = {c: OPS[c] for c in "cudr"}
"""The ``__op`` codes of a flattened event (the SMT drops truncates and messages)."""
FLAT_NO_TABLE = (
    "no table: add.fields=db,table (or schema,table), a value schema named "
    "<prefix>.<db>.<table>.Value, or the Kafka topic"
)
TRANSACTION_STATUS: dict[str, str] = {"BEGIN": Op.BEGIN, "END": Op.COMMIT}
UNAVAILABLE = "__debezium_unavailable_value"
DDL_PREFIX = "ddl:"
"""``detail`` of a schema-change record: this prefix, then the statement (see the module doc)."""
META_KEYS: tuple[str, ...] = (
    "connector", "snapshot", "txId", "gtid", "oldkey", "newkey", "database", SOURCE_ID_KEY,
    ORDERING_KEY, TRANSACTION_KEY, EVENT_COUNT_KEY, TRANSACTION_END_KEY,
)  # fmt: skip

_SOURCE = (
    "STRUCT<connector: STRING, name: STRING, db: STRING, schema: STRING, `table`: STRING, "
    "ts_ms: STRING, snapshot: STRING, change_lsn: STRING, commit_lsn: STRING, "
    "event_serial_no: STRING, lsn: STRING, txId: STRING, file: STRING, pos: STRING, "
    "`row`: STRING, gtid: STRING, scn: STRING, commit_scn: STRING>"
)
_BODY: list[tuple[str, str]] = [
    ("before", "STRING"),
    ("after", "STRING"),
    ("source", _SOURCE),
    ("op", "STRING"),
    ("ts_ms", "STRING"),
    ("message", "STRUCT<prefix: STRING, content: STRING>"),
    ("transaction", "STRUCT<id: STRING, total_order: STRING, data_collection_order: STRING>"),
    ("status", "STRING"),
    ("id", "STRING"),
    ("event_count", "STRING"),
    ("ddl", "STRING"),
    ("databaseName", "STRING"),
    *flat.BODY,
]
# The value is parsed once, whether it has the schema envelope or is the bare payload.
_VALUE = ", ".join(
    [
        "`schema` STRUCT<name: STRING, fields: ARRAY<STRUCT<field: STRING, fields: STRING>>>",
        "payload STRUCT<" + ", ".join(f"`{n}`: {t}" for n, t in _BODY) + ">",
        *[f"`{n}` {t}" for n, t in _BODY],
        "_malformed STRING",
    ]
)


def _value_type(images: StructType | None) -> StructType:
    """The value's parse type; ``images``: the type of ``before`` and ``after`` (else text)."""
    value = StructType.fromDDL(_VALUE)
    assert isinstance(value, StructType)
    if images is None:
        return value

    def typed(struct: DataType) -> StructType:
        assert isinstance(struct, StructType)
        return StructType(
            [
                StructField(f.name, images) if f.name in ("before", "after") else f
                for f in struct.fields
            ]
        )

    return StructType(
        [
            StructField(f.name, typed(f.dataType))
            if f.name == "payload" and isinstance(f.dataType, StructType)
            else StructField(f.name, images)
            if f.name in ("before", "after")
            else f
            for f in value.fields
        ]
    )


def _lsn_parts(lsn: Column) -> list[Column]:
    """SQL Server LSN ``0000002b:00000758:0003`` -> its three parts as numbers (-1 when absent).

    ``split`` with a one-character pattern takes Java's fast path; ``split_part`` compiles a
    regular expression per call (three per LSN, two LSNs per event)."""
    parts = F.split(lsn, ":")
    return [
        F.coalesce(F.conv(F.get(parts, i), 16, 10).try_cast("bigint"), F.lit(-1)) for i in (0, 1, 2)
    ]


def _num(text: Column) -> Column:
    return F.coalesce(text.try_cast("bigint"), F.lit(-1))


def _connector(src: Column) -> Column:
    """``source.connector``, lowercased where it is not one of the names Debezium writes."""
    return lower_keyword(src["connector"], *ORDERED_CONNECTORS)


ORDERED_CONNECTORS = ("sqlserver", "postgresql", "mysql", "mariadb")
"""The connectors whose positions :func:`_position` reads by name."""


def _position(src: Column, total_order: Column) -> Column:
    """The event's place in the source log (see the module doc); null when the source has none.

    ``total_order`` is the event's ``transaction.total_order`` (null without transaction metadata).
    """
    connector = _connector(src)
    return (
        F.when(connector == "sqlserver", _sqlserver_position(src))
        .when(connector == "postgresql", F.array(_num(src["lsn"])))
        .when(connector.isin("mysql", "mariadb"), _binlog_position(src, total_order))
        .when(src["lsn"].isNotNull(), F.array(_num(src["lsn"])))
        .when(src["commit_scn"].isNotNull(), F.array(_num(src["commit_scn"]), _num(src["scn"])))
        .when(src["scn"].isNotNull(), F.array(_num(src["scn"])))
        .when(_input_ordered(src), input_order())
    )


def _sqlserver_position(src: Column) -> Column:
    """A SQL Server event's position: its commit LSN, change LSN and serial number."""
    return F.array(
        *_lsn_parts(src["commit_lsn"]), *_lsn_parts(src["change_lsn"]), _num(src["event_serial_no"])
    )


def _binlog_position(src: Column, total_order: Column) -> Column:
    """A MySQL/MariaDB event's position. Every event of one transaction carries the
    transaction's ``pos``; ``row`` only counts rows inside one binlog rows event, so the order
    inside a transaction comes from ``transaction.total_order`` (-1 without transaction
    metadata: then a delete and re-insert of one key in one transaction tie, and only the input
    order of one batch separates them)."""
    binlog_no = F.regexp_extract(src["file"], r"(\d+)$", 1).try_cast("bigint")
    return F.array(
        F.coalesce(binlog_no, F.lit(-1)), _num(src["pos"]), _num(total_order), _num(src["row"])
    )


def _input_ordered(src: Column) -> Column:
    """A ``source`` that names no connector and no log position (Flink CDC's Kafka sink writes
    only ``db`` and ``table``): its changes are ordered by input order."""
    none = [src[f].isNull() for f in ("connector", *_POSITION_FIELDS)]
    return reduce(lambda a, b: a & b, none)


_POSITION_FIELDS = ("lsn", "commit_lsn", "change_lsn", "file", "pos", "scn", "commit_scn")


def _position_error(src: Column, position: Column) -> Column:
    """Why a data event has no usable position (null when it has one)."""
    bad_lsn = _connector(src).eqNullSafe("postgresql") & src["lsn"].try_cast("bigint").isNull()
    return F.when(
        position.isNull(),
        F.concat(
            F.lit("cannot order events of connector '"),
            F.coalesce(src["connector"], F.lit("<none>")),
            F.lit("': expected source.lsn, commit_lsn/change_lsn, file/pos or scn"),
        ),
    ).when(
        bad_lsn,
        F.concat(
            F.lit("source.lsn '"),
            F.coalesce(src["lsn"], F.lit("null")),
            F.lit("' is not an integer LSN"),
        ),
    )


def _table(src: Column) -> Column:
    schema = F.when(F.coalesce(src["schema"], F.lit("")) != "", src["schema"])
    return F.when(
        F.coalesce(src["table"], F.lit("")) != "",
        F.concat_ws(".", src["db"], schema, src["table"]),
    )


_KEY_ENVELOPE = ["payload", "schema"]
"""The fields of a key in JsonConverter's envelope form (``schemas.enable=true``), sorted."""


def _source_id(src: Column, key: Column) -> Column:
    """The connector's logical name (``topic.prefix``): ``source.name`` in a change, the
    record key's ``serverName`` in a heartbeat (``{"serverName": "dbserver1"}``)."""
    return F.coalesce(
        src["name"],
        F.get_json_object(key, "$.payload.serverName"),
        F.get_json_object(key, "$.serverName"),
    )


def _parsed_key(key: Column, where: Column | None = None) -> Column:
    """The record key read once (its own column: see :func:`_key_columns`): the payload as text,
    and the key's own field names (an envelope has exactly ``schema`` and ``payload``); only
    ``where`` it holds, when given."""
    return F.when(
        key.isNotNull() if where is None else key.isNotNull() & where,
        F.struct(
            F.get_json_object(key, "$.payload").alias("payload"),
            F.array_sort(F.json_object_keys(key)).alias("fields"),
        ),
    )


def _key_image(key: Column, parsed: Column) -> Column:
    """The key's columns as a JSON object: the payload of a key in the envelope form (with a
    struct schema or a null one), else the key itself."""
    enveloped = (parsed["fields"] == F.array(*map(F.lit, _KEY_ENVELOPE))) & F.startswith(
        F.ltrim(parsed["payload"]), F.lit("{")
    )
    return F.when(enveloped, parsed["payload"]).otherwise(key)


def _key_columns(key: Column, parsed: Column) -> Column:
    """The key's column names (see :func:`_key_image`)."""
    return F.coalesce(F.json_object_keys(_key_image(key, parsed)), F.array().cast("array<string>"))


class DebeziumFormat(Format):
    name: ClassVar[str] = "debezium"
    description: ClassVar[str] = "Debezium JSON (SQL Server, PostgreSQL, MySQL/MariaDB)"
    transactions: ClassVar[str | None] = TRANSACTION_IDS

    detect_fields: ClassVar[str] = (
        "payload STRUCT<op: STRING, status: STRING, ddl: STRING, databaseName: STRING, "
        f"{flat.DETECT_FIELDS.replace(' STRING', ': STRING')}>, "
        "op STRING, status STRING, ddl STRING, databaseName STRING, "
        f"`schema` STRUCT<name: STRING>, {flat.DETECT_FIELDS}"
    )

    def detect_parsed(self, fields: Column) -> Column:
        def either(name: str) -> Column:
            return F.coalesce(fields["payload"][name], fields[name])

        schema_change = either("ddl").isNotNull() & either("databaseName").isNotNull()
        envelope = either("op").isin(*OPS) | either("status").isin(*TRANSACTION_STATUS)
        return envelope | schema_change | flat.detected(fields)

    def envelope(self, raw: DataFrame, options: DecodeOptions) -> DataFrame:
        return self._envelope(raw, None)

    def envelope_with_images(
        self,
        raw: DataFrame,
        options: DecodeOptions,
        images: StructType,
        lanes: Sequence[Lane] = (),
    ) -> DataFrame | None:
        return self._envelope(raw, images, lanes)

    def learning_envelope(self, raw: DataFrame, options: DecodeOptions) -> DataFrame | None:
        return self._envelope(raw, None, learn=True)

    def _envelope(
        self,
        raw: DataFrame,
        images: StructType | None,
        lanes: Sequence[Lane] = (),
        learn: bool = False,
    ) -> DataFrame:
        if lanes:
            assert images is not None, "lanes read the images in the message's parse"
            raw = _in_lanes(raw, images, lanes)
        elif learn:
            raw = with_lane_key(raw)
        staged = _staged(raw, images, ~F.col(_FAST) if lanes else None)
        b, headers, tombstone, src = F.col("_b"), F.col("headers"), F.col(TOMBSTONE), F.col("_src")
        is_flat = F.col("_flat") | F.col("_flat_delete")
        op_code = _op_code(b, headers)
        status = b["status"]
        body = {f: b[f] for f, _ in _BODY}
        fields = F.col("_schema_fields")
        token = F.when(F.col("_flat"), flat.schema_token(F.col("_enveloped"))).otherwise(
            F.coalesce(
                F.get(F.filter(fields, lambda f: f["field"] == "after"), 0)["fields"],
                F.get(F.filter(fields, lambda f: f["field"] == "before"), 0)["fields"],
            )
        )
        op = F.col("_op")
        position = F.col("_pos")
        is_data = op.isin(Op.INSERT, Op.UPDATE, Op.DELETE, Op.READ, Op.TRUNCATE)
        table = F.col("_table")
        error = (
            F.when(tombstone, F.lit(None))
            .when(F.col("_malformed").isNotNull() | F.col("_null"), F.lit("not valid JSON"))
            .when(op.isNull() & op_code.isNotNull(), _unknown_op(op_code))
            .when(op.isNull(), F.lit("not a Debezium change event: no op, status or ts_ms"))
            .when(is_data & table.isNull() & is_flat, F.lit(FLAT_NO_TABLE))
            .when(is_data & table.isNull(), F.lit("no source table in source.db/schema/table"))
            .when(is_data, _position_error(src, position))
        )
        extra, before, after = _image_texts(images, body, op, is_flat)
        record_key = F.col("key").isNotNull()
        detail = (
            F.when(body["ddl"].isNotNull(), F.concat(F.lit(DDL_PREFIX), body["ddl"]))
            .when(
                op == Op.MESSAGE,
                F.concat_ws(":", body["message"]["prefix"], body["message"]["content"]),
            )
            .when(status.isNotNull(), body["id"])
        )
        key_source = F.when(record_key, F.lit(KeySource.RECORD_KEY)).otherwise(
            F.lit(KeySource.NONE)
        )
        columns = {
            "table": table,
            "op": op,
            "key_columns": F.when(record_key, _key_columns(F.col("key"), F.col("_key"))).otherwise(
                F.array().cast("array<string>")
            ),
            "key_source": key_source,
            "before_text": before,
            "after_text": after,
            "schema_token": token,
            "position": F.when(is_data | body["ddl"].isNotNull(), position),
            "source_ts": F.timestamp_millis(
                F.coalesce(src["ts_ms"], F.when(~is_flat, body["ts_ms"])).try_cast("bigint")
            ),
            "detail": detail,
            "meta": _meta(src, body),
            "error": error,
        }
        if lanes:
            assert extra is not None
            fast = F.col(_FAST)
            lean, lean_extra = _lane_columns(lanes)
            # the others (the key's source, the lineage) are the same expression either way
            columns |= {n: F.when(fast, c).otherwise(columns[n]) for n, c in lean.items()}
            extra = {n: F.when(fast, lean_extra[n]).otherwise(c) for n, c in extra.items()}
        if learn:
            # a message of the envelope form, its payload a change (not a flattened row)
            lane = F.col("_lane_key").withField("connector", src["connector"])
            extra = {**(extra or {}), LANE: F.when(F.col("_enveloped") & ~is_flat, lane)}
        return select_envelope(
            staged,
            extra,
            seq=F.col("lineage"),
            lineage=F.col("lineage"),
            raw=F.col("raw"),
            **columns,
        )

    def typed_spec(
        self, name: str, data_type: DataType, options: DecodeOptions | None = None
    ) -> ColumnSpec | None:
        # schemaless payloads: JSON text as Debezium writes it, TOAST placeholder included
        return debezium_types.infer_spec(name, data_type)

    def column_specs(self, schema_token: str, options: DecodeOptions) -> list[ColumnSpec]:
        fields = json_list_token(schema_token, "row schema 'fields'")
        return debezium_types.row_specs(fields)

    def encode(self, changes: DataFrame, options: EncodeOptions) -> DataFrame:
        from cdclake.formats.debezium import encode as _encode_debezium

        return _encode_debezium.encode(changes, options)


# ---- lanes: messages whose Connect JSON starts as a known one's (see Lane) -----------------
#
# Kafka's JsonConverter writes ``{"schema":...,"payload":...}``, the schema first, the same text
# for every message of one table version; a key in that form likewise. A message whose value and
# key start as those of a message an earlier batch typed (the text before the first
# ``"payload"``, by two hashes) has that message's row schema, and its key the same columns: its
# payload alone is parsed, and the position is read the connector's way only. Whatever the lane
# cannot read exactly as the generic envelope would (not a row change, another connector, a
# payload that does not parse, no table or position) takes the generic envelope, in the same
# projection: each message is parsed once, by one of the two.

_PAYLOAD = '"payload"'
_ENVELOPE_START = '{"schema"'
_PLAIN_KEY = "{}"
"""A lane key's part for a record key that is a plain JSON object (its columns: its keys)."""
_FAST, _LANE_INDEX, _LEAN = "_fast", "_lane_index", "_lean"
_ROW_OPS = ("c", "u", "d", "r")


def _head(text: Column) -> Column:
    """The text before the first ``"payload"`` (all of it when there is none)."""
    return F.substring_index(text, _PAYLOAD, 1)


def _enveloped(text: Column, head: Column) -> Column:
    """Whether ``head`` (:func:`_head` of ``text``) is a Connect JSON envelope's: ``text``
    starts with ``{"schema"`` and ``head`` ends with a comma."""
    return F.startswith(text, F.lit(_ENVELOPE_START)) & F.endswith(F.rtrim(head), F.lit(","))


def with_lane_key(raw: DataFrame) -> DataFrame:
    """``raw`` plus ``_lane_key``: a message's lane (``hash``, ``check``, ``plain_key``), from
    the head of its value with the head of its key, or :data:`_PLAIN_KEY` for a plain key (an
    object without ``"payload"`` or escapes that could spell it); null when the value or the
    key is of neither form, or for a line that is a record object. The heads are cut once, in
    a projection of their own (each is read several times)."""
    value, key = F.col("raw"), F.col("key")
    staged = raw.withColumns(
        {"_value_head": F.when(~F.col("nested"), _head(value)), "_key_head": _head(key)}
    )
    value_head, key_head = F.col("_value_head"), F.col("_key_head")
    plain = ~key.contains(_PAYLOAD) & ~key.contains("\\u")
    key_part = F.when(_enveloped(key, key_head), key_head).when(plain, F.lit(_PLAIN_KEY))
    staged = staged.withColumn("_key_part", key_part)
    key_part = F.col("_key_part")
    known = _enveloped(value, value_head) & (key.isNull() | key_part.isNotNull())
    lane = F.struct(
        F.xxhash64(value_head, key_part).alias("hash"),
        F.hash(value_head, key_part).alias("check"),
        (key_part == F.lit(_PLAIN_KEY)).alias("plain_key"),
    )
    return staged.withColumn("_lane_key", F.when(known, lane)).drop(
        "_value_head", "_key_head", "_key_part"
    )


def _lean_type(images: StructType) -> StructType:
    """The parse of a lane's message: its payload only (Jackson skips the schema section)."""
    payload = _value_type(images)["payload"]
    return StructType([payload, StructField(MALFORMED, StringType())])


def _in_lanes(raw: DataFrame, images: StructType, lanes: Sequence[Lane]) -> DataFrame:
    """``raw`` plus which lane each message takes (:data:`_LANE_INDEX`), its payload parsed
    (:data:`_LEAN`, only for those) and whether the lane reads it (:data:`_FAST`)."""
    index = F.create_map(*[x for i, lane in enumerate(lanes) for x in (F.lit(lane.hash), F.lit(i))])
    checks = F.array(*[F.lit(lane.check) for lane in lanes])
    staged = with_lane_key(raw)
    lk = F.col("_lane_key")
    i = index[lk["hash"]]
    staged = staged.withColumn(_LANE_INDEX, F.when(F.get(checks, i) == lk["check"], i))
    options = {"columnNameOfCorruptRecord": MALFORMED}
    lean = F.from_json(
        F.when(F.col(_LANE_INDEX).isNotNull(), F.col("raw")), _lean_type(images), options
    )
    staged = staged.withColumn(_LEAN, lean)
    b = F.col(_LEAN)["payload"]
    src = b["source"]
    # in projections of their own: each is read by the test below and by the envelope
    staged = staged.withColumns(
        {
            "_lean_pos": _lanes_position(lanes, src, b["transaction"]["total_order"]),
            "_lean_table": _table(src),
        }
    )
    connector = F.get(F.array(*[F.lit(lane.connector) for lane in lanes]), F.col(_LANE_INDEX))
    position = F.col("_lean_pos")
    fast = (
        F.col(_LEAN)[MALFORMED].isNull()
        & b["op"].isin(*_ROW_OPS)
        & b["ddl"].isNull()
        & b["status"].isNull()
        & (src["connector"] == connector)
        & F.col("_lean_table").isNotNull()
        & position.isNotNull()
        & _position_error(src, position).isNull()
    )
    return staged.withColumn(_FAST, F.coalesce(fast, F.lit(False)))


def _lanes_position(lanes: Sequence[Lane], src: Column, total_order: Column) -> Column:
    """:func:`_position` for the connectors of ``lanes``: one expression when they share one."""
    position = None
    for connector in sorted({lane.connector for lane in lanes}, reverse=True):
        mine = _connector_position(connector, src, total_order)
        position = (
            mine
            if position is None
            else F.when(src["connector"] == connector, mine).otherwise(position)
        )
    assert position is not None
    return position


def _connector_position(connector: str, src: Column, total_order: Column) -> Column:
    """The position :func:`_position` reads for a ``source.connector`` of ``connector``."""
    kind = connector.lower() if connector.lower() in ORDERED_CONNECTORS else None
    if kind == "sqlserver":
        return _sqlserver_position(src)
    if kind == "postgresql":
        return F.array(_num(src["lsn"]))
    if kind in ("mysql", "mariadb"):
        return _binlog_position(src, total_order)
    return _position(src, total_order)


def _lane_columns(lanes: Sequence[Lane]) -> tuple[dict[str, Column], dict[str, Column]]:
    """The envelope's columns and extra columns of a message the lanes read (:data:`_FAST`),
    where they differ from the generic envelope's."""
    b = F.col(_LEAN)["payload"]
    src = b["source"]
    body = {f: b[f] for f, _ in _BODY}
    lane = F.col(_LANE_INDEX)

    def pick(values: list[Column]) -> Column:
        return F.get(F.array(*values), lane)

    empty = F.array().cast("array<string>")
    keys = pick(
        [
            F.lit(None).cast("array<string>")
            if ln.key_columns is None
            else F.array(*map(F.lit, ln.key_columns)).cast("array<string>")
            for ln in lanes
        ]
    )
    key = F.col("key")
    plain_keys = F.coalesce(F.json_object_keys(key), empty)
    columns = {
        "table": F.col("_lean_table"),
        "op": lookup(OPS)[b["op"]],
        "key_columns": F.when(key.isNull(), empty).otherwise(F.coalesce(keys, plain_keys)),
        "before_text": F.when(b["before"].isNotNull(), F.lit("{}")),
        "after_text": F.when(b["after"].isNotNull(), F.lit("{}")),
        "schema_token": pick([F.lit(ln.schema_token) for ln in lanes]),
        "position": F.col("_lean_pos"),
        "source_ts": F.timestamp_millis(F.coalesce(src["ts_ms"], b["ts_ms"]).try_cast("bigint")),
        "detail": F.lit(None).cast("string"),
        "meta": _meta(src, body),
        "error": F.lit(None).cast("string"),
    }
    extra = {IMAGE_COLUMNS[0]: b["before"], IMAGE_COLUMNS[1]: b["after"], REPARSE: F.lit(False)}
    return columns, extra


def _op(b: Column, headers: Column, op_code: Column, src: Column) -> Column:
    """A message's :class:`Op`: from its ``op`` (or a flattened row's ``__op``/``__deleted``),
    a transaction marker's ``status``, a schema change's ``ddl``, a heartbeat's ``ts_ms``."""
    deleted = flat.added(b, headers, "deleted") == "true"
    flat_op = (
        F.when(F.coalesce(deleted, F.lit(False)), F.lit(Op.DELETE))
        .when(op_code.isNotNull(), lookup(FLAT_OPS)[op_code])
        .otherwise(F.lit(Op.UPDATE))  # no __op: an upsert of the row
    )
    return (
        F.when(F.col("_flat_delete"), F.lit(Op.DELETE))
        .when(F.col(TOMBSTONE), F.lit(Op.TOMBSTONE))
        .when(F.col("_flat"), flat_op)
        .when(op_code.isNotNull(), lookup(OPS)[op_code])
        .when(b["status"].isNotNull(), lookup(TRANSACTION_STATUS)[b["status"]])
        .when(b["ddl"].isNotNull(), F.lit(Op.MESSAGE))
        .when(b["ts_ms"].isNotNull() & src.isNull(), F.lit(Op.HEARTBEAT))
    )


def _unknown_op(op_code: Column) -> Column:
    """The error of an op no rule knows, with the ones that are known."""
    return F.concat(
        F.when(F.col("_flat"), F.lit(f"unknown {flat.PREFIX}op '")).otherwise(
            F.lit("unknown op '")
        ),
        op_code,
        F.when(F.col("_flat"), F.lit(f"' (expected one of {', '.join(FLAT_OPS)})")).otherwise(
            F.lit(f"' (expected one of {', '.join(OPS)})")
        ),
    )


def _image_texts(
    images: StructType | None, body: dict[str, Column], op: Column, is_flat: Column
) -> tuple[dict[str, Column] | None, Column, Column]:
    """The extra columns and the before and after texts of the envelope: with ``images`` parsed,
    the images themselves (the texts only say they are there); else their JSON text, a
    flattened row's own text, or a flattened delete's key."""
    before, after = body["before"], body["after"]
    if images is not None:
        extra = {
            IMAGE_COLUMNS[0]: before,
            IMAGE_COLUMNS[1]: after,
            # a flattened row is not under before/after: typed from its text
            REPARSE: F.col("_malformed").isNotNull() | is_flat,
        }
        flat_before = F.col("_flat_delete") | (F.col("_flat") & (op == Op.DELETE))
        return (
            extra,
            F.when(before.isNotNull() | flat_before, F.lit("{}")),
            F.when(after.isNotNull() | (F.col("_flat") & (op != Op.DELETE)), F.lit("{}")),
        )
    row = flat.row_text(F.col("_enveloped"))
    key_image = _key_image(F.col("key"), F.col("_key"))
    before = (
        F.when(F.col("_flat_delete"), key_image)
        .when(F.col("_flat") & (op == Op.DELETE), row)
        .otherwise(before)
    )
    return None, before, F.when(F.col("_flat") & (op != Op.DELETE), row).otherwise(after)


def _meta(src: Column, body: dict[str, Column]) -> Column:
    """What a change carries besides its row (:data:`META_KEYS`), as a map."""
    return F.map_from_arrays(
        F.array(*map(F.lit, META_KEYS)),
        F.array(
            src["connector"],
            src["snapshot"],
            F.coalesce(src["txId"], body["transaction"]["id"], body["id"]),
            src["gtid"],
            F.col("headers")["__debezium.oldkey"],
            F.col("headers")["__debezium.newkey"],
            body["databaseName"],
            _source_id(src, F.col("key")),
            F.when(src.isNotNull() & _input_ordered(src), F.lit(INPUT_ORDERED)),
            _transaction_id(src, body),
            F.when(body["status"] == "END", body["event_count"]),
            F.when((body["status"] == "END") | (src["snapshot"] == "last"), F.lit("true")),
        ),
    )


def _transaction_id(src: Column, body: dict[str, Column]) -> Column:
    """A change's transaction, or the one a BEGIN/END record marks; a snapshot read's is
    :data:`SNAPSHOT_TRANSACTION` (its ``last`` read closes it). PostgreSQL's ids are
    ``txid:lsn`` with each record's own LSN (Debezium appends it since DBZ-5329), so there the
    txid alone names the transaction; other connectors' ids (GTIDs, binlog ``file:pos``, SQL
    Server LSNs) are kept whole."""
    tx = F.coalesce(body["transaction"]["id"], F.when(body["status"].isNotNull(), body["id"]))
    snapshot_read = (body["op"] == "r") & src["snapshot"].isin(*SNAPSHOT_READS)
    return F.coalesce(
        F.when(tx.rlike(r"^[0-9]+:[0-9]+$"), F.substring_index(tx, ":", 1)).otherwise(tx),
        F.when(snapshot_read, F.lit(SNAPSHOT_TRANSACTION)),
    )


SNAPSHOT_READS = ("true", "first", "first_in_data_collection", "last_in_data_collection", "last")
"""``source.snapshot`` of a read of the connector's initial snapshot."""


def _op_code(b: Column, headers: Column) -> Column:
    """The op as the message writes it: ``op``, or a flattened row's ``__op``."""
    return F.when(F.col("_flat"), flat.added(b, headers, "op")).otherwise(b["op"])


def _staged(raw: DataFrame, images: StructType | None, generic: Column | None = None) -> DataFrame:
    """The parsed messages with what several columns of the envelope read: the body (``_b``:
    the payload, or the value itself without the schema envelope), whether it is a flattened
    row (``_flat``, ``_flat_delete``), its source block (``_src``), op, position and table.
    Each is computed once, in a projection of its own: read inside conditional branches,
    Spark would evaluate it again per reference. ``generic``: the messages to parse (the others
    took a lane, :func:`_in_lanes`); all when None."""
    parsed = parse_value(raw, _value_type(images), record_fields=True, where=generic)
    v = F.col("_v")
    bare = F.struct(*[v[n].alias(n) for n, _ in _BODY])
    staged = parsed.select(
        *[c for c in parsed.columns if c != "_v"],
        v["_malformed"].alias("_malformed"),
        v.isNull().alias("_null"),
        v["schema"]["fields"].alias("_schema_fields"),
        F.when(v["payload"].isNotNull(), v["payload"]).otherwise(bare).alias("_b"),
        v["payload"].isNotNull().alias("_enveloped"),
        v["schema"]["name"].alias("_schema_name"),
        _parsed_key(F.col("key"), generic).alias("_key"),
    )
    b = F.col("_b")
    headers = F.col("headers")
    tombstone = F.col(TOMBSTONE)
    # flattened by ExtractNewRecordState (see debezium_flat): a row, or a delete's tombstone
    # marked by the header __op: d; its source is made of the added fields
    staged = staged.withColumns(
        {
            "_flat": ~tombstone & flat.is_flattened(b, headers, F.col("_schema_name")),
            "_flat_delete": tombstone & headers[f"{flat.PREFIX}op"].eqNullSafe("d"),
        }
    )
    is_flat = F.col("_flat") | F.col("_flat_delete")
    staged = staged.withColumn(
        "_src", F.when(is_flat, flat.source(b, headers)).otherwise(b["source"])
    )
    src = F.col("_src")
    total_order = F.when(is_flat, flat.added(b, headers, "total_order")).otherwise(
        b["transaction"]["total_order"]
    )
    return staged.withColumns(
        {
            "_op": _op(b, headers, _op_code(b, headers), src),
            "_pos": _position(src, total_order),
            "_table": F.coalesce(
                _table(src),
                F.when(is_flat, flat.table(F.col("_schema_name"), flat.topic())),
            ),
        }
    )
