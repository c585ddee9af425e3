"""Alibaba DataWorks sync-to-Kafka JSON: golden decodes of every seed 003 example, SCD1 apply."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from delta.tables import DeltaTable
from pyspark.sql import Row, SparkSession
from pyspark.sql.types import StructType

from cdclake.apply.tables import Target
from cdclake.decode import decode
from cdclake.sources import raw_from_lines

SEEDS = Path(__file__).resolve().parent.parent / "data" / "seeds"
NO_PK = "pkset_test.pkset_test_no_pk"
ROW_ID = "#alibaba_rds_row_id#"


def decoded(spark: SparkSession, lines: list[str]) -> list[Row]:
    df = decode(raw_from_lines(spark, lines), "dataworks")
    return sorted(df.collect(), key=lambda r: r["lineage"]["offset"])


def image(row: Row, which: str) -> dict[str, Any] | None:
    value = row[which]
    return None if value is None else value.toPython()


def row_types(row: Row) -> str:
    return StructType.fromJson(json.loads(row["row_schema"])).simpleString()


def test_seed_003_heartbeat_and_data_changes(spark: SparkSession) -> None:
    """The heartbeat, then +I, -U (UPDATE_BEFOR), +U (UPDATE_AFTER), -U/+U in one message, -D."""
    rows = decoded(spark, (SEEDS / "003_dataworks.jsonl").read_text().splitlines())
    seq = 1620457642589000000
    hi, lo = divmod(seq, 10**18)
    got = [
        (
            r["table"],
            r["op"],
            r["key_columns"],
            r["key_source"],
            r["position"],
            r["source_ts"],
            r["meta"]["type"],
            r["error"],
        )
        for r in rows
    ]
    assert got == [
        (None, "heartbeat", [], "none", None, datetime(2021, 5, 8, 7, 7, 39), "MHEARTBEAT", None),
        (
            NO_PK,
            "insert",
            [ROW_ID],
            "message",
            [hi, lo, 1],
            datetime(2021, 5, 8, 7, 11, 36),
            "INSERT",
            None,
        ),
        (
            NO_PK,
            "update",
            [ROW_ID],
            "message",
            [hi, lo + 1, 0],
            datetime(2021, 5, 8, 7, 14, 37),
            "UPDATE_BEFOR",
            None,
        ),
        (
            NO_PK,
            "update",
            [ROW_ID],
            "message",
            [hi, lo + 1, 1],
            datetime(2021, 5, 8, 7, 14, 37),
            "UPDATE_AFTER",
            None,
        ),
        (
            NO_PK,
            "update",
            [ROW_ID],
            "message",
            [hi, lo + 1, 1],
            datetime(2021, 5, 8, 7, 14, 37),
            "UPDATE_AFTER",
            None,
        ),
        (
            NO_PK,
            "delete",
            [ROW_ID],
            "message",
            [hi, lo + 2, 1],
            datetime(2021, 5, 8, 7, 17, 46),
            "DELETE",
            None,
        ),
    ]
    man = {"name": "name11", "job": "job11", "sex": "man", ROW_ID: 15}
    woman = {**man, "sex": "woman"}
    assert [(image(r, "before"), image(r, "after")) for r in rows] == [
        (None, None),
        (None, man),
        (man, None),
        (None, woman),
        (man, woman),
        (woman, None),
    ]
    assert row_types(rows[1]) == f"struct<name:string,job:string,sex:string,{ROW_ID}:bigint>"


def test_seed_003_format_example_as_printed_is_not_json(spark: SparkSession) -> None:
    """The document's first example has // comments and placeholders."""
    verbatim = (SEEDS / "003_dataworks_format_verbatim.json").read_text()
    [row] = decoded(spark, [verbatim])
    assert (row["op"], row["error"]) == (None, "not valid JSON")


