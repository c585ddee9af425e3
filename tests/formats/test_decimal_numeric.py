"""Kafka Connect Decimals written as JSON numbers (JsonConverter ``decimal.format=NUMERIC``,
issue 40 item 2): every such message was quarantined as "value '987654321' does not fit
...Decimal(scale=0)", and a number such as ``1234`` whose digits happen to be valid base64 was
silently read as base64.

The lines are written as JsonConverter writes them (``schemas.enable=true`` for the key and the
value: compact JSON, each field schema's keys in its order) by a PostgreSQL connector, for

    CREATE TABLE public.prices (id NUMERIC(38,0) PRIMARY KEY, price NUMERIC(10,2), name TEXT);

A NUMERIC number is the ``BigDecimal`` as ``toString`` writes it: ``1234.50`` keeps its scale's
trailing zero. Midway the connector is reconfigured to the default ``decimal.format=BASE64``, so
one batch holds both encodings. Expected rows are worked out by hand; base64 values are the
unscaled two's-complement bytes, big-endian:

- ``"1234"``: 110101 110110 110111 111000 = D7 6D F8 = 0xD76DF8 - 2^24 = -2658824
  (scale 0: -2658824; scale 2: -26588.24), while the number ``1234`` is 1234
- ``"BNI="``: 04 D2 = 1234 (scale 0: 1234; scale 2: 12.34)
- ``"AOIG"``: 00 E2 06 = 57862 (scale 2: 578.62)
- ``"1g=="``: D6 = 214 - 256 = -42; ``"+w=="``: FB = 251 - 256 = -5 (scale 2: -0.05)
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql.types import StringType, StructField, StructType, VariantType

from cdclake.apply.results import BatchResult
from cdclake.apply.tables import Target
from cdclake.config import ApplyConfig
from cdclake.decode import KnownGroups, _Plan
from cdclake.formats.debezium.types import row_specs
from cdclake.run.runner import apply_raw
from cdclake.sources import raw_from_lines

DECIMAL = "org.apache.kafka.connect.data.Decimal"
TABLE = "shop.public.prices"


def _decimal(field: str, scale: int, precision: int, *, optional: bool) -> dict[str, Any]:
    return {
        "type": "bytes",
        "optional": optional,
        "name": DECIMAL,
        "version": 1,
        "parameters": {"scale": str(scale), "connect.decimal.precision": str(precision)},
        "field": field,
    }


ID = _decimal("id", 0, 38, optional=False)
FIELDS = [
    ID,
    _decimal("price", 2, 10, optional=True),
    {"type": "string", "optional": True, "field": "name"},
]


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _row_schema(fields: list[dict[str, Any]], field: str) -> dict[str, Any]:
    return {
        "type": "struct",
        "fields": fields,
        "optional": True,
        "name": "pg.public.prices.Value",
        "field": field,
    }


VALUE_SCHEMA = _compact(
    {
        "type": "struct",
        "fields": [
            _row_schema(FIELDS, "before"),
            _row_schema(FIELDS, "after"),
            {
                "type": "struct",
                "fields": [
                    {"type": "string", "optional": False, "field": "connector"},
                    {"type": "string", "optional": False, "field": "db"},
                    {"type": "string", "optional": False, "field": "schema"},
                    {"type": "string", "optional": False, "field": "table"},
                    {"type": "int64", "optional": True, "field": "lsn"},
                ],
                "optional": False,
                "name": "io.debezium.connector.postgresql.Source",
                "field": "source",
            },
            {"type": "string", "optional": False, "field": "op"},
            {"type": "int64", "optional": True, "field": "ts_ms"},
        ],
        "optional": False,
        "name": "pg.public.prices.Envelope",
        "version": 2,
    }
)
KEY_SCHEMA = _compact(
    {"type": "struct", "fields": [ID], "optional": False, "name": "pg.public.prices.Key"}
)
SOURCE = '{"connector":"postgresql","db":"shop","schema":"public","table":"prices","lsn":%d}'


def _line(op: str, lsn: int, key: str, before: str = "null", after: str = "null") -> str:
    """One record as JsonConverter writes it; ``key``, ``before`` and ``after`` are the payloads'
    JSON text, written out so that every number keeps its digits."""
    payload = (
        f'{{"before":{before},"after":{after},"source":{SOURCE % lsn},"op":"{op}",'
        f'"ts_ms":{1_700_000_000_000 + lsn}}}'
    )
    value = f'{{"schema":{VALUE_SCHEMA},"payload":{payload}}}'
    return f'{{"key":{{"schema":{KEY_SCHEMA},"payload":{key}}},"value":{value}}}'


GOLDEN = [
    # decimal.format=NUMERIC
    _line("c", 100, '{"id":987654321}', after='{"id":987654321,"price":1234.50,"name":"zero"}'),
    _line("c", 200, '{"id":-42}', after='{"id":-42,"price":-0.05,"name":"negative"}'),
    _line(
        "c",
        300,
        '{"id":12345678901234567890123456789012345678}',
        after='{"id":12345678901234567890123456789012345678,"price":99999999.99,"name":"widest"}',
    ),
    _line("c", 400, '{"id":1234}', after='{"id":1234,"price":12.34,"name":"number 1234"}'),
    _line("c", 450, '{"id":0}', after='{"id":0,"price":null,"name":"no price"}'),
    # decimal.format=BASE64: "1234" is another row than the number 1234, "BNI=" the same
    _line("c", 500, '{"id":"1234"}', after='{"id":"1234","price":"1234","name":"base64 1234"}'),
    _line(
        "u",
        600,
        '{"id":"BNI="}',
        before='{"id":"BNI=","price":"BNI=","name":"number 1234"}',
        after='{"id":"BNI=","price":"AOIG","name":"base64 BNI="}',
    ),
    _line("d", 700, '{"id":"1g=="}', before='{"id":"1g==","price":"+w==","name":"negative"}'),
    # NUMERIC again
    _line(
        "u",
        800,
        '{"id":987654321}',
        before='{"id":987654321,"price":1234.50,"name":"zero"}',
        after='{"id":987654321,"price":-1234.00,"name":"updated"}',
    ),
]
BIG = 12345678901234567890123456789012345678
GOLDEN_ROWS = [
    (Decimal(-2658824), Decimal("-26588.24"), "base64 1234"),
    (Decimal(0), None, "no price"),
    (Decimal(1234), Decimal("578.62"), "base64 BNI="),
    (Decimal(987654321), Decimal("-1234.00"), "updated"),
    (Decimal(BIG), Decimal("99999999.99"), "widest"),
]


def test_numeric_and_base64_decimals_in_one_batch(lake: Any) -> None:
    result = lake.apply(GOLDEN)
    assert (result.changes, result.quarantined) == (9, 0)
    assert lake.rows(TABLE) == GOLDEN_ROWS
    assert lake.df(TABLE).schema["id"].dataType.simpleString() == "decimal(38,0)"
    assert lake.df(TABLE).schema["price"].dataType.simpleString() == "decimal(10,2)"


def test_a_null_decimal_key_is_quarantined(lake: Any) -> None:
    """As for every other key column type: a change whose key is null names no row."""
    result = lake.apply(
        [_line("c", 100, '{"id":null}', after='{"id":null,"price":"AQ==","name":"no id"}')]
    )
    assert result.quarantine_reasons == {"key column(s) id null or missing": 1}


def test_schemaless_numbers_go_exactly_into_the_decimal_columns(lake: Any) -> None:
    """``schemas.enable=false``: the bare payload, typed from the table the first batch made.
    ``12345678.91`` reaches the row image's text as the double ``1.234567891E7``: 10 digits,
    which a double determines, so the cent is exact."""
    lake.apply(GOLDEN)

    def bare(op: str, lsn: int, key: str, before: str = "null", after: str = "null") -> str:
        source = SOURCE % lsn
        value = f'{{"before":{before},"after":{after},"source":{source},"op":"{op}"}}'
        return f'{{"key":{key},"value":{value}}}'

    result = lake.apply(
        [
            bare("c", 900, '{"id":5}', after='{"id":5,"price":0.10,"name":"schemaless"}'),
            bare("c", 950, '{"id":6}', after='{"id":6,"price":"7.5","name":"text"}'),
            bare(
                "u",
                1000,
                f'{{"id":{BIG}}}',
                before=f'{{"id":{BIG},"price":99999999.99,"name":"widest"}}',
                after=f'{{"id":{BIG},"price":12345678.91,"name":"schemaless update"}}',
            ),
        ]
    )
    assert (result.changes, result.quarantined) == (3, 0)
    assert lake.rows(TABLE) == [
        (Decimal(-2658824), Decimal("-26588.24"), "base64 1234"),
        (Decimal(0), None, "no price"),
        (Decimal(5), Decimal("0.10"), "schemaless"),
        (Decimal(6), Decimal("7.50"), "text"),
        (Decimal(1234), Decimal("578.62"), "base64 BNI="),
        (Decimal(987654321), Decimal("-1234.00"), "updated"),
        (Decimal(BIG), Decimal("12345678.91"), "schemaless update"),
    ]


# --- 38 digits with a fraction -------------------------------------------------------------------

TOTAL_FIELDS = [
    {"type": "int32", "optional": False, "field": "id"},
    _decimal("total", 2, 38, optional=True),
]
TOTALS = "shop.public.totals"
WIDE = "123456789012345678901234567890123456.78"  # 38 digits, the most NUMERIC(38,2) holds


def _total(lsn: int, id_: int, total: str) -> str:
    """A row of ``public.totals (id INT PRIMARY KEY, total NUMERIC(38,2))``."""
    schema = VALUE_SCHEMA.replace(_compact(FIELDS), _compact(TOTAL_FIELDS)).replace(
        "pg.public.prices", "pg.public.totals"
    )
    source = (SOURCE % lsn).replace('"prices"', '"totals"')
    after = f'{{"id":{id_},"total":{total}}}'
    payload = f'{{"before":null,"after":{after},"source":{source},"op":"c"}}'
    return f'{{"key":{{"id":{id_}}},"value":{{"schema":{schema},"payload":{payload}}}}}'


def _stream(spark: SparkSession, root: Path, known: KnownGroups) -> Any:
    config = ApplyConfig(format="debezium", inputs=("in.jsonl",), target=str(root))

    def run(lines: list[str]) -> BatchResult:
        return apply_raw(raw_from_lines(spark, lines, "in.jsonl"), config, known=known)

    return run


def _totals(spark: SparkSession, root: Path) -> list[tuple[Any, ...]]:
    df = spark.read.format("delta").load(Target(str(root)).table_path(TOTALS))
    return sorted(tuple(r) for r in df.select("id", "total").collect())


def test_one_pass_reads_every_digit_of_a_number(spark: SparkSession, tmp_path: Path) -> None:
    """A stream's later batch parses the row images with the message, as VARIANTs: the number
    keeps its 38 digits. Base64 in the same batch: ``"/w=="`` = FF = -1 -> -0.01."""
    run = _stream(spark, tmp_path, KnownGroups())
    assert not run([_total(1, 1, "0.00")]).one_pass
    result = run([_total(2, 2, WIDE), _total(3, 3, f"-{WIDE}"), _total(4, 4, '"/w=="')])
    assert (result.one_pass, result.quarantined) == (True, 0)
    assert _totals(spark, tmp_path) == [
        (1, Decimal("0.00")),
        (2, Decimal(WIDE)),
        (3, Decimal(f"-{WIDE}")),
        (4, Decimal("-0.01")),
    ]


def test_two_passes_quarantine_a_fraction_a_double_does_not_determine(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Known limit, not a silent rounding: a batch decoded in two passes types the row images
    from their JSON text, which Spark's STRING parse of the message wrote with every fraction
    through a double (``1.2345678901234568E35``). Beyond 15 significant digits a double no
    longer determines the number, so the change is quarantined (one pass reads it exactly);
    up to 15 (``1234567890123.45``) it does."""
    result = _stream(spark, tmp_path, KnownGroups())(
        [_total(1, 1, WIDE), _total(2, 2, "1234567890123.45")]
    )
    assert not result.one_pass
    assert result.quarantine_reasons == {
        "column total: value '1.2345678901234568E35' does not fit "
        f"{DECIMAL}(scale=2, precision=38)": 1
    }
    assert _totals(spark, tmp_path) == [(2, Decimal("1234567890123.45"))]


