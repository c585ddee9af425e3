"""Canal and CKafka encoders: canonical changes -> canal flat messages / Official Format I.

Column types are written as MySQL types (``mysqlType``) with their ``java.sql.Types`` code
(``sqlType``), and values as canal's text (:mod:`cdclake.formats.mysql_types` reads them back):

=================== ===================== ======= ============================================
Spark type          mysqlType             sqlType value text
=================== ===================== ======= ============================================
byte/short/int/long tinyint/smallint/     -6/5/4/ ``"-12"``
                    int/bigint            -5
boolean             tinyint(1)            -7      ``"1"``/``"0"`` (read back as boolean with
                                                  ``tinyint1_as_boolean``, else as a byte)
decimal(p,s)        decimal(p,s)          3       plain text ``"1234.50"``
float/double        float/double          7/8     Java's ``String.valueOf``
string              longtext              2005    the text
binary              longblob              2004    ISO-8859-1, one character per byte
date                date                  91      ``2020-01-01``
timestamp_ntz       datetime(6)           93      ``2020-01-01 10:00:00.5`` (wall clock)
timestamp           timestamp(6)          93      the same, in ``source_timezone``
=================== ===================== ======= ============================================

Other types (array, map, struct, variant) are quarantined with the column named.

A canal message carries one row here (``data`` of one element); ``old`` holds only the columns
the update changed (an update without after image, the first half of a DataWorks update pair, is
a DELETE: :func:`.._encode.one_image_updates`). A flat message has no binlog position: consumers
order by ``es``, then by the Kafka offset or line, so the writer keeps (``position``, ``part``)
order per key. ``es`` and ``ts`` are the change's source time in ms. DDL records are written as
canal DDL messages (``isDdl`` true, the statement in ``sql``); a snapshot read is an INSERT (canal
has no snapshot op).

Positions in ``convert`` (:func:`.._encode.map_positions`, README "convert: positions"): canal
spells only its own ``[es, input order..., row]`` (5 numbers, the first the source time): ``es``
is kept and the input order is the order lines are written in. Every other position becomes the
sequence ``(epoch, rank)``: ``es`` = the batch's epoch (so later batches and runs sort after
earlier ones, whatever the source times say) and the messages are written in rank order; the
source time stays in ``ts``, but a consumer that reads ``es`` as the time sees the batch's.

CKafka DML: ``BINLOG_NAME`` ``mysql-bin.<position[0], 6 digits+>``, ``BINLOG_POS`` position[1],
``TIME`` the source time in ``source_timezone``, ``NEW_VALUES``/``OLD_VALUES`` full images in
canal's text (``U`` needs both: an update with one image is written as a ``D`` or an ``I``). The
messages carry no types and no key: before the first change of each table and row schema, a
canal-form ``CREATE TABLE IF NOT EXISTS`` (types, primary key) is written. CKafka spells
positions of one or two numbers >= 0 (its own, a PostgreSQL lsn) as they are; any other becomes
the sequence ``(epoch, rank)``: ``mysql-bin.<epoch>``, ``BINLOG_POS`` rank.
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
from cdclake.formats import values as V
from cdclake.model import Op

_TYPES: dict[type[DataType], tuple[str, int]] = {
    ByteType: ("tinyint", -6),
    ShortType: ("smallint", 5),
    IntegerType: ("int", 4),
    LongType: ("bigint", -5),
    BooleanType: ("tinyint(1)", -7),
    FloatType: ("float", 7),
    DoubleType: ("double", 8),
    StringType: ("longtext", 2005),
    BinaryType: ("longblob", 2004),
    DateType: ("date", 91),
    TimestampNTZType: ("datetime(6)", 93),
    TimestampType: ("timestamp(6)", 93),
}
DML_TYPES: dict[str, str] = {
    Op.INSERT: "INSERT",
    Op.READ: "INSERT",
    Op.UPDATE: "UPDATE",
    Op.DELETE: "DELETE",
}
DDL_TYPES = ("CREATE", "ALTER", "ERASE", "QUERY", "RENAME", "CINDEX", "DINDEX")
CKAFKA_TYPES: dict[str, str] = {Op.INSERT: "I", Op.READ: "I", Op.UPDATE: "U", Op.DELETE: "D"}


def mysql_type(data_type: DataType) -> tuple[str, int] | None:
    """(mysqlType, sqlType) of a Spark type; None when MySQL has no column type for it."""
    if isinstance(data_type, DecimalType):
        return f"decimal({data_type.precision},{data_type.scale})", 3
    return _TYPES.get(type(data_type))


def text(data_type: DataType, value: Column, zone: str) -> Column:
    """A typed value -> canal's text of it (see the module table)."""
    if isinstance(data_type, BooleanType):
        return F.when(value, F.lit("1")).when(~value, F.lit("0"))
    if isinstance(data_type, BinaryType):
        return F.decode(value, "ISO-8859-1")
    if isinstance(data_type, TimestampType):
        utc = V.ntz_from_micros(F.unix_micros(value))
        return F.convert_timezone(F.lit("UTC"), F.lit(zone), utc).cast("string")
    return value.cast("string")


