"""Canal flat messages: golden decodes (seed 001's canal-form DDL, multi-row DML) and SCD1 apply.

Expected changes are written in changelog notation in the docstrings: ``+I(...)`` insert,
``-U(...)``/``+U(...)`` before/after of an update, ``-D(...)`` delete.
"""

from __future__ import annotations

import json
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from pyspark.sql import Row, SparkSession
from pyspark.sql.types import StructType

from cdclake.decode import decode
from cdclake.formats.base import DecodeOptions
from cdclake.sources import raw_from_lines

SEEDS = Path(__file__).resolve().parent.parent / "data" / "seeds"
ES = 1_700_000_000_000  # 2023-11-14 22:13:20 UTC
# input order epoch (cdclake.model.INPUT_ORDER_DOC): a position is [es, epoch, file, line, row]
EPOCH = 7
MYSQL = {
    "id": "int(11)",
    "name": "varchar(20)",
    "price": "decimal(10,2)",
    "flag": "tinyint(1)",
    "born": "date",
}


def canal(
    kind: str,
    data: list[dict[str, Any]] | None = None,
    old: list[dict[str, Any]] | None = None,
    *,
    table: str = "items",
    es: int = ES,
    pk: list[str] | None = None,
    mysql: dict[str, str] | None = None,
    sql: str = "",
    gtid: str | None = None,
) -> str:
    """One canal flat message as a JSON line (DDL when ``data`` is None and ``sql`` is set)."""
    is_row = kind in ("INSERT", "UPDATE", "DELETE")
    return json.dumps(
        {
            "data": data,
            "database": "shop",
            "es": es,
            "id": 1,
            "isDdl": not is_row and bool(sql),
            "mysqlType": (mysql or MYSQL) if is_row else None,
            "old": old,
            "pkNames": (pk if pk is not None else ["id"]) if is_row else None,
            "sql": sql,
            "sqlType": None,
            "table": table,
            "ts": es + 5,
            "type": kind,
            "gtid": gtid,
        }
    )


def decoded(spark: SparkSession, lines: list[str], **options: Any) -> list[Row]:
    df = decode(raw_from_lines(spark, lines, epoch=EPOCH), "canal", DecodeOptions(**options))
    return sorted(df.collect(), key=lambda r: (r["lineage"]["offset"], r["position"] or []))


def image(row: Row, which: str) -> dict[str, Any] | None:
    value = row[which]
    return None if value is None else value.toPython()


def row_types(row: Row) -> str:
    return StructType.fromJson(json.loads(row["row_schema"])).simpleString()


def test_seed_001_canal_ddl_messages(spark: SparkSession) -> None:
    """Seed 001 prints six DDL messages in canal form; each is a ddl control record."""
    lines = (SEEDS / "001_ckafka.jsonl").read_text().splitlines()[:6]
    rows = decoded(spark, lines)
    got = [
        (
            r["table"],
            r["op"],
            r["detail"],
            r["meta"]["database"],
            r["meta"]["type"],
            r["position"],
            r["source_ts"],
            r["error"],
        )
        for r in rows
    ]
    ts = datetime(2022, 6, 21, 11, 52, 6)  # es 1655812326 is in seconds: scaled to ms
    create = (
        "CREATE TABLE `customers` (\n`id` int NOT NULL AUTO_INCREMENT,\n"
        "`first_name` varchar(255) NOT NULL,\n`last_name` varchar(255) NOT NULL,\n"
        "`email` varchar(255) NOT NULL,\nPRIMARY KEY (`id`),\nUNIQUE KEY `email` (`email`),\n"
        "KEY `ix_id` (`id`)\n) ENGINE=InnoDB AUTO_INCREMENT=1041 DEFAULT CHARSET=utf8"
    )
    assert got == [
        (
            None,
            "ddl",
            "CREATE DATABASE `dip_test` CHARSET utf8mb4 COLLATE utf8mb4_0900_ai_ci",
            "dip_test",
            "QUERY",
            [1655812326000, EPOCH, 0, 1, 0],
            ts,
            None,
        ),
        (
            None,
            "ddl",
            "DROP DATABASE IF EXISTS `dip_test`",
            "dip_test",
            "QUERY",
            [1655812326000, EPOCH, 0, 2, 0],
            ts,
            None,
        ),
        (
            "dip_test.customers",
            "ddl",
            create,
            "dip_test",
            "CREATE",
            [1655812326000, EPOCH, 0, 3, 0],
            ts,
            None,
        ),
        (
            "test.user",
            "ddl",
            "ALTER TABLE `user` ADD COLUMN `createtime` datetime NULL DEFAULT CURRENT_TIMESTAMP",
            "test",
            "ALTER",
            [1655782153000, EPOCH, 0, 4, 0],
            datetime(2022, 6, 21, 3, 29, 13),
            None,
        ),
        (
            "dip_test.customers",
            "ddl",
            "DROP TABLE IF EXISTS `dip_test`.`customers`",
            "dip_test",
            "ERASE",
            [1655812326000, EPOCH, 0, 5, 0],
            ts,
            None,
        ),
        (
            "testDB.t_test",
            "ddl",
            "rename table test to t_test",
            "testDB",
            "RENAME",
            [1656300979748, EPOCH, 0, 6, 0],
            datetime(2022, 6, 27, 3, 36, 19, 748000),
            None,
        ),
    ]
    assert all(r["key_columns"] == [] and r["key_source"] == "none" for r in rows)


