"""Changes whose source gives no log position are ordered by input order (issue 40, items 3, 4, 7).

Input order is ``[epoch, file rank, line]`` (files) or ``[epoch, partition, offset]`` (Kafka):
within a run files in name order, lines in order; a later batch or run after an earlier one
(``cdclake.model.INPUT_ORDER_DOC``). Expected tables are worked out by hand in each docstring.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from cdclake.config import ApplyConfig
from cdclake.decode import decode
from cdclake.model import END_AT, START_AT
from cdclake.ops.status import target_status
from cdclake.run.runner import run_batch, run_stream
from cdclake.sources import raw_from_lines
from tests.conftest import Lake

ES = 1_700_000_000_000  # one binlog second for every canal change below


def flink_debezium(op: str, after: dict[str, Any] | None, before: dict[str, Any] | None) -> str:
    """A record as Flink CDC's Kafka pipeline sink writes it with ``value.format=debezium-json``:
    ``source`` holds only ``db`` and ``table``, the key is the primary key as JSON."""
    image = after or before or {}
    source = {"db": "app_db", "table": "orders"}
    value = {"before": before, "after": after, "op": op, "source": source}
    return json.dumps({"key": {"id": image["id"]}, "value": value})


def test_debezium_without_a_source_position_is_ordered_by_input(lake: Lake) -> None:
    """Flink CDC's Debezium JSON: every message used to be quarantined ("cannot order events of
    connector '<none>'"). Batch 1: insert 1 a, insert 2 b, update 1 -> a2, delete 2. Batch 2
    (lower line numbers, later batch): update 1 -> a3, insert 2 c. Table: (1, a3), (2, c)."""
    first = lake.apply(
        [
            flink_debezium("c", {"id": 1, "v": "a"}, None),
            flink_debezium("c", {"id": 2, "v": "b"}, None),
            flink_debezium("u", {"id": 1, "v": "a2"}, {"id": 1, "v": "a"}),
            flink_debezium("d", None, {"id": 2, "v": "b"}),
        ],
        source="b0.jsonl",
    )
    assert (first.quarantined, first.tables["app_db.orders"].input_ordered) == (0, True)
    assert lake.rows("app_db.orders") == [(1, "a2")]
    second = lake.apply(
        [
            flink_debezium("u", {"id": 1, "v": "a3"}, {"id": 1, "v": "a2"}),
            flink_debezium("c", {"id": 2, "v": "c"}, None),
        ],
        source="b1.jsonl",
    )
    assert (second.quarantined, second.ignored) == (0, 0)
    assert lake.rows("app_db.orders") == [(1, "a3"), (2, "c")]
    (status,) = target_status(str(lake.root)).tables
    assert (status.table, status.ordering, status.rows) == ("app_db.orders", "input", 2)


def test_a_debezium_source_with_a_position_is_not_input_ordered(lake: Lake) -> None:
    """A PostgreSQL event keeps its LSN as position; its table is not marked."""
    value = {
        "before": None,
        "after": {"id": 1},
        "op": "c",
        "source": {"connector": "postgresql", "db": "d", "schema": "s", "table": "t", "lsn": 7},
    }
    result = lake.apply([json.dumps({"key": {"id": 1}, "value": value})])
    assert result.tables["d.s.t"].input_ordered is False
    (status,) = target_status(str(lake.root)).tables
    assert (status.ordering, status.last_position) == ("source", [7])


def flink_canal(kind: str, data: dict[str, Any], old: dict[str, Any] | None = None) -> str:
    """A message as Flink's ``canal-json`` writes it: no ``es``, ``ts``, ``isDdl`` or
    ``mysqlType``; values keep their JSON types."""
    doc: dict[str, Any] = {"data": [data], "type": kind, "database": "db", "table": "t"}
    doc["old"] = [old] if old is not None else None
    doc["pkNames"] = ["id"]
    return json.dumps(doc)


def test_canal_without_es_or_mysql_types_is_typed_from_json(lake: Lake) -> None:
    """Flink's canal-json used to be quarantined ("canal es 'null' is not a binlog time").
    Detected by ``auto`` too; values typed from the JSON as a schemaless Debezium payload is
    (a JSON number with a fraction is a double). Insert 1 (1.5, true), insert 2, update 1 ->
    2.25, delete 2: table (1, x, 2.25, true)."""
    result = lake.apply(
        [
            flink_canal("INSERT", {"id": 1, "name": "x", "price": 1.5, "ok": True}),
            flink_canal("INSERT", {"id": 2, "name": "y", "price": 3.0, "ok": False}),
            flink_canal(
                "UPDATE", {"id": 1, "name": "x", "price": 2.25, "ok": True}, {"price": 1.5}
            ),
            flink_canal("DELETE", {"id": 2, "name": "y", "price": 3.0, "ok": False}),
        ],
        format="auto",
    )
    assert (result.quarantined, result.tables["db.t"].input_ordered) == (0, True)
    df = lake.df("db.t")
    types = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    assert {k: types[k] for k in ("id", "name", "price", "ok")} == {
        "id": "bigint",
        "name": "string",
        "price": "double",
        "ok": "boolean",
    }
    assert lake.rows("db.t", "id", "name", "price", "ok") == [(1, "x", 2.25, True)]


def test_canal_position_is_es_then_input_order_then_row(spark: SparkSession) -> None:
    """``[es, epoch, file rank, line, row]``; without ``es``, ``[epoch, file rank, line, row]``."""
    two_rows = {
        "data": [{"id": "1"}, {"id": "2"}],
        "database": "db",
        "table": "t",
        "type": "INSERT",
        "es": ES,
        "isDdl": False,
        "mysqlType": {"id": "int"},
        "pkNames": ["id"],
    }
    lines = [json.dumps(two_rows), flink_canal("INSERT", {"id": 3})]
    rows = decode(raw_from_lines(spark, lines, epoch=5), "canal").orderBy("position").collect()
    assert [(r["position"], r["meta"].get("ordering")) for r in rows] == [
        ([5, 0, 2, 0], "input"),
        ([ES, 5, 0, 1, 0], None),
        ([ES, 5, 0, 1, 1], None),
    ]


def canal_row(v: str, kind: str = "UPDATE") -> str:
    return json.dumps(
        {"data": [{"id": "1", "v": v}], "database": "shop", "table": "items", "type": kind,
         "es": ES, "ts": ES, "isDdl": False, "mysqlType": {"id": "int", "v": "varchar(8)"},
         "old": None, "pkNames": ["id"], "sql": ""}
    )  # fmt: skip


def filler(n: int) -> str:
    """A change of another key, to push the next line's number up."""
    return json.dumps(
        {"data": [{"id": str(100 + n), "v": "f"}], "database": "shop", "table": "items",
         "type": "INSERT", "es": ES, "isDdl": False,
         "mysqlType": {"id": "int", "v": "varchar(8)"}, "pkNames": ["id"]}
    )  # fmt: skip