def _unsupported(g: E.RowGroup) -> str | None:
    for f in g.columns.fields:
        if mysql_type(f.dataType) is None:
            return f"column {f.name}: type {f.dataType.simpleString()} has no MySQL column type"
    return None


def _texts(g: E.RowGroup, row: Column, zone: str) -> Column:
    return F.when(
        row.isNotNull(),
        F.struct(*[text(f.dataType, row[f.name], zone).alias(f.name) for f in g.columns.fields]),
    )


def _types_json(g: E.RowGroup, index: int) -> str:
    types = {f.name: (mysql_type(f.dataType) or ("", 0))[index] for f in g.columns.fields}
    return json.dumps(types, separators=(",", ":"))


def _names() -> tuple[Column, Column]:
    """(database, table) of a canal message: the first part of the identifier, the rest."""
    parts = F.split(F.col("table"), r"\.", 2)
    database = F.coalesce(F.get(parts, 0), F.col("meta")["database"])
    return database, F.coalesce(F.get(parts, 1), F.lit(""))


def _flat(
    kind: Column,
    *,
    data: Column | None = None,
    old: Column | None = None,
    mysql: str | None = None,
    sql_types: str | None = None,
    pk: Column | None = None,
    is_ddl: bool = False,
    sql: Column | None = None,
    es: Column | None = None,
) -> Column:
    """A canal flat message (fields in the order canal's JSON writes them); ``es`` defaults to
    the source time."""
    database, table = _names()
    ts = E.epoch_ms(F.col("source_ts"))
    es = ts if es is None else es
    batch = F.coalesce(F.col("meta")["batch_id"].try_cast("bigint"), F.lit(0).cast("bigint"))
    fields = [
        (data if data is not None else F.lit(None)).alias("data"),
        database.alias("database"),
        es.alias("es"),
        batch.alias("id"),
        F.lit(is_ddl).alias("isDdl"),
        (F.from_json(F.lit(mysql), "map<string,string>") if mysql else F.lit(None)).alias(
            "mysqlType"
        ),
        (old if old is not None else F.lit(None)).alias("old"),
        (pk if pk is not None else F.lit(None)).alias("pkNames"),
        (sql if sql is not None else F.lit("")).alias("sql"),
        (F.from_json(F.lit(sql_types), "map<string,int>") if sql_types else F.lit(None)).alias(
            "sqlType"
        ),
        table.alias("table"),
        F.coalesce(ts, es).alias("ts"),
        kind.alias("type"),
    ]
    return F.to_json(F.struct(*fields), E.JSON_NULLS)


def _changed_old(g: E.RowGroup, before: Column, after: Column, zone: str) -> Column:
    entries = F.array(
        *[
            F.struct(
                F.lit(name).alias("k"),
                text(g.columns[name].dataType, before[name], zone).alias("v"),
                is_changed.alias("c"),
            )
            for name, is_changed in E.changed(g.columns, before, after)
        ]
    )
    kept = F.transform(F.filter(entries, lambda e: e["c"]), lambda e: F.struct(e["k"], e["v"]))
    return F.map_from_entries(kept)


