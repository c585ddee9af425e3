"""Read a source table back as normalised Python values, for "the lake equals the database" checks.

``dump_table(conn, table)`` returns the table's current rows, ordered by primary key, each a dict
column name -> value. Every column type is normalised one way, so a decoded Delta table can be
normalised the same way and compared with ``==``:

================  ===========================================================================
kind              value
================  ===========================================================================
int               ``int`` (smallint, integer, bigint, tinyint, tinyint(1) as 0/1, unsigned, year)
decimal           ``str``: the database's own plain text, scale kept (``"-12.500"``, numeric
                  without scale as stored: ``"0.0000000001"``, never an exponent)
float             ``float``: the stored binary value exactly (real / MariaDB float widened to
                  double in SQL, so a float32 ``3.4028235e38`` reads ``3.4028234663852886e+38``)
bool              ``bool`` (PostgreSQL boolean only)
text              ``str`` (text, varchar, enum labels, MariaDB set as ``"a,c"``)
char              ``str`` padded with spaces to the declared length, as PostgreSQL stores it
date              ``"YYYY-MM-DD"``
time              ``"HH:MM:SS.ffffff"`` (always 6 fractional digits)
timestamp         ``"YYYY-MM-DDTHH:MM:SS.ffffff"`` (wall clock, no zone; MariaDB datetime)
timestamptz       ``"YYYY-MM-DDTHH:MM:SS.ffffffZ"`` in UTC (MariaDB timestamp, session in UTC)
interval          ``str``: PostgreSQL's ISO-8601 rendering (``"P1Y2M3DT4H5M6.5S"``, ``"P-3D"``)
bytes             ``bytes`` (bytea, blob)
uuid              ``str``, lower case
json              ``str``: canonical JSON (keys sorted, no spaces, non-ASCII kept, integral
                  numbers as integers, so json and jsonb spellings of one document compare equal)
int_array         ``list[int | None]``; text_array: ``list[str | None]``
bit               ``int``: the bit string's unsigned value (``b'1000000001'`` -> 513)
================  ===========================================================================

NULL is ``None`` in every kind.
"""

from __future__ import annotations

import json
from typing import Any

from conformance._sql import Connection, quote_text, run_sql
from conformance.types import ADDED_COLUMN, COLUMNS

__all__ = ["canonical_json", "dump_table", "normalise"]

_PG_KINDS = {
    "smallint": "int",
    "integer": "int",
    "bigint": "int",
    "numeric": "decimal",
    "real": "float",
    "double precision": "float",
    "boolean": "bool",
    "text": "text",
    "character varying": "text",
    "character": "char",
    "date": "date",
    "time without time zone": "time",
    "timestamp without time zone": "timestamp",
    "timestamp with time zone": "timestamptz",
    "interval": "interval",
    "bytea": "bytes",
    "uuid": "uuid",
    "json": "json",
    "jsonb": "json",
    "USER-DEFINED": "text",
}
_MARIADB_KINDS = {
    "tinyint": "int",
    "smallint": "int",
    "int": "int",
    "bigint": "int",
    "year": "int",
    "decimal": "decimal",
    "float": "float",
    "double": "float",
    "varchar": "text",
    "char": "text",
    "text": "text",
    "longtext": "text",
    "enum": "text",
    "set": "text",
    "date": "date",
    "datetime": "timestamp",
    "timestamp": "timestamptz",
    "time": "time",
    "blob": "bytes",
    "bit": "bit",
}


def _pg_expr(col: str, kind: str) -> str:
    c = f'"{col}"'
    return {
        "decimal": f"{c}::text",
        "float": f"{c}::double precision::text",
        "char": f"to_json({c})",
        "date": f"{c}::text",
        "time": f"to_char('2000-01-01'::date + {c}, 'HH24:MI:SS.US')",
        "timestamp": f"""to_char({c}, 'YYYY-MM-DD"T"HH24:MI:SS.US')""",
        "timestamptz": f"""to_char({c} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')""",
        "interval": f"{c}::text",
        "bytes": f"encode({c}, 'hex')",
        "uuid": f"{c}::text",
        "json": f"{c}::text",
        "text": f"{c}::text",
    }.get(kind, c)