def test_seed_001_create_table_as_printed_is_not_json(spark: SparkSession) -> None:
    """The document prints the CREATE TABLE with raw line breaks inside a JSON string."""
    verbatim = (SEEDS / "001_ckafka_create_table_verbatim.json").read_text()
    [row] = decoded(spark, [verbatim])
    assert (row["op"], row["error"], row["raw"]) == (None, "not valid JSON", verbatim)


def test_multi_row_update_pairs_old_with_data_and_null_means_was_null(spark: SparkSession) -> None:
    """Pins FLINK-19446: ``old: {"price": null}`` means price WAS null, not "unchanged".

    -U(1, a, 2.50, 1, 2020-01-02)  +U(1, b, 2.50, 1, 2020-01-02)
    -U(2, y, NULL, 0, NULL)        +U(2, y, 3.00, 0, NULL)
    """
    data = [
        {"id": "1", "name": "b", "price": "2.50", "flag": "1", "born": "2020-01-02"},
        {"id": "2", "name": "y", "price": "3.00", "flag": "0", "born": None},
    ]
    old = [{"name": "a"}, {"price": None}]
    rows = decoded(spark, [canal("UPDATE", data, old)])
    assert [
        (r["table"], r["op"], r["key_columns"], r["key_source"], r["position"], r["error"])
        for r in rows
    ] == [
        ("shop.items", "update", ["id"], "message", [ES, EPOCH, 0, 1, 0], None),
        ("shop.items", "update", ["id"], "message", [ES, EPOCH, 0, 1, 1], None),
    ]
    assert row_types(rows[0]) == (
        "struct<id:int,name:string,price:decimal(10,2),flag:tinyint,born:date>"
    )
    assert image(rows[0], "before") == {
        "id": 1,
        "name": "a",
        "price": Decimal("2.50"),
        "flag": 1,
        "born": date(2020, 1, 2),
    }
    assert image(rows[0], "after") == {
        "id": 1,
        "name": "b",
        "price": Decimal("2.50"),
        "flag": 1,
        "born": date(2020, 1, 2),
    }
    assert image(rows[1], "before") == {
        "id": 2,
        "name": "y",
        "price": None,
        "flag": 0,
        "born": None,
    }
    assert image(rows[1], "after") == {
        "id": 2,
        "name": "y",
        "price": Decimal("3.00"),
        "flag": 0,
        "born": None,
    }
    assert rows[0]["source_ts"] == datetime(2023, 11, 14, 22, 13, 20)


def test_insert_and_delete_images(spark: SparkSession) -> None:
    """+I(7, n, 1.00, 0, NULL) then -D(7, n, 1.00, 0, NULL)."""
    row = {"id": "7", "name": "n", "price": "1.00", "flag": "0", "born": None}
    ins, dele = decoded(spark, [canal("INSERT", [row]), canal("DELETE", [row], es=ES + 1000)])
    assert (ins["op"], image(ins, "before"), ins["position"]) == (
        "insert",
        None,
        [ES, EPOCH, 0, 1, 0],
    )
    assert image(ins, "after") == {
        "id": 7,
        "name": "n",
        "price": Decimal("1.00"),
        "flag": 0,
        "born": None,
    }
    assert (dele["op"], image(dele, "after"), dele["position"]) == (
        "delete",
        None,
        [ES + 1000, EPOCH, 0, 2, 0],
    )
    assert image(dele, "before") == image(ins, "after")


def test_tinyint1_as_boolean_option(spark: SparkSession) -> None:
    row = {"id": "1", "name": "a", "price": "0", "flag": "1", "born": None}
    [r] = decoded(spark, [canal("INSERT", [row])], tinyint1_as_boolean=True)
    assert row_types(r).endswith("flag:boolean,born:date>")
    assert image(r, "after")["flag"] is True


def test_value_that_does_not_fit_its_mysql_type_is_quarantined(spark: SparkSession) -> None:
    row = {"id": "x1", "name": "a", "price": "0", "flag": "1", "born": None}
    [r] = decoded(spark, [canal("INSERT", [row])])
    assert r["error"] == "column id: value 'x1' does not fit int(11)"


