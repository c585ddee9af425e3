"""Every valid-JSON example of the seed documents: decode, encode in the same format, and the
result equals the example field for field.

The only fields left out are those the canonical change model does not carry (listed per case in
``NOT_CARRIED`` with the reason); everything else must come back exactly. Seed 002's examples are
not valid JSON as printed (tests/data/seeds/README.md), so they are not among these cases.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from cdclake.decode import decode
from cdclake.formats.encode import EncodeOptions
from cdclake.run.produce import encode
from cdclake.sources import raw_from_lines

SEEDS = Path(__file__).resolve().parents[1] / "data" / "seeds"

SQLSERVER = EncodeOptions(
    connector="sqlserver", server_name="server1", version="1.0.3.Final", tombstones=False
)
_COLUMN_OPTIONAL = [f"schema.fields.{i}.fields.{j}.optional" for i in (0, 1) for j in range(4)]
NOT_CARRIED: dict[str, list[str]] = {
    "debezium": [
        *_COLUMN_OPTIONAL,  # NOT NULL is not kept by the canonical row schema
        "payload.ts_ms",  # the connector's processing time: written as source.ts_ms
        "payload.source.event_serial_no",  # the document's "1" is a string; its schema says int64
    ],
    "canal-ddl-seconds": [
        "es",  # the CKafka DDL examples give seconds; canal writes ms (the decoder scales them)
        "ts",  # canal's build time: written as the binlog time es
    ],
    "canal-ddl": ["ts"],
    "dataworks": ["payload.timestamp"],  # systemTime/checkpointTime: written as eventTime
    "dataworks-repaired": [
        "payload.timestamp",
        "payload.scn",  # Oracle SCN: kept in meta, not written
        "payload.ddl",  # a ddl block on a row change: not carried
        "schema.source.dbVersion",
    ],
    "dataworks-ddl": [
        "schema",  # a DDL record carries no row schema or images here
        "payload.before",
        "payload.after",
        "payload.timestamp",
        "payload.scn",
        "payload.ddl.ddlMeta",
    ],
}


def _lines(name: str) -> list[str]:
    return [line for line in (SEEDS / name).read_text().splitlines() if line.strip()]


def _drop(doc: Any, path: str) -> None:
    *parents, last = path.split(".")
    for p in parents:
        if doc is None:
            return
        doc = doc[int(p)] if isinstance(doc, list) else doc.get(p)
    if isinstance(doc, dict):
        doc.pop(last, None)


RUNS: dict[str, tuple[str, EncodeOptions, list[tuple[str, int]]]] = {
    "sqlserver": ("debezium", SQLSERVER, [("000_sqlserver_create.jsonl", 0)]),
    "ckafka": ("ckafka", EncodeOptions(), [("001_ckafka.jsonl", i) for i in range(9)]),
    "dataworks": (
        "dataworks",
        EncodeOptions(),
        [*[("003_dataworks.jsonl", i) for i in (0, 1, 2, 3, 5)],
         ("003_dataworks_format_repaired.jsonl", 2)],
    ),
    "dataworks-one-record-per-update": (
        "dataworks",
        EncodeOptions(update_pairs=False),
        [("003_dataworks.jsonl", 4), ("003_dataworks_format_repaired.jsonl", 1)],
    ),
}  # fmt: skip
"""One decode + encode per run (format and options), for all its examples at once."""

EXCEPTIONS: dict[tuple[str, int], str] = {
    ("000_sqlserver_create.jsonl", 0): "debezium",
    **{("001_ckafka.jsonl", i): "canal-ddl-seconds" for i in range(5)},
    ("001_ckafka.jsonl", 5): "canal-ddl",
    **{("003_dataworks.jsonl", i): "dataworks" for i in range(6)},
    ("003_dataworks_format_repaired.jsonl", 1): "dataworks-repaired",
    ("003_dataworks_format_repaired.jsonl", 2): "dataworks-ddl",
}


@pytest.fixture(scope="module")
def encoded(spark: SparkSession) -> dict[tuple[str, int], list[dict[str, Any]]]:
    """Per example, the messages encoded from it (in write order)."""
    out: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for fmt, options, examples in RUNS.values():
        lines = [_lines(f)[i] for f, i in examples]
        changes = decode(raw_from_lines(spark, lines, "golden"), fmt)
        messages = encode(changes, fmt, options)
        generated_ddl = F.col("position").isNull() & F.col("value").contains("IF NOT EXISTS")
        rows = (
            messages.filter(F.col("error").isNull() & ~generated_ddl)
            .orderBy("lineage.offset", "part")
            .collect()
        )
        assert all(r["skipped"] is None for r in rows), rows
        for r in rows:
            example = examples[r["lineage"]["offset"] - 1]
            out.setdefault(example, []).append(json.loads(r["value"]))
    return out


CASES = [example for _, _, examples in RUNS.values() for example in examples]


@pytest.mark.parametrize(("file", "index"), CASES)
def test_seed_example_encodes_back_to_itself(
    encoded: dict[tuple[str, int], list[dict[str, Any]]], file: str, index: int
) -> None:
    expected = json.loads(_lines(file)[index])
    [actual] = encoded[(file, index)]
    for path in NOT_CARRIED.get(EXCEPTIONS.get((file, index), ""), []):
        _drop(expected, path)
        _drop(actual, path)
    assert actual == expected
