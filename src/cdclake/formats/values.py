"""Column expressions that turn the raw text of one JSON value into a typed value.

Building blocks for :data:`cdclake.formats.base.Converter` functions: each takes a Column of raw
text (what ``from_json(..., StringType)`` renders) and returns a typed Column that is NULL when the
text does not fit; those named ``json_*`` and :func:`decimal_from_json` read a value parsed as a
VARIANT instead, which keeps the JSON token's type and a plain number's digits. Spark column
expressions only; intermediate values are referenced as few times as possible so that the
generated code stays small.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import DataType, DecimalType, StringType, TimestampNTZType, VariantType

MAX_TIMESTAMP_US = 253402300799999999  # 9999-12-31 23:59:59.999999
MIN_TIMESTAMP_US = -62135596800000000  # 0001-01-01 00:00:00
MAX_DATE_DAYS, MIN_DATE_DAYS = 2932896, -719162  # 9999-12-31, 0001-01-01

_FRACTION = r"(\.\d{1,9})?"
ZONE = r"(Z|[+-]\d{2}(:?\d{2}(:?\d{2})?)?)"
"""A UTC offset as ISO-8601 writes it (``Z``, ``+02``, ``+02:00``, ``+0200``)."""
ISO_TIMESTAMP = rf"^\d{{4}}-\d{{2}}-\d{{2}}[T ]\d{{2}}:\d{{2}}(:\d{{2}}{_FRACTION})?"
"""The date and time of an ISO-8601 timestamp, anchored at the start only: add a zone and ``$``."""
ISO_TIME = rf"^([01]\d|2[0-4]):[0-5]\d(:[0-5]\d{_FRACTION})?{ZONE}?$"
ISO_DATE = rf"^(\d{{4}}-\d{{2}}-\d{{2}}){ZONE}?$"


def identity(raw: Column) -> Column:
    """Strings stay as they are."""
    return raw


def lower_keyword(text: Column, *keywords: str) -> Column:
    """``text`` lowercased to be compared with ``keywords`` (lowercase ASCII): a text that is
    already one of them, or has a length none of them has, is left as it is (it compares the
    same).

    Spark's ``lower`` maps case with ICU, whose tables load the first time a row of the JVM
    reaches it: about 1.7 s, once in the driver and once in every executor. Well-formed values
    (``true``, ``sqlserver``, a timestamp's digits) then never reach it."""
    lengths = sorted({len(k) for k in keywords})
    as_is = text.isNull() | text.isin(*keywords) | ~F.length(text).isin(*lengths)
    return F.when(as_is, text).otherwise(F.lower(text))


def boolean(raw: Column) -> Column:
    """``true``/``false`` (any case) -> boolean; anything else NULL."""
    text = lower_keyword(F.trim(raw), "true", "false")
    return F.when(text == "true", F.lit(True)).when(text == "false", F.lit(False))


def base64_binary(raw: Column) -> Column:
    """Base64 text -> binary; NULL when the text is not base64."""
    return F.try_to_binary(raw, F.lit("base64"))


BINARY_ENCODINGS = ("latin1", "base64", "hex")
"""How a producer may write binary values as JSON text (see :func:`binary_text`)."""


def binary_text(raw: Column, encoding: str) -> Column:
    """Text of a binary value -> binary; NULL when it is not in ``encoding``.

    ``latin1``: ISO-8859-1, one character U+0000..U+00FF per byte (canal's way); ``base64``;
    ``hex``.
    """
    if encoding == "latin1":
        return F.when(~raw.rlike("[^\\x00-\\xff]"), F.encode(raw, "ISO-8859-1"))
    if encoding in ("base64", "hex"):
        return F.try_to_binary(raw, F.lit(encoding))
    raise ValueError(f"binary encoding {encoding!r}: expected one of {', '.join(BINARY_ENCODINGS)}")


def iso_date(raw: Column) -> Column:
    """``YYYY-MM-DD`` with an optional zone -> date; NULL for impossible dates."""
    return F.regexp_extract(raw, ISO_DATE, 1).try_cast("date")


def iso_timestamp(raw: Column, data_type: DataType, zone: str) -> Column:
    """ISO-8601 text -> a timestamp type; ``zone`` is ``ZONE``, ``ZONE + "?"`` or ``""``."""
    return F.when(raw.rlike(ISO_TIMESTAMP + zone + "$"), raw.try_cast(data_type))


def div(n: Column, k: int) -> Column:
    """Integral division (truncates toward zero; exact for longs)."""
    return F.call_function("div", n, F.lit(k))


def floor_div(n: Column, k: int) -> Column:
    """Floor division for positive ``k``: subtract the non-negative remainder first (exact)."""
    return div(F.try_subtract(n, F.pmod(n, F.lit(k))), k)


def ntz_from_micros(micros: Column) -> Column:
    """µs since 1970-01-01 00:00 (wall clock) -> TIMESTAMP_NTZ; NULL outside Spark's range."""
    # timestamp_add on a TIMESTAMP_NTZ keeps the wall clock whatever the session time zone is
    epoch = F.lit("1970-01-01 00:00:00").cast(TimestampNTZType())
    in_range = micros.between(MIN_TIMESTAMP_US, MAX_TIMESTAMP_US)
    return F.when(in_range, F.timestamp_add("MICROSECOND", micros, epoch))


def ltz_from_micros(micros: int) -> Column:
    """A constant instant, µs since the epoch."""
    return F.timestamp_micros(F.lit(micros))


def date_from_days(days: Column) -> Column:
    """Days since 1970-01-01 -> date; NULL outside Spark's range."""
    return F.when(days.between(MIN_DATE_DAYS, MAX_DATE_DAYS), F.date_from_unix_date(days))


def time_of_day_text(micros: Column) -> Column:
    """A signed count of µs -> ``[-]HH:MM:SS.ffffff``; hours may exceed 23 (MySQL ``TIME``)."""
    # abs(Long.MIN_VALUE) overflows; from here on all is non-negative, so `div` floors
    magnitude = F.abs(F.when(micros != F.lit(-(2**63)), micros))
    seconds = div(magnitude, 1_000_000)
    text = F.format_string(
        "%s%02d:%02d:%02d.%06d",
        F.when(micros < 0, F.lit("-")).otherwise(F.lit("")),
        div(seconds, 3600),
        F.pmod(div(seconds, 60), F.lit(60)),
        F.pmod(seconds, F.lit(60)),
        F.pmod(magnitude, F.lit(1_000_000)),
    )
    return F.when(magnitude.isNotNull(), text)


def twos_complement_text(data: Column) -> Column:
    """Big-endian two's-complement bytes (1..16) -> the integer's decimal text; NULL otherwise.

    Up to 8 bytes: ``conv`` of the sign-extended hex digits as a signed 64-bit number. Longer: the
    digits are split into two unsigned 64-bit halves and recombined in decimal(38,0), so at most
    38 digits; a negative number is written as ``-(~x + 1)``, the bits inverted digit by digit, so
    that no intermediate exceeds the magnitude of the result, and the sign goes on the text
    because Spark's decimal negation rounds to 34 digits.
    Example: ``00 E2 06`` -> ``"57862"``, ``FF 1D FA`` -> ``"-57862"``.
    """
    digits = F.hex(data)
    negative = F.substring(digits, 1, 1) >= F.lit("8")
    sign_digit = F.when(negative, F.lit("F")).otherwise(F.lit("0"))
    short = F.conv(F.call_function("lpad", digits, F.lit(16), sign_digit), 16, -10)
    inverted = F.when(negative, F.lit("FEDCBA9876543210")).otherwise(F.lit("0123456789ABCDEF"))
    magnitude = F.call_function("translate", digits, F.lit("0123456789ABCDEF"), inverted)
    padded = F.lpad(magnitude, 32, "0")
    high = F.conv(F.substring(padded, 1, 16), 16, 10).cast(DecimalType(20, 0))
    low = F.conv(F.substring(padded, 17, 16), 16, 10).cast(DecimalType(20, 0))
    value = F.try_add(F.try_multiply(high, F.lit(Decimal(2**64))), low)
    plus_one = F.when(negative, F.lit(Decimal(1))).otherwise(F.lit(Decimal(0)))
    sign = F.when(negative, F.lit("-")).otherwise(F.lit(""))
    long = F.concat(sign, F.try_add(value, plus_one).cast(StringType()))
    size = F.length(digits)
    return F.when(size.between(2, 16), short).when(size.between(18, 32), long)


def decimal_from_twos_complement(data: Column, scale: int, data_type: DecimalType) -> Column:
    """Unscaled two's-complement bytes and a fixed ``scale`` (>= 0) -> ``data_type`` or NULL.

    Up to 8 bytes and scale 18 the value is computed in decimal(38, scale) (exact); otherwise
    through the decimal text (slower).
    """
    text = twos_complement_text(data)
    as_text = with_scale(text, F.lit(scale)).try_cast(data_type)
    if scale > 18:
        return as_text
    # decimal(19,0) * decimal(scale,scale) has precision <= 38: exact, no overflow
    as_number = text.try_cast(DecimalType(19, 0)) * F.lit(Decimal(1).scaleb(-scale))
    return F.when(F.length(data) <= 8, as_number.try_cast(data_type)).otherwise(as_text)


def with_scale(integer_text: Column, scale: Column) -> Column:
    """``("-123400", 4)`` -> ``"-12.3400"``, ``("5", -2)`` -> ``"500"``: plain decimal text.

    Zeros go after the sign, the point before the last ``scale`` digits, then surplus leading
    zeros go; ``integer_text`` is referenced once. A NULL scale gives NULL.
    """
    positive = F.greatest(scale, F.lit(0))
    padded = F.regexp_replace(
        integer_text, F.lit("^(-?)"), F.concat(F.lit("$1"), F.repeat(F.lit("0"), positive))
    )
    last_digits = F.concat(F.lit("(\\d{"), positive.cast(StringType()), F.lit("})$"))
    point = F.when(scale > 0, F.lit(".$1")).otherwise(F.lit("$1"))
    pointed = F.regexp_replace(padded, last_digits, point)
    shifted = F.concat(pointed, F.repeat(F.lit("0"), F.greatest(-scale, F.lit(0))))
    # greatest() skips NULLs, so a NULL scale must be caught here
    return F.when(scale.isNotNull(), F.regexp_replace(shifted, "^(-?)0+(?=\\d)", "$1"))


DOUBLE_DIGITS = 15
"""Significant decimal digits that survive any trip through a double (C's ``DBL_DIG``)."""


def json_value(raw: Column) -> Column:
    """A value parsed as a VARIANT, as it is; a STRING (a default, a test's text) becomes the
    variant of a JSON string."""
    return raw.cast(VariantType())


def json_kind(value: Column) -> Column:
    """The type Spark gave a JSON value (a VARIANT): ``STRING``, ``BIGINT``, ``DECIMAL(p,s)``
    (a plain number of up to 38 digits, exact), ``DOUBLE`` (any other number), ``BOOLEAN``,
    ``VOID`` (null), ``OBJECT<...>``, ``ARRAY<...>``."""
    return F.schema_of_variant(value)


def json_text(value: Column) -> Column:
    """A JSON value (a VARIANT) as text: a string's contents, a number's digits (trailing
    fraction zeros dropped), the JSON text of anything else; NULL for JSON null."""
    return F.try_variant_get(value, "$", "string")


def decimal_from_number(
    text: Column, is_double: Column, scale: int, data_type: DecimalType, *, rounded: bool = False
) -> Column:
    """The text of a JSON number (:func:`json_text`) -> ``data_type``, or NULL; never through a
    double where the number's digits are known.

    ``scale``: the scale the number is written at (negative: it counts tens, hundreds, ... of the
    integer ``data_type`` holds). A plain number of up to 38 digits (``is_double`` false) is its
    exact digits, which must fit ``data_type`` without rounding (``rounded``: rounded as Spark
    casts do). Any other number (``is_double``: exponent notation, as ``BigDecimal.toString``
    writes ``1E-7`` or ``5E+2``, or more digits) is known only as a double, which determines it
    at that scale where it has at most :data:`DOUBLE_DIGITS` significant digits
    (``|x| < 10^(15 - scale)``): it is the double's number at the scale there (unless
    ``rounded``, NULL when that double holds a digit beyond the scale, as for plain text),
    NULL elsewhere.
    Example: ``("1234.5", false, 2)`` -> 1234.50; ``("1.0E-7", true, 7)`` -> 0.0000001;
    ``("1.0E-7", true, 6)`` -> NULL.
    """
    as_type = text.try_cast(data_type)  # rounds HALF_UP to the scale
    if rounded:
        exact = as_type
    else:
        fraction = F.when(F.contains(text, F.lit(".")), F.length(F.substring_index(text, ".", -1)))
        exact = F.when(F.coalesce(fraction, F.lit(0)) <= max(scale, 0), as_type)
    nearest = as_type if scale >= 0 else F.round(as_type, scale).try_cast(data_type)
    bound = 10.0 ** min(DOUBLE_DIGITS - scale, 300)
    as_double = text.try_cast("double")
    determined = F.abs(as_double) < F.lit(bound)
    if not rounded:  # the scale's nearest number is that double only when no digit lies beyond
        determined = determined & (nearest.cast("double") == as_double)
    return F.when(is_double, F.when(determined, nearest)).otherwise(exact)


def decimal_from_json(
    raw: Column, from_base64: Callable[[Column], Column], scale: int, data_type: DecimalType
) -> Column:
    """A Kafka Connect ``Decimal`` as JsonConverter writes it -> ``data_type``, or NULL.

    ``raw``: the value parsed as a VARIANT (:func:`json_value`). With ``decimal.format=BASE64``
    (the default) it is a JSON string, the unscaled two's-complement bytes in base64, read by
    ``from_base64``; with ``NUMERIC`` a JSON number (:func:`decimal_from_number`). Like
    JsonConverter, this goes by the JSON token's type: the text alone cannot tell the number
    ``1234`` from the string ``"1234"``, valid base64.
    """
    value = json_value(raw)
    kind = json_kind(value)
    is_double = kind == F.lit("DOUBLE")
    return F.when(kind == F.lit("STRING"), bind(json_text(value), from_base64)).otherwise(
        bind(json_text(value), lambda text: decimal_from_number(text, is_double, scale, data_type))
    )


def bind(value: Column, f: Callable[[Column], Column]) -> Column:
    """``f(value)``, with ``value`` computed once however often ``f`` refers to it.

    Spark shares an expression among its references only where it is always evaluated, not
    inside a conditional branch (a row image's converter is one: it runs only where the value
    is not a placeholder); a lambda's argument is computed once. Typing row images with a base64
    Decimal read from a VARIANT took a third more CPU without it (each reference extracted the
    text from the variant again).
    """
    return F.get(F.transform(F.array(value), f), 0)


def lookup(mapping: Mapping[Any, Any]) -> Column:
    """A literal map Column: ``lookup(m)[code]`` translates a code, null when unknown."""
    return F.create_map(*[F.lit(x) for kv in mapping.items() for x in kv])
