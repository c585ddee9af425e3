"""Compare a Delta table written by cdclake with its source table, row for row, column for column.

``lake_rows(spark, path, kinds, encoded=...)`` reads a Delta table and normalises each value to the
kinds of ``dump.py`` so that ``lake == dump_table(conn, table)`` is the whole check.

Two ways a value can arrive in the lake:

- typed (the connector ran with ``schemas.enable=true``): cdclake typed every column from the
  Kafka Connect field schema, so the lake holds decimals, dates, timestamps, binary, arrays;
- *encoded* (``schemas.enable=false``): nothing in the message says what a number or string means,
  so cdclake infers JSON types and the lake holds Debezium's JSON encoding as it came (base64
  unscaled decimals, epoch days, µs, base64 bytes, JSON text of arrays and variable-scale
  decimals). Normalising those needs the source column's kind, which only the test knows.

Producer-side losses, applied to the *database* side before comparing (documented in
/work/notes/CONFORMANCE.md):

- PostgreSQL ``interval``: Debezium's ``MicroDuration`` folds months into 30.4375 days and years
  into 365.25 days; the database's ISO-8601 text is folded the same way into µs.
- MariaDB ``float`` in snapshot rows (``_cdc_op = 'read'``): the snapshot reads FLOAT through the
  text protocol, which prints 6 significant digits; the database value is rounded likewise.
- float32 without schemas: the JSON number is the float's shortest text; both sides are rounded to
  float32 before comparing.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import re
import struct
from decimal import Decimal
from fractions import Fraction
from typing import Any

from conformance.dump import canonical_json

__all__ = ["KNOWN_GAPS", "diff_rows", "interval_micros", "known_gap", "lake_rows"]

_EPOCH = dt.datetime(1970, 1, 1)
_INTERVAL = re.compile(
    r"^P(?:(-?\d+)Y)?(?:(-?\d+)M)?(?:(-?\d+)D)?"
    r"(?:T(?:(-?\d+)H)?(?:(-?\d+)M)?(?:(-?\d+(?:\.\d+)?)S)?)?$"
)
_DAYS_PER_MONTH = Fraction(304375, 10000)


def interval_micros(iso: str) -> int:
    """PostgreSQL's ISO-8601 interval -> µs the way Debezium's ``MicroDuration`` folds it.

    >>> interval_micros("P1Y2M3DT4H5M6.5S")
    37091106500000
    """
    m = _INTERVAL.match(iso)
    if not m:
        raise ValueError(f"interval {iso!r} is not ISO-8601 (PnYnMnDTnHnMnS)")
    y, mo, d, h, mi = (int(g) if g else 0 for g in m.groups()[:5])
    s = Fraction(m.group(6)) if m.group(6) else Fraction(0)
    days = (y * 12 + mo) * _DAYS_PER_MONTH + d
    micros = ((days * 24 + h) * 60 + mi) * 60 * 1_000_000 + s * 1_000_000
    return round(micros)


def _float32(value: float) -> float:
    return float(struct.unpack("<f", struct.pack("<f", value))[0])


def _snapshot_float(value: float) -> float:
    """MariaDB's text protocol prints FLOAT with 6 significant digits (``%g``)."""
    return _float32(float(f"{value:.6g}"))


def _unscaled(b64: str) -> int:
    return int.from_bytes(base64.b64decode(b64), "big", signed=True)


def _plain(unscaled: int, scale: int) -> str:
    return format(Decimal(unscaled).scaleb(-scale), "f")


def _lake_value(kind: str, value: Any, encoded: bool, db_value: Any) -> Any:
    """One lake value -> the kind's normalised Python value (``db_value`` gives decimal scales)."""
    if value is None:
        return None
    if kind in ("int",):
        return int(value) if not (encoded and isinstance(value, str)) else _unscaled(value)
    if kind == "bit":
        raw = base64.b64decode(value) if isinstance(value, str) else bytes(value)
        return int.from_bytes(raw, "little")
    if kind == "decimal":
        if isinstance(value, Decimal):
            return format(value, "f")
        text = str(value)
        if text.startswith("{"):  # VariableScaleDecimal without schemas: {"scale", "value"}
            parts = json.loads(text)
            return _plain(_unscaled(parts["value"]), int(parts["scale"]))
        if encoded:  # base64 unscaled value; the scale is the column's (read off the database)
            scale = len(db_value.partition(".")[2]) if isinstance(db_value, str) else 0
            return _plain(_unscaled(text), scale)
        return text
    if kind == "float":
        return float(value)
    if kind == "bool":
        return bool(value)
    if kind in ("text", "char", "uuid"):
        return str(value).lower() if kind == "uuid" else str(value)
    if kind == "json":
        return canonical_json(str(value))
    if kind == "date":
        if isinstance(value, int):
            return (dt.date(1970, 1, 1) + dt.timedelta(days=value)).isoformat()
        return value.isoformat()
    if kind == "time":
        if isinstance(value, int):
            neg, us = value < 0, abs(value)
            s, f = divmod(us, 1_000_000)
            return f"{'-' if neg else ''}{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}.{f:06d}"
        return str(value)
    if kind == "timestamp":
        if isinstance(value, int):
            value = _EPOCH + dt.timedelta(microseconds=value)
        return value.strftime("%Y-%m-%dT%H:%M:%S.%f")
    if kind == "timestamptz":
        if isinstance(value, int):  # µs since the epoch, from unix_micros in Spark
            value = _EPOCH + dt.timedelta(microseconds=value)
            return value.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        text = str(value)  # encoded: Debezium's ZonedTimestamp text, UTC
        moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
        return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    if kind == "interval":
        return int(value)
    if kind == "bytes":
        return base64.b64decode(value) if isinstance(value, str) else bytes(value)
    if kind in ("int_array", "text_array"):
        return json.loads(value) if isinstance(value, str) else list(value)
    raise ValueError(f"unknown column kind {kind!r}")


