"""Kafka Connect / Debezium field schemas -> :class:`~cdclake.formats.base.ColumnSpec`.

A Debezium envelope with ``schemas.enable=true`` describes each row image as a Kafka Connect
``struct`` schema; each entry of its ``fields`` list says how one column is encoded in JSON (Kafka
Connect ``JsonConverter``; Debezium "Data types" sections of each connector's documentation)::

    {"type": "bytes", "optional": false, "name": "org.apache.kafka.connect.data.Decimal",
     "version": 1, "parameters": {"scale": "2", "connect.decimal.precision": "10"},
     "field": "price"}

:func:`column_spec` maps one such entry to a Spark type plus a converter that takes the column's
raw JSON text (see :data:`cdclake.formats.base.Converter`) and returns the typed value, or NULL
when the text does not fit. :func:`infer_spec` does the same for schemaless JSON when the Spark
type is already known. Mapping decisions (see also ``FORMATS.md`` §1):

- ``Decimal`` -> ``DecimalType(precision or 38, scale)``; precision above 38 is capped at 38
  (values that do not fit become NULL, i.e. a decode error for that row); a negative scale is
  folded into the unscaled value (scale 0). JsonConverter's two ``decimal.format`` values are
  told apart by the JSON token's type, as JsonConverter does (the value is parsed as a VARIANT:
  as text, ``1234`` and ``"1234"``, valid base64, look alike), so a stream may mix them:
  ``BASE64`` (the default), the unscaled two's-complement bytes (1..16) in base64; ``NUMERIC``,
  a JSON number (``12.34``; ``1E-7``, ``5E+2`` where ``BigDecimal.toString`` writes exponents),
  from its digits, NULL if it does not fit without rounding; Spark keeps a number in exponent
  notation only as a double, taken where that determines it (``_values.decimal_from_number``).
- ``VariableScaleDecimal`` -> ``StringType`` holding the exact plain decimal text ("-12.3400"):
  its scale varies per row, so no fixed ``DecimalType`` fits.
- Time-of-day types -> ``StringType`` ``[-]HH:MM:SS.ffffff`` (always 6 fraction digits; hours
  may exceed 23 and be negative, as MySQL ``TIME`` values can; ``NanoTime`` is truncated to µs).
  ``ZonedTime``/``IsoTime`` keep the text as given. Spark's TIME type is not usable here.
- ``MicroDuration`` -> ``LongType`` µs (Delta has no interval type); ``Interval`` -> ``StringType``.
- ``Timestamp``/``MicroTimestamp``/``NanoTimestamp`` (wall clock) -> ``TimestampNTZType``,
  ``NanoTimestamp`` truncated (floor) to µs; ``ZonedTimestamp``/``IsoTimestamp`` ->
  ``TimestampType``.
- PostgreSQL ``infinity``/``-infinity`` saturate to the largest/smallest Spark value:
  ``9999-12-31 23:59:59.999999`` / ``0001-01-01 00:00:00`` (dates ``9999-12-31``/``0001-01-01``).
  Recognised encodings: int64 ``9223372036825200000``/``-9223372036832400000`` (the PostgreSQL
  JDBC ``DATE_POSITIVE/NEGATIVE_INFINITY``, emitted unchanged in the ms and µs types) and
  ``Long.MAX_VALUE``/``Long.MIN_VALUE`` (newer Debezium for ``NanoTimestamp``); zoned strings
  ``"infinity"``/``"-infinity"`` or with a year of 9+ digits (older Debezium); epoch days beyond
  PostgreSQL's own date range (4714-11-24 BC .. 5874897-12-31). Other values outside Spark's range
  are NULL.
- TOAST: ``is_unavailable`` flags ``__debezium_unavailable_value`` in string columns, its base64
  in bytes columns, arrays whose elements are all the placeholder, and maps whose values are.
- Nested ``struct``/``array``/``map`` are typed recursively; a nested value is NULL as a whole
  when any part of it does not fit. Maps with non-string keys arrive as ``[[key, value], ...]``.
- ``ColumnSpec.nullable`` is the field's ``optional`` flag (nullable when the flag is missing).
- Not supported: a NUMERIC ``Decimal`` nested in an array, map or struct (read as base64 text).

The value-level column expressions live in :mod:`cdclake.formats.values`.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import reduce
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
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
from cdclake.formats import values as V
from cdclake.formats.base import ColumnSpec, Converter

UNAVAILABLE = "__debezium_unavailable_value"
UNAVAILABLE_BASE64 = base64.b64encode(UNAVAILABLE.encode()).decode()

DECIMAL = "org.apache.kafka.connect.data.Decimal"
VARIABLE_SCALE_DECIMAL = "io.debezium.data.VariableScaleDecimal"
PG_POSITIVE_INFINITY = 9223372036825200000
PG_NEGATIVE_INFINITY = -9223372036832400000
_LONG_MAX, _LONG_MIN = 2**63 - 1, -(2**63)
_MAX_SCALE = 16383  # PostgreSQL's largest numeric display scale
_PG_MAX_DATE_DAYS, _PG_MIN_DATE_DAYS = 2145042905, -2440588  # 5874897-12-31, 4714-11-24 BC

_PHYSICAL_SPARK: dict[str, DataType] = dict(
    int8=ByteType(), int16=ShortType(), int32=IntegerType(), int64=LongType(),
    float32=FloatType(), float64=DoubleType(),
    # JsonConverter spells FLOAT32/FLOAT64 "float"/"double" in the JSON schema
    float=FloatType(), double=DoubleType(),
)  # fmt: skip
_PHYSICAL_TYPES = (*_PHYSICAL_SPARK, "boolean", "string", "bytes", "array", "map", "struct")
_STRING, _VARIANT = StringType(), VariantType()


@dataclass(frozen=True)
class _Typed:
    """A ColumnSpec without its name: what one (possibly nested) schema decodes to."""

    data_type: DataType
    convert: Converter
    expected: str
    is_unavailable: Callable[[Column], Column] | None = None
    parse_type: DataType = _STRING


# --- public API ---------------------------------------------------------------------------------


def column_spec(field: Mapping[str, Any]) -> ColumnSpec:
    """The :class:`ColumnSpec` of one entry of a Debezium ``before``/``after`` ``fields`` list.

    >>> spec = column_spec({"type": "int32", "name": "io.debezium.time.Date", "field": "d"})
    >>> spec.data_type, spec.expected
    (DateType(), 'io.debezium.time.Date')

    Raises :class:`DecodeError` naming the field and the type when the schema uses a Kafka
    Connect type this module cannot map.
    """
    if not isinstance(field, Mapping):
        raise DecodeError(f"field schema {field!r} is not a JSON object; expected {{'type': ...}}")
    name = field.get("field")
    if not isinstance(name, str):
        raise DecodeError(f"field schema {dict(field)!r} has no 'field' name; expected a string")
    t = _typed(field, name)
    optional = bool(field.get("optional", True))
    default = _raw_text(field)
    return ColumnSpec(
        name, t.data_type, t.convert, t.expected, t.is_unavailable, optional, default, t.parse_type
    )


def _raw_text(field: Mapping[str, Any]) -> str | None:
    """A field schema's ``default`` as the raw text a converter reads (None: no default)."""
    value = field.get("default")
    if value is None or isinstance(value, str):
        return value
    numeric = isinstance(value, int | float) and not isinstance(value, bool)
    if numeric and field.get("name") == DECIMAL and field.get("type") == "bytes":
        params = field.get("parameters") or {}
        return _base64_decimal(value, _int_param(params, "scale", str(field.get("field")), None))
    return json.dumps(value, separators=(",", ":"))


