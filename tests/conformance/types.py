"""The columns of the conformance table ``all_types``, per dialect, and how to make random values.

Each column has a ``kind`` (shared with ``dump.py``, which reads it back) and a generator of SQL
literals. Values lean on edges that producers get wrong: extremes of every integer width
(unsigned too), negative and high-scale decimals, dates before 1970, microseconds, time zones
other than UTC, non-ASCII text with quotes and backslashes, empty and NULL-holding arrays.
"""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from conformance._sql import Dialect, quote_bytes, quote_text

NULL_SHARE = 0.12
"""Share of NULLs in nullable columns."""

Gen = Callable[[random.Random, Dialect], str]


@dataclass(frozen=True)
class ColumnType:
    """One column of ``all_types``: name, SQL type, kind (for dumps) and a literal generator."""

    name: str
    sql_type: str
    kind: str
    gen: Gen

    def literal(self, rng: random.Random, dialect: Dialect) -> str:
        """A random SQL literal for this column, NULL in about ``NULL_SHARE`` of the cases."""
        if rng.random() < NULL_SHARE:
            return "NULL"
        return self.gen(rng, dialect)


def _pick(*values: object) -> Gen:
    def gen(rng: random.Random, dialect: Dialect) -> str:
        return str(rng.choice(values))

    return gen


def _int_range(lo: int, hi: int, *edges: int) -> Gen:
    def gen(rng: random.Random, dialect: Dialect) -> str:
        return str(rng.choice(edges) if edges and rng.random() < 0.3 else rng.randint(lo, hi))

    return gen


TEXTS = (
    "plain",
    "",
    "O'Reilly",
    'double "quoted"',
    "back\\slash",
    "line1\nline2\ttab",
    "héllo wörld",
    "日本語テキスト",
    "emoji 🎉🚀",
    "Ünïcödé ß",
    " leading and trailing ",
)


def _text(max_len: int | None = None) -> Gen:
    def gen(rng: random.Random, dialect: Dialect) -> str:
        value = rng.choice(TEXTS) if rng.random() < 0.6 else f"txt-{rng.randint(0, 10**9)}"
        return quote_text(dialect, value[:max_len] if max_len else value)

    return gen


def _decimal(int_digits: int, scale: int) -> Gen:
    def gen(rng: random.Random, dialect: Dialect) -> str:
        if rng.random() < 0.2:
            return rng.choice(["0", "-0.001", "1", "-" + "9" * int_digits + "." + "9" * scale])
        whole = rng.randint(0, 10 ** rng.randint(0, int_digits) - 1)
        frac = rng.randint(0, 10**scale - 1)
        sign = "-" if rng.random() < 0.3 else ""
        return f"{sign}{whole}.{frac:0{scale}d}"

    return gen


def _numeric_var(rng: random.Random, dialect: Dialect) -> str:
    return str(
        rng.choice(["0", "3.14159265358979323846", "-0.5", "100000000000000000000", "1e-10", "42"])
    )


def _float(rng: random.Random, dialect: Dialect) -> str:
    return str(rng.choice([0.0, 1.5, -0.25, 3.4028234e38, 1e-30, round(rng.uniform(-1e6, 1e6), 3)]))


def _double(rng: random.Random, dialect: Dialect) -> str:
    return repr(rng.choice([0.0, 1.0 / 3.0, -2.5e300, 5e-324, round(rng.uniform(-1e9, 1e9), 6)]))


def _date(rng: random.Random, dialect: Dialect) -> str:
    if rng.random() < 0.3:
        return (
            "'"
            + rng.choice(["1969-12-31", "1970-01-01", "1900-02-28", "2038-01-20", "9999-12-31"])
            + "'"
        )
    return f"'{rng.randint(1950, 2100)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}'"


def _clock(rng: random.Random, micros: bool) -> str:
    base = f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"
    return base + (f".{rng.randint(0, 999999):06d}" if micros and rng.random() < 0.7 else "")


def _time(rng: random.Random, dialect: Dialect) -> str:
    return "'" + rng.choice(["00:00:00", "23:59:59.999999", _clock(rng, True)]) + "'"


def _time_no_micros(rng: random.Random, dialect: Dialect) -> str:
    return "'" + rng.choice(["00:00:00", "23:59:59", _clock(rng, False)]) + "'"


def _timestamp(rng: random.Random, dialect: Dialect) -> str:
    return f"{_date(rng, dialect)[:-1]} {_clock(rng, True)}'".replace(
        "'9999-12-31 ", "'2999-12-31 "
    )


def _timestamptz(rng: random.Random, dialect: Dialect) -> str:
    zone = rng.choice(["+00", "+05:30", "-08", "+14"])
    return f"{_timestamp(rng, dialect)[:-1]}{zone}'"


def _mariadb_timestamp(rng: random.Random, dialect: Dialect) -> str:
    # TIMESTAMP covers 1970-01-01 00:00:01 .. 2038-01-19 03:14:07 UTC.
    day = f"{rng.randint(1971, 2037)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    return f"'{day} {_clock(rng, False)}'"


def _interval(rng: random.Random, dialect: Dialect) -> str:
    return (
        "'"
        + rng.choice(
            [
                "1 year 2 mons 3 days 04:05:06.5",
                "-3 days",
                "00:00:00.000001",
                f"{rng.randint(0, 500)} hours {rng.randint(0, 59)} minutes",
                "1 mon",
            ]
        )
        + "'"
    )


def _bytes(rng: random.Random, dialect: Dialect) -> str:
    return quote_bytes(
        dialect,
        rng.choice(
            [b"", b"\x00\xff\x10", bytes(rng.randrange(256) for _ in range(rng.randint(1, 24)))]
        ),
    )


