"""Round trip per format: decode(encode(changes)) == changes, in every field the format carries.

Changes are generated with hypothesis, collected into ONE list per format and run through ONE
encode + decode (a few Spark jobs, not one per example). What a format does not carry is listed
in ``NOT_CARRIED`` and left out of the comparison; what it maps (a type it has no equal of) is
compared after the documented mapping.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from builders.changes import Change, changes_df, round_trip
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.types import StructType

from cdclake.formats.base import DecodeOptions
from cdclake.formats.encode import EncodeOptions, image

TABLE = "shop.inv.items"


def _struct(**columns: T.DataType) -> StructType:
    return StructType([T.StructField(n, t) for n, t in columns.items()])


FULL = _struct(
    id=T.LongType(), i8=T.ByteType(), i16=T.ShortType(), i32=T.IntegerType(),
    f=T.FloatType(), d=T.DoubleType(), flag=T.BooleanType(), s=T.StringType(),
    bin=T.BinaryType(), dec=T.DecimalType(38, 6), small=T.DecimalType(5, 2), day=T.DateType(),
    ntz=T.TimestampNTZType(), ts=T.TimestampType(),
)  # fmt: skip
DATAWORKS = _struct(
    id=T.LongType(), d=T.DoubleType(), flag=T.BooleanType(), s=T.StringType(),
    bin=T.BinaryType(), ts=T.TimestampType(),
)  # fmt: skip

NOT_CARRIED: dict[str, list[str]] = {
    "debezium": ["meta (connector, snapshot flags)", "lineage/seq/raw", "source_ts below ms"],
    "canal": [
        "position (a flat message has none: [es, offset, row] is rebuilt from the input)",
        "op read (canal has no snapshot op: written as INSERT)",
        "boolean type (tinyint(1): read back as boolean with tinyint1_as_boolean)",
        "source_ts below ms",
        "source_ts before 1973-03-03 (es below 10^11 is read as seconds)",
    ],
    "ckafka": [
        "binary in decode alone (ISO-8859-1 text is typed by the CREATE TABLE's longblob, which "
        "the applier reads; the e2e test covers it)",
        "key_columns and column types (Official Format I has neither: they come from the "
        "canal-form CREATE TABLE, which the applier reads)",
        "op read (written as I)",
        "source_ts below s (TIME is yyyyMMddHHmmss)",
    ],
    "dataworks": [
        "int/float/decimal/date/timestamp_ntz widths (six types: LONG, DOUBLE, STRING, DATE...)",
        "op read (written as INSERT)",
        "the position's third element (re-derived from the op: 0 UPDATE_BEFOR, else 1)",
        "source_ts below ms",
    ],
}

_MS = timedelta(milliseconds=1)


def _ts(lo: datetime, hi: datetime, step: timedelta) -> st.SearchStrategy[datetime]:
    n = int((hi - lo) / step)
    return st.integers(0, n).map(lambda k: lo + k * step)


def _values(
    schema: StructType, ms_only: bool, first_day: date = date(1000, 1, 1)
) -> st.SearchStrategy[dict[str, Any]]:
    step = _MS if ms_only else timedelta(microseconds=1)
    lo, hi = datetime(1000, 1, 1), datetime(9999, 12, 31)
    by_type: dict[str, st.SearchStrategy[Any]] = {
        "bigint": st.integers(-(2**63), 2**63 - 1),
        "tinyint": st.integers(-128, 127),
        "smallint": st.integers(-(2**15), 2**15 - 1),
        "int": st.integers(-(2**31), 2**31 - 1),
        "float": st.floats(allow_nan=False, allow_infinity=False, width=32),
        "double": st.floats(allow_nan=False, allow_infinity=False),
        "boolean": st.booleans(),
        "string": st.text(max_size=12),
        "binary": st.binary(max_size=8),
        "decimal(38,6)": st.decimals(-(10**32) + 1, 10**32 - 1, places=6),
        "decimal(5,2)": st.decimals(Decimal("-999.99"), Decimal("999.99"), places=2),
        "date": st.dates(first_day, date(9999, 12, 31)),
        "timestamp_ntz": _ts(lo, hi, step),
        "timestamp": _ts(lo, hi, step).map(lambda t: t.replace(tzinfo=UTC)),
    }
    fields = {f.name: (st.none() | by_type[f.dataType.simpleString()]) for f in schema.fields}
    fields["id"] = st.integers(0, 10**9)
    return st.fixed_dictionaries(fields)


def _collect(strategy: st.SearchStrategy[Any], n: int) -> list[Any]:
    out: list[Any] = []

    @settings(
        max_examples=n,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
        deadline=None,
    )
    @given(strategy)
    def run(x: Any) -> None:
        out.append(x)

    run()
    return out


def _generate(
    schema: StructType,
    ops: list[str],
    ms_only: bool,
    n: int = 30,
    first_day: date = date(1000, 1, 1),
) -> list[Change]:
    change = st.tuples(
        st.sampled_from(ops),
        _values(schema, ms_only, first_day),
        _values(schema, ms_only, first_day),
        st.integers(1, 10**6),
        _ts(datetime(1975, 1, 1), datetime(2100, 1, 1), _MS if ms_only else timedelta(seconds=1)),
    )
    out, position = [], 0
    for op, before, after, gap, when in _collect(change, n):
        position += gap
        after = {**after, "id": before["id"]}
        out.append(
            Change(
                TABLE,
                op,
                None if op in ("insert", "read") else before,
                None if op == "delete" else after,
                [position],
                ["id"],
                when.replace(tzinfo=UTC),
            )
        )
    return out


def _rows(changes: DataFrame, schema: StructType, order: str) -> list[tuple[Any, ...]]:
    df = changes.filter(F.col("op").isin("insert", "update", "delete", "read")).orderBy(order)
    return [
        tuple(r)
        for r in df.select(
            "table",
            "op",
            "key_columns",
            image(F.col("before"), schema).alias("b"),
            image(F.col("after"), schema).alias("a"),
            "position",
            "source_ts",
            "error",
        ).collect()
    ]


def _compare(
    original: list[tuple[Any, ...]],
    decoded: list[tuple[Any, ...]],
    *,
    keys: bool = True,
    position: Any = None,
    op: dict[str, str] | None = None,
) -> None:
    assert len(decoded) == len(original)
    for o, d in zip(original, decoded, strict=True):
        table, o_op, o_keys, before, after, o_pos, ts, _ = o
        assert d[7] is None, d[7]
        expected_op = (op or {}).get(o_op, o_op)
        assert (d[0], d[1], d[3], d[4], d[6]) == (table, expected_op, before, after, ts), (o, d)
        if keys:
            assert d[2] == o_keys
        if position is not None:
            assert d[5] == position(o_pos)


def _positions(changes: list[Change], make: Any) -> list[Change]:
    return [replace(c, position=make(c.position[0])) for c in changes]


@pytest.mark.parametrize(
    ("connector", "schemas", "position"),
    [
        ("postgresql", True, lambda p: [p]),
        ("sqlserver", True, lambda p: [p >> 8, p & 255, 3, p >> 8, p & 255, 1, 2]),
        ("mysql", True, lambda p: [3, p, -1, 0]),
    ],
)
def test_debezium_round_trip(
    spark: SparkSession, connector: str, schemas: bool, position: Any
) -> None:
    first_day = date(1000, 1, 1)
    changes = _positions(
        _generate(FULL, ["insert", "update", "delete", "read"], True, first_day=first_day),
        position,
    )
    df = changes_df(spark, changes, {TABLE: FULL})
    options = EncodeOptions(connector=connector, schemas=schemas, key_schemas=schemas)  # type: ignore[arg-type]
    table = TABLE if connector != "mysql" else "shop.items"
    if connector == "mysql":
        df = df.withColumn("table", F.lit(table))
    _, decoded = round_trip(df, "debezium", options, table_schemas={table: FULL})
    _compare(_rows(df, FULL, "position"), _rows(decoded, FULL, "seq.offset"), position=lambda p: p)


def test_canal_round_trip(spark: SparkSession) -> None:
    changes = _generate(FULL, ["insert", "update", "delete", "read"], True)
    df = changes_df(spark, changes, {TABLE: FULL})
    messages, decoded = round_trip(
        df, "canal", decode_options=DecodeOptions(tinyint1_as_boolean=True)
    )
    assert messages.filter("error is not null").count() == 0
    _compare(_rows(df, FULL, "position"), _rows(decoded, FULL, "seq.offset"), op={"read": "insert"})


def test_canal_old_holds_only_changed_columns(spark: SparkSession) -> None:
    """``old`` names the changed columns, a column changed from NULL included (FLINK-19446)."""
    schema = _struct(id=T.IntegerType(), a=T.StringType(), b=T.StringType(), c=T.StringType())
    before = {"id": 1, "a": "x", "b": None, "c": "same"}
    after = {"id": 1, "a": "y", "b": "now", "c": "same"}
    df = changes_df(spark, [Change("db.t", "update", before, after, [1], ["id"])], {"db.t": schema})
    messages, _ = round_trip(df, "canal")
    import json

    value = json.loads(messages.first()["value"])
    assert value["old"] == [{"a": "x", "b": None}]
    assert value["data"] == [{"id": "1", "a": "y", "b": "now", "c": "same"}]
    assert value["mysqlType"] == {"id": "int", "a": "longtext", "b": "longtext", "c": "longtext"}
    assert value["pkNames"] == ["id"] and value["type"] == "UPDATE"


def test_ckafka_round_trip(spark: SparkSession) -> None:
    schema = StructType([f for f in FULL.fields if f.name != "bin"])
    changes = _positions(
        _generate(schema, ["insert", "update", "delete"], False), lambda p: [p // 1000, p]
    )
    df = changes_df(spark, changes, {TABLE: schema})
    messages, decoded = round_trip(
        df,
        "ckafka",
        decode_options=DecodeOptions(tinyint1_as_boolean=True),
        table_schemas={TABLE: schema},
    )
    creates = messages.filter(F.col("value").contains('"type":"CREATE"')).count()
    assert creates == 1
    _compare(
        _rows(df, schema, "position"),
        _rows(decoded, schema, "seq.offset"),
        keys=False,
        position=lambda p: p,
    )


def test_dataworks_round_trip(spark: SparkSession) -> None:
    changes = _positions(
        _generate(DATAWORKS, ["insert", "update", "delete", "read"], True),
        lambda p: [p // 7, p, 1],
    )
    df = changes_df(spark, changes, {TABLE: DATAWORKS})
    _, decoded = round_trip(df, "dataworks", EncodeOptions(update_pairs=False))
    _compare(
        _rows(df, DATAWORKS, "position"),
        _rows(decoded, DATAWORKS, "seq.offset"),
        position=lambda p: p,
        op={"read": "insert"},
    )


def test_every_format_lists_what_it_does_not_carry() -> None:
    from cdclake import formats

    assert sorted(NOT_CARRIED) == sorted(formats.names())
