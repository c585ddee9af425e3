"""Kafka Connect / Debezium field schemas -> typed Spark columns (cdclake.formats.debezium.types).

Every expected value is written out by hand; the comment beside it shows the arithmetic.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
from pyspark.sql import Row, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DayTimeIntervalType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
    VariantType,
)

from cdclake.errors import DecodeError
from cdclake.formats.base import ColumnSpec
from cdclake.formats.debezium.types import column_spec, infer_spec, row_specs

DECIMAL = "org.apache.kafka.connect.data.Decimal"
PLACEHOLDER = "__debezium_unavailable_value"
PLACEHOLDER_B64 = "X19kZWJleml1bV91bmF2YWlsYWJsZV92YWx1ZQ=="


def field(type_: str, name: str | None = None, **extra: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": type_, "optional": True, "field": "c", **extra}
    if name is not None:
        schema["name"] = name
    return schema


def run(spark: SparkSession, spec: ColumnSpec, values: list[str | None]) -> list[Any]:
    """Convert each raw text; also check that the column really has ``spec.data_type``."""
    return run_all(spark, [spec], values)[0]


def run_all(spark: SparkSession, specs: list[ColumnSpec], values: list[str | None]) -> list[Any]:
    """:func:`run` for several specs in one Spark job: one list of values per spec."""
    df = spark.createDataFrame([(v,) for v in values], "raw string")
    out = df.select(*[s.convert(F.col("raw")).alias(f"v{i}") for i, s in enumerate(specs)])
    assert [f.dataType for f in out.schema.fields] == [s.data_type for s in specs]
    rows = out.collect()
    return [[r[i] for r in rows] for i in range(len(specs))]


def micros(spark: SparkSession, spec: ColumnSpec, values: list[str]) -> list[int | None]:
    """Zoned timestamps as µs since the epoch: independent of the driver's time zone."""
    df = spark.createDataFrame([(v,) for v in values], "raw string")
    return [r.v for r in df.select(F.unix_micros(spec.convert(F.col("raw"))).alias("v")).collect()]


def flags(spark: SparkSession, spec: ColumnSpec, values: list[str]) -> list[bool]:
    assert spec.is_unavailable is not None
    df = spark.createDataFrame([(v,) for v in values], "raw string")
    return [r.v for r in df.select(spec.is_unavailable(F.col("raw")).alias("v")).collect()]


# --- physical types -------------------------------------------------------------------------------


def test_int8_and_int16_reject_values_out_of_range(spark: SparkSession) -> None:
    int8, int16 = column_spec(field("int8")), column_spec(field("int16"))
    assert (int8.data_type, int16.data_type) == (ByteType(), ShortType())
    assert run(spark, int8, ["127", "-128", "128"]) == [127, -128, None]
    assert run(spark, int16, ["-32768", "32768"]) == [-32768, None]


def test_int32_accepts_plain_and_quoted_numbers_and_rejects_text(spark: SparkSession) -> None:
    # from_json renders both 1005 and "1005" as the text 1005
    spec = column_spec(field("int32"))
    assert (spec.data_type, spec.expected) == (IntegerType(), "int32")
    assert run(spark, spec, ["1005", "-7", "abc", "1.5", None]) == [1005, -7, None, None, None]


def test_int64_reads_the_whole_range(spark: SparkSession) -> None:
    spec = column_spec(field("int64"))
    values = run(spark, spec, ["9223372036854775807", "9223372036854775808"])
    assert values == [9223372036854775807, None]


def test_float32_and_float64_accept_exponents_and_non_finite_values(spark: SparkSession) -> None:
    f32, f64 = column_spec(field("float32")), column_spec(field("float64"))
    assert (f32.data_type, f64.data_type) == (FloatType(), DoubleType())
    assert run(spark, f32, ["1.5", "x"]) == [1.5, None]
    out = run(spark, f64, ["1.5e3", "Infinity", "-Infinity", "NaN"])
    assert out[:3] == [1500.0, float("inf"), float("-inf")]
    assert out[3] != out[3]  # NaN


