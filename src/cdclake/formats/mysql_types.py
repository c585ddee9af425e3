"""MySQL column types -> Spark types, and canal's text values -> typed Columns.

Used by the Canal, CKafka and DataWorks decoders (column types from canal's ``mysqlType`` map or
from a CREATE TABLE seen earlier) and by the applier's DDL handling
(:mod:`cdclake.formats.ddl` renders
column types as the MySQL text this module reads).

Values arrive as text, the way canal's ``LogEventConvert`` renders them (alibaba/canal, module
``parse``; ``RowsLogBuffer`` in module ``dbsync``):

========================= ==================== ============================================
MySQL type                Spark type           canal's text, and what we do with it
========================= ==================== ============================================
tinyint / smallint /      Byte / Short /       ``"-12"``; unsigned types move one size up
mediumint / int / bigint  Integer / Long       (``int unsigned`` -> Long, ``bigint unsigned``
                                               -> Decimal(20,0))
tinyint(1), bool          Byte, or Boolean     ``"1"``/``"0"`` (also ``"true"``/``"false"``);
                          with                 any other integer is true, like
                          ``tinyint1_as_       Connector/J's ``tinyInt1isBit``
                          boolean``
decimal(p,s), numeric     Decimal(p,s)         plain text ``"1234.50"``; p > 38 does not fit
                                               a Spark decimal: String (the text, unchanged)
float, double, real       Float, Double        ``String.valueOf``: ``"1.5"``, ``"1.0E10"``
char/varchar/text/...     String               the text
date                      Date                 ``"2020-01-01"``
datetime(n)               TimestampNTZ         ``"2020-01-01 10:00:00.123456"`` (wall clock)
timestamp(n)              Timestamp            same text, rendered by canal's JVM in its own
                                               time zone: give it as ``source_timezone``
time(n)                   String               ``"-838:59:59.000000"`` (Spark TIME is off)
year                      Integer              ``"2020"``
binary/varbinary/blob/    Binary               ISO-8859-1 text, one char per byte
geometry family
bit(n)                    Long                 the bits as an unsigned decimal number
                                               (``"5"`` for b'101'); bit(64) values at or
                                               above 2^63 keep their bits as a negative long
json                      String               the JSON text
enum(...)                 String               canal sends the 1-based index (``"2"``), other
                                               producers the label: both accepted
set(...)                  String               canal sends the bitmask (``"5"``), others the
                                               comma-joined labels: both accepted
========================= ==================== ============================================

Every converter returns NULL for a value that does not fit its type (bad text, out of range).
MySQL's zero dates ``0000-00-00`` and ``0000-00-00 00:00:00`` (and year ``0000``) have no
Spark value: they become NULL without an error.

ENUM/SET: a value made of digits only is read as canal's index/bitmask even when a label is
itself made of digits (``enum('10','20')`` receiving ``"10"`` is index 10, so NULL): canal is
the producer we follow. Index 0 is MySQL's error value, the empty string.

Example::

    >>> from cdclake.formats.mysql_types import spark_type, column_spec
    >>> spark_type("bigint(20) unsigned")
    DecimalType(20,0)
    >>> spec = column_spec("price", "decimal(10,2)")
    >>> df.select(spec.convert(F.col("price_text")).alias("price"))  # doctest: +SKIP
"""

from __future__ import annotations

import zoneinfo
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

from pyspark.sql import Column
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
from cdclake.formats.base import ColumnSpec
from cdclake.formats.values import binary_text, lower_keyword

MAX_SPARK_PRECISION = 38

