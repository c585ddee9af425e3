"""``--format auto``: one input mixing Debezium, canal, CKafka and DataWorks lines.

Every line must be detected by exactly one format, and decode as that format alone decodes it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from cdclake import formats
from cdclake._spark.plan_cache import forget
from cdclake.decode import decode, envelopes, only_format, release
from cdclake.formats.base import DecodeOptions, Format
from cdclake.formats.dataworks import DataWorksFormat
from cdclake.formats.debezium import DebeziumFormat
from cdclake.sources import raw_from_lines

SEEDS = Path(__file__).resolve().parent.parent / "data" / "seeds"


def _lines(name: str) -> list[str]:
    return (SEEDS / name).read_text().splitlines()


FLATTENED = [
    '{"schema": {"type": "struct", "name": "srv.inventory.t.Value", "fields": [{"type": "int32",'
    ' "optional": false, "field": "id"}]}, "payload": {"id": 1}}',
    '{"key": {"id": 2}, "value": {"id": 2, "op": "x", "__deleted": "false", "__table": "t",'
    ' "__db": "d"}}',
    '{"key": {"id": 3}, "value": {"id": 3, "type": "INSERT", "data": "a", "__op": "c",'
    ' "__table": "t", "__db": "d"}}',
]

# (format each line belongs to, line); CKafka's DDL lines are canal messages
MIXED: list[tuple[str, str]] = [
    *[("debezium", x) for x in _lines("002_postgres.jsonl")],
    *[("canal", x) for x in _lines("001_ckafka.jsonl")[:6]],
    *[("ckafka", x) for x in _lines("001_ckafka.jsonl")[6:]],
    *[("dataworks", x) for x in _lines("003_dataworks.jsonl")],
    *[("debezium", x) for x in _lines("000_sqlserver_create.jsonl")],
    *[("dataworks", x) for x in _lines("003_dataworks_format_repaired.jsonl")[1:]],
    # Debezium flattened by ExtractNewRecordState: a schema named *.Value, a bare row with
    # __deleted (rewrite), a bare row with __op whose table has columns named like other
    # formats' fields (a row, not canal's database/table: those are nested in the value)
    *[("debezium", x) for x in FLATTENED],
]


def _comparable(df: DataFrame) -> list[tuple[object, ...]]:
    cols = [
        F.col("lineage")["offset"],
        "table",
        "op",
        "key_columns",
        "key_source",
        F.col("before").cast("string"),
        F.col("after").cast("string"),
        "row_schema",
        "position",
        "source_ts",
        "detail",
        "error",
    ]
    return sorted(tuple(r) for r in df.select(*cols).collect())


def test_each_line_is_detected_by_exactly_one_format(spark: SparkSession) -> None:
    raw = raw_from_lines(spark, [line for _, line in MIXED])
    fmts = formats.all_formats()
    hits = (
        raw.select(
            F.col("lineage")["offset"].alias("n"),
            *[F.coalesce(f.detect(F.col("value")), F.lit(False)).alias(f.name) for f in fmts],
        )
        .orderBy("n")
        .collect()
    )
    detected = [[f.name for f in fmts if r[f.name]] for r in hits]
    assert detected == [[name] for name, _ in MIXED]


def test_auto_decodes_each_line_like_its_own_format(spark: SparkSession) -> None:
    raw = raw_from_lines(spark, [line for _, line in MIXED])
    auto = _comparable(decode(raw, "auto"))
    expected: list[tuple[object, ...]] = []
    for name in formats.names():
        mine = [i for i, (fmt, _) in enumerate(MIXED, start=1) if fmt == name]
        expected += _comparable(decode(raw.filter(F.col("lineage")["offset"].isin(mine)), name))
    assert auto == sorted(expected)
    assert len(auto) == len(MIXED)
    assert all(row[-1] is None for row in auto)  # no errors: every line decoded


def test_a_later_auto_batch_replays_its_plan_and_decodes_the_same(
    spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: ``auto`` built its five branches anew for every batch (about 2 s of driver
    time a batch, py4j calls), where one format's envelope is built once per query. A later
    batch of the same schema now replays the plan: no envelope is built again, and it decodes
    exactly as the formats decode their own lines (a message of no format still says so)."""
    forget()
    built: list[str] = []
    for cls in (DebeziumFormat, DataWorksFormat):
        envelope = cls.envelope

        def counted(self: Format, raw: DataFrame, options: DecodeOptions, f=envelope) -> DataFrame:
            built.append(self.name)
            return f(self, raw, options)

        monkeypatch.setattr(cls, "envelope", counted)
    first = decode(raw_from_lines(spark, [line for _, line in MIXED[::2]]), "auto")
    assert sorted(set(built)) == ["dataworks", "debezium"]
    release(first)
    built.clear()
    lines = [line for _, line in MIXED]
    raw = raw_from_lines(spark, [*lines, '{"hello": "world"}'])
    auto = _comparable(decode(raw, "auto"))
    assert built == []
    monkeypatch.undo()
    expected: list[tuple[object, ...]] = []
    for name in formats.names():
        mine = [i for i, (fmt, _) in enumerate(MIXED, start=1) if fmt == name]
        expected += _comparable(decode(raw.filter(F.col("lineage")["offset"].isin(mine)), name))
    garbage = [row for row in auto if row[0] == len(MIXED) + 1]
    assert sorted(row for row in auto if row[0] <= len(MIXED)) == sorted(expected)
    assert [row[-1] for row in garbage] == [
        "not a message of any known format (debezium, canal, ckafka, dataworks)"
    ]
    assert garbage[0][1:-1] == (None, None, [], "none", None, None, None, None, None, None)


@pytest.mark.parametrize("name", formats.names())
def test_an_input_of_one_format_decodes_as_that_format(spark: SparkSession, name: str) -> None:
    """``auto`` over the lines of one format finds that format alone and decodes the input
    exactly as ``--format`` that format does, with nothing kept persisted for the detection;
    one line of no format sends the input through the per-message split instead, where that
    line alone is quarantined."""
    lines = [line for fmt, line in MIXED if fmt == name]
    raw = raw_from_lines(spark, lines, epoch=1)  # one input order for both inputs
    assert only_format(raw) == name
    assert envelopes(raw, "auto", DecodeOptions())[1] is None  # no tagged records persisted
    assert _comparable(decode(raw, "auto")) == _comparable(decode(raw, name))
    with_garbage = raw_from_lines(spark, [*lines, "[1, 2]"], epoch=1)
    assert only_format(with_garbage) is None
    got = _comparable(decode(with_garbage, "auto"))
    assert got[:-1] == _comparable(decode(raw, name))
    assert got[-1][0] == len(lines) + 1
    assert got[-1][-1].startswith("not a message of any known format")