def test_boolean_reads_only_true_and_false(spark: SparkSession) -> None:
    spec = column_spec(field("boolean"))
    assert spec.data_type == BooleanType()
    got = run(spark, spec, ["true", "false", "TRUE", "False", "yes", "1"])
    assert got == [True, False, True, False, None, None]


def test_string_is_kept_as_is(spark: SparkSession) -> None:
    spec = column_spec(field("string"))
    assert run(spark, spec, ["Anne Kretchmar", ""]) == ["Anne Kretchmar", ""]


def test_bytes_are_base64_decoded(spark: SparkSession) -> None:
    spec = column_spec(field("bytes"))
    assert spec.data_type == BinaryType()
    assert run(spark, spec, ["AQID", "!!"]) == [b"\x01\x02\x03", None]


# --- Decimal ------------------------------------------------------------------------------------


def decimal_field(scale: int, precision: int | None = None) -> dict[str, Any]:
    params = {"scale": str(scale)}
    if precision is not None:
        params["connect.decimal.precision"] = str(precision)
    return field("bytes", DECIMAL, version=1, parameters=params)


def test_decimal_positive_value(spark: SparkSession) -> None:
    # "AOIG" = 00 E2 06 = 0xE206 = 57862 unscaled, scale 2
    spec = column_spec(decimal_field(2, 10))
    assert spec.data_type == DecimalType(10, 2)
    assert spec.expected == f"{DECIMAL}(scale=2, precision=10)"
    assert run(spark, spec, ["AOIG"]) == [Decimal("578.62")]


def test_decimal_negative_values(spark: SparkSession) -> None:
    # "/x36" = FF 1D FA = -(0x00E205 + 1) = -57862; "/w==" = FF = -1
    spec = column_spec(decimal_field(2, 10))
    assert run(spark, spec, ["/x36", "/w=="]) == [Decimal("-578.62"), Decimal("-0.01")]


def test_decimal_sixteen_bytes_is_the_full_38_digits(spark: SparkSession) -> None:
    # 0x4B3B4CA85A86C47A098A223FFFFFFFFF = 10^38 - 1; its two's complement for the negative;
    # 10^38 itself (0x4B3B...2240000...) does not fit decimal(38,0); 17 bytes are too many.
    spec = column_spec(decimal_field(0))
    assert spec.data_type == DecimalType(38, 0)
    assert spec.expected == f"{DECIMAL}(scale=0)"
    out = run(
        spark,
        spec,
        [
            "SztMqFqGxHoJiiI//////w==",
            "tMSzV6V5O4X2dd3AAAAAAQ==",
            "SztMqFqGxHoJiiJAAAAAAA==",
            "AAAAAAAAAAAAAAAAAAAAAAA=",
        ],
    )
    nines = "9" * 38
    assert out == [Decimal(nines), Decimal("-" + nines), None, None]


def test_decimal_without_precision_uses_38_and_bad_text_is_null(spark: SparkSession) -> None:
    spec = column_spec(decimal_field(4))
    assert spec.data_type == DecimalType(38, 4)
    # 0x01 = 1 -> 0.0001; "!!" is not base64; "" has no bytes;
    # 9 bytes FF 00 .. 00 = -2^64 = -18446744073709551616 (beyond a long: the text path)
    got = run(spark, spec, ["AQ==", "!!", "", "/wAAAAAAAAAA"])
    assert got == [Decimal("0.0001"), None, None, Decimal("-1844674407370955.1616")]


def test_decimal_value_too_wide_for_its_precision_is_null(spark: SparkSession) -> None:
    spec = column_spec(decimal_field(2, 3))
    assert run(spark, spec, ["AOIG"]) == [None]  # 578.62 needs precision 5


def test_decimal_negative_scale_is_folded_into_the_integer(spark: SparkSession) -> None:
    spec = column_spec(decimal_field(-2, 3))  # Oracle NUMBER(3,-2)
    assert spec.data_type == DecimalType(5, 0)
    assert run(spark, spec, ["BQ=="]) == [Decimal("500")]  # 5 * 10^2