# base name -> (spark type when signed, when unsigned, smallest, largest MySQL value if unsigned)
_INTEGERS: dict[str, tuple[DataType, DataType, int, int, int]] = {
    "tinyint": (ByteType(), ShortType(), -(2**7), 2**7 - 1, 2**8 - 1),
    "smallint": (ShortType(), IntegerType(), -(2**15), 2**15 - 1, 2**16 - 1),
    "mediumint": (IntegerType(), IntegerType(), -(2**23), 2**23 - 1, 2**24 - 1),
    "int": (IntegerType(), LongType(), -(2**31), 2**31 - 1, 2**32 - 1),
    "bigint": (LongType(), DecimalType(20, 0), -(2**63), 2**63 - 1, 2**64 - 1),
}
_STRINGS = frozenset(
    {"char", "varchar", "tinytext", "text", "mediumtext", "longtext", "json", "enum", "set"}
)
_BINARIES = frozenset(
    {
        "binary",
        "varbinary",
        "tinyblob",
        "blob",
        "mediumblob",
        "longblob",
        "geometry",
        "point",
        "linestring",
        "polygon",
        "multipoint",
        "multilinestring",
        "multipolygon",
        "geometrycollection",
    }
)
_OTHERS = frozenset(
    {"decimal", "float", "double", "date", "datetime", "timestamp", "time", "year", "bit"}
)
# Synonyms MySQL accepts in DDL, mapped to the name information_schema reports.
_ALIASES: dict[str, str] = {
    "integer": "int",
    "int1": "tinyint",
    "int2": "smallint",
    "int3": "mediumint",
    "middleint": "mediumint",
    "int4": "int",
    "int8": "bigint",
    "dec": "decimal",
    "numeric": "decimal",
    "fixed": "decimal",
    "real": "double",
    "float4": "float",
    "float8": "double",
    "character": "char",
    "nchar": "char",
    "nvarchar": "varchar",
    "varcharacter": "varchar",
    "long": "mediumtext",
    "geomcollection": "geometrycollection",
}
# Two-word type names: (first word, second word) -> base name.
_TWO_WORDS: dict[tuple[str, str], str] = {
    ("double", "precision"): "double",
    ("character", "varying"): "varchar",
    ("char", "varying"): "varchar",
    ("national", "char"): "char",
    ("national", "character"): "char",
    ("national", "varchar"): "varchar",
    ("long", "varchar"): "mediumtext",
    ("long", "varbinary"): "mediumblob",
}
KNOWN_TYPES: tuple[str, ...] = tuple(
    sorted({*_INTEGERS, *_STRINGS, *_BINARIES, *_OTHERS, "bool", "boolean", "serial"})
)


@dataclass(frozen=True)
class MysqlType:
    """A parsed MySQL column type: ``decimal(10,2) unsigned`` -> ``decimal``, ``("10", "2")``.

    ``params`` holds numbers as text, or the labels of an ``enum``/``set`` (unquoted).
    """

    name: str
    params: tuple[str, ...]
    unsigned: bool
    text: str


def parse_type(mysql_type: str) -> MysqlType:
    """Parse a column type as canal's ``mysqlType`` or a CREATE TABLE gives it.

    >>> parse_type("enum('a','it''s')").params
    ('a', "it's")
    """
    scanner = _Scanner(mysql_type)
    first = scanner.word()
    if not first:
        raise DecodeError(f"cannot read MySQL column type {mysql_type!r}: no type name")
    name = first
    after = scanner.peek_word()
    if (first, after) in _TWO_WORDS:
        scanner.word()
        name = _TWO_WORDS[(first, after)]
    name = _ALIASES.get(name, name)
    params = scanner.params() if scanner.at("(") else ()
    modifiers = set()
    while not scanner.done():
        word = scanner.word()
        if word:
            modifiers.add(word)
        elif scanner.at("("):
            scanner.params()  # e.g. the width in "character set x" variants: irrelevant
        else:
            scanner.skip_one()
    unsigned = bool(modifiers & {"unsigned", "zerofill"})
    if name == "serial":  # BIGINT UNSIGNED NOT NULL AUTO_INCREMENT UNIQUE
        name, unsigned = "bigint", True
    return MysqlType(name, params, unsigned, mysql_type.strip())


