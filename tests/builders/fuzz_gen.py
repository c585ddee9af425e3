"""Seeded workloads of the four formats with mutated messages mixed in (the fuzz suite).

Every format writes its own table of the same shape (key ``id``, a text, a big integer, a
decimal, a date, a timestamp and a binary column), and so does each of the other producers'
shapes (:data:`SHAPES`), but for the odd tables (the same columns under names Delta holds only
with column mapping) and the NUMERIC one (Decimal columns only, beside a text). A workload is
good messages (inserts, updates, deletes with rising positions) plus mutants: messages that are
bad by construction, each tagged with the kind of mutation, so that the test can check that
every one of them is quarantined and that the tables hold what the good messages alone produce.
"""

from __future__ import annotations

import base64
import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

from builders import msgs
from cdclake import formats

FORMATS = tuple(formats.names())
SHAPES = (
    "debezium-flink",
    "canal-flink",
    "debezium-flat",
    "debezium-odd",
    "canal-odd",
    "debezium-numeric",
)
"""Other producers' shapes of two formats (issue 40): Flink CDC's Debezium JSON (``source`` with
``db`` and ``table`` only) and Flink's canal-json (no ``es``, ``ts``, ``isDdl``, ``mysqlType``),
both without position, ordered by input order; Debezium flattened by ``ExtractNewRecordState``
(``add.fields=op,db,table,lsn``, rewrite), ordered by ``__lsn``. None of these three carries
types: typed from their JSON values. Then tables of two formats that do carry types: Debezium
and canal tables whose columns have names Delta holds only with column mapping (:data:`ODD`),
and a Debezium table whose ``Decimal`` columns (its key one of them) JsonConverter wrote with
``decimal.format=NUMERIC``, as JSON numbers (:data:`NUMERIC_FIELDS`)."""
TABLES = {
    "debezium": "shop.dbo.items_dbz",
    "canal": "shop.items_canal",
    "ckafka": "shop.items_ckafka",
    "dataworks": "shop.items_dw",
    "debezium-flink": "shop.items_flink_dbz",
    "canal-flink": "shop.items_flink_canal",
    "debezium-flat": "shop.items_flat_dbz",
    "debezium-odd": "shop.dbo.items_odd_dbz",
    "canal-odd": "shop.items_odd_canal",
    "debezium-numeric": "shop.dbo.items_numeric_dbz",
}
MYSQL = {
    "id": "int(11)",
    "name": "varchar(40)",
    "qty": "bigint(20)",
    "price": "decimal(10,2)",
    "born": "date",
    "at": "datetime(3)",
    "data": "blob",
}
DW = {
    "id": "LONG",
    "name": "STRING",
    "qty": "LONG",
    "price": "DOUBLE",
    "born": "DATE",
    "at": "DATE",
    "data": "BYTES",
}
DBZ = [
    {"field": "id", "type": "int32", "optional": False},
    {"field": "name", "type": "string", "optional": True},
    {"field": "qty", "type": "int64", "optional": True},
    {
        "field": "price",
        "type": "bytes",
        "optional": True,
        "name": "org.apache.kafka.connect.data.Decimal",
        "parameters": {"scale": "2", "connect.decimal.precision": "10"},
    },
    {"field": "born", "type": "int32", "optional": True, "name": "io.debezium.time.Date"},
    {"field": "at", "type": "string", "optional": True, "name": "io.debezium.time.ZonedTimestamp"},
    {"field": "data", "type": "bytes", "optional": True},
]
EPOCH = date(1970, 1, 1)
ODD = {
    "id": "$% ^,& *(",
    "name": "a b",
    "qty": "n;e=w",
    "price": "{p(r)i,c}e",
    "born": "born\tday",
    "at": "at\nnoon",
    "data": "x.y`z",
}
"""The odd tables' names for the columns of :func:`_row`: MySQL's backquoted names that Delta
holds only with column mapping (Paimon's ``$% ^,& *(`` the key), a dot and a backquote."""
CASE_TWINS = {"a b": "A B", "n;e=w": "N;E=W", "x.y`z": "X.Y`Z"}
DECIMAL = "org.apache.kafka.connect.data.Decimal"