def run_json(spark: SparkSession, spec: ColumnSpec, values: list[str]) -> list[Any]:
    """Convert each JSON value (its text: ``12.34``, ``"AOIG"``), parsed as the spec asks."""
    df = spark.createDataFrame([(f'{{"c":{v}}}',) for v in values], "line string")
    parsed = F.from_json(F.col("line"), StructType([StructField("c", spec.parse_type)]))
    return [r.v for r in df.select(spec.convert(parsed["c"]).alias("v")).collect()]


def test_decimal_numeric_numbers_are_read_from_their_digits(spark: SparkSession) -> None:
    # decimal.format=NUMERIC: the BigDecimal as a JSON number; 1234.50 keeps its trailing zero,
    # 12.345 has a digit more than the scale (rounding would change it), 123456.78 is too wide
    spec = column_spec(decimal_field(2, 7))
    assert spec.parse_type == VariantType()
    got = run_json(spark, spec, ["1234.50", "-0.05", "7", "12.345", "123456.78", "null", "true"])
    assert got == [Decimal("1234.50"), Decimal("-0.05"), Decimal("7.00"), None, None, None, None]


def test_decimal_numeric_keeps_38_digits(spark: SparkSession) -> None:
    # a 39-digit number does not fit decimal(38,0) (Spark only keeps it as a double)
    nines = "9" * 38
    wide = "123456789012345678901234567890123456.78"
    got = run_json(spark, column_spec(decimal_field(0)), [nines, f"-{nines}", "1" + "0" * 38])
    assert got == [Decimal(nines), Decimal(f"-{nines}"), None]
    assert run_json(spark, column_spec(decimal_field(2, 38)), [wide]) == [Decimal(wide)]


def test_decimal_number_and_base64_text_are_told_apart_by_the_json_token(
    spark: SparkSession,
) -> None:
    # "1234" = 110101 110110 110111 111000 = D7 6D F8 = 0xD76DF8 - 2^24 = -2658824;
    # "BNI=" = 04 D2 = 1234; JsonConverter reads a string as base64 and a number as the number
    spec = column_spec(decimal_field(0))
    assert run_json(spark, spec, ["1234", '"1234"', '"BNI="']) == [
        Decimal(1234),
        Decimal(-2658824),
        Decimal(1234),
    ]


def test_decimal_numbers_in_exponent_notation(spark: SparkSession) -> None:
    # BigDecimal.toString writes exponents below 1E-6 and for negative scales; Spark keeps such
    # a number as a double, which determines it up to 15 significant digits at the scale
    assert run_json(spark, column_spec(decimal_field(7, 10)), ["1E-7", "-1.234E-7"]) == [
        Decimal("0.0000001"),
        None,  # more places than the scale: NULL (quarantined) as plain "-0.0000001234" is
    ]
    oracle = column_spec(decimal_field(-2, 3))  # Oracle NUMBER(3,-2): 5 * 10^2, 123 * 10^2
    assert run_json(spark, oracle, ["5E+2", "1.23E+4", "500"]) == [
        Decimal(500),
        Decimal(12300),
        Decimal(500),
    ]
    # 1.2345678901234567E-10 at scale 26 has 17 digits: a double does not determine them
    tiny = column_spec(decimal_field(26, 38))
    assert run_json(spark, tiny, ["1.2345678901234567E-10", "1.5E-25"]) == [
        None,
        Decimal("1.5E-25"),
    ]