def test_seed_003_format_example_repaired(spark: SparkSession) -> None:
    """Comments stripped: its op lists every op (unknown); repaired: an update with a PK change
    (111 -> 222) on an Oracle-style row with ``rowid``, and the same message as an ALTER."""
    lines = (SEEDS / "003_dataworks_format_repaired.jsonl").read_text().splitlines()
    listed, update, alter = decoded(spark, lines)
    assert listed["error"].startswith(
        "unknown DataWorks op 'INSERT/UPDATE_BEFOR/UPDATE_AFTER/DELETE/TRANSACTION_BEGIN/"
    )
    assert listed["error"].endswith(
        "(expected one of INSERT, UPDATE_BEFOR, UPDATE_BEFORE, "
        "UPDATE_AFTER, DELETE, TRANSACTION_BEGIN, TRANSACTION_END, "
        "CREATE, ALTER, ERASE, QUERY, RENAME, CINDEX, DINDEX, "
        "TRUNCATE, GTID, XACOMMIT, XAROLLBACK, MHEARTBEAT)"
    )
    assert (update["table"], update["op"], update["key_columns"], update["position"]) == (
        "myDatabase.mySchema.tableName",
        "update",
        ["id"],
        [1, 590315269000000001, 1],
    )
    assert row_types(update) == (
        "struct<id:bigint,name:string,binData:binary,ts:timestamp,rowid:string>"
    )
    ts = datetime(2020, 5, 24, 10, 14, 29, tzinfo=UTC)
    assert image(update, "before") == {
        "id": 111,
        "name": "scooter",
        "binData": b"scooter",
        "ts": ts,
        "rowid": "AAIUMPAAFAACxExAAE",
    }
    assert image(update, "after") == {
        "id": 222,
        "name": "donald",
        "binData": b"donald",
        "ts": ts,
        "rowid": "AAIUMPAAFAACxExAAE",
    }
    assert update["meta"]["scn"] == "2345678"
    assert update["source_ts"] == datetime(1970, 1, 1, 0, 0, 0, 1000)  # eventTime 1 (ms)
    assert (alter["op"], alter["detail"], alter["table"], alter["meta"]["database"]) == (
        "ddl",
        "ADD COLUMN ...",
        "myDatabase.mySchema.tableName",
        "myDatabase",
    )


def dw(
    op: str,
    seq: int | str | None,
    *,
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
    table: str = "items",
    columns: dict[str, str] | None = None,
    pk: tuple[str, ...] | None = ("id",),
    ddl: str | None = None,
) -> str:
    """One DataWorks message (MySQL source ``shop``); ``pk=None`` is a table without key."""
    columns = columns or {"id": "LONG", "name": "STRING", "price": "DOUBLE", "ok": "BOOLEAN"}
    return json.dumps(
        {
            "schema": {
                "dataColumn": [{"name": n, "type": t} for n, t in columns.items()],
                "primaryKey": None if pk is None else list(pk),
                "source": {"dbType": "MySQL", "dbName": "shop", "tableName": table},
            },
            "payload": {
                "before": before and {"dataColumn": before},
                "after": after and {"dataColumn": after},
                "sequenceId": None if seq is None else str(seq),
                "timestamp": {"eventTime": 1700000000000, "systemTime": 1700000000001},
                "op": op,
                "ddl": ddl and {"text": ddl, "ddlMeta": None},
            },
            "version": "0.0.1",
        }
    )


def test_control_ops_and_typed_values(spark: SparkSession) -> None:
    row = {"id": 1, "name": "a", "price": 2.5, "ok": True}
    rows = decoded(
        spark,
        [
            dw("TRANSACTION_BEGIN", 5),
            dw("UPDATE_BEFORE", 6, before=row),
            dw("TRANSACTION_END", 7),
            dw("TRUNCATE", 8, ddl="TRUNCATE TABLE items"),
            dw("CINDEX", 9, ddl="CREATE INDEX ix ON items (name)"),
            dw("XAROLLBACK", 10),
        ],
    )
    assert [(r["op"], r["position"], r["detail"], r["error"]) for r in rows] == [
        ("begin", [0, 5, 1], None, None),
        ("update", [0, 6, 0], None, None),
        ("commit", [0, 7, 1], None, None),
        ("truncate", [0, 8, 1], "TRUNCATE TABLE items", None),
        ("ddl", [0, 9, 1], "CREATE INDEX ix ON items (name)", None),
        ("commit", [0, 10, 1], None, None),
    ]
    assert (image(rows[1], "before"), image(rows[1], "after")) == (row, None)


