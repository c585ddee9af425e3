"""Debezium events flattened by Kafka Connect's ``ExtractNewRecordState`` SMT (issue 40).

Messages are written the way the SMT writes them (Debezium's "New Record State Extraction" page
and ``ExtractNewRecordState``/``DefaultDeleteHandlingStrategy``): the value is the row, the
added fields are ``__``-prefixed (``__deleted`` is the string ``"true"``/``"false"``), a schema
is named ``<prefix>.<db>.<table>.Value``, ``delete.tombstone.handling.mode=tombstone`` turns a
delete into a null value. Each test's docstring works out the expected table by hand; each runs
with ``--format debezium`` and ``--format auto``.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from cdclake.config import ApplyConfig
from cdclake.decode import KnownGroups, decode
from cdclake.formats.debezium import FLAT_NO_TABLE
from cdclake.run.runner import apply_raw
from cdclake.sources import raw_from_lines
from tests.conftest import Lake

FORMATS = ("debezium", "auto")

# MySQL inventory.customers, schemas.enable=true
CUSTOMER_FIELDS = [
    {"type": "int32", "optional": False, "field": "id"},
    {"type": "string", "optional": False, "field": "first_name"},
    {"type": "string", "optional": False, "field": "email"},
    {
        "type": "bytes",
        "optional": True,
        "name": "org.apache.kafka.connect.data.Decimal",
        "parameters": {"scale": "2", "connect.decimal.precision": "8"},
        "field": "balance",
    },
]
ADDED_MYSQL = [  # add.fields=op,file,pos,source.ts_ms; delete.handling.mode=rewrite
    {"type": "string", "optional": True, "field": "__op"},
    {"type": "string", "optional": True, "field": "__file"},
    {"type": "int64", "optional": True, "field": "__pos"},
    {"type": "int64", "optional": True, "field": "__source_ts_ms"},
    {"type": "string", "optional": True, "field": "__deleted"},
]


def mysql_row(row: dict[str, Any], op: str, pos: int | None, deleted: bool = False) -> str:
    """One record: key ``{"id": n}`` with its schema, value the row with the added fields."""
    added: dict[str, Any] = {"__op": op, "__source_ts_ms": 1_700_000_000_000 + (pos or 0)}
    if pos is not None:
        added |= {"__file": "mysql-bin.000003", "__pos": pos}
    value = {
        "schema": {
            "type": "struct",
            "fields": CUSTOMER_FIELDS + ADDED_MYSQL,
            "optional": False,
            "name": "dbserver1.inventory.customers.Value",
        },
        "payload": {**row, **added, "__deleted": "true" if deleted else "false"},
    }
    key = {
        "schema": {
            "type": "struct",
            "fields": [CUSTOMER_FIELDS[0]],
            "optional": False,
            "name": "dbserver1.inventory.customers.Key",
        },
        "payload": {"id": row["id"]},
    }
    return json.dumps({"key": key, "value": value, "topic": "dbserver1.inventory.customers"})


def customer(n: int, name: str, balance: str) -> dict[str, Any]:
    """``balance`` is the Decimal's base64 unscaled value (scale 2)."""
    return {"id": n, "first_name": name, "email": f"{name}@example.com", "balance": balance}


# "AOs=" is 235 -> 2.35, "A+g=" is 1000 -> 10.00, "Jw8=" is 9999 -> 99.99
@pytest.mark.parametrize("fmt", FORMATS)
def test_mysql_with_schema_positions_and_rewritten_deletes(lake: Lake, fmt: str) -> None:
    """MySQL, schemas on, ``add.fields=op,file,pos,source.ts_ms``, rewrite. Lines out of binlog
    order: pos 700 update 1001 -> 99.99 comes before pos 500 update 1001 -> 10.00, so the
    position keeps 99.99. 1002 inserted (pos 400) and deleted (pos 800, its before image with
    ``__deleted: "true"``). Table ``inventory.customers`` (from the schema name):
    (1001, Sally, 99.99)."""
    lines = [
        mysql_row(customer(1001, "Sally", "AOs="), "r", 300),
        mysql_row(customer(1002, "George", "A+g="), "c", 400),
        mysql_row(customer(1001, "Sally", "Jw8="), "u", 700),
        mysql_row(customer(1001, "Sally", "A+g="), "u", 500),
        mysql_row(customer(1002, "George", "A+g="), "d", 800, deleted=True),
    ]
    result = lake.apply(lines, format=fmt)
    assert (result.quarantined, result.changes) == (0, 5)
    assert result.tables["inventory.customers"].input_ordered is False
    df = lake.df("inventory.customers")
    assert [c for c in df.columns if not c.startswith("_cdc_")] == [
        "id", "first_name", "email", "balance"
    ]  # fmt: skip
    assert df.schema["balance"].dataType.simpleString() == "decimal(8,2)"
    assert lake.rows("inventory.customers", "id", "first_name", "balance") == [
        (1001, "Sally", Decimal("99.99"))
    ]
    (stored,) = lake.df("inventory.customers").select("_cdc_position").collect()
    assert stored[0] == [3, 700, -1, -1]  # binlog file number, pos, no total_order, no row