def test_decimal_numeric_default_becomes_base64(spark: SparkSession) -> None:
    # a NUMERIC default is a JSON number: 1234.50 -> unscaled 123450 = 01 E2 3A = "AeI6";
    # 987654321 = 3A DE 68 B1 = "Ot5osQ=="; 0.00 -> 00 = "AA=="; BASE64's text stays as it is
    def default(scale: int, value: Any) -> ColumnSpec:
        return column_spec({**decimal_field(scale, 38), "default": value})

    specs = [default(2, 1234.50), default(0, 987654321), default(2, 0.0), default(2, "AOIG")]
    assert [s.default for s in specs] == ["AeI6", "Ot5osQ==", "AA==", "AOIG"]
    # the converter reads a default as text (a JSON string): base64
    df = spark.createDataFrame([(1,)], "x int")
    typed = df.select(*[s.convert(F.lit(s.default)).alias(str(i)) for i, s in enumerate(specs)])
    assert list(typed.first()) == [
        Decimal("1234.50"),
        Decimal(987654321),
        Decimal("0.00"),
        Decimal("578.62"),
    ]
    # a fraction of more than 15 digits reached Python as a float: unknown, not rounded
    assert default(2, 12345678901234567.89).default is None
    assert default(0, 12.5).default is None  # not a number of scale 0


def test_variable_scale_decimal_is_exact_text(spark: SparkSession) -> None:
    # "/h34" = FE 1D F8 = -(0x01E207 + 1) = -123400
    spec = column_spec(
        field(
            "struct",
            "io.debezium.data.VariableScaleDecimal",
            fields=[
                {"type": "int32", "optional": False, "field": "scale"},
                {"type": "bytes", "optional": False, "field": "value"},
            ],
        )
    )
    assert spec.data_type == StringType()
    raw = [
        '{"scale":4,"value":"/h34"}',
        '{"scale":0,"value":"/h34"}',
        '{"scale":3,"value":"AQ=="}',
        '{"scale":3,"value":"/w=="}',
        '{"scale":2,"value":"AOIG"}',
        '{"scale":-2,"value":"BQ=="}',
        '{"scale":2147483647,"value":"AQ=="}',
        '{"value":"AQ=="}',
    ]
    got = run(spark, spec, raw)
    assert got == ["-12.3400", "-123400", "0.001", "-0.001", "578.62", "500", None, None]


# --- dates and timestamps -----------------------------------------------------------------------


def test_epoch_days_dates(spark: SparkSession) -> None:
    names = ("org.apache.kafka.connect.data.Date", "io.debezium.time.Date")
    specs = [column_spec(field("int32", name)) for name in names]
    expected = [
        dt.date(2020, 1, 1),  # 18262 = 50 years of 365 days + 12 leap days
        dt.date(1969, 12, 31),
        None,
    ]
    assert run_all(spark, specs, ["18262", "-1", "x"]) == [expected, expected]


def test_epoch_days_beyond_postgres_range_are_infinity(spark: SparkSession) -> None:
    spec = column_spec(field("int32", "io.debezium.time.Date"))
    # 2147483647 > 5874897-12-31 (2145042905); 3000000 is a real year-10183 date Spark can't hold
    values = run(spark, spec, ["2147483647", "-2147483648", "3000000"])
    assert values == [dt.date(9999, 12, 31), dt.date(1, 1, 1), None]


def test_millisecond_timestamps_are_wall_clock(spark: SparkSession) -> None:
    names = ("org.apache.kafka.connect.data.Timestamp", "io.debezium.time.Timestamp")
    specs = [column_spec(field("int64", name)) for name in names]
    assert specs[0].data_type == TimestampNTZType()
    # 1577836800 s = 18262 days * 86400
    expected = [dt.datetime(2020, 1, 1, 0, 0, 0, 123000)]
    assert run_all(spark, specs, ["1577836800123"]) == [expected, expected]


def test_microsecond_timestamp(spark: SparkSession) -> None:
    spec = column_spec(field("int64", "io.debezium.time.MicroTimestamp"))
    assert run(spark, spec, ["1577836800123456", "-1", "1e3"]) == [
        dt.datetime(2020, 1, 1, 0, 0, 0, 123456),
        dt.datetime(1969, 12, 31, 23, 59, 59, 999999),
        None,
    ]


def test_nanosecond_timestamp_is_floored_to_microseconds(spark: SparkSession) -> None:
    spec = column_spec(field("int64", "io.debezium.time.NanoTimestamp"))
    assert run(spark, spec, ["1577836800123456789", "-1", "-9223372036854775807"]) == [
        dt.datetime(2020, 1, 1, 0, 0, 0, 123456),
        dt.datetime(1969, 12, 31, 23, 59, 59, 999999),  # -1 ns floors to -1 µs
        None,  # Long.MIN_VALUE + 1: the floor would overflow; no error, just NULL
    ]


