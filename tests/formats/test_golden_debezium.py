"""Golden tests: every Debezium example of seeds 000 and 002 decodes as the documents say.

Expected values are written by hand from the documents (see tests/data/seeds/README.md for the
minimal repairs the printed seed 002 examples needed to be JSON at all).
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from pyspark.sql import functions as F

from cdclake.decode import decode
from cdclake.sources import raw_from_lines

SEEDS = Path(__file__).resolve().parents[1] / "data" / "seeds"
NO_ROW = {"id": None, "first_name": None, "last_name": None, "email": None}


def _decode(spark, name):
    lines = (SEEDS / name).read_text().splitlines()
    return decode(raw_from_lines(spark, lines, name), "debezium").orderBy("lineage.offset")


def _image(variant_json: str | None):
    return None if variant_json is None else json.loads(variant_json)


def _rows(df):
    return [
        {
            "table": r["table"],
            "op": r["op"],
            "key": list(r["key_columns"] or []),
            "position": None if r["position"] is None else list(r["position"]),
            "before": _image(r["b"]),
            "after": _image(r["a"]),
            "ts": r["source_ts"],
            "detail": r["detail"],
            "error": r["error"],
        }
        for r in df.select(
            "*", F.to_json("before").alias("b"), F.to_json("after").alias("a")
        ).collect()
    ]


def test_seed_000_sqlserver_create_event(spark):
    [row] = _rows(_decode(spark, "000_sqlserver_create.jsonl"))
    assert row == {
        "table": "testDB.dbo.customers",
        "op": "insert",
        "key": [],  # the document shows the value only: no record key
        # commit_lsn 00000027:00000758:0005, change_lsn 00000027:00000758:0003, serial "1"
        "position": [0x27, 0x758, 5, 0x27, 0x758, 3, 1],
        "before": None,
        "after": {
            "id": 1005,
            "first_name": "john",
            "last_name": "doe",
            "email": "john.doe@example.org",
        },
        "ts": dt.datetime(2019, 6, 5, 10, 11, 8, 470000),
        "detail": None,
        "error": None,
    }


def test_seed_000_types_follow_the_schema(spark):
    df = _decode(spark, "000_sqlserver_create.jsonl")
    schema = json.loads(df.first()["row_schema"])
    assert [(f["name"], f["type"]) for f in schema["fields"]] == [
        ("id", "integer"),
        ("first_name", "string"),
        ("last_name", "string"),
        ("email", "string"),
    ]


def test_seed_002_postgres_examples(spark):
    rows = _rows(_decode(spark, "002_postgres.jsonl"))
    anne = {"id": 1, "first_name": "Anne", "last_name": "Kretchmar", "email": "annek@noanswer.org"}
    t0 = dt.datetime(2019, 5, 28, 8, 58, 24, 863000)
    assert rows == [
        {
            "table": "postgres.public.customers",
            "op": "insert",
            "key": ["id"],
            "position": [24023128],
            "before": None,
            "after": anne,
            "ts": t0,
            "detail": None,
            "error": None,
        },
        {
            "table": "postgres.public.customers",
            "op": "update",
            "key": ["id"],
            # the before image holds the key only (REPLICA IDENTITY DEFAULT): the rest is null
            "position": [24023128],
            "before": {**NO_ROW, "id": 1},
            "after": {**anne, "first_name": "Anne Marie"},
            "ts": t0,
            "detail": None,
            "error": None,
        },
        {
            "table": "postgres.public.customers",
            "op": "truncate",
            "key": [],
            "position": [46523128],
            "before": None,
            "after": None,
            "ts": t0,
            "detail": None,
            "error": None,
        },
        # op m: table "" -> no table; the prefix and the base64 content are the detail
        {
            "table": None,
            "op": "message",
            "key": [],
            "position": None,
            "before": None,
            "after": None,
            "ts": t0,
            "detail": "foo:Ymfy",
            "error": None,
        },
        {
            "table": None,
            "op": "message",
            "key": [],
            "position": None,
            "before": None,
            "after": None,
            "ts": t0,
            "detail": "foo:Ymfy",
            "error": None,
        },
        {
            "table": "postgres.public.customers",
            "op": "delete",
            "key": ["id"],
            "position": [46523128],
            "before": {**NO_ROW, "id": 1},
            "after": None,
            "ts": t0,
            "detail": None,
            "error": None,
        },
    ]


def test_seed_002_as_printed_is_quarantined_not_dropped(spark):
    """The document's examples are not JSON as printed: each one is quarantined with a reason."""
    rows = _rows(_decode(spark, "002_postgres_verbatim.jsonl"))
    assert [r["error"] for r in rows] == ["not valid JSON"] * 7


def test_seed_examples_applied_end_to_end(lake):
    lines = (SEEDS / "002_postgres.jsonl").read_text().splitlines()
    r = lake.apply(lines)
    # create, then update at the same LSN (input order breaks the tie), then the truncate at
    # 46523128 removes it; the delete at the truncate's own position changes nothing more
    assert lake.rows("postgres.public.customers") == []
    assert r.control_by_op == {"message": 2}
    assert (r.messages, r.changes, r.quarantined) == (6, 4, 0)