def test_a_digit_beyond_the_scale_is_quarantined_not_rounded(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Regression (the fuzz suite's NUMERIC table): in two passes Spark's text of a number
    with a fraction is a double's, in exponent notation below 10^-3 and from 10^7
    (``1.2345678125E7``), which was rounded to the scale (12345678.13, 0.00) while the plain
    ``1234.565`` was quarantined. JsonConverter writes a Decimal at its schema's scale, so a
    digit beyond it is a bad value, whatever notation the double's text takes; numbers at the
    scale in exponent notation (``9.99999999999999E12``, ``1.0E-2``) still land exactly."""
    result = _stream(spark, tmp_path, KnownGroups())(
        [
            _total(1, 1, "12345678.125"),
            _total(2, 2, "0.0001"),
            _total(3, 3, "1234.565"),
            _total(4, 4, "9999999999999.99"),
            _total(5, 5, "-0.01"),
            _total(6, 6, "12345678.13"),
        ]
    )
    assert not result.one_pass
    label = f"{DECIMAL}(scale=2, precision=38)"
    assert result.quarantine_reasons == {
        f"column total: value '{v}' does not fit {label}": 1
        for v in ("1.2345678125E7", "1.0E-4", "1234.565")
    }
    assert _totals(spark, tmp_path) == [
        (4, Decimal("9999999999999.99")),
        (5, Decimal("-0.01")),
        (6, Decimal("12345678.13")),
    ]


def test_images_of_a_column_two_plans_parse_differently_come_from_text() -> None:
    """The one-pass parse has one struct for a format's images: a Decimal's variant in one
    table and a string in another cannot share it, so each plan parses the images' text."""
    decimal, text = (
        row_specs([field]) for field in (ID, {"type": "string", "optional": True, "field": "id"})
    )
    known = KnownGroups(
        {
            ("debezium", "db.a", "a"): (True, _Plan(("a",), decimal)),
            ("debezium", "db.b", "b"): (True, _Plan(("b",), text)),
        }
    )
    assert known.images("debezium") is None
    del known.plans[("debezium", "db.b", "b")]
    assert known.images("debezium") == StructType([StructField("id", VariantType())])
    known.plans[("debezium", "db.b", "b")] = (True, _Plan(("b",), text))
    del known.plans[("debezium", "db.a", "a")]
    assert known.images("debezium") == StructType([StructField("id", StringType())])