def test_postgres_infinity_timestamps_saturate(spark: SparkSession) -> None:
    top, bottom = dt.datetime(9999, 12, 31, 23, 59, 59, 999999), dt.datetime(1, 1, 1)
    names = ("Timestamp", "MicroTimestamp", "NanoTimestamp")
    specs = [column_spec(field("int64", f"io.debezium.time.{name}")) for name in names]
    raw = [
        "9223372036825200000",
        "-9223372036832400000",
        "9223372036854775807",  # Long.MAX_VALUE
        "-9223372036854775808",
        "253402300800000",  # 10000-01-01 in ms: out of range
    ]
    millis, micros_, nanos = run_all(spark, specs, raw)
    assert millis == [top, bottom, top, bottom, None]
    assert micros_ == [top, bottom, top, bottom, dt.datetime(1978, 1, 11, 21, 31, 40, 800000)]
    assert nanos[:4] == [top, bottom, top, bottom]


def test_zoned_timestamp_is_an_instant(spark: SparkSession) -> None:
    spec = column_spec(field("string", "io.debezium.time.ZonedTimestamp"))
    assert spec.data_type == TimestampType()
    # 2020-01-01T08:00:00Z = 1577865600 s
    got = micros(
        spark,
        spec,
        [
            "2020-01-01T10:00:00+02:00",
            "2020-01-01T08:00:00Z",
            "2020-01-01T08:00:00.123456789Z",
            "2020-01-01T10:00:00",  # no offset: not a zoned timestamp
            "2020-13-45T00:00:00Z",
        ],
    )
    assert got == [1577865600000000, 1577865600000000, 1577865600123456, None, None]


def test_zoned_timestamp_infinity(spark: SparkSession) -> None:
    spec = column_spec(field("string", "io.debezium.time.ZonedTimestamp"))
    texts = ["infinity", "-infinity", "+292278994-08-17T07:12:55.807Z", "Infinity", "-INFINITY"]
    got = micros(spark, spec, texts)
    top, bottom = 253402300799999999, -62135596800000000
    assert got == [top, bottom, top, top, bottom]


def test_iso_date_and_iso_timestamp(spark: SparkSession) -> None:
    date = column_spec(field("string", "io.debezium.time.IsoDate"))
    assert date.data_type == DateType()
    got = run(spark, date, ["2020-02-29", "2020-02-29Z", "2020-13-45", "2021-02-29", "x"])
    assert got == [dt.date(2020, 2, 29), dt.date(2020, 2, 29), None, None, None]
    ts = column_spec(field("string", "io.debezium.time.IsoTimestamp"))
    assert ts.data_type == TimestampType()
    assert micros(spark, ts, ["2020-01-01T08:00:00Z"]) == [1577865600000000]


# --- times, durations, years --------------------------------------------------------------------


def test_millisecond_times_are_text(spark: SparkSession) -> None:
    names = ("org.apache.kafka.connect.data.Time", "io.debezium.time.Time")
    specs = [column_spec(field("int32", name)) for name in names]
    assert specs[0].data_type == StringType()
    # 37230123 ms = 10 h (36000000) + 20 min (1200000) + 30 s (30000) + 123 ms
    expected = ["10:20:30.123000", None]
    assert run_all(spark, specs, ["37230123", "x"]) == [expected, expected]


def test_micro_time_including_mysql_negative_and_long_times(spark: SparkSession) -> None:
    spec = column_spec(field("int64", "io.debezium.time.MicroTime"))
    # 3020399000000 µs = 838 h 59 min 59 s (MySQL's largest TIME)
    raw = ["86399999999", "-3600000000", "3020399000000", "86400000000", "-9223372036854775808"]
    got = run(spark, spec, raw)
    assert got == [
        "23:59:59.999999",
        "-01:00:00.000000",
        "838:59:59.000000",
        "24:00:00.000000",
        None,  # abs() of Long.MIN_VALUE would overflow
    ]