class _Scanner:
    """A character scanner over a type string (words, parenthesised parameter lists)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def _skip_space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def done(self) -> bool:
        self._skip_space()
        return self.pos >= len(self.text)

    def at(self, char: str) -> bool:
        self._skip_space()
        return self.text.startswith(char, self.pos)

    def skip_one(self) -> None:
        self.pos += 1

    def word(self) -> str:
        self._skip_space()
        start = self.pos
        while self.pos < len(self.text) and (
            self.text[self.pos].isalnum() or self.text[self.pos] == "_"
        ):
            self.pos += 1
        return self.text[start : self.pos].lower()

    def peek_word(self) -> str:
        saved = self.pos
        word = self.word()
        self.pos = saved
        return word

    def params(self) -> tuple[str, ...]:
        """``(10, 2)`` -> ("10", "2"); ``('a','b''c')`` -> ("a", "b'c")."""
        self.pos += 1  # the "("
        out: list[str] = []
        while True:
            self._skip_space()
            if self.pos >= len(self.text):
                raise DecodeError(f"cannot read MySQL column type {self.text!r}: missing ')'")
            char = self.text[self.pos]
            if char in "'\"":
                out.append(self._quoted(char))
            elif char not in ",)":
                start = self.pos
                while self.pos < len(self.text) and self.text[self.pos] not in ",)":
                    self.pos += 1
                out.append(self.text[start : self.pos].strip())
            if self.done():
                raise DecodeError(f"cannot read MySQL column type {self.text!r}: missing ')'")
            if self.at(")"):
                self.pos += 1
                return tuple(out)
            if not self.at(","):
                raise DecodeError(
                    f"cannot read MySQL column type {self.text!r}: expected ',' or ')' at "
                    f"offset {self.pos}"
                )
            self.pos += 1

    def _quoted(self, quote: str) -> str:
        self.pos += 1
        chars: list[str] = []
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char == "\\" and self.pos + 1 < len(self.text):
                chars.append(self.text[self.pos + 1])
                self.pos += 2
            elif char == quote and self.text.startswith(quote * 2, self.pos):
                chars.append(quote)
                self.pos += 2
            elif char == quote:
                self.pos += 1
                return "".join(chars)
            else:
                chars.append(char)
                self.pos += 1
        raise DecodeError(f"cannot read MySQL column type {self.text!r}: unterminated quote")


def _int_param(t: MysqlType, index: int, default: int) -> int:
    if len(t.params) <= index or t.params[index] == "":
        return default
    try:
        return int(t.params[index])
    except ValueError:
        raise DecodeError(
            f"MySQL column type {t.text!r}: parameter {t.params[index]!r} is not a number"
        ) from None


def _is_boolean(t: MysqlType, tinyint1_as_boolean: bool) -> bool:
    if t.name in ("bool", "boolean"):
        return tinyint1_as_boolean
    return tinyint1_as_boolean and t.name == "tinyint" and _int_param(t, 0, 4) == 1


def _decimal_type(t: MysqlType) -> DataType:
    precision, scale = _int_param(t, 0, 10), _int_param(t, 1, 0)
    if precision > MAX_SPARK_PRECISION:
        return StringType()
    if not 0 <= scale <= precision:
        raise DecodeError(f"MySQL column type {t.text!r}: scale {scale} outside 0..{precision}")
    return DecimalType(precision, scale)


def spark_type(mysql_type: str, *, tinyint1_as_boolean: bool = False) -> DataType:
    """The Spark type that holds values of a MySQL column type (see the module table).

    Raises :class:`~cdclake.errors.DecodeError` naming the type when it is not a MySQL type.

    >>> spark_type("int unsigned")
    LongType()
    >>> spark_type("tinyint(1)", tinyint1_as_boolean=True)
    BooleanType()
    """
    t = parse_type(mysql_type)
    if t.name in ("bool", "boolean"):
        return BooleanType() if tinyint1_as_boolean else ByteType()
    if _is_boolean(t, tinyint1_as_boolean):
        return BooleanType()
    if t.name in _INTEGERS:
        signed, unsigned, *_ = _INTEGERS[t.name]
        return unsigned if t.unsigned else signed
    if t.name in ("enum", "set") and not t.params:
        raise DecodeError(f"MySQL column type {mysql_type!r}: {t.name} without labels")
    if t.name == "set" and len(t.params) > 64:
        raise DecodeError(f"MySQL column type {mysql_type!r}: a set has at most 64 labels")
    if t.name in _STRINGS or t.name == "time":
        return StringType()
    if t.name in _BINARIES:
        return BinaryType()
    if t.name == "decimal":
        return _decimal_type(t)
    if t.name == "float":
        # FLOAT(p) with p > 24 is a DOUBLE; FLOAT(m,d) stays single precision
        single = len(t.params) != 1 or _int_param(t, 0, 0) <= 24
        return FloatType() if single else DoubleType()
    simple: dict[str, DataType] = {
        "double": DoubleType(),
        "date": DateType(),
        "datetime": TimestampNTZType(),
        "timestamp": TimestampType(),
        "year": IntegerType(),
        "bit": LongType(),
    }
    if t.name in simple:
        return simple[t.name]
    raise DecodeError(
        f"unknown MySQL column type {mysql_type!r}; expected one of: {', '.join(KNOWN_TYPES)}"
    )


# ---- converters: canal text -> typed Column, NULL when the text does not fit ----------------

_DIGITS = "^[0-9]+$"
_TIME = "^-?[0-9]{1,3}:[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,6})?$"
_NUMBER = "^[+-]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][+-]?[0-9]+)?$"


def _in_range(value: Column, low: int, high: int) -> Column:
    return F.when(value.between(F.lit(Decimal(low)), F.lit(Decimal(high))), value)


def _integer(t: MysqlType) -> Callable[[Column], Column]:
    signed, unsigned, low, high, uhigh = _INTEGERS[t.name]
    target = unsigned if t.unsigned else signed
    lo, hi = (0, uhigh) if t.unsigned else (low, high)
    if isinstance(target, DecimalType):  # bigint unsigned: digits only, no rounding of "1.5"
        return lambda c: _in_range(
            F.when(F.trim(c).rlike(_DIGITS), F.trim(c).try_cast(target)), lo, hi
        )
    return lambda c: _in_range(c.try_cast(target), lo, hi)


def _boolean(c: Column) -> Column:
    text = lower_keyword(F.trim(c), "true", "false")
    number = text.try_cast(LongType())
    return (
        F.when(text == "true", F.lit(True))
        .when(text == "false", F.lit(False))
        .when(number.isNotNull(), number != 0)
    )


def _unsigned_bits(text: Column, bits: int) -> Column:
    """Unsigned decimal text of at most ``bits`` bits -> a long with those bits (two's complement
    above 2^63), NULL when it is not digits or needs more bits."""
    value = F.when(F.trim(text).rlike(_DIGITS), F.trim(text).try_cast(DecimalType(20, 0)))
    fits = value < F.lit(Decimal(2**bits))
    wrapped = F.when(value >= F.lit(Decimal(2**63)), value - F.lit(Decimal(2**64)))
    return F.when(fits, F.coalesce(wrapped, value).cast(LongType()))


def _enum(labels: tuple[str, ...]) -> Callable[[Column], Column]:
    array = F.array(*[F.lit(label) for label in labels])

    def convert(c: Column) -> Column:
        index = F.when(c.rlike(_DIGITS), c.try_cast(IntegerType()))
        by_index = F.when(index == 0, F.lit("")).otherwise(F.try_element_at(array, index))
        return F.when(index.isNotNull(), by_index).otherwise(F.when(c.isin(*labels), c))

    return convert


def _set(labels: tuple[str, ...]) -> Callable[[Column], Column]:
    def convert(c: Column) -> Column:
        mask = _unsigned_bits(c, len(labels))
        chosen = [F.when(F.getbit(mask, F.lit(i)) == 1, F.lit(x)) for i, x in enumerate(labels)]
        by_mask = F.concat_ws(",", *chosen)
        all_known = F.forall(F.split(c, ","), lambda part: part.isin(*labels))
        by_label = F.when((c == "") | all_known, c)
        return F.when(c.rlike(_DIGITS), F.when(mask.isNotNull(), by_mask)).otherwise(by_label)

    return convert


def _timestamp(source_timezone: str) -> Callable[[Column], Column]:
    # "<wall clock> <zone>" is read as an instant whatever the session time zone is
    return lambda c: F.concat(F.trim(c), F.lit(" " + source_timezone)).try_cast(TimestampType())


def _check_timezone(source_timezone: str) -> None:
    zone = source_timezone.strip()
    if zone[:1] in ("+", "-") and zone[1:3].isdigit():
        return  # an offset such as +08:00, which Spark reads as such
    try:
        zoneinfo.ZoneInfo(zone)
    except (ValueError, zoneinfo.ZoneInfoNotFoundError):
        raise ConfigError(
            f"unknown source_timezone {source_timezone!r}; expected a region such as "
            "'Asia/Shanghai', 'UTC' or an offset such as '+08:00'"
        ) from None


def _converter(
    t: MysqlType, data_type: DataType, source_timezone: str, binary_encoding: str = "latin1"
) -> Callable[[Column], Column]:
    if isinstance(data_type, BooleanType):
        return _boolean
    if t.name in _INTEGERS:
        return _integer(t)
    if t.name == "enum":
        return _enum(t.params)
    if t.name == "set":
        return _set(t.params)
    if t.name == "bit":
        return lambda c: _unsigned_bits(c, _int_param(t, 0, 1))
    if t.name == "time":
        return lambda c: F.when(F.trim(c).rlike(_TIME), F.trim(c))
    if t.name == "year":
        return lambda c: _in_range(c.try_cast(IntegerType()), 1901, 2155)
    if t.name == "timestamp":
        return _timestamp(source_timezone)
    if t.name == "decimal" and isinstance(data_type, StringType):
        return lambda c: F.when(F.trim(c).rlike(_NUMBER), F.trim(c))
    if isinstance(data_type, BinaryType):
        return lambda c: binary_text(c, binary_encoding)
    if isinstance(data_type, StringType):
        return lambda c: c
    # decimal, float, double, date, datetime: Spark's cast reads canal's text; zero dates -> NULL
    return lambda c: c.try_cast(data_type)


def column_spec(
    name: str,
    mysql_type: str,
    *,
    tinyint1_as_boolean: bool = False,
    source_timezone: str = "UTC",
    binary_encoding: str = "latin1",
) -> ColumnSpec:
    """The :class:`~cdclake.formats.base.ColumnSpec` of a column of ``mysql_type``.

    Its ``convert`` reads canal's text value (see the module table) and returns NULL when the
    value does not fit; ``expected`` is the MySQL type. ``source_timezone`` is the zone in which
    ``timestamp`` values are written (canal: its JVM's default zone); ``binary_encoding`` how
    binary values are written (:data:`cdclake.formats.values.BINARY_ENCODINGS`).

    >>> spec = column_spec("created", "timestamp(3)", source_timezone="Asia/Shanghai")
    >>> spec.data_type
    TimestampType()
    """
    _check_timezone(source_timezone)
    t = parse_type(mysql_type)
    data_type = spark_type(mysql_type, tinyint1_as_boolean=tinyint1_as_boolean)
    convert = _converter(t, data_type, source_timezone.strip(), binary_encoding)
    return ColumnSpec(name=name, data_type=data_type, convert=convert, expected=t.text)


__all__ = ["KNOWN_TYPES", "MysqlType", "column_spec", "parse_type", "spark_type"]
