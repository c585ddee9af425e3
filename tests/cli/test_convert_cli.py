"""``cdclake convert`` on files, in-process (issue 40, item 6): the connector, the exit status,
the inputs and the output folder, each test naming the bug it pins."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from builders.msgs import debezium
from pyspark.sql import DataFrame, SparkSession
from typer.testing import CliRunner, Result

from cdclake.cli import app
from cdclake.cli import produce as cli_produce
from cdclake.run import produce
from tests.conftest import Lake

ES = 1_700_000_000_000  # one source second for every canal message below
MICRO = {"type": "int64", "optional": True, "name": "io.debezium.time.MicroTimestamp"}


def canal(n: int, kind: str, data: dict[str, Any], old: dict[str, Any] | None = None) -> str:
    """A canal flat message of table ``shop.items`` (id, name) at second ``ES``."""
    return json.dumps(
        {"data": [data], "database": "shop", "es": ES, "id": n, "isDdl": False,
         "mysqlType": {"id": "bigint(20)", "name": "varchar(20)"}, "old": old and [old],
         "pkNames": ["id"], "sql": "", "sqlType": None, "table": "items", "ts": ES, "type": kind}
    )  # fmt: skip


def postgres(lsn: int, micros: int) -> str:
    """A PostgreSQL insert with a MicroTimestamp column ``at`` (schemas enabled)."""
    fields = [{"type": "int32", "optional": False, "field": "id"}, {**MICRO, "field": "at"}]
    row = {"type": "struct", "optional": True, "fields": fields}
    source = {"connector": "postgresql", "name": "pg", "db": "shop", "schema": "public",
              "table": "events", "lsn": lsn, "ts_ms": ES}  # fmt: skip
    payload = {"before": None, "after": {"id": lsn, "at": micros}, "source": source, "op": "c"}
    schema = {"type": "struct", "fields": [{**row, "field": "before"}, {**row, "field": "after"}]}
    return json.dumps({"key": {"id": lsn}, "value": {"schema": schema, "payload": payload}})


def write(path: Path, *lines: str) -> str:
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def convert(*args: str) -> Result:
    return CliRunner().invoke(app, ["convert", *args])


def records(folder: Path) -> list[dict[str, Any]]:
    """The records of an output folder, in file name order."""
    lines = [line for f in sorted(folder.glob("*.jsonl")) for line in f.read_text().splitlines()]
    return [json.loads(line) for line in lines]


def payloads(folder: Path) -> list[dict[str, Any]]:
    return [r["value"]["payload"] for r in records(folder) if r["value"] is not None]


def test_debezium_connector_follows_a_canal_source(spark: SparkSession, tmp_path: Path) -> None:
    """Pins: ``--connector`` defaulted to postgresql whatever the source, so canal -> debezium
    quarantined every change ("cannot be written as a PostgreSQL lsn") and wrote nothing."""
    source = write(
        tmp_path / "in.jsonl",
        canal(1, "INSERT", {"id": "1", "name": "a"}),
        canal(2, "UPDATE", {"id": "1", "name": "b"}, {"name": "a"}),
    )
    result = convert("--from", "canal", "--to", "debezium", "--input", source, "--output",
                     str(tmp_path / "out"))  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "2 messages written" in result.output
    written = payloads(tmp_path / "out")
    assert [p["source"]["connector"] for p in written] == ["mysql", "mysql"]
    assert [p["after"]["name"] for p in written] == ["a", "b"]  # canal's order kept


def test_debezium_connector_follows_a_sql_server_source(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Pins: a SQL Server source re-encoded as Debezium took PostgreSQL's source block (and
    quarantined its LSNs); it now keeps its own connector and LSNs as they are."""
    source = write(
        tmp_path / "in.jsonl",
        debezium(7, {"id": 1, "name": "a", "qty": 1}),
        debezium(9, {"id": 1, "name": "b", "qty": 2}, {"id": 1, "name": "a", "qty": 1}, op="u"),
    )
    result = convert("--from", "debezium", "--to", "debezium", "--input", source, "--output",
                     str(tmp_path / "out"))  # fmt: skip
    assert result.exit_code == 0, result.output
    sources = [p["source"] for p in payloads(tmp_path / "out")]
    assert [s["connector"] for s in sources] == ["sqlserver", "sqlserver"]
    assert [s["commit_lsn"] for s in sources] == [
        "00000007:00000007:0002",
        "00000009:00000009:0002",
    ]