def test_control_messages(spark: SparkSession) -> None:
    lines = [
        canal("TRUNCATE", table="items", sql="TRUNCATE TABLE `items`"),
        canal("GTID", table="", gtid="3E11FA47-71CA-11E1-9E33-C80AA9429562:23"),
        canal("XACOMMIT", table="", sql="XA COMMIT 'x'"),
        canal("XAROLLBACK", table="", sql="XA ROLLBACK 'x'"),
        canal("MHEARTBEAT", table=""),
        canal("CINDEX", table="items", sql="CREATE INDEX ix ON items (name)"),
    ]
    got = [
        (r["table"], r["op"], r["detail"], r["meta"]["type"], r["position"], r["error"])
        for r in decoded(spark, lines)
    ]
    assert got == [
        (
            "shop.items",
            "truncate",
            "TRUNCATE TABLE `items`",
            "TRUNCATE",
            [ES, EPOCH, 0, 1, 0],
            None,
        ),
        (
            None,
            "commit",
            "3E11FA47-71CA-11E1-9E33-C80AA9429562:23",
            "GTID",
            [ES, EPOCH, 0, 2, 0],
            None,
        ),
        (None, "commit", "XA COMMIT 'x'", "XACOMMIT", [ES, EPOCH, 0, 3, 0], None),
        (None, "commit", "XA ROLLBACK 'x'", "XAROLLBACK", [ES, EPOCH, 0, 4, 0], None),
        (None, "heartbeat", None, "MHEARTBEAT", [ES, EPOCH, 0, 5, 0], None),
        (
            "shop.items",
            "ddl",
            "CREATE INDEX ix ON items (name)",
            "CINDEX",
            [ES, EPOCH, 0, 6, 0],
            None,
        ),
    ]


def test_bad_messages_are_quarantined_with_a_reason(spark: SparkSession) -> None:
    lines = [
        canal("UPSERT", [{"id": "1"}]),
        '{"data": [{"id": "1"}], "isDdl": false, "type": "INSERT"',
        canal("INSERT", []),
        canal("INSERT", [{"id": "1"}], table=""),
        json.dumps({"isDdl": False, "data": None}),
    ]
    errors = [r["error"] for r in decoded(spark, lines)]
    assert errors == [
        "unknown canal type 'UPSERT' (expected one of INSERT, UPDATE, DELETE, CREATE, ALTER, "
        "ERASE, QUERY, RENAME, CINDEX, DINDEX, TRUNCATE, GTID, XACOMMIT, XAROLLBACK, MHEARTBEAT)",
        "not valid JSON",
        "canal INSERT message without rows in 'data'",
        "canal INSERT message without database/table",
        "not a canal flat message: no 'type' field",
    ]


def test_unknown_mysql_type_is_quarantined_naming_the_column(spark: SparkSession) -> None:
    [r] = decoded(spark, [canal("INSERT", [{"id": "1"}], mysql={"id": "hyperint"})])
    assert r["error"].startswith("column id: unknown MySQL column type 'hyperint'")


CUSTOMERS = {"id": "bigint(20)", "email": "varchar(64)"}
LINES = {"order_id": "int", "line": "int", "qty": "int"}


def test_multi_table_history_applies_as_scd1(lake: Any) -> None:
    """Inserts, updates, a PK change (2 -> 3), deletes and a re-delivered range, two tables."""

    def cust(kind: str, data: list[dict[str, Any]], old: Any = None, es: int = ES) -> str:
        return canal(kind, data, old, table="customers", mysql=CUSTOMERS, es=es)

    def line(kind: str, data: list[dict[str, Any]], old: Any = None, es: int = ES) -> str:
        return canal(
            kind, data, old, table="order_lines", mysql=LINES, pk=["order_id", "line"], es=es
        )

    first = [
        cust("INSERT", [{"id": "1", "email": "a@x"}, {"id": "2", "email": "b@x"}]),
        line(
            "INSERT",
            [
                {"order_id": "10", "line": "1", "qty": "1"},
                {"order_id": "10", "line": "2", "qty": "5"},
            ],
        ),
        cust("UPDATE", [{"id": "1", "email": "a2@x"}], [{"email": "a@x"}], es=ES + 1000),
        cust("UPDATE", [{"id": "3", "email": "b@x"}], [{"id": "2"}], es=ES + 2000),
        line("UPDATE", [{"order_id": "10", "line": "1", "qty": "2"}], [{"qty": "1"}], es=ES + 1000),
        line("DELETE", [{"order_id": "10", "line": "2", "qty": "5"}], es=ES + 2000),
    ]
    r1 = lake.apply(first, format="canal")
    assert lake.rows("shop.customers") == [(1, "a2@x"), (3, "b@x")]
    assert lake.rows("shop.order_lines") == [(10, 1, 2)]
    assert r1.tables["shop.customers"].key_columns == ("id",)
    assert r1.tables["shop.order_lines"].key_source == "message"
    again = lake.apply(first[:2], format="canal", source="replay.jsonl")  # at-least-once re-send
    assert lake.rows("shop.customers") == [(1, "a2@x"), (3, "b@x")]
    assert lake.rows("shop.order_lines") == [(10, 1, 2)]
    assert again.tables["shop.customers"].ignored == 2
    assert again.tables["shop.order_lines"].ignored == 2