def test_nano_time_is_truncated_to_microseconds(spark: SparkSession) -> None:
    spec = column_spec(field("int64", "io.debezium.time.NanoTime"))
    assert run(spark, spec, ["3723000001999"]) == ["01:02:03.000001"]  # 1 h 2 min 3 s 1999 ns


def test_zoned_and_iso_time_keep_their_text(spark: SparkSession) -> None:
    names = ("io.debezium.time.ZonedTime", "io.debezium.time.IsoTime")
    specs = [column_spec(field("string", name)) for name in names]
    got = run_all(spark, specs, ["10:15:30.5+02:00", "10:15:30Z", "25:00:00Z", "noon"])
    assert got == [["10:15:30.5+02:00", "10:15:30Z", None, None]] * 2


def test_year_duration_and_interval(spark: SparkSession) -> None:
    year = column_spec(field("int32", "io.debezium.time.Year"))
    duration = column_spec(field("int64", "io.debezium.time.MicroDuration"))
    interval = column_spec(field("string", "io.debezium.time.Interval"))
    assert (year.data_type, duration.data_type, interval.data_type) == (
        IntegerType(),
        LongType(),
        StringType(),
    )
    assert year.expected == "io.debezium.time.Year"
    assert run(spark, year, ["2024"]) == [2024]
    assert run(spark, duration, ["90061000001"]) == [90061000001]  # 1 d 1 h 1 min 1 s 1 µs
    assert run(spark, interval, ["P1Y2M3DT4H5M6.78S"]) == ["P1Y2M3DT4H5M6.78S"]


# --- string-like logical types, bits, geometry ---------------------------------------------------


def test_string_logical_types_are_text(spark: SparkSession) -> None:
    for name in ("Json", "Xml", "Uuid", "Ltree", "Enum", "EnumSet"):
        spec = column_spec(field("string", f"io.debezium.data.{name}"))
        assert (spec.data_type, spec.expected) == (StringType(), f"io.debezium.data.{name}")
    json_spec = column_spec(field("string", "io.debezium.data.Json"))
    assert run(spark, json_spec, ['{"a": [1, 2]}']) == ['{"a": [1, 2]}']


def test_bits_are_binary(spark: SparkSession) -> None:
    spec = column_spec(field("bytes", "io.debezium.data.Bits", parameters={"length": "3"}))
    assert spec.data_type == BinaryType()
    assert run(spark, spec, ["BQ=="]) == [b"\x05"]


def test_geometry_and_point_are_structs(spark: SparkSession) -> None:
    wkb_srid = [
        {"type": "bytes", "optional": False, "field": "wkb"},
        {"type": "int32", "optional": True, "field": "srid"},
    ]
    geometry = column_spec(field("struct", "io.debezium.data.geometry.Geometry", fields=wkb_srid))
    assert geometry.data_type == StructType(
        [StructField("wkb", BinaryType()), StructField("srid", IntegerType())]
    )
    assert geometry.expected == "io.debezium.data.geometry.Geometry"
    got = run(spark, geometry, ['{"wkb":"AQE=","srid":4326}', '{"wkb":"AQE=","srid":"x"}'])
    assert got == [Row(wkb=b"\x01\x01", srid=4326), None]
    xy = [
        {"type": "float64", "field": "x"},
        {"type": "float64", "field": "y"},
        *wkb_srid,
    ]
    point = column_spec(field("struct", "io.debezium.data.geometry.Point", fields=xy))
    assert run(spark, point, ['{"x":1.5,"y":-2,"wkb":"AQ==","srid":null}']) == [
        Row(x=1.5, y=-2.0, wkb=b"\x01", srid=None)
    ]


# --- nested types -------------------------------------------------------------------------------


