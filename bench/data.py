"""Deterministic benchmark input: N change events over K keys, one JSON-lines file per format.

Every format gets the same logical stream (same seed, same keys, same op mix); only the wire
shape differs. The heavy case is Debezium SQL Server with ``schemas.enable=true`` (about 2 KB a
message, shaped like the ``server1.dbo.customers`` example of the Debezium documentation).

Key ids are ``k * stride`` for ``k`` in ``[0, K)`` so that a batch's keys spread over a
pre-filled table with ids ``[0, K * stride)`` (see :mod:`bench.tables`).

With ``tables`` > 1 the same stream is spread over that many tables of one database
(``customers_000`` ...), as one topic carrying a whole database: key ``k`` belongs to table
``k % tables``, so every key's changes stay in one table.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

DB, SCHEMA, TABLE = "bench", "dbo", "customers"
COLUMNS = ("id", "first_name", "last_name", "email")
FIRST = ("anne", "john", "sally", "george", "edward", "kim", "li", "olga", "ravi", "ana")
LAST = ("kretchmar", "doe", "thomas", "bailey", "walker", "park", "wang", "ivanova", "rao")
TS0 = 1559729468470


@dataclass(frozen=True)
class Event:
    """One logical change: ``op`` in c/u/d, row images as dicts (None when absent)."""

    i: int
    op: str
    before: dict[str, object] | None
    after: dict[str, object] | None
    table: str = TABLE


def table_name(index: int, tables: int) -> str:
    """The table of key index ``index`` when the stream spreads over ``tables`` tables."""
    return TABLE if tables <= 1 else f"{TABLE}_{index % tables:03d}"


def events(n: int, keys: int, stride: int, seed: int = 42, tables: int = 1) -> Iterator[Event]:
    """A deterministic insert/update/delete stream: a key's first event inserts it; after that
    85 % updates, 15 % deletes; an event on a deleted key re-inserts it. ``tables`` > 1 spreads
    the keys over that many tables (the random draws, so the ops and rows, stay the same)."""
    rnd = random.Random(seed)
    live: dict[int, dict[str, object]] = {}
    for i in range(n):
        index = rnd.randrange(keys)
        k, table = index * stride, table_name(index, tables)
        old = live.get(k)
        row = {
            "id": k,
            "first_name": f"{FIRST[rnd.randrange(len(FIRST))]}{i % 97}",
            "last_name": LAST[rnd.randrange(len(LAST))],
            "email": f"user{k}.{i}@example.org",
        }
        if old is None:
            live[k] = row
            yield Event(i, "c", None, row, table)
        elif rnd.random() < 0.85:
            live[k] = row
            yield Event(i, "u", old, row, table)
        else:
            del live[k]
            yield Event(i, "d", old, None, table)


def live_rows(n: int, keys: int, stride: int, seed: int = 42, tables: int = 1) -> dict[str, int]:
    """Rows each table holds after the stream (the count a correct apply must leave)."""
    live: dict[tuple[str, object], bool] = {}
    for e in events(n, keys, stride, seed, tables):
        row = e.after if e.after is not None else e.before
        assert row is not None
        live[(e.table, row["id"])] = e.op != "d"
    out: dict[str, int] = {}
    for (table, _), alive in live.items():
        out[table] = out.get(table, 0) + int(alive)
    return out


def _lsn(i: int) -> str:
    return f"{0x27:08x}:{i // 65536:08x}:{i % 65536:04x}"


def _field(t: str, name: str, optional: bool = False) -> dict[str, object]:
    return {"type": t, "optional": optional, "field": name}


_ROW_FIELDS = [
    _field("int32", "id"),
    _field("string", "first_name"),
    _field("string", "last_name"),
    _field("string", "email"),
]
_SOURCE_FIELDS = [
    _field("string", "version"),
    _field("string", "connector"),
    _field("string", "name"),
    _field("int64", "ts_ms"),
    {"type": "boolean", "optional": True, "default": False, "field": "snapshot"},
    _field("string", "db"),
    _field("string", "schema"),
    _field("string", "table"),
    _field("string", "change_lsn", True),
    _field("string", "commit_lsn", True),
    _field("int64", "event_serial_no", True),
]


@lru_cache(maxsize=4096)
def debezium_schema(table: str = TABLE) -> str:
    """The value schema section of ``table``'s messages (record names carry the table)."""
    value = f"server1.{SCHEMA}.{table}.Value"
    return json.dumps(
        {
            "type": "struct",
            "fields": [
                {
                    "type": "struct",
                    "fields": _ROW_FIELDS,
                    "optional": True,
                    "name": value,
                    "field": "before",
                },
                {
                    "type": "struct",
                    "fields": _ROW_FIELDS,
                    "optional": True,
                    "name": value,
                    "field": "after",
                },
                {
                    "type": "struct",
                    "fields": _SOURCE_FIELDS,
                    "optional": False,
                    "name": "io.debezium.connector.sqlserver.Source",
                    "field": "source",
                },
                _field("string", "op"),
                _field("int64", "ts_ms", True),
            ],
            "optional": False,
            "name": f"server1.{SCHEMA}.{table}.Envelope",
        },
        separators=(",", ":"),
    )