def pg_record(row: dict[str, Any], **added: Any) -> str:
    """PostgreSQL, schemas off: a bare row, the key ``{"id": n}``, the topic
    ``<prefix>.<schema>.<table>``."""
    value = {**row, **added}
    return json.dumps({"key": {"id": row["id"]}, "value": value, "topic": "pg.public.orders"})


@pytest.mark.parametrize("fmt", FORMATS)
def test_postgres_without_schema_lsn_and_replica_identity_default_delete(
    lake: Lake, fmt: str
) -> None:
    """PostgreSQL, schemas off, ``add.fields=op,lsn,source.ts_ms``, rewrite. REPLICA IDENTITY
    DEFAULT: the rewritten delete holds the key only (other columns null). Table from the topic
    ``pg.public.orders``: ``public.orders``. Insert 1 (qty 5), insert 2 (qty 7), update 1 ->
    qty 6 at a higher LSN written first, delete 2: (1, pen, 6)."""
    lines = [
        pg_record({"id": 1, "item": "pen", "qty": 6}, __op="u", __lsn=3000, __deleted="false"),
        pg_record({"id": 1, "item": "pen", "qty": 5}, __op="c", __lsn=1000, __deleted="false"),
        pg_record({"id": 2, "item": "ink", "qty": 7}, __op="c", __lsn=2000, __deleted="false"),
        pg_record({"id": 2, "item": None, "qty": None}, __op="d", __lsn=4000, __deleted="true"),
    ]
    result = lake.apply(lines, format=fmt)
    assert (result.quarantined, result.changes) == (0, 4)
    assert result.tables["public.orders"].input_ordered is False
    assert lake.rows("public.orders") == [(1, "pen", 6)]


@pytest.mark.parametrize("fmt", FORMATS)
def test_rewrite_without_op_is_an_upsert_in_input_order(lake: Lake, fmt: str) -> None:
    """``delete.handling.mode=rewrite`` and ``add.fields=db,table`` only: no op, no position.
    A row with ``__deleted: "false"`` is an upsert, ``"true"`` a delete, in input order; the
    table comes from ``__db``/``__table``; the rewrite mode's trailing tombstone (rewrite-with-
    tombstone) stays a control record. Rows: 1 a, 2 b, 1 a2, delete 2, tombstone 2, 3 c:
    table (1, a2), (3, c)."""

    def row(n: int, v: str, deleted: str = "false") -> str:
        value = {"id": n, "v": v, "__db": "shop", "__table": "items", "__deleted": deleted}
        return json.dumps({"key": {"id": n}, "value": value})

    tombstone = json.dumps({"key": {"id": 2}, "value": None})
    lines = [row(1, "a"), row(2, "b"), row(1, "a2"), row(2, "b", "true"), tombstone, row(3, "c")]
    result = lake.apply(lines, format=fmt)
    assert (result.quarantined, result.changes, result.control) == (0, 5, 1)
    assert result.control_by_op == {"tombstone": 1}
    assert result.tables["shop.items"].input_ordered is True
    assert lake.rows("shop.items") == [(1, "a2"), (3, "c")]


def header_record(row: dict[str, Any] | None, key: int, **headers: Any) -> str:
    """``add.headers=op,db,schema,table,lsn`` with the default
    ``delete.tombstone.handling.mode=tombstone``: a bare row without marks, the metadata in
    headers; a delete is a null value whose headers say ``__op: d``."""
    doc = {"key": {"id": key}, "value": row, "headers": {k: str(v) for k, v in headers.items()}}
    return json.dumps(doc)


def header_lines() -> list[str]:
    h = {"__db": "inventory", "__schema": "public", "__table": "customers"}
    return [
        header_record({"id": 1, "name": "a"}, 1, __op="c", __lsn=10, **h),
        header_record({"id": 2, "name": "b"}, 2, __op="c", __lsn=20, **h),
        header_record(None, 1, __op="d", __lsn=40, **h),
        header_record({"id": 2, "name": "b2"}, 2, __op="u", __lsn=30, **h),
    ]