def _mariadb_expr(col: str, kind: str) -> str:
    c = f"`{col}`"
    return {
        "int": f"CAST({c} AS DECIMAL(20,0))",
        "decimal": f"CAST({c} AS CHAR)",
        "float": f"CAST(CAST({c} AS DOUBLE) AS CHAR)",
        "date": f"DATE_FORMAT({c}, '%Y-%m-%d')",
        "timestamp": f"DATE_FORMAT({c}, '%Y-%m-%dT%H:%i:%s.%f')",
        "timestamptz": f"DATE_FORMAT({c}, '%Y-%m-%dT%H:%i:%s.%fZ')",
        "time": f"TIME_FORMAT({c}, '%H:%i:%s.%f')",
        "bytes": f"HEX({c})",
        "json": f"CAST({c} AS CHAR)",
        "bit": f"CAST({c} AS UNSIGNED)",
    }.get(kind, c)


def canonical_json(text: str) -> str:
    """One spelling per JSON document: keys sorted, compact, integral numbers as integers."""

    def fix(value: Any) -> Any:
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, list):
            return [fix(v) for v in value]
        if isinstance(value, dict):
            return {k: fix(v) for k, v in value.items()}
        return value

    return json.dumps(
        fix(json.loads(text)), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )


def normalise(kind: str, value: Any) -> Any:
    """The documented Python value of one column value of ``kind`` as the dump query returns it."""
    if value is None:
        return None
    if kind in ("int", "bit"):
        return int(value)
    if kind == "float":
        return float(value)
    if kind == "bool":
        return bool(value)
    if kind == "bytes":
        return bytes.fromhex(value)
    if kind == "json":
        return canonical_json(value)
    if kind == "uuid":
        return str(value).lower()
    if kind in ("int_array", "text_array"):
        return list(value)
    return str(value)


def _columns(conn: Connection, table: str) -> list[tuple[str, str, bool]]:
    """(name, kind, is_primary_key) of ``table`` in ordinal order, from information_schema."""
    known = {c.name: c.kind for c in (*COLUMNS[conn.dialect], ADDED_COLUMN[conn.dialect])}
    schema = "'public'" if conn.dialect == "pg" else "DATABASE()"
    udt = "udt_name" if conn.dialect == "pg" else "COLUMN_TYPE"
    sql = (
        f"SELECT c.column_name, c.data_type, c.{udt}, "
        "CASE WHEN k.column_name IS NULL THEN 0 ELSE 1 END "
        "FROM information_schema.columns c LEFT JOIN information_schema.key_column_usage k "
        "ON k.table_schema = c.table_schema AND k.table_name = c.table_name "
        "AND k.column_name = c.column_name AND k.constraint_name "
        + ("LIKE '%\\_pkey'" if conn.dialect == "pg" else "= 'PRIMARY'")
        + f" WHERE c.table_schema = {schema} AND c.table_name = {quote_text(conn.dialect, table)} "
        "ORDER BY c.ordinal_position;"
    )
    out: list[tuple[str, str, bool]] = []
    for line in run_sql(conn, sql, tuples_only=True).splitlines():
        name, data_type, udt_name, pk = line.split("\t")
        if conn.dialect == "pg" and data_type == "ARRAY":
            kind = "int_array" if udt_name in ("_int2", "_int4", "_int8") else "text_array"
        elif table == "all_types" and name in known:
            kind = known[name]
        elif conn.dialect == "pg":
            kind = _PG_KINDS.get(data_type, "text")
        else:
            kind = (
                "int" if udt_name == "tinyint(1)" else _MARIADB_KINDS.get(data_type.lower(), "text")
            )
        out.append((name, kind, pk == "1"))
    if not out:
        raise ValueError(
            f"table {table!r} not found in database {conn.database!r} on port {conn.port}"
        )
    return out


def dump_table(conn: Connection, table: str) -> list[dict[str, Any]]:
    """The current rows of ``table``, ordered by primary key, normalised as the module doc says."""
    cols = _columns(conn, table)
    order = [n for n, _, pk in cols if pk] or [cols[0][0]]
    if conn.dialect == "pg":
        exprs = ", ".join(f'{_pg_expr(n, k)} AS "{n}"' for n, k, _ in cols)
        keys = ", ".join(f'"{n}"' for n in order)
        sql = f'SELECT row_to_json(q) FROM (SELECT {exprs} FROM "{table}" ORDER BY {keys}) q;'
    else:
        pairs = ", ".join(f"'{n}', {_mariadb_expr(n, k)}" for n, k, _ in cols)
        keys = ", ".join(f"`{n}`" for n in order)
        sql = f"SELECT JSON_OBJECT({pairs}) FROM `{table}` ORDER BY {keys};"
    rows = []
    for line in run_sql(conn, sql, tuples_only=True).splitlines():
        raw = json.loads(line)
        rows.append({n: normalise(k, raw[n]) for n, k, _ in cols})
    return rows