@lru_cache(maxsize=4096)
def debezium_key_schema(table: str = TABLE) -> str:
    return json.dumps(
        {
            "type": "struct",
            "fields": [_field("int32", "id")],
            "optional": False,
            "name": f"server1.{SCHEMA}.{table}.Key",
        },
        separators=(",", ":"),
    )


DEBEZIUM_SCHEMA = debezium_schema()
DEBEZIUM_KEY_SCHEMA = debezium_key_schema()


TRANSACTION_SIZE = 5  # changes per source transaction (the events' commit LSNs)


def _transaction_end(e: Event, n: int) -> int:
    return min(e.i // TRANSACTION_SIZE * TRANSACTION_SIZE + TRANSACTION_SIZE - 1, n - 1)


def debezium_record(
    e: Event, n: int, ts_ms: int | None = None, transaction: bool = False
) -> tuple[str, str]:
    """The Kafka record key and value of ``e`` (SQL Server connector, JsonConverter with
    schemas.enable=true); ``ts_ms`` (default: a fixed clock) is the source time in ms.
    ``transaction``: the payload's ``transaction`` block too (the connector's
    ``provide.transaction.metadata=true``; the id is the commit LSN, as SQL Server's)."""
    row = e.after if e.after is not None else e.before
    assert row is not None
    txn_end = _transaction_end(e, n)
    ts = TS0 + e.i if ts_ms is None else ts_ms
    payload = {
        "before": e.before,
        "after": e.after,
        "source": {
            "version": "2.7.3.Final",
            "connector": "sqlserver",
            "name": "server1",
            "ts_ms": ts,
            "snapshot": False,
            "db": DB,
            "schema": SCHEMA,
            "table": e.table,
            "change_lsn": _lsn(e.i),
            "commit_lsn": _lsn(txn_end),
            "event_serial_no": 2 if e.op == "u" else 1,
        },
        "op": e.op,
        "ts_ms": ts + 3000,
    }
    if transaction:
        order = e.i % TRANSACTION_SIZE + 1
        payload["transaction"] = {
            "id": _lsn(txn_end), "total_order": order, "data_collection_order": order
        }  # fmt: skip
    key = '{"schema":' + debezium_key_schema(e.table) + ',"payload":{"id":' + str(row["id"]) + "}}"
    value = (
        '{"schema":'
        + debezium_schema(e.table)
        + ',"payload":'
        + json.dumps(payload, separators=(",", ":"))
        + "}"
    )
    return key, value


def transaction_end(e: Event, n: int, ts_ms: int | None = None) -> tuple[str, str] | None:
    """The transaction-metadata topic's END record (key, value; schemaless JSON) of the
    transaction ``e`` is the last change of, or None when ``e`` does not close one."""
    last = _transaction_end(e, n)
    if e.i != last:
        return None
    count = last % TRANSACTION_SIZE + 1
    ts = TS0 + e.i if ts_ms is None else ts_ms
    end = {"status": "END", "id": _lsn(last), "event_count": count, "ts_ms": ts}
    return json.dumps({"id": _lsn(last)}), json.dumps(end, separators=(",", ":"))


def debezium_line(e: Event, n: int) -> str:
    """:func:`debezium_record` as a captured Kafka record (``{"key": ..., "value": ...}``, the
    shape cdclake's Kafka dump writes): the record key names the primary key."""
    key, value = debezium_record(e, n)
    return '{"key":' + key + ',"value":' + value + "}"


def _strings(row: dict[str, object] | None) -> dict[str, str] | None:
    return None if row is None else {k: str(v) for k, v in row.items()}


_MYSQL_TYPES = {
    "id": "int(11)",
    "first_name": "varchar(255)",
    "last_name": "varchar(255)",
    "email": "varchar(255)",
}
_SQL_TYPES = {"id": 4, "first_name": 12, "last_name": 12, "email": 12}
_CANAL_TYPE = {"c": "INSERT", "u": "UPDATE", "d": "DELETE"}


def canal_line(e: Event, n: int) -> str:
    """Canal flat message: values as strings, ``old`` holds the changed columns only."""
    row = e.after if e.op != "d" else e.before
    old = None
    if e.op == "u" and e.before is not None and e.after is not None:
        old = [{k: str(v) for k, v in e.before.items() if e.after[k] != v}]
    msg = {
        "data": [_strings(row)],
        "database": DB,
        "es": (TS0 + e.i) // 1000 * 1000,
        "id": e.i // 5 + 1,
        "isDdl": False,
        "mysqlType": _MYSQL_TYPES,
        "old": old,
        "pkNames": ["id"],
        "sql": "",
        "sqlType": _SQL_TYPES,
        "table": e.table,
        "ts": TS0 + e.i + 3000,
        "type": _CANAL_TYPE[e.op],
    }
    return json.dumps(msg, separators=(",", ":"))


_CKAFKA_TYPE = {"c": "I", "u": "U", "d": "D"}


def ckafka_line(e: Event, n: int) -> str:
    """Tencent CKafka "Official Format I": strings, full before image, binlog file + pos."""
    msg = {
        "BINLOG_NAME": "mysql-bin.000003",
        "BINLOG_POS": 154 + 100 * e.i,
        "DATABASE": DB,
        "EVENT_SERVER_ID": None,
        "GLOBAL_ID": None,
        "GROUP_ID": None,
        "NEW_VALUES": _strings(e.after),
        "OLD_VALUES": _strings(e.before),
        "TABLE": e.table,
        "TIME": "20240611015029",
        "TYPE": _CKAFKA_TYPE[e.op],
    }
    return json.dumps(msg, separators=(",", ":"))


_DW_COLUMNS = [
    {"name": "id", "type": "LONG"},
    {"name": "first_name", "type": "STRING"},
    {"name": "last_name", "type": "STRING"},
    {"name": "email", "type": "STRING"},
]
_DW_OP = {"c": "INSERT", "u": "UPDATE_AFTER", "d": "DELETE"}


def dataworks_line(e: Event, n: int) -> str:
    """Alibaba DataWorks sync-to-Kafka JSON, one record per update (before and after)."""
    msg = {
        "schema": {
            "dataColumn": _DW_COLUMNS,
            "primaryKey": ["id"],
            "source": {
                "dbType": "mysql",
                "dbVersion": "8.0.28",
                "dbName": DB,
                "tableName": e.table,
            },
        },
        "payload": {
            "before": None if e.before is None else {"dataColumn": e.before},
            "after": None if e.after is None else {"dataColumn": e.after},
            "sequenceId": str(1000000 + e.i),
            "scn": None,
            "op": _DW_OP[e.op],
            "timestamp": {
                "eventTime": TS0 + e.i,
                "systemTime": TS0 + e.i + 5,
                "checkpointTime": TS0 + e.i,
            },
            "ddl": None,
        },
        "version": "1.0.0",
    }
    return json.dumps(msg, separators=(",", ":"))


_ROW = "STRUCT<id: INT, first_name: STRING, last_name: STRING, email: STRING>"
_ROW_STR = "STRUCT<id: STRING, first_name: STRING, last_name: STRING, email: STRING>"
_ROW_LONG = "STRUCT<id: BIGINT, first_name: STRING, last_name: STRING, email: STRING>"
_DBZ_FIELD = "STRUCT<type: STRING, optional: BOOLEAN, `default`: BOOLEAN, field: STRING>"
_DBZ_KEY = (
    "STRUCT<`schema`: STRUCT<type: STRING, fields: ARRAY<" + _DBZ_FIELD + ">, optional: BOOLEAN,"
    " name: STRING>, payload: STRUCT<id: INT>>"
)


@dataclass(frozen=True)
class WireFormat:
    """How one format's lines are written, and the exact Spark schema of those lines."""

    name: str  # the cdclake format name
    line: Callable[[Event, int], str]
    exact_schema: str  # DDL for from_json: every field of the message, typed as written


WIRE_FORMATS: dict[str, WireFormat] = {
    "debezium": WireFormat(
        "debezium",
        debezium_line,
        "key " + _DBZ_KEY + ", value STRUCT<"
        "`schema`: STRUCT<type: STRING, fields: ARRAY<STRUCT<type: STRING, fields: ARRAY<"
        + _DBZ_FIELD
        + ">, optional: BOOLEAN, name: STRING, field: STRING>>, optional: BOOLEAN,"
        " name: STRING>, payload: STRUCT<before: "
        + _ROW
        + ", after: "
        + _ROW
        + ", source: STRUCT<version: STRING, connector: STRING, name: STRING, ts_ms: BIGINT, "
        "snapshot: BOOLEAN, db: STRING, `schema`: STRING, `table`: STRING, change_lsn: STRING, "
        "commit_lsn: STRING, event_serial_no: BIGINT>, op: STRING, ts_ms: BIGINT>>",
    ),
    "canal": WireFormat(
        "canal",
        canal_line,
        "data ARRAY<" + _ROW_STR + ">, database STRING, es BIGINT, id BIGINT, isDdl BOOLEAN, "
        "mysqlType STRUCT<id: STRING, first_name: STRING, last_name: STRING, email: STRING>, "
        "old ARRAY<MAP<STRING, STRING>>, pkNames ARRAY<STRING>, `sql` STRING, "
        "sqlType STRUCT<id: INT, first_name: INT, last_name: INT, email: INT>, `table` STRING, "
        "ts BIGINT, type STRING",
    ),
    "ckafka": WireFormat(
        "ckafka",
        ckafka_line,
        "BINLOG_NAME STRING, BINLOG_POS BIGINT, DATABASE STRING, EVENT_SERVER_ID STRING, "
        "GLOBAL_ID STRING, GROUP_ID STRING, NEW_VALUES "
        + _ROW_STR
        + ", OLD_VALUES "
        + _ROW_STR
        + ", `TABLE` STRING, TIME STRING, TYPE STRING",
    ),
    "dataworks": WireFormat(
        "dataworks",
        dataworks_line,
        "`schema` STRUCT<dataColumn: ARRAY<STRUCT<name: STRING, type: STRING>>, "
        "primaryKey: ARRAY<STRING>, source: STRUCT<dbType: STRING, dbVersion: STRING, "
        "dbName: STRING, tableName: STRING>>, payload STRUCT<before: STRUCT<dataColumn: "
        + _ROW_LONG
        + ">, after: STRUCT<dataColumn: "
        + _ROW_LONG
        + ">, sequenceId: STRING, "
        "scn: STRING, op: STRING, timestamp: STRUCT<eventTime: BIGINT, systemTime: BIGINT, "
        "checkpointTime: BIGINT>, ddl: STRUCT<text: STRING, ddlMeta: STRING>>, version STRING",
    ),
}

# CKafka messages carry no key: it is configured, as a user would (--primary-key). The other
# formats name it (Debezium record key, canal pkNames, DataWorks primaryKey).
PRIMARY_KEYS: dict[str, dict[str, tuple[str, ...]]] = {"ckafka": {f"{DB}.{TABLE}": ("id",)}}


def primary_keys(fmt: str) -> dict[str, tuple[str, ...]] | None:
    return PRIMARY_KEYS.get(fmt)


def write_events(
    path: Path, fmt: str, n: int, keys: int, stride: int, seed: int = 42, tables: int = 1
) -> Path:
    """Write the stream as JSON lines (once: an existing complete file is reused)."""
    done = path.with_suffix(path.suffix + ".done")
    if path.exists() and done.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    line = WIRE_FORMATS[fmt].line
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        buf: list[str] = []
        for e in events(n, keys, stride, seed, tables):
            buf.append(line(e, n))
            if len(buf) >= 10000:
                f.write("\n".join(buf) + "\n")
                buf.clear()
        if buf:
            f.write("\n".join(buf) + "\n")
    tmp.rename(path)
    done.touch()
    return path


def debezium_file(n: int) -> Path:
    """The Debezium file of ``n`` events that ``bench.run`` uses by default (keys = n/10,
    stride 100, seed 42), under ``bench/out/data``; written once. For the dev tools."""
    keys = max(n // 10, 1)
    folder = Path(__file__).resolve().parent / "out" / "data" / "debezium"
    return write_events(
        folder / f"n{n}-k{keys}-s100-seed42" / "events.jsonl", "debezium", n, keys, 100
    )