def test_array_elements_are_converted_and_a_bad_element_nulls_the_array(
    spark: SparkSession,
) -> None:
    spec = column_spec(field("array", items={"type": "int32", "optional": True}))
    assert spec.data_type == ArrayType(IntegerType(), True)
    assert spec.expected == "array<int32>"
    got = run(spark, spec, ["[1,2,null]", '["3"]', "[]", '[1,"x"]', "{}"])
    assert got == [[1, 2, None], [3], [], None, None]


def test_array_of_dates(spark: SparkSession) -> None:
    spec = column_spec(field("array", items={"type": "int32", "name": "io.debezium.time.Date"}))
    assert run(spark, spec, ["[0,18262]"]) == [[dt.date(1970, 1, 1), dt.date(2020, 1, 1)]]


def test_map_with_string_keys_is_an_object(spark: SparkSession) -> None:
    spec = column_spec(field("map", keys={"type": "string"}, values={"type": "int64"}))
    assert spec.data_type == MapType(StringType(), LongType(), True)
    assert run(spark, spec, ['{"a":1,"b":null}', '{"a":"x"}']) == [{"a": 1, "b": None}, None]


def test_map_with_other_keys_is_a_list_of_pairs(spark: SparkSession) -> None:
    spec = column_spec(field("map", keys={"type": "int32"}, values={"type": "string"}))
    assert spec.data_type == MapType(IntegerType(), StringType(), True)
    got = run(spark, spec, ['[[1,"a"],[2,"b"]]', '[["x","a"]]', "[[1]]"])
    assert got == [{1: "a", 2: "b"}, None, None]


def test_nested_struct(spark: SparkSession) -> None:
    inner = {
        "type": "struct",
        "field": "inner",
        "fields": [{"type": "int32", "name": "io.debezium.time.Date", "field": "d"}],
    }
    spec = column_spec(field("struct", fields=[{"type": "string", "field": "s"}, inner]))
    assert spec.expected == "struct<s: string, inner: struct<d: io.debezium.time.Date>>"
    got = run(spark, spec, ['{"s":"x","inner":{"d":18262}}', '{"s":"x","inner":{"d":"x"}}'])
    assert got == [Row(s="x", inner=Row(d=dt.date(2020, 1, 1))), None]


# --- schema handling ----------------------------------------------------------------------------


def test_unknown_logical_name_falls_back_to_the_physical_type(spark: SparkSession) -> None:
    spec = column_spec(field("int32", "com.example.Celsius"))
    assert (spec.data_type, spec.expected) == (IntegerType(), "com.example.Celsius")
    # a known name on a physical type it never has: the physical type wins
    odd = column_spec(field("string", "io.debezium.time.Date"))
    assert odd.data_type == StringType()
    assert run(spark, spec, ["21"]) == [21]


def test_row_specs_keep_order_names_and_optional() -> None:
    specs = row_specs(
        [
            {"type": "int32", "optional": False, "field": "id"},
            {"type": "string", "optional": True, "field": "first_name"},
        ]
    )
    assert [(s.name, s.data_type, s.nullable) for s in specs] == [
        ("id", IntegerType(), False),
        ("first_name", StringType(), True),
    ]


def test_unsupported_type_raises_naming_field_and_type() -> None:
    with pytest.raises(DecodeError, match=r"field 'c': Kafka Connect type 'int128'"):
        column_spec(field("int128"))
    with pytest.raises(DecodeError, match=r"field 'c\[\]': Kafka Connect type 'uint8'"):
        column_spec(field("array", items={"type": "uint8"}))
    with pytest.raises(DecodeError, match=r"scale='two' is not an integer"):
        column_spec(field("bytes", DECIMAL, parameters={"scale": "two"}))
    with pytest.raises(DecodeError, match=r"has no 'field' name"):
        column_spec({"type": "int32"})


# --- TOAST placeholder ----------------------------------------------------------------------------


