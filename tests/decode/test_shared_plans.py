"""Tables of one layout share one typing plan, and each table's rows are still typed by its own
rules: the table's existing types, a key recorded by DDL, a value that does not fit."""

from __future__ import annotations

import json
import re

from pyspark.sql import SparkSession
from pyspark.sql.types import LongType, StringType, StructField, StructType

from cdclake.decode import decode, release
from cdclake.model import KeySource
from cdclake.sources import raw_from_lines

FIELDS = [
    {"type": "int32", "optional": False, "field": "id"},
    {"type": "string", "optional": True, "field": "name"},
]
SAME = ["t1", "t2", "t3", "t4", "t5"]  # one layout, nothing of their own
WIDE = "wide"  # exists, with id as bigint
DDL_KEY = "keyed"  # no key in its messages; a CREATE TABLE recorded one


def line(table: str, n: int, row: dict[str, object]) -> str:
    schema = {"type": "struct", "optional": True, "fields": FIELDS}
    lsn = f"{n:08x}:{n:08x}:0001"
    value = {
        "schema": {
            "type": "struct",
            "fields": [{**schema, "field": "before"}, {**schema, "field": "after"}],
        },
        "payload": {
            "before": None,
            "after": row,
            "source": {
                "connector": "sqlserver",
                "db": "shop",
                "schema": "dbo",
                "table": table,
                "change_lsn": lsn,
                "commit_lsn": lsn,
            },
            "op": "c",
        },
    }
    return json.dumps({"key": None, "value": value})


def test_tables_of_one_layout_share_a_plan_and_keep_their_own_types(spark: SparkSession) -> None:
    lines = []
    for i, table in enumerate([*SAME, WIDE, DDL_KEY]):
        lines.append(line(table, 2 * i + 1, {"id": 10 * i + 1, "name": f"n{i}"}))
        lines.append(line(table, 2 * i + 2, {"id": 10 * i + 2, "name": None}))
    lines.append(line("t3", 99, {"id": "x", "name": "bad"}))
    wide = StructType([StructField("id", LongType()), StructField("name", StringType())])

    def schemas(table: str) -> StructType | None:
        return wide if table == f"shop.dbo.{WIDE}" else None

    def keys(table: str) -> tuple[str, ...] | None:
        return ("id",) if table == f"shop.dbo.{DDL_KEY}" else None

    changes = decode(
        raw_from_lines(spark, lines), "debezium", table_schemas=schemas, table_keys=keys
    )
    try:
        rows = changes.collect()
        # one plan per way of typing: the five tables alike, the existing one, the keyed one
        plan = changes._jdf.queryExecution().analyzed().toString()
        assert len(set(re.findall(r"_after(\d+)#", plan))) == 3, plan
    finally:
        release(changes)
    good = {
        (r["table"].split(".")[-1], r["after"].toPython()["id"]): r.asDict()
        for r in rows
        if r["error"] is None
    }
    expected_ids = {(t, 10 * i + k) for i, t in enumerate([*SAME, WIDE, DDL_KEY]) for k in (1, 2)}
    assert set(good) == expected_ids
    for (table, _), r in good.items():
        schema = json.loads(r["row_schema"])
        id_type = next(f["type"] for f in schema["fields"] if f["name"] == "id")
        assert id_type == ("long" if table == WIDE else "integer"), (table, id_type)
        if table == DDL_KEY:
            assert (r["key_columns"], r["key_source"]) == (["id"], KeySource.DDL)
        else:
            assert (r["key_columns"], r["key_source"]) == ([], KeySource.NONE)
    assert good[("t2", 12)]["after"].toPython()["name"] is None
    assert good[("t4", 31)]["after"].toPython()["name"] == "n3"
    (bad,) = [r for r in rows if r["error"] is not None]
    assert bad["table"] == "shop.dbo.t3"
    assert bad["error"] == "column id: value 'x' does not fit int32"