def _uuid(rng: random.Random, dialect: Dialect) -> str:
    return f"'{uuid.UUID(int=rng.getrandbits(128), version=4)}'"


def _json(rng: random.Random, dialect: Dialect) -> str:
    doc = rng.choice(
        [
            {"a": rng.randint(0, 100), "b": [1, 2.5, None, True], "c": {"nested": "x"}},
            [1, "two", {"three": 3}],
            {"text": 'héllo "q" \\ 🎉', "n": -1.25e10},
            {},
        ]
    )
    return quote_text(dialect, json.dumps(doc, ensure_ascii=False))


def _int_array(rng: random.Random, dialect: Dialect) -> str:
    return rng.choice(
        ["'{}'", "'{1,2,3}'", "'{-2147483648,NULL,2147483647}'", f"'{{{rng.randint(0, 99)}}}'"]
    )


def _text_array(rng: random.Random, dialect: Dialect) -> str:
    return rng.choice(["'{}'", "'{a,b}'", "ARRAY['x y', NULL, 'quo\"te', 'ü']::text[]", "'{\"\"}'"])


def _bit10(rng: random.Random, dialect: Dialect) -> str:
    return rng.choice(
        ["b'0000000000'", "b'1111111111'", "b'1000000001'", f"b'{rng.getrandbits(10):010b}'"]
    )


ENUM_DDL = "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');"

COLUMNS: dict[Dialect, tuple[ColumnType, ...]] = {
    "pg": (
        ColumnType("c_smallint", "smallint", "int", _int_range(-100, 100, -32768, 32767)),
        ColumnType(
            "c_integer", "integer", "int", _int_range(-(10**6), 10**6, -2147483648, 2147483647)
        ),
        ColumnType("c_bigint", "bigint", "int", _int_range(-(10**12), 10**12, -(2**63), 2**63 - 1)),
        ColumnType("c_numeric", "numeric(12,3)", "decimal", _decimal(9, 3)),
        ColumnType("c_numeric_var", "numeric", "decimal", _numeric_var),
        ColumnType("c_real", "real", "float", _float),
        ColumnType("c_double", "double precision", "float", _double),
        ColumnType("c_boolean", "boolean", "bool", _pick("true", "false")),
        ColumnType("c_text", "text", "text", _text()),
        ColumnType("c_varchar", "varchar(40)", "text", _text(40)),
        ColumnType("c_char", "char(8)", "char", _pick("'ab'", "'abcdefgh'", "'é'", "''")),
        ColumnType("c_date", "date", "date", _date),
        ColumnType("c_time", "time", "time", _time),
        ColumnType("c_timestamp", "timestamp", "timestamp", _timestamp),
        ColumnType("c_timestamptz", "timestamptz", "timestamptz", _timestamptz),
        ColumnType("c_interval", "interval", "interval", _interval),
        ColumnType("c_bytea", "bytea", "bytes", _bytes),
        ColumnType("c_uuid", "uuid", "uuid", _uuid),
        ColumnType("c_json", "json", "json", _json),
        ColumnType("c_jsonb", "jsonb", "json", _json),
        ColumnType("c_enum", "mood", "text", _pick("'sad'", "'ok'", "'happy'")),
        ColumnType("c_int_array", "integer[]", "int_array", _int_array),
        ColumnType("c_text_array", "text[]", "text_array", _text_array),
    ),
    "mariadb": (
        ColumnType("c_bool", "tinyint(1)", "int", _pick("0", "1", "true", "false")),
        ColumnType("c_tinyint", "tinyint", "int", _int_range(-20, 20, -128, 127)),
        ColumnType("c_int_unsigned", "int unsigned", "int", _int_range(0, 10**6, 0, 4294967295)),
        ColumnType(
            "c_bigint_unsigned", "bigint unsigned", "int", _int_range(0, 10**12, 2**63, 2**64 - 1)
        ),
        ColumnType("c_decimal", "decimal(12,3)", "decimal", _decimal(9, 3)),
        ColumnType("c_float", "float", "float", _float),
        ColumnType("c_double", "double", "float", _double),
        ColumnType("c_varchar", "varchar(40)", "text", _text(40)),
        ColumnType("c_text", "text", "text", _text()),
        ColumnType("c_date", "date", "date", _date),
        ColumnType("c_datetime6", "datetime(6)", "timestamp", _timestamp),
        ColumnType("c_timestamp", "timestamp NULL DEFAULT NULL", "timestamptz", _mariadb_timestamp),
        ColumnType("c_time", "time", "time", _time_no_micros),
        ColumnType("c_year", "year", "int", _int_range(1901, 2155, 1901, 2155)),
        ColumnType("c_blob", "blob", "bytes", _bytes),
        ColumnType("c_json", "json", "json", _json),
        ColumnType(
            "c_enum", "enum('red','green','blue')", "text", _pick("'red'", "'green'", "'blue'")
        ),
        ColumnType("c_set", "set('a','b','c')", "text", _pick("''", "'a'", "'a,c'", "'a,b,c'")),
        ColumnType("c_bit", "bit(10)", "bit", _bit10),
    ),
}

ADDED_COLUMN: dict[Dialect, ColumnType] = {
    "pg": ColumnType("c_added", "varchar(20) DEFAULT 'dflt'", "text", _pick("'added'", "'x'")),
    "mariadb": ColumnType("c_added", "varchar(20) DEFAULT 'dflt'", "text", _pick("'added'", "'x'")),
}
"""Added by ``ALTER TABLE all_types ADD COLUMN`` half-way through the stream."""
