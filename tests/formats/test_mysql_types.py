"""MySQL column types (cdclake.formats.mysql_types): Spark types, and canal's text values converted.

Each case is a hand-checked value as canal renders it (``LogEventConvert``/``RowsLogBuffer``),
converted on a tiny DataFrame; values that do not fit the type become NULL.
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import Any

import pytest
from pyspark.sql import SparkSession
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

from cdclake.errors import ConfigError, DecodeError
from cdclake.formats.mysql_types import column_spec, parse_type, spark_type


@pytest.mark.parametrize(
    ("mysql_type", "expected"),
    [
        ("int(11)", IntegerType()),
        ("INT(11) UNSIGNED", LongType()),
        ("int unsigned", LongType()),
        ("bigint(20)", LongType()),
        ("bigint(20) unsigned", DecimalType(20, 0)),
        ("tinyint(4)", ByteType()),
        ("tinyint(1)", ByteType()),
        ("tinyint unsigned", ShortType()),
        ("smallint(6)", ShortType()),
        ("smallint unsigned", IntegerType()),
        ("mediumint", IntegerType()),
        ("mediumint(8) unsigned", IntegerType()),
        ("int(10) unsigned zerofill", LongType()),
        ("decimal(10,2)", DecimalType(10, 2)),
        ("numeric(5)", DecimalType(5, 0)),
        ("decimal", DecimalType(10, 0)),
        ("decimal(65,30)", StringType()),
        ("float", FloatType()),
        ("float(7,3)", FloatType()),
        ("float(30)", DoubleType()),
        ("double", DoubleType()),
        ("double precision", DoubleType()),
        ("real", DoubleType()),
        ("char(3)", StringType()),
        ("varchar(255)", StringType()),
        ("varchar(20) character set utf8mb4", StringType()),
        ("text", StringType()),
        ("longtext", StringType()),
        ("date", DateType()),
        ("datetime", TimestampNTZType()),
        ("datetime(6)", TimestampNTZType()),
        ("timestamp(3)", TimestampType()),
        ("time", StringType()),
        ("year(4)", IntegerType()),
        ("binary(16)", BinaryType()),
        ("varbinary(8)", BinaryType()),
        ("blob", BinaryType()),
        ("tinyblob", BinaryType()),
        ("longblob", BinaryType()),
        ("bit(1)", LongType()),
        ("bit(64)", LongType()),
        ("json", StringType()),
        ("enum('a','b')", StringType()),
        ("set('x','y')", StringType()),
        ("geometry", BinaryType()),
        ("point", BinaryType()),
        ("serial", DecimalType(20, 0)),
    ],
)
def test_spark_type(mysql_type: str, expected: DataType) -> None:
    assert spark_type(mysql_type) == expected


def test_tinyint1_as_boolean_only_when_configured() -> None:
    assert spark_type("tinyint(1)", tinyint1_as_boolean=True) == BooleanType()
    assert spark_type("bool", tinyint1_as_boolean=True) == BooleanType()
    assert spark_type("bool") == ByteType()
    assert spark_type("tinyint(4)", tinyint1_as_boolean=True) == ByteType()


def test_parse_type_reads_labels_and_modifiers() -> None:
    parsed = parse_type("enum('a','it''s','back\\'slash', \"dq\")")
    assert parsed.name == "enum"
    assert parsed.params == ("a", "it's", "back'slash", "dq")
    assert parse_type("decimal(10, 2) UNSIGNED ZEROFILL").params == ("10", "2")
    assert parse_type("decimal(10, 2) UNSIGNED ZEROFILL").unsigned


@pytest.mark.parametrize(
    ("mysql_type", "message"),
    [
        ("nosuchtype(3)", "unknown MySQL column type 'nosuchtype(3)'; expected one of: bigint"),
        ("varchar(20", "cannot read MySQL column type 'varchar(20': missing ')'"),
        ("enum('a", 'cannot read MySQL column type "enum(\'a": unterminated quote'),
        ("decimal(x,2)", "MySQL column type 'decimal(x,2)': parameter 'x' is not a number"),
        ("", "cannot read MySQL column type '': no type name"),
        ("enum", "MySQL column type 'enum': enum without labels"),
    ],
)
def test_bad_types_are_named(mysql_type: str, message: str) -> None:
    with pytest.raises(DecodeError) as caught:
        spark_type(mysql_type)
    assert str(caught.value).startswith(message)


def test_bad_source_timezone() -> None:
    with pytest.raises(ConfigError, match="unknown source_timezone 'Mars/Olympus'"):
        column_spec("c", "timestamp", source_timezone="Mars/Olympus")


def test_spec_fields() -> None:
    spec = column_spec("price", " decimal(10,2) ")
    assert (spec.name, spec.data_type, spec.expected) == (
        "price",
        DecimalType(10, 2),
        "decimal(10,2)",
    )


U64_MAX = "18446744073709551615"
CASES: list[tuple[str, dict[str, Any], list[str | None], list[Any]]] = [
    ("int(11)", {}, ["42", "-7", "2147483648", "4.5", "abc"], [42, -7, None, None, None]),
    ("int unsigned", {}, ["4294967295", "4294967296", "-1"], [4294967295, None, None]),
    ("tinyint(4)", {}, ["127", "-128", "128"], [127, -128, None]),
    ("tinyint unsigned", {}, ["255", "256", "-1"], [255, None, None]),
    ("smallint unsigned", {}, ["65535", "65536"], [65535, None]),
    ("mediumint", {}, ["-8388608", "8388608"], [-8388608, None]),
    ("mediumint unsigned", {}, ["16777215", "16777216"], [16777215, None]),
    ("bigint", {}, ["-9223372036854775808", "9223372036854775808"], [-(2**63), None]),
    (
        "bigint(20) unsigned",
        {},
        [U64_MAX, "18446744073709551616", "1.5", "-1"],
        [Decimal(U64_MAX), None, None, None],
    ),
    ("tinyint(1)", {}, ["1", "0"], [1, 0]),
    (
        "tinyint(1)",
        {"tinyint1_as_boolean": True},
        ["1", "0", "true", " FALSE ", "2", "yes"],
        [True, False, True, False, True, None],
    ),
    (
        "decimal(10,2)",
        {},
        ["1234.50", "-0.01", "99999999.99", "123456789.00", "x"],
        [Decimal("1234.50"), Decimal("-0.01"), Decimal("99999999.99"), None, None],
    ),
    (
        "decimal(65,30)",
        {},
        ["12345678901234567890123456789012345.000000000000000000000000000001", "1e"],
        ["12345678901234567890123456789012345.000000000000000000000000000001", None],
    ),
    ("float", {}, ["1.5", "1.0E10", "x"], [1.5, 1.0e10, None]),
    ("double", {}, ["3.141592653589793", "-2.5E-300"], [3.141592653589793, -2.5e-300]),
    ("varchar(255)", {}, ["héllo, 世界", ""], ["héllo, 世界", ""]),
    ("json", {}, ['{"a": [1, 2]}'], ['{"a": [1, 2]}']),
    ("date", {}, ["2020-01-01", "0000-00-00", "2020-02-30"], [date(2020, 1, 1), None, None]),
    (
        "datetime(6)",
        {},
        ["2020-01-01 10:00:00.123456", "2020-01-01 10:00:00", "0000-00-00 00:00:00", "nope"],
        [datetime(2020, 1, 1, 10, 0, 0, 123456), datetime(2020, 1, 1, 10), None, None],
    ),
    (
        "time(6)",
        {},
        ["10:00:00", "-838:59:59.000000", "25:00:01.5", "10:61:00", "x"],
        ["10:00:00", "-838:59:59.000000", "25:00:01.5", None, None],
    ),
    ("year", {}, ["2020", "0000", "1900", "x"], [2020, None, None, None]),
    ("varbinary(8)", {}, ["a\u00ff\u0000", "", "中"], [b"a\xff\x00", b"", None]),
    ("blob", {}, ["\u0089PNG"], [b"\x89PNG"]),
    ("geometry", {}, ["\u0000\u0000\u0000\u0000\u0001"], [b"\x00\x00\x00\x00\x01"]),
    ("bit(1)", {}, ["1", "0", "2"], [1, 0, None]),
    ("bit(3)", {}, ["5", "7", "8", "b'101'"], [5, 7, None, None]),
    ("bit(64)", {}, [U64_MAX, "9223372036854775807", "1"], [-1, 2**63 - 1, 1]),
    (
        "enum('a','b c','it''s')",
        {},
        ["1", "3", "b c", "0", "4", "B C", "zzz"],
        ["a", "it's", "b c", "", None, None, None],
    ),
    (
        "set('x','y','z')",
        {},
        ["5", "0", "7", "8", "x,z", "", "x,w"],
        ["x,z", "", "x,y,z", None, "x,z", "", None],
    ),
]


CASE_IDS = [f"{c[0]}{'-bool' if c[1] else ''}" for c in CASES]


@pytest.fixture(scope="module")
def converted(spark: SparkSession) -> dict[str, list[Any]]:
    """Every case converted in one Spark job: case k's values go through column k's converter.

    Each case gets a trailing NULL input, which must stay NULL.
    """
    rows = [(k, i, v) for k, case in enumerate(CASES) for i, v in enumerate([*case[2], None])]
    df = spark.createDataFrame(rows, "k int, i int, v string")
    specs = [column_spec(f"c{k}", t, **options) for k, (t, options, _, _) in enumerate(CASES)]
    out = df.select(
        "k",
        "i",
        *[
            F.when(F.col("k") == k, s.convert(F.col("v"))).alias(s.name)
            for k, s in enumerate(specs)
        ],
    )
    for spec in specs:
        assert out.schema[spec.name].dataType == spec.data_type
    results: dict[str, list[Any]] = {case_id: [] for case_id in CASE_IDS}
    for row in sorted(out.collect(), key=lambda r: (r.k, r.i)):
        value = row[f"c{row.k}"]
        results[CASE_IDS[row.k]].append(bytes(value) if isinstance(value, bytearray) else value)
    return results


@pytest.mark.parametrize(("case_id", "case"), list(zip(CASE_IDS, CASES, strict=True)), ids=CASE_IDS)
def test_convert(
    converted: dict[str, list[Any]], case_id: str, case: tuple[str, Any, list[Any], list[Any]]
) -> None:
    mysql_type, _, values, expected = case
    assert len(values) == len(expected)
    assert converted[case_id] == [*expected, None], mysql_type


@pytest.mark.parametrize(
    ("zone", "expected_utc"),
    [
        ("UTC", "2020-01-01 10:00:00.123"),
        ("Asia/Shanghai", "2020-01-01 02:00:00.123"),
        ("+08:00", "2020-01-01 02:00:00.123"),
        ("America/New_York", "2020-01-01 15:00:00.123"),
    ],
)
def test_timestamp_is_read_in_the_source_time_zone(
    spark: SparkSession, zone: str, expected_utc: str
) -> None:
    spec = column_spec("c", "timestamp(3)", source_timezone=zone)
    df = spark.createDataFrame(
        [("2020-01-01 10:00:00.123",), ("0000-00-00 00:00:00",), ("x",)], "v string"
    )
    rows = df.select(
        F.date_format(spec.convert(F.col("v")), "yyyy-MM-dd HH:mm:ss.SSS").alias("utc")
    ).collect()
    assert spark.conf.get("spark.sql.session.timeZone") == "UTC"
    assert [r.utc for r in rows] == [expected_utc, None, None]