def test_bad_messages_are_quarantined_with_a_reason(spark: SparkSession) -> None:
    row = {"id": 1, "name": "a", "price": 2.5, "ok": True}
    lines = [
        dw("INSERT", "12a", after=row),
        dw("INSERT", "1" * 37, after=row),
        dw("INSERT", 1, after=row, columns={"id": "LONG", "x": "DECIMAL"}),
        dw("INSERT", 2, after={**row, "id": "one"}),
        dw("DELETE", 3),
        dw("UPSERT", 4, after=row),
        '{"payload": {"op": "INSERT", "timestamp": {}',
    ]
    assert [r["error"] for r in decoded(spark, lines)] == [
        "cannot order the change: sequenceId '12a' is not a decimal number of at most 36 digits",
        f"cannot order the change: sequenceId '{'1' * 37}' is not a decimal number of at most "
        "36 digits",
        "DataWorks column 'x' has type 'DECIMAL'; expected one of LONG, STRING, BYTES, DATE, "
        "DOUBLE, BOOLEAN",
        "column id: value 'one' does not fit LONG",
        "DataWorks DELETE message without before.dataColumn",
        "unknown DataWorks op 'UPSERT' (expected one of INSERT, UPDATE_BEFOR, UPDATE_BEFORE, "
        "UPDATE_AFTER, DELETE, TRANSACTION_BEGIN, TRANSACTION_END, CREATE, ALTER, ERASE, QUERY, "
        "RENAME, CINDEX, DINDEX, TRUNCATE, GTID, XACOMMIT, XAROLLBACK, MHEARTBEAT)",
        "not valid JSON",
    ]


def test_sequence_id_compares_as_a_number(spark: SparkSession) -> None:
    """'9' > '10' as text; as numbers 10 is later (HUDI-6766-style string comparison bug)."""
    row = {"id": 1, "name": "a", "price": 2.5, "ok": True}
    nine, ten = decoded(spark, [dw("INSERT", 9, after=row), dw("UPDATE_AFTER", 10, after=row)])
    assert ten["position"] > nine["position"]


def test_multi_table_history_applies_as_scd1(lake: Any) -> None:
    """Two-message and one-message updates, a PK change, deletes, a keyless table, a re-send."""

    def item(i: int, name: str) -> dict[str, Any]:
        return {"id": i, "name": name, "price": 1.5, "ok": True}

    def log(row_id: int, text: str) -> dict[str, Any]:
        return {"msg": text, ROW_ID: row_id}

    def lg(op: str, seq: int, **kw: Any) -> str:
        return dw(op, seq, table="log", columns={"msg": "STRING", ROW_ID: "LONG"}, pk=None, **kw)

    lines = [
        dw("INSERT", 1, after=item(1, "a")),
        dw("INSERT", 2, after=item(2, "b")),
        lg("INSERT", 3, after=log(100, "hello")),
        lg("INSERT", 4, after=log(101, "bye")),
        dw("UPDATE_BEFOR", 5, before=item(1, "a")),
        dw("UPDATE_AFTER", 5, after=item(1, "a2")),
        dw("UPDATE_AFTER", 6, before=item(2, "b"), after=item(3, "b")),  # PK 2 -> 3
        lg("UPDATE_BEFOR", 7, before=log(100, "hello")),
        lg("UPDATE_AFTER", 7, after=log(100, "hello!")),
        lg("DELETE", 8, before=log(101, "bye")),
    ]
    lake.apply(lines, format="dataworks")
    assert lake.rows("shop.items") == [(1, "a2", 1.5, True), (3, "b", 1.5, True)]
    assert lake.rows("shop.log") == [("hello!", 100)]
    resend = lake.apply(lines[:4], format="dataworks", source="resend.jsonl")
    assert lake.rows("shop.items") == [(1, "a2", 1.5, True), (3, "b", 1.5, True)]
    assert lake.rows("shop.log") == [("hello!", 100)]
    assert resend.tables["shop.log"].key_columns == (ROW_ID,)
    assert resend.tables["shop.items"].ignored == 2


def test_heartbeats_leave_tables_untouched(lake: Any, spark: SparkSession) -> None:
    heartbeat = (SEEDS / "003_dataworks.jsonl").read_text().splitlines()[0]
    lake.apply(
        [dw("INSERT", 1, after={"id": 1, "name": "a", "price": 0.5, "ok": False})],
        format="dataworks",
    )
    path = Target(str(lake.root)).table_path("shop.items")
    version = DeltaTable.forPath(spark, path).history(1).first()["version"]
    result = lake.apply([heartbeat, heartbeat], format="dataworks")
    assert (result.control, result.control_by_op, result.tables) == (2, {"heartbeat": 2}, {})
    assert result.quarantined == 0
    assert lake.rows("shop.items") == [(1, "a", 0.5, False)]
    assert DeltaTable.forPath(spark, path).history(1).first()["version"] == version