def _key(g: E.RowGroup, row: Column, zone: str) -> Column:
    """The Kafka record key: the key columns' text as a JSON object (null without key)."""
    if not g.key_columns or any(k not in g.columns.fieldNames() for k in g.key_columns):
        return F.lit(None).cast("string")
    values = [text(g.columns[k].dataType, row[k], zone).alias(k) for k in g.key_columns]
    return F.to_json(F.struct(*values), E.JSON_NULLS)


def _pk(g: E.RowGroup) -> Column:
    return F.array(*map(F.lit, g.key_columns)) if g.key_columns else F.lit(None)


def _ddl_control(zone: str, es: Column | None = None) -> tuple[Column, Column, Column]:
    """Canal DDL and TRUNCATE messages; other control records have no canal message here."""
    kind = F.when(E.is_op(Op.TRUNCATE), F.lit("TRUNCATE")).otherwise(
        F.when(F.col("meta")["type"].isin(*DDL_TYPES), F.col("meta")["type"]).otherwise(
            F.lit("ALTER")
        )
    )
    message = _flat(kind, is_ddl=True, sql=F.coalesce(F.col("detail"), F.lit("")), es=es)
    mine = E.is_op(Op.DDL, Op.TRUNCATE)
    one = F.array(F.struct(F.lit(None).cast("string").alias("key"), message.alias("value")))
    return F.when(mine, one), F.lit(None), F.when(~mine, E.not_carried("canal"))


def canal_spells() -> Column:
    """Canal's own position ``[es, input order (3 numbers), row]``: its first number is its
    source time (the decoder's ``source_ts`` is ``es``)."""
    p = F.col("position")
    return (F.size(p) == 5) & (F.get(p, 0) == E.epoch_ms(F.col("source_ts")))


def ckafka_spells() -> Column:
    """One or two numbers >= 0: a binlog file number and position, or one number."""
    p = F.col("position")
    return F.size(p).between(1, 2) & F.forall(p, lambda x: x >= 0)


def _es(options: E.EncodeOptions) -> Column | None:
    """``es`` of canal messages: with positions mapped, the first number of the position (the
    source's ``es``, or the sequence's epoch); else the source time."""
    if options.epoch is None:
        return None
    return F.coalesce(F.get(F.col("position"), 0), E.epoch_ms(F.col("source_ts")))


def encode_canal(changes: DataFrame, options: E.EncodeOptions) -> DataFrame:
    """Canonical changes -> canal flat messages (:data:`.._encode.MESSAGE_SCHEMA`)."""
    zone = options.source_timezone
    changes = E.map_positions(changes, canal_spells(), E.plain_sequence, options.epoch)
    changes = E.one_image_updates(changes)
    es = _es(options)

    def build(g: E.RowGroup, before: Column, after: Column) -> tuple[Column, Column]:
        bad = _unsupported(g)
        if bad:
            return F.lit(None), F.lit(bad)
        is_delete, is_update = E.is_op(Op.DELETE), E.is_op(Op.UPDATE)
        row = F.when(is_delete, _texts(g, before, zone)).otherwise(_texts(g, after, zone))
        old = F.when(is_update & before.isNotNull(), F.array(_changed_old(g, before, after, zone)))
        message = _flat(
            V.lookup(DML_TYPES)[F.col("op")],
            data=F.array(row),
            old=old,
            mysql=_types_json(g, 0),
            sql_types=_types_json(g, 1),
            pk=_pk(g),
            es=es,
        )
        key = _key(g, F.coalesce(after, before), zone)
        return F.array(F.struct(key.alias("key"), message.alias("value"))), _unavailable_error()

    return E.encode_groups(changes, E.row_groups(changes), build, _ddl_control(zone, es))


def _unavailable_error() -> Column:
    return F.when(
        F.size(F.col("unavailable")) > 0,
        F.concat(
            F.lit("columns not sent by the source (TOAST) cannot be written as text: "),
            F.array_join(F.col("unavailable"), ", "),
        ),
    )