def test_headers_and_tombstone_deletes(lake: Lake) -> None:
    """``add.headers``: table ``inventory.public.customers`` (the same name as the unflattened
    events), position ``__lsn``; the null value with ``__op: d`` deletes key 1. Insert 1 a,
    insert 2 b, delete 1, update 2 -> b2: (2, b2)."""
    result = lake.apply(header_lines(), format="debezium")
    assert (result.quarantined, result.changes, result.control) == (0, 4, 0)
    assert lake.rows("inventory.public.customers") == [(2, "b2")]


def test_auto_cannot_tell_a_bare_row_marked_only_in_headers(lake: Lake) -> None:
    """``--format auto`` reads the value alone: a schemaless row whose marks are only in its
    headers is no known format's and is quarantined (``--format debezium`` reads it above);
    the null-valued delete goes to Debezium, whose first format it is: a delete of a row that
    is not there."""
    result = lake.apply(header_lines(), format="auto")
    assert result.quarantined == 3
    assert set(result.quarantine_reasons) == {
        "not a message of any known format (debezium, canal, ckafka, dataworks)"
    }


@pytest.mark.parametrize("fmt", FORMATS)
def test_bad_flattened_messages_are_quarantined_with_a_reason(lake: Lake, fmt: str) -> None:
    """An unknown ``__op``; a row with no table (no ``__table``, no schema, no topic); a good
    row of ``shop.items``: one row, two quarantined."""
    good = {"id": 1, "v": "a", "__op": "c", "__db": "shop", "__table": "items"}
    lines = [
        json.dumps({"key": {"id": 1}, "value": {**good, "__op": "x"}}),
        json.dumps({"key": {"id": 1}, "value": {"id": 1, "v": "a", "__op": "c"}}),
        json.dumps({"key": {"id": 1}, "value": good}),
    ]
    result = lake.apply(lines, format=fmt)
    assert result.quarantine_reasons == {
        "unknown __op 'x' (expected one of c, u, d, r)": 1,
        FLAT_NO_TABLE: 1,
    }
    assert lake.rows("shop.items") == [(1, "a")]


def test_added_fields_are_not_columns_and_a_row_column_named_op_is(spark: SparkSession) -> None:
    """The added fields never reach the row image; a source column named ``op`` (not an
    envelope: no ``before``/``after``/``source``) stays a column."""
    value = {"__op": "c", "id": 7, "op": "buy", "__table": "t", "__db": "d", "__deleted": "false"}
    raw = raw_from_lines(spark, [json.dumps({"key": {"id": 7}, "value": value})])
    (change,) = decode(raw, "debezium").collect()
    assert change["error"] is None
    assert (change["table"], change["op"]) == ("d.t", "insert")
    assert json.loads(change["after"].toJson()) == {"id": 7, "op": "buy"}
    assert change["meta"]["ordering"] == "input"


# Debezium Server (debezium.format.value=json): the value and key are what Kafka Connect's
# JsonConverter writes, schemas on by default (debezium.format.value.schemas.enable); the Kafka
# sink writes them to topic <prefix>.<db>.<table>, the HTTP sink POSTs the value, the Redis
# sink adds {key: value} to a stream. Written as record lines here.
SERVER_SCHEMA = {
    "type": "struct",
    "name": "tutorial.inventory.customers.Envelope",
    "fields": [
        {"type": "struct", "optional": True, "field": "before", "fields": CUSTOMER_FIELDS[:3]},
        {"type": "struct", "optional": True, "field": "after", "fields": CUSTOMER_FIELDS[:3]},
        {"type": "struct", "optional": False, "field": "source", "fields": []},
        {"type": "string", "optional": False, "field": "op"},
        {"type": "int64", "optional": True, "field": "ts_ms"},
    ],
}


def server_event(op: str, before: Any, after: Any, lsn: int, schemas: bool) -> str:
    source = {"version": "2.7.3.Final", "connector": "postgresql", "name": "tutorial",
              "ts_ms": 1_700_000_000_000, "snapshot": "false", "db": "postgres",
              "sequence": f'["{lsn - 8}","{lsn}"]', "schema": "inventory",
              "table": "customers", "txId": 770, "lsn": lsn, "xmin": None}  # fmt: skip
    payload = {"before": before, "after": after, "source": source, "op": op,
               "ts_ms": 1_700_000_000_100, "transaction": None}  # fmt: skip
    image = after or before
    key: Any = {"id": image["id"]}
    value: Any = payload
    if schemas:
        value = {"schema": SERVER_SCHEMA, "payload": payload}
        key = {"schema": {"type": "struct", "fields": [CUSTOMER_FIELDS[0]]}, "payload": key}
    return json.dumps({"key": key, "value": value})


