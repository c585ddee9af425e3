"""Builders of one message per format for a table ``shop.items`` (id, name, qty), so that tests
of bad input (and the fuzz suite) can mix good and bad messages of every format.

Each builder takes the row as a dict of JSON values and a position ``n`` (larger is newer).
"""

from __future__ import annotations

import json
from typing import Any

Row = dict[str, Any]
USERS_V1 = {"id": "int", "name": "varchar(20)"}
"""The first version of canal's ``shop.users`` (:func:`canal_rows`), as ``mysqlType``."""
MYSQL = {"id": "int(11)", "name": "varchar(20)", "qty": "bigint(20)"}
DW_TYPES = {"id": "LONG", "name": "STRING", "qty": "LONG"}
DBZ_FIELDS = [
    {"type": "int32", "optional": False, "field": "id"},
    {"type": "string", "optional": True, "field": "name"},
    {"type": "int64", "optional": True, "field": "qty"},
]
TABLES = {
    "debezium": "shop.dbo.items",
    "canal": "shop.items",
    "ckafka": "shop.items",
    "dataworks": "shop.items",
}


def debezium(
    n: int,
    after: Row | None,
    before: Row | None = None,
    *,
    op: str = "c",
    schema: list[dict[str, Any]] | None = None,
    key: Any = "auto",
) -> str:
    """A SQL Server event (schemaless unless ``schema`` gives the row's field schemas)."""
    lsn = f"{n:08x}:{n:08x}:0002"
    payload = {
        "before": before,
        "after": after,
        "source": {
            "connector": "sqlserver",
            "db": "shop",
            "schema": "dbo",
            "table": "items",
            "change_lsn": lsn,
            "commit_lsn": lsn,
            "ts_ms": 1_700_000_000_000 + n,
        },
        "op": op,
        "ts_ms": 1_700_000_000_000 + n,
    }
    value: dict[str, Any] = payload
    if schema is not None:
        row = {"type": "struct", "optional": True, "fields": schema}
        value = {
            "schema": {
                "type": "struct",
                "fields": [{**row, "field": "before"}, {**row, "field": "after"}],
            },
            "payload": payload,
        }
    if key == "auto":
        image = after or before or {}
        key = {"id": image.get("id")}
    return json.dumps({"key": key, "value": value})


def canal(
    n: int, after: Row | None, before: Row | None = None, *, mysql: dict[str, str] | None = None
) -> str:
    """A canal flat message of one row: INSERT, UPDATE (``before``: the old values) or DELETE
    (``after`` None)."""
    kind = "DELETE" if after is None else "UPDATE" if before else "INSERT"
    data = after if after is not None else before
    old = [{k: v for k, v in before.items() if data and data.get(k) != v}] if before else None
    text = {k: None if v is None else str(v) for k, v in (data or {}).items()}
    return json.dumps(
        {
            "data": [text],
            "database": "shop",
            "es": 1_700_000_000_000 + n,
            "id": n,
            "isDdl": False,
            "mysqlType": mysql or MYSQL,
            "old": [{k: None if v is None else str(v) for k, v in o.items()} for o in old]
            if old and old[0]
            else None,
            "pkNames": ["id"],
            "sql": "",
            "sqlType": None,
            "table": "items",
            "ts": 1_700_000_000_000 + n,
            "type": kind,
        }
    )


def ckafka_create_doc(
    columns: str = "`id` int NOT NULL, `name` varchar(20), `qty` bigint", table: str = "items"
) -> dict[str, Any]:
    """The canal-form CREATE TABLE a CKafka stream carries before its DML, as an object."""
    return {
        "data": None,
        "database": "shop",
        "es": 1655812326,
        "id": 0,
        "isDdl": True,
        "mysqlType": None,
        "old": None,
        "pkNames": None,
        "sql": f"CREATE TABLE `{table}` ({columns}, PRIMARY KEY (`id`))",
        "sqlType": None,
        "table": table,
        "ts": 1655812326,
        "type": "CREATE",
    }


def ckafka_create(columns: str = "`id` int NOT NULL, `name` varchar(20), `qty` bigint") -> str:
    """The canal-form CREATE TABLE a CKafka stream carries before its DML."""
    return json.dumps(ckafka_create_doc(columns))


def ckafka(n: int, after: Row | None, before: Row | None = None) -> str:
    """A CKafka "Official Format I" row change (values as text, as the connector writes them)."""
    kind = "D" if after is None else "U" if before else "I"

    def text(r: Row | None) -> Row | None:
        return None if r is None else {k: None if v is None else str(v) for k, v in r.items()}

    return json.dumps(
        {
            "BINLOG_NAME": "mysql-bin.000003",
            "BINLOG_POS": 1000 + n,
            "DATABASE": "shop",
            "EVENT_SERVER_ID": None,
            "GLOBAL_ID": None,
            "GROUP_ID": None,
            "NEW_VALUES": text(after),
            "OLD_VALUES": text(before),
            "TABLE": "items",
            "TIME": "20240101000000",
            "TYPE": kind,
        }
    )


def dataworks_doc(
    n: int,
    after: Row | None,
    before: Row | None = None,
    *,
    columns: dict[str, str] | None = None,
    op: str | None = None,
    table: str = "items",
) -> dict[str, Any]:
    """A DataWorks message of one row, as an object (``op``: its ``op`` code; by default an
    update is the UPDATE_AFTER half with its before)."""
    op = op or ("DELETE" if after is None else "UPDATE_AFTER" if before else "INSERT")
    return {
        "schema": {
            "dataColumn": [{"name": k, "type": t} for k, t in (columns or DW_TYPES).items()],
            "primaryKey": ["id"],
            "source": {"dbType": "MySQL", "dbName": "shop", "tableName": table},
        },
        "payload": {
            "before": before and {"dataColumn": before},
            "after": after and {"dataColumn": after},
            "sequenceId": str(1_700_000_000_000_000 + n),
            "timestamp": {"eventTime": 1_700_000_000_000, "systemTime": 1_700_000_000_001},
            "op": op,
            "ddl": None,
        },
        "version": "0.0.1",
    }


def dataworks(
    n: int, after: Row | None, before: Row | None = None, *, columns: dict[str, str] | None = None
) -> str:
    """A DataWorks message of one row (an update is the UPDATE_AFTER half with its before)."""
    return json.dumps(dataworks_doc(n, after, before, columns=columns))


BUILDERS = {"debezium": debezium, "canal": canal, "ckafka": ckafka, "dataworks": dataworks}


def canal_ddl(sql: str, type_: str, es: int, table: str = "users", db: str = "shop") -> str:
    """A canal DDL message (``type_`` CREATE, ALTER, RENAME, ERASE …) at source time ``es``."""
    return json.dumps(
        {
            "data": None,
            "database": db,
            "es": es,
            "id": 0,
            "isDdl": True,
            "mysqlType": None,
            "old": None,
            "pkNames": None,
            "sql": sql,
            "sqlType": None,
            "table": table,
            "ts": es,
            "type": type_,
        }
    )


def canal_rows(
    type_: str,
    es: int,
    data: list[dict],
    mysql: dict,
    old: list[dict] | None = None,
    table: str = "users",
    db: str = "shop",
) -> str:
    """A canal message of ``data`` rows of ``db.table`` (``type_`` INSERT, UPDATE, DELETE)."""
    return json.dumps(
        {
            "data": data,
            "database": db,
            "es": es,
            "id": 1,
            "isDdl": False,
            "mysqlType": mysql,
            "old": old,
            "pkNames": None,
            "sql": "",
            "sqlType": None,
            "table": table,
            "ts": es,
            "type": type_,
        }
    )