def _base64_decimal(number: float, scale: int) -> str | None:
    """A NUMERIC ``Decimal`` default (a JSON number, as Python read it) -> the base64 text
    BASE64 writes, what the converter reads for a string; None (unknown) when it is not a number
    of that scale, or is a float that does not determine one (as in
    :func:`cdclake.formats.values.decimal_from_number`: Python's shortest text of a float is
    the number where the number has at most 15 significant digits)."""
    if isinstance(number, float):
        if not math.isfinite(number):
            return None
        exact = Decimal(repr(number))
        if abs(exact) >= Decimal(10) ** (V.DOUBLE_DIGITS - scale):
            return None
    else:
        exact = Decimal(number)
    unscaled = exact.scaleb(scale)
    if unscaled != unscaled.to_integral_value():
        return None
    value = int(unscaled)
    data = value.to_bytes(value.bit_length() // 8 + 1, "big", signed=True)
    return base64.b64encode(data).decode()


def row_specs(fields: Sequence[Mapping[str, Any]]) -> list[ColumnSpec]:
    """The specs of a row image's ``fields`` list, in order.

    >>> [s.name for s in row_specs([{"type": "int32", "field": "id"}])]
    ['id']
    """
    if isinstance(fields, str | bytes) or not isinstance(fields, Sequence):
        raise DecodeError(f"row schema fields {fields!r} is not a list; expected a JSON array")
    return [column_spec(f) for f in fields]


def infer_spec(name: str, data_type: DataType) -> ColumnSpec:
    """A spec that reads schemaless JSON text into a Spark type the core already knows.

    Integers and floats via ``try_cast`` of the text, booleans from ``true``/``false``, strings
    as they are, binary from base64, decimals from plain text or a JSON number's digits, never
    through a double where Spark keeps them (rounded as Spark casts do; the value is parsed as a
    VARIANT), dates and timestamps from ISO-8601 text (``TimestampNTZType`` rejects text with an
    offset), arrays, maps and structs recursively from their JSON text.

    >>> infer_spec("n", LongType()).expected
    'bigint'
    """
    typed = _inferred(data_type, name)
    return ColumnSpec(
        name,
        data_type,
        typed.convert,
        data_type.simpleString(),
        typed.is_unavailable,
        parse_type=typed.parse_type,
    )


# --- schema walking -----------------------------------------------------------------------------


def _typed(schema: Mapping[str, Any], path: str) -> _Typed:
    if not isinstance(schema, Mapping):
        raise DecodeError(f"field {path!r}: schema {schema!r} is not a JSON object")
    physical = schema.get("type")
    if physical not in _PHYSICAL_TYPES:
        raise DecodeError(
            f"field {path!r}: Kafka Connect type {physical!r} is not supported; "
            f"expected one of {', '.join(_PHYSICAL_TYPES)}"
        )
    logical = schema.get("name")
    entry = _LOGICAL.get(logical) if isinstance(logical, str) else None
    if entry is not None and physical in entry[0]:
        return entry[1](schema, path)
    typed = _physical(schema, str(physical), path)
    if isinstance(logical, str) and physical != "struct":  # Json, Uuid, Bits, Year, ...: by name
        return _Typed(typed.data_type, typed.convert, logical, typed.is_unavailable)
    return typed


def _physical(schema: Mapping[str, Any], physical: str, path: str) -> _Typed:
    if physical in _PHYSICAL_SPARK:
        spark_type = _PHYSICAL_SPARK[physical]
        return _Typed(spark_type, _cast_to(spark_type), physical)
    if physical == "boolean":
        return _Typed(BooleanType(), V.boolean, physical)
    if physical == "string":
        return _Typed(StringType(), V.identity, physical, _unavailable_text)
    if physical == "bytes":
        return _Typed(BinaryType(), V.base64_binary, physical, _unavailable_bytes)
    if physical == "array":
        return _array(_typed(schema.get("items", {}), f"{path}[]"))
    if physical == "map":
        key = _typed(schema.get("keys", {}), f"{path}{{key}}")
        value = _typed(schema.get("values", {}), f"{path}{{value}}")
        # JsonConverter writes a map as an object only when its keys are strings
        return _map(key, value, pairs=schema.get("keys", {}).get("type") != "string")
    fields = schema.get("fields")
    if not isinstance(fields, list):
        raise DecodeError(f"field {path!r}: struct schema has no 'fields' list (got {fields!r})")
    members = []
    for f in fields:
        member = f.get("field") if isinstance(f, Mapping) else None
        if not isinstance(member, str):
            raise DecodeError(f"field {path!r}: struct member {f!r} has no 'field' name")
        members.append((member, _typed(f, f"{path}.{member}")))
    listed = ", ".join(f"{n}: {t.expected}" for n, t in members)
    return _struct(members, str(schema.get("name") or f"struct<{listed}>"))


def _array(item: _Typed) -> _Typed:
    data_type = ArrayType(item.data_type, containsNull=True)

    def convert(raw: Column) -> Column:
        parsed = F.from_json(raw, ArrayType(StringType()))
        out = F.transform(parsed, item.convert)
        fits = F.size(F.array_compact(parsed)) == F.size(F.array_compact(out))
        return F.when(fits, out).cast(data_type)

    return _Typed(data_type, convert, f"array<{item.expected}>", _unavailable_array)


def _map(key: _Typed, value: _Typed, *, pairs: bool) -> _Typed:
    """A map from a JSON object, or (``pairs``) from ``[[key, value], ...]``."""
    data_type = MapType(key.data_type, value.data_type, valueContainsNull=True)

    def broken(entry: Column) -> Column:
        k, v = (entry.getItem(0), entry.getItem(1)) if pairs else (entry["key"], entry["value"])
        wrong_size = (F.size(entry) != 2) if pairs else F.lit(False)
        return wrong_size | key.convert(k).isNull() | (v.isNotNull() & value.convert(v).isNull())

    def typed_entry(entry: Column) -> Column:
        k, v = (entry.getItem(0), entry.getItem(1)) if pairs else (entry["key"], entry["value"])
        return F.struct(key.convert(k).alias("key"), value.convert(v).alias("value"))

    def convert(raw: Column) -> Column:
        if pairs:
            entries = F.from_json(raw, ArrayType(ArrayType(StringType())))
        else:
            entries = F.map_entries(F.from_json(raw, "map<string,string>"))
        typed = F.map_from_entries(F.transform(entries, typed_entry))
        return F.when(~F.exists(entries, broken), typed).cast(data_type)

    unavailable = None if pairs else _unavailable_map
    return _Typed(data_type, convert, f"map<{key.expected}, {value.expected}>", unavailable)


def _struct(members: list[tuple[str, _Typed]], expected: str) -> _Typed:
    data_type = StructType([StructField(n, t.data_type, True) for n, t in members])
    parse_schema = StructType([StructField(n, StringType(), True) for n, _ in members])

    def convert(raw: Column) -> Column:
        parsed = F.from_json(raw, parse_schema)
        texts = [parsed.getField(n) for n, _ in members]
        values = [t.convert(text) for text, (_, t) in zip(texts, members, strict=True)]
        broken = [text.isNotNull() & v.isNull() for text, v in zip(texts, values, strict=True)]
        fits = reduce(lambda a, b: a & ~b, broken, raw.startswith("{"))
        named = [v.alias(n) for v, (n, _) in zip(values, members, strict=True)]
        return F.when(fits, F.struct(*named)).cast(data_type)

    return _Typed(data_type, convert, expected)


# --- logical types ------------------------------------------------------------------------------


def _decimal(schema: Mapping[str, Any], path: str) -> _Typed:
    params = schema.get("parameters") or {}
    scale = _int_param(params, "scale", path, default=None)
    precision = _int_param(params, "connect.decimal.precision", path, default=38)
    label = f"{DECIMAL}(scale={scale}" + (
        f", precision={precision})" if "connect.decimal.precision" in params else ")"
    )
    if scale > 38:
        raise DecodeError(f"field {path!r}: {label} has a scale above Spark's maximum 38")
    if scale < 0:  # e.g. Oracle NUMBER(5,-2): fold the scale into the integer
        data_type = DecimalType(min(38, precision - scale), 0)
    else:
        data_type = DecimalType(max(min(38, precision), scale), scale)

    def from_base64(text: Column) -> Column:
        data = V.base64_binary(text)
        if scale < 0:
            return V.with_scale(V.twos_complement_text(data), F.lit(scale)).try_cast(data_type)
        return V.decimal_from_twos_complement(data, scale, data_type)

    def convert(raw: Column) -> Column:
        return V.decimal_from_json(raw, from_base64, scale, data_type)

    return _Typed(data_type, convert, label, _unavailable_json_bytes, _VARIANT)


def _variable_scale_decimal(_schema: Mapping[str, Any], _path: str) -> _Typed:
    parts = StructType([StructField("scale", StringType()), StructField("value", StringType())])

    def convert(raw: Column) -> Column:
        parsed = F.from_json(raw, parts)
        scale = parsed.getField("scale").try_cast("int")
        scale = F.when(scale.between(-_MAX_SCALE, _MAX_SCALE), scale)
        value = V.base64_binary(parsed.getField("value"))
        return V.with_scale(V.twos_complement_text(value), scale)

    return _Typed(StringType(), convert, VARIABLE_SCALE_DECIMAL)


def _int_param(params: Mapping[str, Any], key: str, path: str, default: int | None) -> int:
    value = params.get(key, default)
    try:
        return int(value)
    except (TypeError, ValueError):
        raise DecodeError(
            f"field {path!r}: {DECIMAL} parameter {key}={value!r} is not an integer"
        ) from None


def _epoch_days(raw: Column) -> Column:
    days = raw.try_cast("long")
    return (
        F.when(days > _PG_MAX_DATE_DAYS, V.date_from_days(F.lit(V.MAX_DATE_DAYS)))
        .when(days < _PG_MIN_DATE_DAYS, V.date_from_days(F.lit(V.MIN_DATE_DAYS)))
        .otherwise(V.date_from_days(days))
    )


def _epoch_timestamp(units_per_micro: int, micros_per_unit: int) -> Converter:
    """int64 since the epoch -> TimestampNTZ; ns are floored to µs, infinities saturate."""

    def convert(raw: Column) -> Column:
        n = raw.try_cast("long")
        if units_per_micro > 1:
            micros = V.floor_div(n, units_per_micro)
        else:
            micros = F.try_multiply(n, F.lit(micros_per_unit))
        return (
            F.when(
                n.isin(PG_POSITIVE_INFINITY, _LONG_MAX),
                V.ntz_from_micros(F.lit(V.MAX_TIMESTAMP_US)),
            )
            .when(
                n.isin(PG_NEGATIVE_INFINITY, _LONG_MIN),
                V.ntz_from_micros(F.lit(V.MIN_TIMESTAMP_US)),
            )
            .otherwise(V.ntz_from_micros(micros))
        )

    return convert


def _zoned_timestamp(raw: Column) -> Column:
    text = F.trim(raw)
    lowered = V.lower_keyword(text, "infinity", "+infinity", "-infinity")
    return (
        F.when(
            lowered.isin("infinity", "+infinity") | text.rlike(r"^\+\d{9,}-"),
            V.ltz_from_micros(V.MAX_TIMESTAMP_US),
        )
        .when(
            (lowered == "-infinity") | text.rlike(r"^-\d{9,}-"),
            V.ltz_from_micros(V.MIN_TIMESTAMP_US),
        )
        .otherwise(V.iso_timestamp(text, TimestampType(), V.ZONE))
    )


def _time_of_day(units_per_micro: int, micros_per_unit: int) -> Converter:
    """A count of ms/µs/ns since midnight -> ``[-]HH:MM:SS.ffffff`` (ns truncated to µs)."""

    def convert(raw: Column) -> Column:
        n = raw.try_cast("long")
        if units_per_micro > 1:  # truncate toward zero: the sign is written apart
            return V.time_of_day_text(V.div(n, units_per_micro))
        return V.time_of_day_text(F.try_multiply(n, F.lit(micros_per_unit)))

    return convert


def _iso_time(raw: Column) -> Column:
    return F.when(raw.rlike(V.ISO_TIME), raw)


def _cast_to(data_type: DataType) -> Converter:
    return lambda raw: raw.try_cast(data_type)


# --- TOAST placeholders -------------------------------------------------------------------------


def _unavailable_text(raw: Column) -> Column:
    return raw == F.lit(UNAVAILABLE)


def _unavailable_bytes(raw: Column) -> Column:
    return raw == F.lit(UNAVAILABLE_BASE64)


def _unavailable_json_bytes(raw: Column) -> Column:
    """:func:`_unavailable_bytes` of a value parsed as a VARIANT."""
    return V.json_text(V.json_value(raw)) == F.lit(UNAVAILABLE_BASE64)


def _is_placeholder(text: Column) -> Column:
    return text.isin(UNAVAILABLE, UNAVAILABLE_BASE64)


def _all_placeholders(items: Column) -> Column:
    return F.coalesce((F.size(items) > 0) & F.forall(items, _is_placeholder), F.lit(False))


def _unavailable_array(raw: Column) -> Column:
    return _all_placeholders(F.from_json(raw, ArrayType(StringType())))


def _unavailable_map(raw: Column) -> Column:
    return _all_placeholders(F.map_values(F.from_json(raw, "map<string,string>")))


# --- the logical types -------------------------------------------------------------------------

_Builder = Callable[[Mapping[str, Any], str], _Typed]


def _fixed(
    data_type: DataType, convert: Converter, unavailable: Callable[[Column], Column] | None = None
) -> _Builder:
    """A builder for a logical type without parameters; ``expected`` is its name."""
    return lambda schema, _path: _Typed(data_type, convert, str(schema["name"]), unavailable)


_INTS = ("int32", "int64")
_TEXT = ("string",)
_NTZ = TimestampNTZType()
_LOGICAL: dict[str, tuple[tuple[str, ...], _Builder]] = {
    DECIMAL: (("bytes",), _decimal),
    VARIABLE_SCALE_DECIMAL: (("struct",), _variable_scale_decimal),
    "org.apache.kafka.connect.data.Date": (_INTS, _fixed(DateType(), _epoch_days)),
    "io.debezium.time.Date": (_INTS, _fixed(DateType(), _epoch_days)),
    "org.apache.kafka.connect.data.Timestamp": (_INTS, _fixed(_NTZ, _epoch_timestamp(1, 1000))),
    "io.debezium.time.Timestamp": (_INTS, _fixed(_NTZ, _epoch_timestamp(1, 1000))),
    "io.debezium.time.MicroTimestamp": (_INTS, _fixed(_NTZ, _epoch_timestamp(1, 1))),
    "io.debezium.time.NanoTimestamp": (_INTS, _fixed(_NTZ, _epoch_timestamp(1000, 1))),
    "io.debezium.time.ZonedTimestamp": (_TEXT, _fixed(TimestampType(), _zoned_timestamp)),
    "io.debezium.time.IsoTimestamp": (_TEXT, _fixed(TimestampType(), _zoned_timestamp)),
    "io.debezium.time.IsoDate": (_TEXT, _fixed(DateType(), V.iso_date)),
    "org.apache.kafka.connect.data.Time": (_INTS, _fixed(StringType(), _time_of_day(1, 1000))),
    "io.debezium.time.Time": (_INTS, _fixed(StringType(), _time_of_day(1, 1000))),
    "io.debezium.time.MicroTime": (_INTS, _fixed(StringType(), _time_of_day(1, 1))),
    "io.debezium.time.NanoTime": (_INTS, _fixed(StringType(), _time_of_day(1000, 1))),
    "io.debezium.time.ZonedTime": (_TEXT, _fixed(StringType(), _iso_time, _unavailable_text)),
    "io.debezium.time.IsoTime": (_TEXT, _fixed(StringType(), _iso_time, _unavailable_text)),
}
"""Logical types whose Spark type or encoding differs from their physical type, with the physical
types they may carry. Every other name (``io.debezium.data.Json``, ``Uuid``, ``Enum``, ``Bits``,
``time.Year``, ``MicroDuration``, geometry structs, ...) decodes as its physical type."""


# --- schemaless JSON ----------------------------------------------------------------------------


_NUMERIC = (ByteType, ShortType, IntegerType, LongType, FloatType, DoubleType, DecimalType)


def _inferred(data_type: DataType, path: str) -> _Typed:
    label = data_type.simpleString()
    if isinstance(data_type, DecimalType):
        return _Typed(data_type, _json_decimal(data_type), label, parse_type=_VARIANT)
    if isinstance(data_type, _NUMERIC):
        return _Typed(data_type, _cast_to(data_type), label)
    if isinstance(data_type, BooleanType):
        return _Typed(data_type, V.boolean, label)
    if isinstance(data_type, StringType):
        return _Typed(StringType(), V.identity, label, _unavailable_text)
    if isinstance(data_type, BinaryType):
        return _Typed(data_type, V.base64_binary, label, _unavailable_bytes)
    if isinstance(data_type, DateType):
        return _Typed(data_type, V.iso_date, label)
    if isinstance(data_type, TimestampType | TimestampNTZType):
        zone = V.ZONE + "?" if isinstance(data_type, TimestampType) else ""  # NTZ: no offset
        return _Typed(data_type, lambda raw: V.iso_timestamp(raw, data_type, zone), label)
    if isinstance(data_type, ArrayType):
        return _array(_inferred(data_type.elementType, f"{path}[]"))
    if isinstance(data_type, MapType):
        key = _inferred(data_type.keyType, f"{path}{{key}}")
        value = _inferred(data_type.valueType, f"{path}{{value}}")
        return _map(key, value, pairs=False)
    if isinstance(data_type, StructType):
        members = [(f.name, _inferred(f.dataType, f"{path}.{f.name}")) for f in data_type.fields]
        return _struct(members, label)
    raise DecodeError(
        f"column {path!r}: cannot read JSON text into Spark type {label}; expected a numeric, "
        "boolean, string, binary, date, timestamp, array, map or struct type"
    )


def _json_decimal(data_type: DecimalType) -> Converter:
    """Schemaless: decimal text as Spark casts it, a JSON number from its digits (rounded as a
    cast rounds, but never through a double where Spark kept the digits)."""

    def convert(raw: Column) -> Column:
        value = V.json_value(raw)
        kind = V.json_kind(value)
        is_double = kind == F.lit("DOUBLE")

        def number(text: Column) -> Column:
            return V.decimal_from_number(text, is_double, data_type.scale, data_type, rounded=True)

        text = V.json_text(value)
        return F.when(kind == F.lit("STRING"), text.try_cast(data_type)).otherwise(
            V.bind(text, number)
        )

    return convert


__all__ = [
    "DECIMAL",
    "UNAVAILABLE",
    "UNAVAILABLE_BASE64",
    "VARIABLE_SCALE_DECIMAL",
    "column_spec",
    "infer_spec",
    "row_specs",
]