def write_same_second_files(folder: Path) -> None:
    """Key 1 in one binlog second: ``a.jsonl`` inserts a (line 1) and updates to b (line 5);
    ``b.jsonl`` updates to c on its line 1. Files in name order: a, b, c; the table holds c."""
    folder.mkdir(parents=True, exist_ok=True)
    a = [canal_row("a", "INSERT"), filler(1), filler(2), filler(3), canal_row("b")]
    (folder / "a.jsonl").write_text("\n".join(a) + "\n")
    (folder / "b.jsonl").write_text(canal_row("c") + "\n")


def _value_of_key_1(spark: SparkSession, target: Path) -> list[tuple[Any, ...]]:
    df = spark.read.format("delta").load(str(target / "shop.items"))
    if START_AT in df.columns:  # history: every version of key 1, oldest first
        rows = df.filter("id = 1").orderBy(START_AT).select("v", END_AT).collect()
        return [(r["v"], r[END_AT] is None) for r in rows]
    return [(r["v"],) for r in df.filter("id = 1").collect()]


def test_same_second_canal_changes_across_files_in_name_order(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Before the fix, b.jsonl's line 1 sorted before a.jsonl's line 5: SCD1 kept b (c counted
    as stale) and SCD2 had b and c in reverse order. A second run whose file has line 1 only
    (d) orders after the first run at the same second."""
    write_same_second_files(tmp_path / "in")
    for scd, expected in ((1, [("c",)]), (2, [("a", False), ("b", False), ("c", True)])):
        target = tmp_path / f"lake{scd}"
        config = ApplyConfig(
            format="canal",
            inputs=(str(tmp_path / "in"),),
            target=str(target),
            stored_as_scd_type=scd,  # type: ignore[arg-type]
        )
        result = run_batch(spark, config)
        assert (result.quarantined, result.ignored) == (0, 0)
        assert _value_of_key_1(spark, target) == expected
        (tmp_path / f"later{scd}").mkdir()
        (tmp_path / f"later{scd}" / "0.jsonl").write_text(canal_row("d") + "\n")
        later = config.model_copy(update={"inputs": (str(tmp_path / f"later{scd}"),)})
        assert run_batch(spark, later).ignored == 0
        last = _value_of_key_1(spark, target)[-1]
        assert last[0] == "d", (scd, last)


def test_same_second_canal_changes_across_files_in_a_file_stream(
    spark: SparkSession, tmp_path: Path
) -> None:
    """The same files through a file stream (one available-now batch): SCD1 holds c."""
    write_same_second_files(tmp_path / "in")
    config = ApplyConfig(
        format="canal",
        inputs=(str(tmp_path / "in"),),
        target=str(tmp_path / "lake"),
        stream=True,
        checkpoint=str(tmp_path / "cp"),
        available_now=True,
    )
    result = run_stream(spark, config)
    assert (result.quarantined, result.ignored) == (0, 0)
    assert _value_of_key_1(spark, tmp_path / "lake") == [("c",)]


FACTORY = "spark.sql.codegen.factoryMode"


def test_the_generated_code_of_a_batch_does_not_depend_on_its_epoch(spark: SparkSession) -> None:
    """Pins a stream's batches compiling their decode again: Spark writes a number literal into
    the code it generates, and the epoch (each batch's own) was one, so every batch's decode was
    new code to compile (~0.4 s of executor time a small batch). Passed as an array, it is a
    reference of the generated class, and a batch reuses the class of the one before."""
    from pyspark.sql import functions as F

    from cdclake.sources import input_order

    def code(epoch: int) -> str:
        df = spark.range(3).select(
            input_order(epoch, F.lit(0), F.col("id")).alias("order"), F.col("id")
        )
        stages = df._jdf.queryExecution().debug().codegenToSeq()  # (plan, code) per stage
        return "".join(str(stages.apply(i)._2()) for i in range(stages.size()))

    tests = {k: spark.conf.get(k) for k in ("spark.sql.codegen.wholeStage", FACTORY)}
    spark.conf.set("spark.sql.codegen.wholeStage", "true")  # the tests' settings turn it off
    spark.conf.set(FACTORY, "FALLBACK")
    try:
        first, second = code(1_700_000_000_000), code(1_700_000_001_000)
    finally:
        for key, value in tests.items():
            spark.conf.set(key, value)
    assert first and "1700000000000" not in first and first == second