def test_nothing_written_exits_1_naming_the_first_reason(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Pins: a run that quarantined every change printed "0 messages written" and exited 0.
    Now one line says why (the first reason and its count) and the exit status is 1. Also pins
    the DataWorks reason, which held the text of a Spark Column where "µs" belongs."""
    source = write(tmp_path / "in.jsonl", postgres(10, ES * 1000 + 1), postgres(11, ES * 1000 + 2))
    result = convert("--from", "debezium", "--to", "dataworks", "--input", source, "--output",
                     str(tmp_path / "out"))  # fmt: skip
    assert result.exit_code == 1, result.output
    line = (
        "error: nothing written: 2 changes read, none has a message in this format; "
        "first reason (2): column at: a µs value does not fit DATE (ms)"
    )
    assert line in result.output.splitlines()


def test_several_inputs_as_apply_takes_them(
    spark: SparkSession, tmp_path: Path, lake: Lake
) -> None:
    """Pins: ``convert --input a b`` rejected ``b`` where ``apply`` takes more paths after
    ``--input``. Both files are read, in name order: the update of the same second in the second
    file applies after the insert of the first."""
    first = write(tmp_path / "a.jsonl", canal(1, "INSERT", {"id": "1", "name": "a"}))
    second = write(
        tmp_path / "b.jsonl", canal(1, "UPDATE", {"id": "1", "name": "b"}, {"name": "a"})
    )
    out = tmp_path / "out"
    result = convert("--from", "canal", "--to", "dataworks", "--input", first, second,
                     "--output", str(out))  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "3 messages written" in result.output  # INSERT, UPDATE_BEFOR + UPDATE_AFTER
    lake.apply([json.dumps(r) for r in records(out)], format="dataworks")
    assert lake.rows("shop.items") == [(1, "b")]


def test_output_folder_holds_only_jsonl_and_the_quarantine_is_beside(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Pins: the output folder held Spark's ``part-*.txt``, ``_SUCCESS`` and ``.crc`` files and
    the quarantine inside it. Now: ``00000.jsonl``… only, the quarantine in ``<output>_quarantine``
    (removed by a later run that quarantines nothing)."""
    good, bad = postgres(10, ES * 1000), postgres(11, ES * 1000 + 1)
    out = tmp_path / "out"
    result = convert("--from", "debezium", "--to", "dataworks", "--input",
                     write(tmp_path / "in.jsonl", good, bad), "--output", str(out))  # fmt: skip
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in out.iterdir())
    assert names and all(re.fullmatch(r"\d{5}\.jsonl", n) for n in names), names
    assert [p["after"]["dataColumn"]["id"] for p in payloads(out)] == [10]
    quarantine = Path(f"{out}_quarantine")
    assert f"(in {quarantine})" in " ".join(result.output.split())
    [kept] = records(quarantine)
    assert kept["reason"] == "column at: a µs value does not fit DATE (ms)"
    assert kept["lineage"]["offset"] == 2
    again = convert("--from", "debezium", "--to", "dataworks", "--input",
                    write(tmp_path / "in.jsonl", good), "--output", str(out))  # fmt: skip
    assert again.exit_code == 0, again.output
    assert not quarantine.exists()


def test_reasons_are_printed_as_written(
    spark: SparkSession, capsys: pytest.CaptureFixture[str]
) -> None:
    """Pins: "cannot be written as a DataWorks sequenceId (expected  or )": the console read
    the reason's ``[n]`` as markup and dropped it."""
    from builders.changes import Change, changes_df
    from pyspark.sql.types import LongType, StructField, StructType

    schema = StructType([StructField("id", LongType())])
    change = Change("shop.items", "insert", None, {"id": 1}, [1, 2, 3, 4], ["id"])
    messages = produce.encode(changes_df(spark, [change], {"shop.items": schema}), "dataworks")
    cli_produce._report(messages)
    out = " ".join(capsys.readouterr().out.split())
    assert "position [1,2,3,4] cannot be written as a DataWorks sequenceId" in out
    assert "(expected [n], [a, b] or [a, b, 0|1] with a, b >= 0 and b < 10^18)" in out