def _decimal_field(name: str, scale: int, precision: int, optional: bool = True) -> dict[str, Any]:
    params = {"scale": str(scale), "connect.decimal.precision": str(precision)}
    return {
        "field": name,
        "type": "bytes",
        "optional": optional,
        "name": DECIMAL,
        "parameters": params,
    }


NUMERIC_FIELDS = [
    _decimal_field("id", 0, 38, optional=False),
    {"field": "name", "type": "string", "optional": True},
    _decimal_field("price", 2, 15),
    _decimal_field("amount", 0, 20),
    _decimal_field("rate", 6, 9),
]
"""``decimal.format=NUMERIC``: JSON numbers as ``BigDecimal.toString`` writes them (``1234.50``).
A file batch types row images from Spark's text of the message, where a number with a fraction
has been a double (README, "Decimal"): exact up to 15 significant digits, which ``price``
(13 + 2 digits) and ``rate`` (3 + 6) stay within; integers (``id``: 38 digits) keep all."""
NUMERIC_EDGES = {
    "price": ["12345678901.23", "-12345678901.23", "9999999999999.99", "-9999999999999.99",
              "1234.50", "0.10", "-0.05", "0.00"],
    "amount": ["99999999999999999999", "-99999999999999999999", "12345678901234567890", "0"],
    "rate": ["999.999999", "-999.999999", "0.000001", "-0.000001", "123.456789"],
}  # fmt: skip


@dataclass(frozen=True)
class Message:
    line: bytes
    fmt: str
    kind: str  # "good", "control" (a good DDL), or the mutation


def _row(rng: random.Random, i: int) -> dict[str, Any]:
    return {
        "id": i,
        "name": rng.choice(["a", "bé", "c d", "", "名前", "x" * 30]),
        "qty": rng.randint(-(2**62), 2**62),
        "price": Decimal(rng.randint(-(10**10) + 1, 10**10 - 1)).scaleb(-2),
        "born": EPOCH + timedelta(days=rng.randint(-20000, 40000)),
        "at": datetime(2020, 1, 1, tzinfo=UTC) + timedelta(milliseconds=rng.randint(0, 10**11)),
        "data": bytes(rng.randrange(256) for _ in range(rng.randint(0, 12))),
    }


def _numeric_id(i: int) -> Decimal:
    """The numeric table's 38-digit key of row ``i`` (every third one negative)."""
    return Decimal((10**37 + i) * (-1 if i % 3 == 0 else 1))


def _numeric_row(rng: random.Random, i: int) -> dict[str, Any]:
    def pick(col: str, digits: int, scale: int) -> Decimal | None:
        roll = rng.random()
        if roll < 0.1:
            return None
        if roll < 0.4:
            return Decimal(rng.choice(NUMERIC_EDGES[col]))
        n = rng.randint(-(10**digits) + 1, 10**digits - 1)
        return Decimal(n).scaleb(-scale)

    return {
        "id": _numeric_id(i),
        "name": rng.choice(["a", "bé", "", "名前"]),
        "price": pick("price", 15, 2),
        "amount": pick("amount", 20, 0),
        "rate": pick("rate", 9, 6),
    }


ROW = {"debezium-numeric": _numeric_row}
"""A shape's typed rows, where they are not :func:`_row`'s."""


# ---- rendering a typed row as each format writes it -----------------------------------------