def test_unavailable_placeholder_is_flagged(spark: SparkSession) -> None:
    text = column_spec(field("string", "io.debezium.data.Json"))
    assert flags(spark, text, [PLACEHOLDER, "x"]) == [True, False]
    data = column_spec(field("bytes"))
    assert flags(spark, data, [PLACEHOLDER_B64, PLACEHOLDER]) == [True, False]
    decimal = column_spec(decimal_field(2))  # its value is parsed as a VARIANT
    df = spark.createDataFrame([(f'{{"c":"{PLACEHOLDER_B64}"}}',), ('{"c":5}',)], "line string")
    parsed = F.from_json(F.col("line"), "c variant")["c"]
    assert decimal.is_unavailable is not None
    assert [r.v for r in df.select(decimal.is_unavailable(parsed).alias("v")).collect()] == [
        True,
        False,
    ]
    array = column_spec(field("array", items={"type": "string"}))
    raw = [f'["{PLACEHOLDER}"]', f'["{PLACEHOLDER}","{PLACEHOLDER}"]', f'["a","{PLACEHOLDER}"]']
    assert flags(spark, array, [*raw, "[]"]) == [True, True, False, False]
    assert column_spec(field("int32")).is_unavailable is None


# --- schemaless JSON (infer_spec) ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("data_type", "raw", "expected"),
    [
        (LongType(), ["1005", "abc"], [1005, None]),
        (BooleanType(), ["true", "false", "t"], [True, False, None]),
        (StringType(), ["x"], ["x"]),
        (BinaryType(), ["AQID"], [b"\x01\x02\x03"]),
        (DecimalType(10, 2), ["12.34", "-0.5", "x"], [Decimal("12.34"), Decimal("-0.50"), None]),
        (DateType(), ["2020-01-01", "2020-13-45"], [dt.date(2020, 1, 1), None]),
        (
            TimestampNTZType(),
            ["2020-01-01T10:00:00", "2020-01-01T10:00:00+02:00"],
            [dt.datetime(2020, 1, 1, 10), None],
        ),
        (ArrayType(IntegerType()), ["[1,2]", "[1,true]"], [[1, 2], None]),
        (MapType(StringType(), DoubleType()), ['{"a":1.5}'], [{"a": 1.5}]),
        (
            StructType(
                [StructField("a", IntegerType()), StructField("b", ArrayType(StringType()))]
            ),
            ['{"a":1,"b":["x"]}'],
            [Row(a=1, b=["x"])],
        ),
    ],
)
def test_infer_spec_reads_json_text(
    spark: SparkSession, data_type: DataType, raw: list[str], expected: list[Any]
) -> None:
    spec = infer_spec("c", data_type)
    assert (spec.name, spec.data_type, spec.expected) == ("c", data_type, data_type.simpleString())
    assert run(spark, spec, raw) == expected


def test_infer_spec_decimal_reads_a_json_number_from_its_digits(spark: SparkSession) -> None:
    """Schemaless input into a decimal column: a number as Spark keeps its digits (before, its
    text came through a double: 1.2345678901234568E29), text as a cast reads it; both rounded
    as a cast rounds (12.345 -> 12.35)."""
    wide = "123456789012345678901234567890.12345678"
    spec = infer_spec("c", DecimalType(38, 8))
    assert spec.parse_type == VariantType()
    assert run_json(spark, spec, [wide, f'"{wide}"', "1.5E-7", "null"]) == [
        Decimal(wide),
        Decimal(wide),
        Decimal("1.5E-7"),
        None,
    ]
    narrow = infer_spec("c", DecimalType(10, 2))
    assert run_json(spark, narrow, ["12.345", '"-0.5"', "1E+20", '"x"']) == [
        Decimal("12.35"),
        Decimal("-0.50"),
        None,
        None,
    ]


def test_infer_spec_timestamp_is_an_instant(spark: SparkSession) -> None:
    spec = infer_spec("ts", TimestampType())
    assert micros(spark, spec, ["2020-01-01T10:00:00+02:00", "x"]) == [1577865600000000, None]


def test_infer_spec_flags_placeholder_and_rejects_unsupported_types(spark: SparkSession) -> None:
    assert flags(spark, infer_spec("s", StringType()), [PLACEHOLDER, "x"]) == [True, False]
    with pytest.raises(DecodeError, match=r"column 'i': cannot read JSON text into .*interval"):
        infer_spec("i", DayTimeIntervalType())
