"""Tencent CKafka "Official Format I": golden decodes of seed 001 and an SCD1 history.

The DML carries neither types nor keys: both come from the canal-form CREATE TABLE messages of
the same stream (or, in a decode without a target, from the table schema passed in).
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from pyspark.sql import Row, SparkSession
from pyspark.sql.types import IntegerType, StringType, StructField, StructType

from cdclake.decode import decode
from cdclake.formats.base import DecodeOptions
from cdclake.sources import raw_from_lines

SEEDS = Path(__file__).resolve().parent.parent / "data" / "seeds"
SEED_LINES = (SEEDS / "001_ckafka.jsonl").read_text().splitlines()
CUSTOMERS = StructType(
    [
        StructField("id", IntegerType()),
        *[StructField(c, StringType()) for c in ("first_name", "last_name", "email")],
    ]
)


def decoded(
    spark: SparkSession, lines: list[str], schema: StructType | None = None, **options: Any
) -> list[Row]:
    df = decode(raw_from_lines(spark, lines), "ckafka", DecodeOptions(**options), lambda _: schema)
    return sorted(df.collect(), key=lambda r: r["lineage"]["offset"])


def image(row: Row, which: str) -> dict[str, Any] | None:
    value = row[which]
    return None if value is None else value.toPython()


def test_seed_001_dml_typed_from_the_table(spark: SparkSession) -> None:
    """+I(1004, Anne, ...)  -U(1004, Anne) +U(1004, Anne Marie)  -D(1004, Anne Marie)."""
    rows = decoded(spark, SEED_LINES[6:], CUSTOMERS)
    got = [
        (
            r["table"],
            r["op"],
            r["key_columns"],
            r["key_source"],
            r["position"],
            r["source_ts"],
            r["meta"]["gtid"],
            r["meta"]["binlog_name"],
            r["error"],
        )
        for r in rows
    ]
    assert got == [
        (
            "inventory.customers",
            "insert",
            [],
            "none",
            [3, 154],
            datetime(1970, 1, 1, 8, 0),
            None,
            "mysql-bin.000003",
            None,
        ),
        (
            "inventory.customers",
            "update",
            [],
            "none",
            [3, 484],
            datetime(2016, 6, 11, 1, 50, 29),
            None,
            "mysql-bin.000003",
            None,
        ),
        (
            "inventory.customers",
            "delete",
            [],
            "none",
            [3, 805],
            datetime(2016, 6, 11, 2, 5, 2),
            None,
            "mysql-bin.000003",
            None,
        ),
    ]
    anne = {
        "id": 1004,
        "first_name": "Anne",
        "last_name": "Kretchmar",
        "email": "annek@noanswer.org",
    }
    anne_marie = {**anne, "first_name": "Anne Marie"}
    assert [(image(r, "before"), image(r, "after")) for r in rows] == [
        (None, anne),
        (anne, anne_marie),
        (anne_marie, None),
    ]


def test_seed_001_ddl_goes_to_canal_without_a_position(spark: SparkSession) -> None:
    """The six canal-form DDL messages decode in a CKafka stream; binlog coordinates unknown."""
    rows = decoded(spark, SEED_LINES)
    assert [
        (r["table"], r["op"], r["meta"]["type"], r["position"], r["error"]) for r in rows[:6]
    ] == [
        (None, "ddl", "QUERY", None, None),
        (None, "ddl", "QUERY", None, None),
        ("dip_test.customers", "ddl", "CREATE", None, None),
        ("test.user", "ddl", "ALTER", None, None),
        ("dip_test.customers", "ddl", "ERASE", None, None),
        ("testDB.t_test", "ddl", "RENAME", None, None),
    ]
    assert rows[2]["detail"].startswith("CREATE TABLE `customers` (\n`id` int NOT NULL")
    # without a table, the text values are typed by inference: all strings
    assert image(rows[6], "after") == {
        "id": "1004",
        "first_name": "Anne",
        "last_name": "Kretchmar",
        "email": "annek@noanswer.org",
    }


def test_time_is_read_in_the_source_time_zone(spark: SparkSession) -> None:
    """The insert's TIME 19700101080000 is the epoch in UTC+8, where the document's producer ran."""
    [row] = decoded(spark, SEED_LINES[6:7], CUSTOMERS, source_timezone="Asia/Shanghai")
    assert row["source_ts"] == datetime(1970, 1, 1, 0, 0)
    assert row["meta"]["time"] == "19700101080000"


def ckafka(kind: str, pos: int, new: Any = None, old: Any = None, **extra: Any) -> str:
    return json.dumps(
        {
            "BINLOG_NAME": "mysql-bin.000003",
            "BINLOG_POS": pos,
            "DATABASE": "inventory",
            "EVENT_SERVER_ID": None,
            "GLOBAL_ID": None,
            "GROUP_ID": None,
            "NEW_VALUES": new,
            "OLD_VALUES": old,
            "TABLE": "customers",
            "TIME": "20240101000000",
            "TYPE": kind,
            **extra,
        }
    )


def test_lowercase_l_insert_gtid_and_binlog_file_order(spark: SparkSession) -> None:
    row = {"id": "1", "first_name": "a", "last_name": "b", "email": "c"}
    rows = decoded(
        spark,
        [
            ckafka("l", 4, row, BINLOG_NAME="mysql-bin.000010", GLOBAL_ID="uuid:7"),
            ckafka("I", 900, row, BINLOG_NAME="mysql-bin.000009"),
        ],
        CUSTOMERS,
    )
    assert [(r["op"], r["position"], r["meta"]["gtid"]) for r in rows] == [
        ("insert", [10, 4], "uuid:7"),
        ("insert", [9, 900], None),
    ]
    assert rows[0]["position"] > rows[1]["position"]  # file 10 after file 9, whatever the pos


def test_bad_messages_are_quarantined_with_a_reason(spark: SparkSession) -> None:
    row = {"id": "1"}
    lines = [
        ckafka("X", 1, row),
        ckafka("I", 1, row, BINLOG_NAME="binlog"),
        ckafka("I", "abc", row),
        ckafka("U", 2, row),
        ckafka("D", 3),
        ckafka("I", 4, row, TABLE=""),
        '{"TYPE": "I", "NEW_VALUES": {',
    ]
    assert [r["error"] for r in decoded(spark, lines, CUSTOMERS)] == [
        "unknown CKafka TYPE 'X' (expected I (also written l), U, D)",
        "cannot order the change: BINLOG_NAME 'binlog' does not end in a binlog file number "
        "(expected e.g. mysql-bin.000003)",
        "cannot order the change: BINLOG_POS 'abc' is not an integer",
        "CKafka TYPE U message without OLD_VALUES",
        "CKafka TYPE D message without OLD_VALUES",
        "CKafka message without DATABASE/TABLE",
        "not valid JSON",
    ]


def test_canal_form_truncate_cannot_be_ordered_and_is_quarantined(spark: SparkSession) -> None:
    truncate = json.dumps(
        {
            "data": None,
            "database": "inventory",
            "es": 1,
            "id": 0,
            "isDdl": True,
            "sql": "TRUNCATE TABLE customers",
            "table": "customers",
            "type": "TRUNCATE",
        }
    )
    [row] = decoded(spark, [truncate])
    assert row["op"] == "truncate"
    assert row["error"].startswith("a canal-form TRUNCATE in a CKafka stream has no binlog")


def create_table(table: str, body: str) -> str:
    return json.dumps(
        {
            "data": None,
            "database": "inventory",
            "es": 1655812326,
            "id": 0,
            "isDdl": True,
            "mysqlType": None,
            "old": None,
            "pkNames": None,
            "sql": f"CREATE TABLE `{table}` ({body})",
            "sqlType": None,
            "table": table,
            "ts": 1655812326,
            "type": "CREATE",
        }
    )


def test_history_after_create_table_applies_with_the_ddl_key(lake: Any) -> None:
    """CREATE TABLE gives types and keys; inserts, updates, a PK change, deletes, a re-send."""

    def c(kind: str, pos: int, new: Any = None, old: Any = None) -> str:
        return ckafka(kind, pos, new, old)

    def t(kind: str, pos: int, new: Any = None, old: Any = None) -> str:
        return ckafka(kind, pos, new, old, TABLE="tags")

    def cust(i: int, name: str) -> dict[str, str]:
        return {"id": str(i), "first_name": name, "last_name": "L", "email": f"{name}@x"}

    def tag(i: int, label: str, weight: str) -> dict[str, str]:
        return {"customer_id": str(i), "label": label, "weight": weight}

    lines = [
        create_table(
            "customers",
            "`id` int NOT NULL, `first_name` varchar(255), "
            "`last_name` varchar(255), `email` varchar(255), PRIMARY KEY (`id`)",
        ),
        create_table(
            "tags",
            "`customer_id` int NOT NULL, `label` varchar(20) NOT NULL, "
            "`weight` decimal(5,2), PRIMARY KEY (`customer_id`, `label`)",
        ),
        c("I", 100, cust(1, "ann")),
        c("I", 200, cust(2, "bob")),
        t("I", 300, tag(1, "vip", "1.50")),
        t("I", 400, tag(2, "new", "0.25")),
        c("U", 500, cust(1, "anne"), cust(1, "ann")),
        c("U", 600, cust(3, "bob"), cust(2, "bob")),  # primary key 2 -> 3
        t("D", 700, old=tag(2, "new", "0.25")),
    ]
    live = [(1, "anne", "L", "anne@x"), (3, "bob", "L", "bob@x")]
    lake.apply(lines, format="ckafka")
    assert lake.rows("inventory.customers") == live
    assert lake.rows("inventory.tags") == [(1, "vip", Decimal("1.50"))]
    resend = lake.apply(lines[2:6], format="ckafka", source="resend.jsonl")
    assert lake.rows("inventory.customers") == live
    assert lake.rows("inventory.tags") == [(1, "vip", Decimal("1.50"))]
    assert resend.tables["inventory.customers"].key_columns == ("id",)
    assert resend.tables["inventory.tags"].key_columns == ("customer_id", "label")


def test_each_message_goes_to_exactly_one_half(spark: SparkSession) -> None:
    """The split of a CKafka stream: a message with a top-level TYPE is Official Format I, any
    other is canal (its DDL). A canal row with a column named TYPE stays canal, an escaped TYPE
    key (\\u0054YPE) is still Official Format I, and no line is lost or decoded twice."""
    row = {"id": "1", "first_name": "a", "last_name": "b", "email": "c"}
    canal_row = {
        "data": [{"id": "1", "TYPE": "TYPE"}],
        "database": "inventory",
        "es": 1700000000000,
        "id": 3,
        "isDdl": False,
        "mysqlType": {"id": "int", "TYPE": "varchar(8)"},
        "old": None,
        "pkNames": ["id"],
        "sql": "",
        "table": "things",
        "ts": 1700000000001,
        "type": "INSERT",
    }
    record = json.dumps({"key": None, "value": json.loads(ckafka("I", 7, row))})
    lines = [
        ckafka("I", 5, row),  # Official Format I
        ckafka("I", 6, row).replace('"TYPE"', '"\\u0054YPE"'),  # its TYPE key escaped
        json.dumps(canal_row),  # canal, TYPE only as a column name and a value
        SEED_LINES[2],  # canal DDL (CREATE TABLE customers)
        ckafka(None, 8, row),  # TYPE null: not Official Format I
        record,  # a record object holding an Official Format I message
    ]
    assert "\\u0054YPE" in lines[1]
    rows = decoded(spark, lines, CUSTOMERS)
    halves = [
        (r["lineage"]["offset"], "official" if "binlog_name" in r["meta"] else "canal", r["op"])
        for r in rows
    ]
    assert halves == [
        (1, "official", "insert"),
        (2, "official", "insert"),
        (3, "canal", "insert"),
        (4, "canal", "ddl"),
        (5, "canal", None),
        (6, "official", "insert"),
    ]
    assert [r["position"] for r in rows if r["lineage"]["offset"] in (1, 2, 6)] == [
        [3, 5],
        [3, 6],
        [3, 7],
    ]


def test_the_input_is_read_once_and_canal_parsed_only_where_not_official(
    spark: SparkSession,
) -> None:
    """One scan of the input, one parse of an Official Format I message (issue 36: it was read
    three times, in two filtered copies of the input, each with its own detection parse): the
    envelope's optimized plan holds no union and one read of the records, and canal's parse
    runs only for a message without TYPE."""
    from cdclake import formats

    row = {"id": "1", "first_name": "a", "last_name": "b", "email": "c"}
    raw = raw_from_lines(spark, [ckafka("I", 5, row), SEED_LINES[2]])
    env = formats.get("ckafka").envelope(raw, DecodeOptions())
    plan = env._jdf.queryExecution().optimizedPlan().toString()
    assert "Union" not in plan and plan.count("LogicalRDD") == 1, plan
    assert re.search(r"CASE WHEN NOT _mine#\d+ THEN CASE WHEN", plan), plan
    assert sorted((r["op"], r["table"]) for r in env.collect()) == [
        ("ddl", "dip_test.customers"),
        ("insert", "inventory.customers"),
    ]