def _mysql_text(row: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in row.items():
        if isinstance(v, bytes):
            out[k] = v.decode("latin-1")
        elif isinstance(v, datetime):
            out[k] = v.strftime("%Y-%m-%d %H:%M:%S.") + f"{v.microsecond // 1000:03d}"
        elif v is None or isinstance(v, str):
            out[k] = v
        else:
            out[k] = str(v)
    return out


def _dw_values(row: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in row.items():
        if isinstance(v, bytes):
            out[k] = base64.b64encode(v).decode()
        elif isinstance(v, datetime):
            out[k] = int(v.timestamp() * 1000)
        elif isinstance(v, date):
            out[k] = int(datetime(v.year, v.month, v.day, tzinfo=UTC).timestamp() * 1000)
        elif isinstance(v, Decimal):
            out[k] = float(v)
        else:
            out[k] = v
    return out


def _unscaled(v: Decimal) -> str:
    n = int(v.scaleb(2))
    size = max(1, (n.bit_length() + 8) // 8)
    return base64.b64encode(n.to_bytes(size, "big", signed=True)).decode()


def _dbz_values(row: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in row.items():
        if isinstance(v, bytes):
            out[k] = base64.b64encode(v).decode()
        elif isinstance(v, datetime):
            out[k] = v.strftime("%Y-%m-%dT%H:%M:%S.") + f"{v.microsecond // 1000:03d}Z"
        elif isinstance(v, date):
            out[k] = (v - EPOCH).days
        elif isinstance(v, Decimal):
            out[k] = _unscaled(v)
        else:
            out[k] = v
    return out


NUMBER = "#number#"
"""Marks a JSON number's text in a document (:func:`_number`); :func:`_dump` writes it bare."""
_NUMBER = re.compile(rb'"#number#(-?[0-9.]+(?:E[-+]?[0-9]+)?)"')


def _number(value: Decimal | str) -> str:
    """``value`` to be written as a JSON number with exactly its digits (``1234.50``)."""
    return f"{NUMBER}{value}"


def _numeric_values(row: dict[str, Any]) -> dict[str, Any]:
    """JsonConverter with ``decimal.format=NUMERIC``: each Decimal a JSON number as
    ``BigDecimal.toString`` writes it (plain, every digit of its scale)."""
    return {k: _number(v) if isinstance(v, Decimal) else v for k, v in row.items()}


def _json_values(row: dict[str, Any]) -> dict[str, Any]:
    """Values as Flink's JSON formats write them: numbers as numbers, the rest as text."""
    out: dict[str, Any] = {}
    for k, v in row.items():
        if isinstance(v, bytes):
            out[k] = base64.b64encode(v).decode()
        elif isinstance(v, date | Decimal):
            out[k] = str(v)
        else:
            out[k] = v
    return out


def debezium_flink(n: int, op: str, after: Any, before: Any, key: Any) -> dict[str, Any]:
    """Flink CDC's Kafka pipeline sink, ``debezium-json``: ``source`` holds db and table only."""
    source = {"db": "shop", "table": "items_flink_dbz"}
    return {"key": key, "value": {"before": before, "after": after, "op": op, "source": source}}


def debezium_flat(n: int, op: str, after: Any, before: Any, key: Any) -> dict[str, Any]:
    """Debezium through ``ExtractNewRecordState`` with ``add.fields=op,db,table,lsn`` and
    ``delete.handling.mode=rewrite``, schemas off: the row (a delete's before row), flat."""
    added = {"__op": op, "__db": "shop", "__table": "items_flat_dbz", "__lsn": n}
    row = after if after is not None else before
    return {"key": key, "value": {**row, **added, "__deleted": "true" if op == "d" else "false"}}


def canal_flink(n: int, op: str, after: Any, before: Any, key: Any) -> dict[str, Any]:
    """Flink's ``canal-json``: no es, ts, isDdl or mysqlType; ``old`` holds the whole before row."""
    kind = {"c": "INSERT", "u": "UPDATE", "d": "DELETE"}[op]
    return {
        "data": [after if after is not None else before],
        "old": [before] if op == "u" else None,
        "type": kind,
        "database": "shop",
        "table": "items_flink_canal",
        "pkNames": ["id"],
    }


Builder = Callable[[int, str, Any, Any, Any], dict[str, Any]]
"""Message ``n`` of op ``c``, ``u`` or ``d`` with its row images (rendered) and record key."""


def debezium_with(
    fields: list[dict[str, Any]], table: str, key: Callable[[Any], Any] = lambda k: k
) -> Builder:
    """A SQL Server connector's events of ``shop.dbo.<table>`` with ``fields`` (schemas on);
    ``key``: the record key from ``{"id": i}``."""

    def build(n: int, op: str, after: Any, before: Any, record_key: Any) -> dict[str, Any]:
        lsn = f"{n:08x}:{n:08x}:0002"
        row_schema = {"type": "struct", "optional": True, "fields": [dict(f) for f in fields]}
        return {
            "key": record_key if record_key is None else key(record_key),
            "value": {
                "schema": {
                    "type": "struct",
                    "fields": [{**row_schema, "field": "before"}, {**row_schema, "field": "after"}],
                },
                "payload": {
                    "before": before,
                    "after": after,
                    "source": {
                        "connector": "sqlserver",
                        "db": "shop",
                        "schema": "dbo",
                        "table": table,
                        "change_lsn": lsn,
                        "commit_lsn": lsn,
                        "ts_ms": 1_700_000_000_000 + n,
                    },
                    "op": op,
                    "ts_ms": 1_700_000_000_000 + n,
                },
            },
        }

    return build


def canal_with(mysql: dict[str, str], table: str, key: str = "id") -> Builder:
    """Canal's flat messages of ``shop.<table>`` with columns ``mysql``, key column ``key``."""

    def build(n: int, op: str, after: Any, before: Any, record_key: Any) -> dict[str, Any]:
        kind = {"c": "INSERT", "u": "UPDATE", "d": "DELETE"}[op]
        data = after if after is not None else before
        old = None
        if op == "u":
            old = [{k: v for k, v in before.items() if data.get(k) != v} or {key: before[key]}]
        return {
            "data": [data],
            "database": "shop",
            "es": 1_700_000_000_000 + n,
            "id": n,
            "isDdl": False,
            "mysqlType": mysql,
            "old": old,
            "pkNames": [key],
            "sql": "",
            "sqlType": None,
            "table": table,
            "ts": 1_700_000_000_000 + n,
            "type": kind,
        }

    return build


debezium = debezium_with(DBZ, "items_dbz")
canal = canal_with(MYSQL, "items_canal")


def _odd(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` under the odd tables' names (:data:`ODD`)."""
    return {ODD.get(k, k): v for k, v in row.items()}


debezium_odd = debezium_with([{**f, "field": ODD[f["field"]]} for f in DBZ], "items_odd_dbz", _odd)
canal_odd = canal_with(_odd(MYSQL), "items_odd_canal", ODD["id"])
debezium_numeric = debezium_with(
    NUMERIC_FIELDS, "items_numeric_dbz", lambda k: {"id": _number(_numeric_id(k["id"]))}
)


def ckafka(n: int, op: str, after: Any, before: Any, key: Any) -> dict[str, Any]:
    return {
        "BINLOG_NAME": "mysql-bin.000003",
        "BINLOG_POS": 1000 + n,
        "DATABASE": "shop",
        "EVENT_SERVER_ID": None,
        "GLOBAL_ID": None,
        "GROUP_ID": None,
        "NEW_VALUES": after,
        "OLD_VALUES": before,
        "TABLE": "items_ckafka",
        "TIME": "20240101000000",
        "TYPE": {"c": "I", "u": "U", "d": "D"}[op],
    }


def ckafka_create() -> dict[str, Any]:
    cols = ", ".join(f"`{c}` {t}" for c, t in MYSQL.items())
    return msgs.ckafka_create_doc(cols, table="items_ckafka")


def dataworks(n: int, op: str, after: Any, before: Any, key: Any) -> dict[str, Any]:
    code = {"c": "INSERT", "u": "UPDATE_AFTER", "d": "DELETE"}[op]
    before = None if op == "u" else before  # the after half of an update
    return msgs.dataworks_doc(n, after, before, columns=DW, op=code, table="items_dw")


BUILD: dict[str, Builder] = {
    "debezium": debezium,
    "canal": canal,
    "ckafka": ckafka,
    "dataworks": dataworks,
    "debezium-flink": debezium_flink,
    "canal-flink": canal_flink,
    "debezium-flat": debezium_flat,
    "debezium-odd": debezium_odd,
    "canal-odd": canal_odd,
    "debezium-numeric": debezium_numeric,
}
RENDER: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "debezium": _dbz_values,
    "canal": _mysql_text,
    "ckafka": _mysql_text,
    "dataworks": _dw_values,
    "debezium-flink": _json_values,
    "canal-flink": _json_values,
    "debezium-flat": _json_values,
    "debezium-odd": lambda row: _odd(_dbz_values(row)),
    "canal-odd": lambda row: _odd(_mysql_text(row)),
    "debezium-numeric": _numeric_values,
}


def _image(doc: dict[str, Any], fmt: str) -> dict[str, Any]:
    """The after (else before) image of a message, in place."""
    if fmt in ("debezium", "debezium-odd", "debezium-numeric"):
        p = doc["value"]["payload"]
        return p["after"] or p["before"]  # type: ignore[no-any-return]
    if fmt == "debezium-flink":
        return doc["value"]["after"] or doc["value"]["before"]  # type: ignore[no-any-return]
    if fmt == "debezium-flat":
        return doc["value"]  # type: ignore[no-any-return]
    if fmt in ("canal", "canal-flink", "canal-odd"):
        return doc["data"][0]  # type: ignore[no-any-return]
    if fmt == "ckafka":
        return doc["NEW_VALUES"] or doc["OLD_VALUES"]  # type: ignore[no-any-return]
    p = doc["payload"]
    return (p["after"] or p["before"])["dataColumn"]  # type: ignore[no-any-return]


# ---- mutations: each returns the bad line ---------------------------------------------------

ENVELOPE_FIELDS = {  # fields without which (or with the wrong type of which) nothing can be done
    "debezium": [("value", "payload", "op"), ("value", "payload", "source")],
    "canal": [("type",), ("data",), ("es",)],
    "ckafka": [("TYPE",), ("BINLOG_POS",), ("NEW_VALUES",)],
    "dataworks": [("payload",), ("payload", "op"), ("payload", "sequenceId")],
    "debezium-flink": [("value", "op"), ("value", "source")],
    "canal-flink": [("type",), ("data",)],
    "debezium-flat": [("value", "__op"), ("value", "__table")],
    "debezium-odd": [("value", "payload", "op"), ("value", "payload", "source")],
    "canal-odd": [("type",), ("data",), ("es",)],
    "debezium-numeric": [("value", "payload", "op"), ("value", "payload", "source")],
}
OPTIONAL = {("es",), ("value", "__op")}
"""Fields whose absence is valid (a canal message without ``es`` is ordered by input order, a
flattened row without ``__op`` is an upsert), so only a wrong type of them is a mutant."""
TEXT_FIELDS = {("value", "__table")}
"""Fields whose every JSON value is a valid text (a table name): only their absence is a
mutant."""
WRONG_TYPES: list[Any] = [5, -1.5, True, [1, 2], {"a": 1}, "text"]
NUMERIC = {"es", "BINLOG_POS", "sequenceId"}  # a number is the right type there
BAD_VALUES = {  # per column: values that do not fit, as each format would carry them
    "id": [2**70, "1.5x", "", "NaN", "0x10"],
    "qty": [2**63, -(2**63) - 1, "12abc", "1e400"],
    "price": {"mysql": ["123456789012.5", "1e40", "12.3.4", "--1"]},
    "born": {"mysql": ["2021-02-30", "2021-13-01", "0000-00-00x", "20210101"]},
    "at": {
        "mysql": ["2021-01-01 25:61:00", "2021-02-30 00:00:00", "yesterday"],
        "dbz": ["2021-01-01T00:00:00+25:00", "2021-01-01T00:00:00 Mars/Olympus", "2021-13-01Z"],
    },
    "data": {"dbz": ["!!!not base64!!!", "a*b="], "dw": ["!!!not base64!!!", "%%%"]},
}


def _set_path(doc: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    for k in path[:-1]:
        doc = doc[k]
    doc[path[-1]] = value


def _del_path(doc: dict[str, Any], path: tuple[str, ...]) -> None:
    for k in path[:-1]:
        doc = doc[k]
    del doc[path[-1]]


def _bad_value(rng: random.Random, fmt: str) -> tuple[str, Any]:
    family = {"debezium": "dbz", "dataworks": "dw"}.get(fmt, "mysql")
    choices: list[tuple[str, Any]] = []
    for col, vals in BAD_VALUES.items():
        values = vals if isinstance(vals, list) else vals.get(family, [])
        choices += [(col, v) for v in values]
    if fmt == "canal":  # a character that is not one ISO-8859-1 byte
        choices.append(("data", "snow \u2603"))
    if fmt != "dataworks":  # its id is a LONG
        choices += [("id", 2**31), ("id", -(2**31) - 1)]
    if fmt == "debezium":
        choices += [("price", base64.b64encode((10**12).to_bytes(6, "big")).decode())]
        choices += [("born", "soon"), ("born", "1970-01-01")]  # huge days: infinity
    if fmt == "dataworks":
        choices += [("at", "noon"), ("born", "x")]
    col, value = rng.choice(choices)
    if fmt in ("canal", "ckafka") and not isinstance(value, str):
        value = str(value)
    return col, value


def _dump(doc: Any) -> bytes:
    return _NUMBER.sub(rb"\1", json.dumps(doc, ensure_ascii=False).encode())


def mutate(rng: random.Random, fmt: str, doc: dict[str, Any], kind: str) -> bytes:
    """A bad line from a good message ``doc`` (a fresh copy, changed in place)."""
    if kind == "truncated":
        line = _dump(doc)
        return line[: rng.randrange(1, len(line) - 1)]
    if kind == "wrong-type":
        path = rng.choice([f for f in ENVELOPE_FIELDS[fmt] if f not in TEXT_FIELDS])
        wrong = [w for w in WRONG_TYPES if path[-1] not in NUMERIC or not isinstance(w, int)]
        _set_path(doc, path, rng.choice(wrong))
    elif kind == "missing-field":
        _del_path(doc, rng.choice([f for f in ENVELOPE_FIELDS[fmt] if f not in OPTIONAL]))
    elif kind == "missing-key":
        del _image(doc, fmt)[KEY.get(fmt, "id")]
        if fmt == "debezium":
            _image(doc, fmt)["other"] = 1
    elif kind == "out-of-range":
        col, value = _bad_value(rng, BASE.get(fmt, fmt))
        _image(doc, fmt)[ODD[col] if fmt in BASE else col] = value
    elif kind == "bad-name":
        _bad_name(rng, fmt, doc)
    elif kind == "bad-decimal":
        col = rng.choice(sorted(BAD_DECIMALS))
        _image(doc, fmt)[col] = rng.choice(BAD_DECIMALS[col])
    elif kind == "huge-string":
        _image(doc, fmt)["id"] = "7" * (10 * 1024 * 1024)
    elif kind == "deep-nesting":
        marker = b'"__deep__"'
        _image(doc, fmt)["id"] = "__deep__"
        line = _dump(doc)
        return line.replace(marker, b"[" * 10_000 + b"1" + b"]" * 10_000, 1)
    elif kind in ("invalid-utf8", "nul-byte"):
        _image(doc, fmt)["id"] = "__bytes__"
        junk = b"\xff\xfe\xc3" if kind == "invalid-utf8" else rng.choice([b"1\x002", b"1\\u00002"])
        return _dump(doc).replace(b"__bytes__", junk, 1)
    elif kind == "duplicate-keys":
        _image(doc, fmt)["id"] = "__dup__"
        return _dump(doc).replace(b'"__dup__"', b'"dup-a", "id": "dup-b"', 1)
    elif kind == "unknown-op":
        op = {
            "debezium": ("value", "payload", "op"),
            "debezium-odd": ("value", "payload", "op"),
            "debezium-numeric": ("value", "payload", "op"),
            "canal-odd": ("type",),
            "debezium-flink": ("value", "op"),
            "debezium-flat": ("value", "__op"),
            "canal": ("type",),
            "canal-flink": ("type",),
            "ckafka": ("TYPE",),
        }
        path = op.get(fmt, ("payload", "op"))
        _set_path(doc, path, rng.choice(["z", "MERGE", "upsert", "", "X"]))
    elif kind == "other-format":
        # another format's fields in place of this format's own: detected as none of them
        other = rng.choice([f for f in FORMATS if f != fmt])
        mixed = {**BUILD[other](1, "c", {"id": 1}, None, None), "isDdl": None}
        mixed.pop("op", None)
        mixed.pop("TYPE", None)
        mixed.pop("type", None)
        if isinstance(mixed.get("payload"), dict):
            mixed["payload"] = {"after": {"id": 1}}
        if "value" in mixed:
            mixed = {**mixed["value"]["payload"], "op": None, "data": [{"id": "1"}]}
        return _dump({k: v for k, v in mixed.items() if k != "isDdl"})
    elif kind == "schema-contradicts":
        _contradict(rng, fmt, doc)
    elif kind == "bad-ddl":
        return _dump(_bad_ddl(rng, fmt))
    else:
        raise ValueError(kind)
    return _dump(doc)


def _bad_name(rng: random.Random, fmt: str, doc: dict[str, Any]) -> None:
    """A column whose name no table holds beside the others, in the schema and the image."""
    name = rng.choice([*CASE_TWINS.values(), "", "_cdc_op", "__END_AT"])
    _image(doc, fmt)[name] = "x"
    if fmt == "canal-odd":
        doc["mysqlType"] = {**doc["mysqlType"], name: "varchar(10)"}
        return
    for image in doc["value"]["schema"]["fields"]:
        image["fields"] = [*image["fields"], {"field": name, "type": "string", "optional": True}]


def _contradict(rng: random.Random, fmt: str, doc: dict[str, Any]) -> None:
    """The message's schema section says a column has a type its value does not have."""
    if fmt == "debezium":
        for image in ("before", "after"):
            fields = doc["value"]["schema"]["fields"][0 if image == "before" else 1]["fields"]
            fields[1] = {**fields[1], "type": "int32"}  # name: text in the payload
        _image(doc, fmt)["name"] = "not a number"
    elif fmt == "canal":
        doc["mysqlType"] = {**MYSQL, "name": "int(11)"}
        _image(doc, fmt)["name"] = "not a number"
    elif fmt == "dataworks":
        doc["schema"]["dataColumn"][1] = {"name": "name", "type": "LONG"}
        _image(doc, fmt)["name"] = "not a number"
    else:  # CKafka carries no schema: its values contradict the table's
        _image(doc, fmt)["born"] = rng.choice(["not a date", "2021-02-29"])


def _bad_ddl(rng: random.Random, fmt: str) -> dict[str, Any]:
    sql = rng.choice(
        [
            "ALTER TABLE `items_canal` ADD COLUMN",
            "CREATE TABLE ((( broken",
        ]
    )
    doc = ckafka_create()
    doc.update({"sql": sql, "type": "ALTER", "table": TABLES[fmt].split(".")[-1]})
    return doc


MUTATIONS = (
    "truncated",
    "wrong-type",
    "missing-field",
    "missing-key",
    "out-of-range",
    "invalid-utf8",
    "nul-byte",
    "duplicate-keys",
    "unknown-op",
    "other-format",
    "schema-contradicts",
)
RARE = ("huge-string", "deep-nesting", "bad-ddl")  # a few of each per run
SHAPE_MUTATIONS = ("truncated", "wrong-type", "missing-field", "unknown-op")
"""What the shapes without types are mutated with: a bad value among their good ones would change
the types inferred for the batch (they have no schema to say which value is wrong)."""
TYPED_SHAPE_MUTATIONS = {
    "debezium-odd": (*SHAPE_MUTATIONS, "missing-key", "out-of-range", "bad-name"),
    "canal-odd": (*SHAPE_MUTATIONS, "missing-key", "out-of-range", "bad-name"),
    "debezium-numeric": (*SHAPE_MUTATIONS, "missing-key", "bad-decimal", "bad-decimal"),
}
"""The shapes with types take bad values too: each column's type is the schema's."""
BASE = {"debezium-odd": "debezium", "canal-odd": "canal"}
"""The odd tables' formats: their bad values are those of the tables with plain names."""
KEY = {"debezium-odd": ODD["id"], "canal-odd": ODD["id"]}
BAD_DECIMALS = {
    "id": [_number("1" + "0" * 38), _number("0.5"), None, "12.34"],
    "price": [
        _number("1.005"),  # a digit beyond the scale: never rounded
        _number("12345678.125"),
        _number("10000000000000.00"),  # beyond the precision
        _number("-1E+400"),  # beyond a double (1E+400: see test_decimal_numeric's xfail)
        "!!not base64",
        True,
    ],
    "amount": [_number("123456789012345678901"), _number("1.5"), {"a": 1}],
    "rate": [_number("1000.000000"), _number("0.0000001")],
}
"""Per column of the numeric table: values JsonConverter cannot have written for its schema."""


def _mutations(fmt: str) -> tuple[str, ...]:
    if fmt not in SHAPES:
        return MUTATIONS
    return TYPED_SHAPE_MUTATIONS.get(fmt, SHAPE_MUTATIONS)


def _good(
    rng: random.Random, fmt: str, n_good: int, first_id: int, n0: int
) -> tuple[list[Message], dict[int, dict[str, Any]], int]:
    """The good messages of :func:`workload`, the typed rows they leave live (by id) and the
    next id."""
    build, render, make = BUILD[fmt], RENDER[fmt], ROW.get(fmt, _row)
    live: dict[int, dict[str, Any]] = {}
    typed: dict[int, dict[str, Any]] = {}
    good: list[Message] = []
    if fmt == "ckafka" and n0 == 0:
        good.append(Message(_dump(ckafka_create()), fmt, "control"))
    n = n0
    next_id = first_id
    for _ in range(n_good):
        n += 1
        roll = rng.random()
        if not live or roll < 0.5:
            i, next_id = next_id, next_id + 1
            typed[i] = make(rng, i)
            row = render(typed[i])
            doc = build(n, "c", row, None, {"id": i})
            live[i] = row
        elif roll < 0.85:
            i = rng.choice(sorted(live))
            typed[i] = make(rng, i)
            row = render(typed[i])
            doc = build(n, "u", row, live[i], {"id": i})
            live[i] = row
        else:
            i = rng.choice(sorted(live))
            doc = build(n, "d", None, live.pop(i), {"id": i})
            del typed[i]
        good.append(Message(_dump(doc), fmt, "good"))
    return good, typed, next_id


def workload(
    seed: int, fmt: str, n_good: int, n_bad: int, first_id: int, n0: int, rare: bool
) -> list[Message]:
    """``n_good`` good messages and ``n_bad`` mutants of one format, shuffled; positions start
    after ``n0``. The good ones insert, update and delete ids from ``first_id``."""
    rng = random.Random(f"{seed}-{fmt}-{n0}")
    good, _, next_id = _good(rng, fmt, n_good, first_id, n0)
    kinds = [rng.choice(_mutations(fmt)) for _ in range(n_bad)]
    if rare and fmt not in SHAPES:
        kinds[: len(RARE)] = RARE if fmt in ("canal", "ckafka") else (*RARE[:-1], "truncated")
    bad = []
    build, render, make = BUILD[fmt], RENDER[fmt], ROW.get(fmt, _row)
    for n, kind in enumerate(kinds, n0 + n_good + 1):
        i = rng.randrange(first_id, next_id + 5)
        doc = build(n, "c", render(make(rng, i)), None, {"id": i})
        bad.append(Message(mutate(rng, fmt, doc, kind), fmt, kind))
    # the DDL first (it types the CKafka table); the rest in a shuffled order
    head, rest = good[:1] if good and good[0].kind == "control" else [], good
    rest = rest[len(head) :] + bad
    rng.shuffle(rest)
    return head + rest


def live_rows(seed: int, fmt: str, n_good: int, first_id: int, n0: int) -> list[dict[str, Any]]:
    """The rows :func:`workload`'s good messages leave live (same arguments), typed, under the
    table's column names."""
    _, typed, _ = _good(random.Random(f"{seed}-{fmt}-{n0}"), fmt, n_good, first_id, n0)
    rename = _odd if fmt in BASE else dict
    return [rename(typed[i]) for i in sorted(typed)]
