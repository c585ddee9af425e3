"""Tencent Cloud CKafka connector for MySQL, "Official Format I".

Producer documentation: Tencent Cloud CKafka "Official Format Description for MySQL Subscription
Messages" (seed 001). A DML message::

    {"BINLOG_NAME": "mysql-bin.000003", "BINLOG_POS": 484, "DATABASE": "inventory",
     "EVENT_SERVER_ID": null, "GLOBAL_ID": null, "GROUP_ID": null,
     "NEW_VALUES": {"id": "1004", "first_name": "Anne Marie", ...},
     "OLD_VALUES": {"id": "1004", "first_name": "Anne", ...},
     "TABLE": "customers", "TIME": "20160611015029", "TYPE": "U"}

- ``TYPE``: ``I`` insert (the document's field table prints a lowercase ``l``: accepted too),
  ``U`` update, ``D`` delete. ``NEW_VALUES``/``OLD_VALUES`` are full images with text values.
- The message carries no column types and no key: ``schema_token`` is null (the core types the
  images from the Delta table that the CREATE TABLE created) and ``key_source`` is ``none``.
- Position: ``[binlog file number, BINLOG_POS]``, compared as numbers.
- ``TIME`` (``yyyyMMddHHmmss``) is read in ``DecodeOptions.source_timezone``; it and
  ``GLOBAL_ID`` (the GTID) go to ``meta``.
- DDL messages use the canal flat format: this module hands every message that is not Official
  Format I to :class:`~cdclake.formats.canal.CanalFormat`. Those carry no binlog coordinates,
  so their position is left null (DDL is ordered by input order); a canal-form TRUNCATE cannot
  be ordered against the DML and is quarantined rather than guessed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import BinaryType, DataType

from cdclake.formats import canal as canal_format
from cdclake.formats import mysql_types
from cdclake.formats.base import ColumnSpec, DecodeOptions, Format, parse_value, select_envelope
from cdclake.formats.canal import mysql_column_specs
from cdclake.formats.values import binary_text, lookup
from cdclake.model import KeySource, Op

if TYPE_CHECKING:
    from cdclake.formats.encode import EncodeOptions

TYPES: dict[str, str] = {"I": Op.INSERT, "l": Op.INSERT, "U": Op.UPDATE, "D": Op.DELETE}
_EXPECTED = "I (also written l), U, D"

_VALUE = (
    "BINLOG_NAME STRING, BINLOG_POS STRING, DATABASE STRING, `TABLE` STRING, `TYPE` STRING, "
    "NEW_VALUES STRING, OLD_VALUES STRING, `TIME` STRING, GLOBAL_ID STRING, "
    "EVENT_SERVER_ID STRING, GROUP_ID STRING, _malformed STRING"
)
_TIME = r"^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$"
_TRUNCATE_ERROR = (
    "a canal-form TRUNCATE in a CKafka stream has no binlog position (BINLOG_NAME/BINLOG_POS): "
    "cannot order it against the Official Format I changes"
)


def _source_ts(time: Column, options: DecodeOptions) -> Column:
    """``yyyyMMddHHmmss`` wall clock in the source time zone -> an instant."""
    as_text = F.when(time.rlike(_TIME), F.regexp_replace(time, _TIME, "$1-$2-$3 $4:$5:$6"))
    spec = mysql_types.column_spec("TIME", "timestamp", source_timezone=options.source_timezone)
    return spec.convert(as_text)


def _position_error(v: Column, file_no: Column, pos: Column) -> Column:
    return F.when(
        file_no.isNull(),
        F.concat(
            F.lit("cannot order the change: BINLOG_NAME '"),
            F.coalesce(v["BINLOG_NAME"], F.lit("null")),
            F.lit("' does not end in a binlog file number (expected e.g. mysql-bin.000003)"),
        ),
    ).when(
        pos.isNull(),
        F.concat(
            F.lit("cannot order the change: BINLOG_POS '"),
            F.coalesce(v["BINLOG_POS"], F.lit("null")),
            F.lit("' is not an integer"),
        ),
    )


def _image_error(v: Column, op: Column) -> Column:
    missing = F.when(
        op.isin(Op.INSERT, Op.UPDATE) & v["NEW_VALUES"].isNull(), F.lit("NEW_VALUES")
    ).when(op.isin(Op.UPDATE, Op.DELETE) & v["OLD_VALUES"].isNull(), F.lit("OLD_VALUES"))
    return F.when(
        missing.isNotNull(),
        F.concat(F.lit("CKafka TYPE "), v["TYPE"], F.lit(" message without "), missing),
    )


def _official_format(v: Column, options: DecodeOptions) -> dict[str, Column]:
    """The envelope columns of an Official Format I message (``v``: its value, parsed)."""
    op = lookup(TYPES)[v["TYPE"]]
    file_no = F.regexp_extract(v["BINLOG_NAME"], r"(\d+)$", 1).try_cast("bigint")
    pos = v["BINLOG_POS"].try_cast("bigint")
    table = F.when(
        (F.coalesce(v["DATABASE"], F.lit("")) != "") & (F.coalesce(v["TABLE"], F.lit("")) != ""),
        F.concat_ws(".", v["DATABASE"], v["TABLE"]),
    )
    error = (
        F.when(v["_malformed"].isNotNull() | v.isNull(), F.lit("not valid JSON"))
        .when(
            op.isNull(),
            F.concat(F.lit("unknown CKafka TYPE '"), v["TYPE"], F.lit(f"' (expected {_EXPECTED})")),
        )
        .when(table.isNull(), F.lit("CKafka message without DATABASE/TABLE"))
        .otherwise(F.coalesce(_position_error(v, file_no, pos), _image_error(v, op)))
    )
    meta = F.map_from_arrays(
        F.array(*map(F.lit, ("database", "type", "gtid", "binlog_name", "time"))),
        F.array(v["DATABASE"], v["TYPE"], v["GLOBAL_ID"], v["BINLOG_NAME"], v["TIME"]),
    )
    return dict(
        table=table,
        op=op,
        key_columns=F.array().cast("array<string>"),
        key_source=F.lit(KeySource.NONE),
        before_text=F.when(op.isin(Op.UPDATE, Op.DELETE), v["OLD_VALUES"]),
        after_text=F.when(op.isin(Op.INSERT, Op.UPDATE), v["NEW_VALUES"]),
        schema_token=F.lit(None),
        position=F.array(file_no, pos),
        seq=F.col("lineage"),
        source_ts=_source_ts(v["TIME"], options),
        lineage=F.col("lineage"),
        raw=F.col("raw"),
        meta=meta,
        error=error,
    )


class CKafkaFormat(Format):
    name: ClassVar[str] = "ckafka"
    description: ClassVar[str] = "Tencent CKafka MySQL 'Official Format I' (DDL in canal form)"

    detect_fields: ClassVar[str] = "`TYPE` STRING"

    def detect_parsed(self, fields: Column) -> Column:
        # upper-case TYPE is Official Format I's alone (canal writes "type")
        return fields["TYPE"].isNotNull()

    def envelope(self, raw: DataFrame, options: DecodeOptions) -> DataFrame:
        # One parse per message: the value is read as Official Format I, and only a message
        # that is not (no upper-case TYPE: canal-form DDL) is parsed again, as canal, in the
        # same projection. Both envelopes are built on the same rows and each column picks its
        # own: no filtered copies of the input, which Spark would scan and parse once each.
        parsed = parse_value(raw, _VALUE).withColumn(
            "_mine", F.coalesce(F.col("_v")["TYPE"].isNotNull(), F.lit(False))
        )
        mine = F.col("_mine")
        rows, canal = canal_format.envelope_columns(
            parse_value(parsed, canal_format.VALUE, into="_c", where=~mine), F.col("_c")
        )
        # canal positions ([es, offset, row]) do not compare with binlog coordinates
        canal["position"] = F.lit(None)
        canal["error"] = F.when(
            canal["error"].isNull() & (canal["op"] == Op.TRUNCATE), F.lit(_TRUNCATE_ERROR)
        ).otherwise(canal["error"])
        dml = _official_format(F.col("_v"), options)
        shared = {name: F.col(name) for name in ("lineage", "raw")}
        shared["seq"] = shared["lineage"]
        columns = {
            name: F.when(mine, dml.get(name, F.lit(None))).otherwise(canal.get(name, F.lit(None)))
            for name in {**dml, **canal}
            if name not in shared
        }
        return select_envelope(rows, **columns, **shared)

    def typed_spec(
        self, name: str, data_type: DataType, options: DecodeOptions | None = None
    ) -> ColumnSpec | None:
        # DML carries no types: the table's binary columns are text as canal writes them
        if not isinstance(data_type, BinaryType):
            return None
        encoding = (options or DecodeOptions()).binary_encoding
        return ColumnSpec(
            name, data_type, lambda raw: binary_text(raw, encoding), f"binary ({encoding})"
        )

    def column_specs(self, schema_token: str, options: DecodeOptions) -> list[ColumnSpec]:
        # only the canal-form messages of the stream carry a token (their mysqlType)
        return mysql_column_specs(schema_token, options)

    def encode(self, changes: DataFrame, options: EncodeOptions) -> DataFrame:
        from cdclake.formats.canal import encode as _encode_canal

        return _encode_canal.encode_ckafka(changes, options)