def create_table(table: str, g: E.RowGroup) -> str:
    """The MySQL ``CREATE TABLE IF NOT EXISTS`` of a row group (types and primary key)."""
    name = table.split(".", 1)[-1]
    columns = [f"`{f.name}` {(mysql_type(f.dataType) or ('', 0))[0]}" for f in g.columns.fields]
    if g.key_columns:
        columns.append("PRIMARY KEY (" + ", ".join(f"`{k}`" for k in g.key_columns) + ")")
    return f"CREATE TABLE IF NOT EXISTS `{name}` (" + ", ".join(columns) + ")"


def encode_ckafka(changes: DataFrame, options: E.EncodeOptions) -> DataFrame:
    """Canonical changes -> CKafka Official Format I DML, DDL in canal form."""
    zone = options.source_timezone
    changes = E.map_positions(changes, ckafka_spells(), E.plain_sequence, options.epoch)
    changes = E.one_image_updates(changes, insert_after_only=True)
    position = F.col("position")
    file_no, pos = E.slot(position, 0), E.slot(position, 1)

    def build(g: E.RowGroup, before: Column, after: Column) -> tuple[Column, Column]:
        bad = _unsupported(g)
        if bad:
            return F.lit(None), F.lit(bad)
        utc = V.ntz_from_micros(F.unix_micros(F.col("source_ts")))
        wall = F.convert_timezone(F.lit("UTC"), F.lit(zone), utc)
        fields = [
            E.binlog_name(file_no).alias("BINLOG_NAME"),
            pos.alias("BINLOG_POS"),
            _names()[0].alias("DATABASE"),
            F.lit(None).cast("string").alias("EVENT_SERVER_ID"),
            F.col("meta")["gtid"].alias("GLOBAL_ID"),
            F.lit(None).cast("string").alias("GROUP_ID"),
            F.when(E.is_op(Op.DELETE), F.lit(None))
            .otherwise(_texts(g, after, zone))
            .alias("NEW_VALUES"),
            F.when(E.is_op(Op.UPDATE, Op.DELETE), _texts(g, before, zone)).alias("OLD_VALUES"),
            _names()[1].alias("TABLE"),
            F.date_format(wall, "yyyyMMddHHmmss").alias("TIME"),
            V.lookup(CKAFKA_TYPES)[F.col("op")].alias("TYPE"),
        ]
        message = F.to_json(F.struct(*fields), E.JSON_NULLS)
        key = _key(g, F.coalesce(after, before), zone)
        error = F.coalesce(
            E.slots_error(position, 2, "a binlog file and position"), _unavailable_error()
        )
        return F.array(F.struct(key.alias("key"), message.alias("value"))), error

    groups = E.row_groups(changes)
    messages = E.encode_groups(changes, groups, build, _ddl_control(zone))
    return messages.unionByName(_create_tables(changes, groups))


def _create_tables(changes: DataFrame, groups: list[E.RowGroup]) -> DataFrame:
    """One canal-form CREATE TABLE per table and row schema, ahead of its changes (a null
    position sorts first), at the source time of the group's first change."""
    if not groups:
        return changes.sparkSession.createDataFrame([], E.MESSAGE_SCHEMA)
    spark = changes.sparkSession
    rows = [(g.table, g.row_schema, create_table(g.table, g)) for g in groups]
    ddl = spark.createDataFrame(rows, "table STRING, row_schema STRING, sql STRING")
    first = (
        changes.filter(E.is_data())
        .groupBy("table", "row_schema")
        .agg(F.min("source_ts").alias("source_ts"))
    )
    staged = ddl.join(first, ["table", "row_schema"]).withColumn(
        "meta", F.create_map(F.lit("type"), F.lit("CREATE"))
    )
    value = _flat(F.lit("CREATE"), is_ddl=True, sql=F.col("sql"))
    return staged.select(
        "table",
        F.lit(None).cast("string").alias("key"),
        value.alias("value"),
        F.lit(None).cast("array<bigint>").alias("position"),
        F.lit(0).alias("part"),
        F.lit(None).cast("string").alias("error"),
        F.lit(None).cast("string").alias("skipped"),
        F.lit(None).cast(E.MESSAGE_SCHEMA["lineage"].dataType).alias("lineage"),
    )
