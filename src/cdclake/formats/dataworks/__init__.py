"""Alibaba DataWorks "sync to Kafka" JSON (whole-database real-time sync).

Producer documentation: Alibaba Cloud DataWorks "Appendix: message formats" (seed 003). A
message::

    {"schema": {"dataColumn": [{"name": "id", "type": "LONG"}, {"name": "name", "type": "STRING"}],
                "primaryKey": ["id"],
                "source": {"dbType": "MySQL", "dbName": "shop", "tableName": "items"}},
     "payload": {"before": null, "after": {"dataColumn": {"id": 1, "name": "a"}},
                 "sequenceId": "1620457642589000000", "op": "INSERT", "ddl": null,
                 "timestamp": {"eventTime": 1620457896000, "systemTime": 1620457896977}},
     "version": "0.0.1"}

- Column types: LONG (bigint), STRING, BYTES (base64 -> binary), DATE (epoch ms -> timestamp),
  DOUBLE, BOOLEAN; ``schema_token`` is the compact JSON of ``dataColumn``.
- Key: ``primaryKey``; when null, the ``#alibaba_rds_row_id#`` column that identifies rows of a
  table without primary key. Table: ``dbName[.schemaName].tableName``.
- An update is either one UPDATE_AFTER carrying before and after ("one record per update"), or an
  UPDATE_BEFOR (so spelled; UPDATE_BEFORE accepted) with only the before image followed by an
  UPDATE_AFTER with the after image, both with the same ``sequenceId``. The first half becomes an
  update without after image, which the applier treats as a delete of the before key; the second
  half upserts the after image.
- Position: ``sequenceId`` as a number, split into two 18-digit halves ``[high, low]`` (two
  19-digit halves could overflow a bigint, so at most 36 digits), then 0 for UPDATE_BEFOR and 1
  otherwise so that the halves of one update apply in order.
- Control records: TRANSACTION_BEGIN/END -> begin/commit; MHEARTBEAT -> heartbeat (its
  ``eventTime`` is the source time); CREATE, ALTER, ERASE, QUERY, RENAME, CINDEX, DINDEX -> ddl
  with ``payload.ddl.text`` as detail; TRUNCATE -> truncate; GTID, XACOMMIT, XAROLLBACK -> commit.
- Oracle sources add a ``rowid`` STRING column (kept as a column) and ``payload.scn`` (in meta).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BinaryType,
    BooleanType,
    DataType,
    DoubleType,
    LongType,
    StringType,
    TimestampType,
)

from cdclake.errors import DecodeError
from cdclake.formats import values as _values
from cdclake.formats.base import (
    ColumnSpec,
    DecodeOptions,
    Format,
    json_list_token,
    parse_value,
    select_envelope,
)
from cdclake.formats.values import lookup
from cdclake.model import TRANSACTION_MARKERS, KeySource, Op

if TYPE_CHECKING:
    from cdclake.formats.encode import EncodeOptions

ROW_ID = "#alibaba_rds_row_id#"
BEFORE_HALF = ("UPDATE_BEFOR", "UPDATE_BEFORE")
DDL_OPS = ("CREATE", "ALTER", "ERASE", "QUERY", "RENAME", "CINDEX", "DINDEX")
OPS: dict[str, str] = {
    "INSERT": Op.INSERT,
    **{o: Op.UPDATE for o in BEFORE_HALF},
    "UPDATE_AFTER": Op.UPDATE,
    "DELETE": Op.DELETE,
    "TRANSACTION_BEGIN": Op.BEGIN,
    "TRANSACTION_END": Op.COMMIT,
    **{o: Op.DDL for o in DDL_OPS},
    "TRUNCATE": Op.TRUNCATE,
    "GTID": Op.COMMIT,
    "XACOMMIT": Op.COMMIT,
    "XAROLLBACK": Op.COMMIT,
    "MHEARTBEAT": Op.HEARTBEAT,
}
SEQUENCE_DIGITS = 36

TYPES: dict[str, tuple[DataType, Callable[[Column], Column]]] = {
    "LONG": (LongType(), lambda c: c.try_cast(LongType())),
    "STRING": (StringType(), _values.identity),
    "BYTES": (BinaryType(), _values.base64_binary),
    "DATE": (TimestampType(), lambda c: F.timestamp_millis(c.try_cast(LongType()))),
    "DOUBLE": (DoubleType(), lambda c: c.try_cast(DoubleType())),
    "BOOLEAN": (BooleanType(), _values.boolean),
}

_IMAGE = "STRUCT<dataColumn: STRING>"
_VALUE = ", ".join(
    [
        "`schema` STRUCT<dataColumn: ARRAY<STRUCT<name: STRING, type: STRING>>, "
        "primaryKey: ARRAY<STRING>, source: STRUCT<dbType: STRING, dbVersion: STRING, "
        "dbName: STRING, schemaName: STRING, tableName: STRING>>",
        f"payload STRUCT<before: {_IMAGE}, after: {_IMAGE}, sequenceId: STRING, scn: STRING, "
        "op: STRING, `timestamp`: STRUCT<eventTime: STRING, systemTime: STRING, "
        "checkpointTime: STRING>, ddl: STRUCT<text: STRING, ddlMeta: STRING>>",
        "version STRING",
        "_malformed STRING",
    ]
)


def _table(source: Column) -> Column:
    schema = F.when(F.coalesce(source["schemaName"], F.lit("")) != "", source["schemaName"])
    return F.when(
        F.coalesce(source["tableName"], F.lit("")) != "",
        F.concat_ws(".", source["dbName"], schema, source["tableName"]),
    )


def _position(sequence_id: Column, code: Column) -> Column:
    """``"1620457642589000001"``, UPDATE_AFTER -> ``[1, 620457642589000001, 1]``."""
    padded = F.lpad(sequence_id, SEQUENCE_DIGITS, "0")
    half = F.when(code.isin(*BEFORE_HALF), F.lit(0)).otherwise(F.lit(1)).cast("bigint")
    parts = F.array(
        F.substring(padded, 1, 18).cast("bigint"), F.substring(padded, 19, 18).cast("bigint"), half
    )
    return F.when(sequence_id.rlike(rf"^[0-9]{{1,{SEQUENCE_DIGITS}}}$"), parts)


def _key(columns: Column, primary_key: Column) -> Column:
    names = F.transform(columns, lambda c: c["name"])
    row_id = F.when(F.array_contains(names, ROW_ID), F.array(F.lit(ROW_ID)))
    declared = F.when(F.size(primary_key) > 0, primary_key)
    return F.coalesce(declared, row_id, F.array().cast("array<string>"))


class DataWorksFormat(Format):
    name: ClassVar[str] = "dataworks"
    description: ClassVar[str] = "Alibaba DataWorks real-time sync to Kafka JSON"
    transactions: ClassVar[str | None] = TRANSACTION_MARKERS

    detect_fields: ClassVar[str] = "payload STRUCT<`timestamp`: STRING>"

    def detect_parsed(self, fields: Column) -> Column:
        # payload.timestamp {eventTime, ...} is DataWorks' alone (Debezium's payload has ts_ms)
        return fields["payload"]["timestamp"].isNotNull()

    def envelope(self, raw: DataFrame, options: DecodeOptions) -> DataFrame:
        parsed = parse_value(raw, _VALUE)
        v = F.col("_v")
        schema, payload = v["schema"], v["payload"]
        code = payload["op"]
        op = lookup(OPS)[code]
        table = _table(schema["source"])
        position = _position(payload["sequenceId"], code)
        is_data = op.isin(Op.INSERT, Op.UPDATE, Op.DELETE, Op.TRUNCATE)
        before = payload["before"]["dataColumn"]
        after = payload["after"]["dataColumn"]
        key = _key(schema["dataColumn"], schema["primaryKey"])
        missing_image = F.when(
            code.isin("INSERT", "UPDATE_AFTER") & after.isNull(), F.lit("after")
        ).when(code.isin("DELETE", *BEFORE_HALF) & before.isNull(), F.lit("before"))
        error = (
            F.when(v["_malformed"].isNotNull() | v.isNull(), F.lit("not valid JSON"))
            .when(code.isNull(), F.lit("not a DataWorks message: no payload.op"))
            .when(
                op.isNull(),
                F.concat(
                    F.lit("unknown DataWorks op '"),
                    code,
                    F.lit(f"' (expected one of {', '.join(OPS)})"),
                ),
            )
            .when(is_data & table.isNull(), F.lit("no source table in schema.source"))
            .when(
                is_data & position.isNull(),
                F.concat(
                    F.lit("cannot order the change: sequenceId '"),
                    F.coalesce(payload["sequenceId"], F.lit("null")),
                    F.lit(f"' is not a decimal number of at most {SEQUENCE_DIGITS} digits"),
                ),
            )
            .when(
                missing_image.isNotNull(),
                F.concat(
                    F.lit("DataWorks "),
                    code,
                    F.lit(" message without "),
                    missing_image,
                    F.lit(".dataColumn"),
                ),
            )
        )
        meta = F.map_from_arrays(
            F.array(*map(F.lit, ("database", "type", "sequenceId", "scn", "dbType", "version"))),
            F.array(
                schema["source"]["dbName"],
                code,
                payload["sequenceId"],
                payload["scn"],
                schema["source"]["dbType"],
                v["version"],
            ),
        )
        has_rows = op.isin(Op.INSERT, Op.UPDATE, Op.DELETE)
        return select_envelope(
            parsed,
            table=table,
            op=op,
            key_columns=key,
            key_source=F.when(F.size(key) > 0, F.lit(KeySource.MESSAGE)).otherwise(
                F.lit(KeySource.NONE)
            ),
            before_text=F.when(op.isin(Op.UPDATE, Op.DELETE), before),
            after_text=F.when(code.isin("INSERT", "UPDATE_AFTER"), after),
            schema_token=F.when(has_rows, F.to_json(schema["dataColumn"])),
            position=position,
            seq=F.col("lineage"),
            source_ts=F.timestamp_millis(payload["timestamp"]["eventTime"].try_cast("bigint")),
            lineage=F.col("lineage"),
            raw=F.col("raw"),
            detail=F.when(op.isin(Op.DDL, Op.TRUNCATE), payload["ddl"]["text"]),
            meta=meta,
            error=error,
        )

    def column_specs(self, schema_token: str, options: DecodeOptions) -> list[ColumnSpec]:
        columns = json_list_token(schema_token, "dataColumn")
        specs = []
        for c in columns:
            name, kind = (c.get("name"), c.get("type")) if isinstance(c, dict) else (None, None)
            if not isinstance(name, str) or kind not in TYPES:
                raise DecodeError(
                    f"DataWorks column {name!r} has type {kind!r}; expected one of "
                    f"{', '.join(TYPES)}"
                )
            data_type, convert = TYPES[kind]
            specs.append(ColumnSpec(name, data_type, convert, kind))
        return specs

    def encode(self, changes: DataFrame, options: EncodeOptions) -> DataFrame:
        from cdclake.formats.dataworks import encode as _encode_dataworks

        return _encode_dataworks.encode(changes, options)