@pytest.mark.parametrize("schemas", [True, False])
@pytest.mark.parametrize("fmt", FORMATS)
def test_debezium_server_json(lake: Lake, fmt: str, schemas: bool) -> None:
    """Debezium Server's PostgreSQL events, schemas on and off: insert 1001, insert 1002,
    update 1001 (full before image: REPLICA IDENTITY FULL), delete 1002 and its tombstone:
    table ``postgres.inventory.customers`` = (1001, Sally, sally2@x)."""
    s1 = {"id": 1001, "first_name": "Sally", "email": "sally@x"}
    s2 = {"id": 1001, "first_name": "Sally", "email": "sally2@x"}
    g = {"id": 1002, "first_name": "George", "email": "g@x"}
    lines = [
        server_event("c", None, s1, 100, schemas),
        server_event("c", None, g, 200, schemas),
        server_event("u", s1, s2, 300, schemas),
        server_event("d", g, None, 400, schemas),
        json.dumps({"key": {"id": 1002}, "value": None}),
    ]
    result = lake.apply(lines, format=fmt)
    assert (result.quarantined, result.changes, result.control) == (0, 4, 1)
    table = "postgres.inventory.customers"
    assert lake.rows(table, "id", "first_name", "email") == [(1001, "Sally", "sally2@x")]


def test_positions_from_added_fields(spark: SparkSession) -> None:
    """SQL Server ``__commit_lsn`` + ``__change_lsn`` (+ ``__event_serial_no``) is the
    unflattened position; ``__lsn`` in a header is PostgreSQL's; a ``__file`` without ``__pos``
    is no position: input order (``[epoch, file rank, line]``)."""
    sqlserver = {"id": 1, "__op": "c", "__db": "testDB", "__schema": "dbo", "__table": "t",
                 "__commit_lsn": "0000002b:00000758:0005", "__change_lsn": "0000002b:00000758:0003",
                 "__event_serial_no": 2}  # fmt: skip
    header_lsn = {"key": {"id": 2}, "value": {"id": 2, "__table": "t", "__db": "d"},
                  "headers": {"__op": "u", "__lsn": "123"}}  # fmt: skip
    file_only = {"id": 3, "__op": "r", "__table": "t", "__db": "m", "__file": "mysql-bin.000001"}
    lines = [
        json.dumps({"key": {"id": 1}, "value": sqlserver}),
        json.dumps(header_lsn),
        json.dumps({"key": {"id": 3}, "value": file_only}),
    ]
    rows = decode(raw_from_lines(spark, lines, epoch=9), "debezium").orderBy("lineage").collect()
    assert [(r["table"], r["op"], r["position"], r["error"]) for r in rows] == [
        ("testDB.dbo.t", "insert", [0x2B, 0x758, 5, 0x2B, 0x758, 3, 2], None),
        ("d.t", "update", [123], None),
        ("m.t", "read", [9, 0, 3], None),
    ]
    assert [r["meta"].get("ordering") for r in rows] == [None, None, "input"]


def test_a_stream_of_flattened_rows_takes_two_passes_and_holds_the_rows(
    spark: SparkSession, tmp_path: Path
) -> None:
    """A stream's later batch is typed in one pass only from images under ``before``/``after``:
    a flattened row sends its batch through two passes. Batch 1: MySQL rows 1001 (2.35) and 1002
    with schema; batch 2: update 1001 -> 99.99, delete 1002: table (1001, 99.99)."""
    known = KnownGroups()
    config = ApplyConfig(format="debezium", inputs=("in.jsonl",), target=str(tmp_path / "lake"))
    batches = [
        [
            mysql_row(customer(1001, "Sally", "AOs="), "r", 300),
            mysql_row(customer(1002, "George", "A+g="), "c", 400),
        ],
        [
            mysql_row(customer(1001, "Sally", "Jw8="), "u", 700),
            mysql_row(customer(1002, "George", "A+g="), "d", 800, deleted=True),
        ],
    ]
    results = [
        apply_raw(raw_from_lines(spark, lines, f"b{i}.jsonl"), config, known=known)
        for i, lines in enumerate(batches)
    ]
    assert [(r.quarantined, r.changes, r.one_pass) for r in results] == [
        (0, 2, False),
        (0, 2, False),
    ]
    lake = Lake(spark, tmp_path / "lake")
    assert lake.rows("inventory.customers", "id", "balance") == [(1001, Decimal("99.99"))]