def kafka_rows(spark: SparkSession, lines: list[str], first_offset: int) -> DataFrame:
    """What Spark's Kafka source gives a micro-batch: one partition's values from an offset."""
    rows: list[tuple[Any, ...]] = [
        (None, line.encode(), "cdc", 0, first_offset + i, []) for i, line in enumerate(lines)
    ]
    schema = (
        "key BINARY, value BINARY, topic STRING, partition INT, offset BIGINT, "
        "headers ARRAY<STRUCT<key: STRING, value: BINARY>>"
    )
    return spark.createDataFrame(rows, schema)


def test_kafka_batches_order_by_their_offset_log_epoch(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pins the Kafka side of issue 40 item 6: each micro-batch's positions are built from the
    time its offset log recorded (a later batch sorts after an earlier one; a batch run again
    writes the same messages), and a CKafka CREATE TABLE of one batch types and keys the DML of
    the next, as ``apply`` would."""
    from pyspark.sql import functions as F

    from cdclake.formats.base import DecodeOptions
    from cdclake.formats.encode import EncodeOptions

    checkpoint = tmp_path / "chk"
    (checkpoint / "offsets").mkdir(parents=True)
    for batch_id, stamp in ((0, ES + 5_000), (1, ES + 9_000)):
        meta = json.dumps({"batchWatermarkMs": 0, "batchTimestampMs": stamp})
        (checkpoint / "offsets" / str(batch_id)).write_text(f"v1\n{meta}\n{{}}\n")
    sent: list[list[str]] = []

    def write_kafka(messages: DataFrame, *_: object) -> None:
        good = messages.filter(F.col("error").isNull() & F.col("skipped").isNull())
        sent.append([r["value"] for r in good.orderBy("position", "part").collect()])

    monkeypatch.setattr(produce, "write_kafka", write_kafka)
    batch = cli_produce._KafkaConvert(
        spark, "ckafka", "canal", EncodeOptions(connector=None), DecodeOptions(), "b:9092",
        "{source}", {}, str(checkpoint),
    )  # fmt: skip
    create = json.dumps(
        {"data": None, "database": "shop", "es": ES, "id": 0, "isDdl": True, "mysqlType": None,
         "old": None, "pkNames": None, "sqlType": None, "table": "items", "ts": ES,
         "type": "CREATE",
         "sql": "CREATE TABLE `items` (`id` bigint, `name` varchar(20), PRIMARY KEY (`id`))"}
    )  # fmt: skip
    batch(kafka_rows(spark, [create], 0), 0)
    dml = [ckafka_insert(1, "a"), ckafka_insert(2, "b")]
    batch(kafka_rows(spark, dml, 1), 1)
    batch(kafka_rows(spark, dml, 1), 1)  # run again after a crash
    first, second, again = ([json.loads(v) for v in values] for values in sent)
    assert [m["type"] for m in first] == ["CREATE"]
    assert [m["es"] for m in second] == [ES + 9_000] * 2  # the sequence's epoch: batch 1's
    assert [m["data"] for m in second] == [[{"id": "1", "name": "a"}], [{"id": "2", "name": "b"}]]
    assert second[0]["pkNames"] == ["id"] and second[0]["mysqlType"]["id"] == "bigint"
    assert again == second
    assert batch.totals["messages"] == 5


def ckafka_insert(pos: int, name: str) -> str:
    return json.dumps(
        {"BINLOG_NAME": "mysql-bin.000003", "BINLOG_POS": pos, "DATABASE": "shop",
         "EVENT_SERVER_ID": None, "GLOBAL_ID": None, "GROUP_ID": None,
         "NEW_VALUES": {"id": str(pos), "name": name}, "OLD_VALUES": None, "TABLE": "items",
         "TIME": "20231114221320", "TYPE": "I"}
    )  # fmt: skip