def _db_value(kind: str, value: Any, snapshot_float32: bool) -> Any:
    """Fold the producer-side losses (module doc) into the database's value."""
    if value is None:
        return None
    if kind == "interval":
        return interval_micros(value)
    if snapshot_float32:
        return _snapshot_float(value)
    return value


KNOWN_GAPS: dict[str, str] = {
    "default-backfill": (
        "ADD COLUMN ... DEFAULT back-fills existing rows in the database and Debezium sends no "
        "event for them; without schemas no message carries the default, so the lake keeps NULL"
    ),
}
"""Differences the input itself cannot resolve; counted apart (only without schemas)."""


def known_gap(column: str, got: Any, expect: Any, defaults: dict[str, Any], encoded: bool) -> str:
    """The :data:`KNOWN_GAPS` key that explains ``got != expect``, or ``""``."""
    if encoded and got is None and column in defaults and expect == defaults[column]:
        return "default-backfill"
    return ""


def lake_rows(spark: Any, path: str) -> list[dict[str, Any]]:
    """The rows of the Delta table at ``path``: source columns and ``_cdc_op``, as collected.

    Zoned timestamps come as µs since the epoch (``unix_micros``), so that the session and
    Python time zones play no part.
    """
    from pyspark.sql import functions as F
    from pyspark.sql.types import TimestampType

    df = spark.read.format("delta").load(path)
    cols = []
    for f in df.schema.fields:
        if f.name.startswith("_cdc_") and f.name != "_cdc_op":
            continue
        if isinstance(f.dataType, TimestampType):
            cols.append(F.unix_micros(F.col(f"`{f.name}`")).alias(f.name))
        else:
            cols.append(F.col(f"`{f.name}`"))
    return [r.asDict() for r in df.select(*cols).collect()]


def diff_rows(
    lake: list[dict[str, Any]],
    db: list[dict[str, Any]],
    kinds: dict[str, str],
    keys: list[str],
    *,
    encoded: bool,
    dialect: str,
    float32: frozenset[str] = frozenset(),
    defaults: dict[str, Any] | None = None,
    gaps: dict[str, int] | None = None,
    limit: int = 10,
) -> list[str]:
    """Differences between lake rows (raw, from :func:`lake_rows`) and normalised database rows.

    Empty when equal. Each difference names the key, the column and both values. Differences a
    :data:`KNOWN_GAPS` entry explains are counted in ``gaps`` instead (``defaults``: the columns
    added with a DEFAULT, and that default).
    """
    out: list[str] = []
    defaults = defaults or {}
    by_key = {tuple(r[k] for k in keys): r for r in db}
    seen: set[tuple[Any, ...]] = set()
    for raw in lake:
        key = tuple(int(raw[k]) if kinds[k] == "int" else raw[k] for k in keys)
        snapshot = raw.get("_cdc_op") == "read"
        if key in seen:
            out.append(f"key {key}: more than one row in the lake")
        seen.add(key)
        want = by_key.get(key)
        if want is None:
            out.append(f"key {key}: in the lake, not in the database")
            continue
        for col, kind in kinds.items():
            if col not in raw:
                if want[col] is not None:
                    out.append(f"key {key}: column {col} missing in the lake (db {want[col]!r})")
                continue
            try:
                got = _lake_value(kind, raw[col], encoded, want[col])
            except Exception as e:
                got = f"<cannot normalise {raw[col]!r}: {e}>"
            snapshot_float32 = dialect == "mariadb" and snapshot and col in float32
            expect = _db_value(kind, want[col], snapshot_float32)
            if col in float32 and encoded and got is not None:
                got = _float32(got)
                expect = _float32(expect) if expect is not None else None
            if got != expect and (gap := known_gap(col, got, expect, defaults, encoded)):
                if gaps is not None:
                    gaps[gap] = gaps.get(gap, 0) + 1
            elif got != expect:
                out.append(f"key {key}: column {col}: lake {got!r} != database {expect!r}")
    for key in by_key.keys() - seen:
        out.append(f"key {key}: in the database, not in the lake")
    return out[:limit] + ([f"... and {len(out) - limit} more"] if len(out) > limit else [])
