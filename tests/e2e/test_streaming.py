"""Kafka -> Delta through Structured Streaming against a real broker: exactly once, bad input kept.

Expected table contents are computed here in plain Python from the produced events
(:func:`expected_state`), independently of cdclake's decoder and applier.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from builders.dbz import INT32, INT64, STRING, event, fields
from confluent_kafka import Producer
from pyspark.sql import SparkSession
from typer.testing import CliRunner

from cdclake.apply.tables import Target
from cdclake.cli import app
from cdclake.config import ApplyConfig
from cdclake.errors import BadInputError
from cdclake.run.kafka_tools import create_topic, produce
from cdclake.run.streaming import run_kafka

REPO = Path(__file__).resolve().parents[2]
REAL = REPO / "tests" / "data" / "debezium_real"
REAL_FILES = [
    REAL / "pg_schemas" / "pg_schemas.public.order_lines.jsonl",
    REAL / "pg_schemas" / "pg_schemas.public.truncated.jsonl",
    REAL / "mariadb_schemas" / "mariadb_schemas.cdclake.order_lines.jsonl",
]
Rows = dict[str, set[tuple[tuple[str, Any], ...]]]


# --- the independent oracle ---------------------------------------------------------------------


def _payload(value: Any) -> dict[str, Any]:
    return value["payload"] if isinstance(value, dict) and "payload" in value else value


def _table_of(source: dict[str, Any]) -> str:
    return ".".join(p for p in (source.get("db"), source.get("schema"), source["table"]) if p)


def expected_state(records: Iterable[dict[str, Any]]) -> Rows:
    """Live rows per table after the events, applied in order (one partition per key)."""
    tables: dict[str, dict[tuple[Any, ...], dict[str, Any]]] = {}
    for rec in records:
        if rec["value"] is None:
            continue
        p = _payload(rec["value"])
        key = _payload(rec["key"]) if rec.get("key") is not None else None
        rows = tables.setdefault(_table_of(p["source"]), {})
        if p["op"] == "t":
            rows.clear()
            continue
        assert key is not None, rec
        k = tuple(sorted(key.items()))
        if p["op"] in ("c", "r", "u"):
            rows[k] = p["after"]
        elif p["op"] == "d":
            rows.pop(k, None)
    return {t: {tuple(sorted(r.items())) for r in rows.values()} for t, rows in tables.items()}


def actual_state(spark: SparkSession, target: Path, tables: Iterable[str]) -> Rows:
    out: Rows = {}
    for table in tables:
        df = spark.read.format("delta").load(Target(str(target)).table_path(table))
        cols = [c for c in df.columns if not c.startswith("_cdc_")]
        out[table] = {tuple(sorted(r.asDict().items())) for r in df.select(*cols).collect()}
    return out


def read_jsonl(*paths: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for p in paths for line in p.read_text().splitlines() if line.strip()]


# --- Kafka and Delta helpers ----------------------------------------------------------------------


def _topic(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}"


def produce_records(bootstrap: str, topic: str, records: list[dict[str, Any]], tmp: Path) -> int:
    path = tmp / f"{topic}-{uuid.uuid4().hex[:6]}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return produce(path, topic, bootstrap)


def produce_bytes(
    bootstrap: str,
    topic: str,
    messages: list[tuple[bytes | None, bytes]],
    headers: dict[int, dict[str, bytes]] | None = None,
) -> None:
    """Messages as given on the wire (malformed JSON cannot go through a JSON-lines file);
    ``headers``: those of the message at each index."""
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    for i, (key, value) in enumerate(messages):
        extra = {"headers": list((headers or {})[i].items())} if i in (headers or {}) else {}
        producer.produce(topic, key=key, value=value, partition=0, **extra)
    assert producer.flush(30) == 0


def delta_rows(spark: SparkSession, path: Path) -> list[dict[str, Any]]:
    """Every row with every column, in a stable order (collect() order follows file layout)."""
    rows = [r.asDict(recursive=True) for r in spark.read.format("delta").load(str(path)).collect()]
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str))


def batch_records(spark: SparkSession, lake: Path) -> list[dict[str, Any]]:
    """A Kafka stream's batch records (the ``batch`` rows of ``_cdc_sources``), in a stable
    order."""
    rows = (
        spark.read.format("delta")
        .load(str(lake / "_cdc_sources"))
        .filter("kind = 'batch'")
        .select("batch.*")
        .collect()
    )
    return sorted((r.asDict(recursive=True) for r in rows), key=lambda r: r["batch_id"])


def kafka_config(bootstrap: str, topic: str, tmp: Path, **kw: Any) -> ApplyConfig:
    return ApplyConfig(
        kafka_bootstrap=bootstrap,
        topics=(topic,),
        checkpoint=str(tmp / "chk"),
        target=str(tmp / "lake"),
        available_now=True,
        **kw,
    )


def assert_balanced(batches: list[dict[str, Any]]) -> None:
    for b in batches:
        assert b["messages"] == b["applied"] + b["ignored"] + b["control"] + b["quarantined"], b
        assert b["changes"] == b["applied"] + b["ignored"], b


# --- (1) a multi-table topic, (3) the same range delivered again ----------------------------------


@pytest.mark.e2e
def test_multi_table_topic_lands_in_delta_and_redelivery_changes_nothing(
    kafka_broker: str, spark: SparkSession, tmp_path: Path
) -> None:
    topic = _topic("dbz-multi")
    # One partition: with two, the key-less truncate event can be the newest change of its table
    # in a batch, and the applier then takes the table as key-less (see the report).
    create_topic(kafka_broker, topic, partitions=1)
    records = read_jsonl(*REAL_FILES)
    produced = produce_records(kafka_broker, topic, records, tmp_path)
    # maintained after every batch, within a budget of no time: one table a batch, in turn
    config = kafka_config(
        kafka_broker, topic, tmp_path, maintain_every=1, maintain_budget=timedelta(0)
    )
    expected = expected_state(records)
    assert set(expected) == {
        "cdclake.public.order_lines",
        "cdclake.public.truncated",
        "cdclake.order_lines",
    }

    first = run_kafka(spark, config)

    assert actual_state(spark, tmp_path / "lake", expected) == expected
    assert first.messages == produced
    assert expected["cdclake.public.truncated"] == {(("id", 22), ("note", "after truncate"))}
    batches = batch_records(spark, tmp_path / "lake")
    assert sum(b["messages"] for b in batches) == produced
    assert sum(b["quarantined"] for b in batches) == 0
    assert_balanced(batches)
    assert {b["offsets_behind"] for b in batches} == {0}
    lake = Target(str(tmp_path / "lake"))
    # counted once when the run ends, not after every batch
    rows_now = {t: r.rows_now for t, r in first.tables.items()}
    assert rows_now == {t: len(delta_rows(spark, Path(lake.table_path(t)))) for t in expected}
    before = {
        t: delta_rows(spark, Path(Target(str(tmp_path / "lake")).table_path(t))) for t in expected
    }

    # (3) the producer sends the whole range again: nothing changes, everything is stale
    produce_records(kafka_broker, topic, records, tmp_path)
    again = run_kafka(spark, config)

    assert again.messages == produced
    assert again.control == first.control and again.quarantined == 0
    assert again.ignored > 0
    # Changes superseded inside the batch count as applied (apply/batch.py), so `applied` is not
    # 0; what matters is that no row was inserted, updated or deleted.
    touched = {t: (r.inserted, r.updated, r.deleted, r.truncated) for t, r in again.tables.items()}
    assert touched == {t: (0, 0, 0, 0) for t in expected}
    after = {
        t: delta_rows(spark, Path(Target(str(tmp_path / "lake")).table_path(t))) for t in expected
    }
    assert after == before  # not one row rewritten: positions, lineage and values all kept
    batches = batch_records(spark, tmp_path / "lake")
    assert sum(b["messages"] for b in batches) == 2 * produced
    assert_balanced(batches)
    last = max(batches, key=lambda b: b["batch_id"])
    assert (last["inserted"], last["updated"], last["deleted"]) == (0, 0, 0)
    # the Kafka stream maintained its target after each of its two batches, one table each time
    # in turn: the first table (vacuumed), then the second; not yet the third
    vacuumed = [
        "VACUUM END"
        in {r["operation"] for r in spark.sql(f"DESCRIBE HISTORY delta.`{p}`").collect()}
        for p in (lake.table_path(t) for t in sorted(expected))
    ]
    assert vacuumed == [True, True, False]


# --- (5) bad input: every message accounted for ---------------------------------------------------

ITEM_FIELDS = fields(id=INT32, name=STRING, qty=INT64)


def _good(op: str, lsn: int, **row: Any) -> bytes:
    rec = json.loads(
        event(
            op,
            after=row if op != "d" else None,
            before=row if op == "d" else None,
            lsn=lsn,
            row_fields=ITEM_FIELDS,
        )
    )
    return json.dumps(rec["value"]).encode()


BIG_NAME = "x" * 5000
# the headers of the messages at these offsets (all of them on partition 0)
BAD_INPUT_HEADERS = {
    1: {"trace": b"t-1"},
    7: {"trace": b"t-7", "origin": b"db-2"},
    8: {"trace": b"t-8"},
}


def bad_input_messages(limit: int) -> list[tuple[bytes | None, bytes | None, str | None]]:
    """(key, value, quarantine reason or None) in offset order."""
    # an update of id 1 that only its record key says is one (a good message: the replay, with
    # the key, applies it)
    huge = _good("u", 55, id=1, name=BIG_NAME, qty=11)
    assert len(huge) > limit
    unfit = json.loads(event("c", after={"id": 9, "name": "n", "qty": 1}, lsn=90))["value"]
    unfit["payload"]["after"]["qty"] = "lots"
    return [
        (b'{"id":1}', _good("c", 10, id=1, name="a", qty=1), None),
        (b'{"id":1}', b'{"payload": {"op": "c", "after": ', "not valid JSON"),
        (b'{"id":2}', _good("c", 20, id=2, name="b", qty=2), None),
        (None, b'{"hello": "world"}', "not a Debezium change event: no op, status or ts_ms"),
        (
            b'{"id":3}',
            json.dumps({"op": "z", "source": {}}).encode(),
            "unknown op 'z' (expected one of c, u, d, r, t, m)",
        ),
        (b'{"id":9}', json.dumps(unfit).encode(), "column qty: value 'lots' does not fit"),
        (
            b'{"nope":4}',
            _good("c", 40, id=4, name="d", qty=4),
            "key column(s) nope not in the row of shop.public.items",
        ),
        (b'{"id":1}', huge, f"message of {len(huge) + 8} bytes is over the limit of {limit}"),
        (b'{"id":1}', _good("u", 50, id=1, name="a2", qty=10), None),
        (b'{"id":2}', _good("d", 60, id=2, name="b", qty=2), None),
        (b'{"id":2}', None, None),  # tombstone: a control record
        (b'{"id":1}', _good("c", 5, id=1, name="old", qty=0), None),  # stale: ignored
    ]


@pytest.mark.e2e
def test_bad_input_is_quarantined_and_every_message_reconciles(
    kafka_broker: str, spark: SparkSession, tmp_path: Path
) -> None:
    topic, limit = _topic("dbz-bad"), 4096
    messages = bad_input_messages(limit)
    produce_bytes(
        kafka_broker,
        topic,
        [(k, v) for k, v, _ in messages],  # type: ignore[misc]
        BAD_INPUT_HEADERS,
    )
    config = kafka_config(
        kafka_broker, topic, tmp_path, max_message_bytes=limit, max_offsets_per_trigger=5
    )

    total = run_kafka(spark, config)

    assert actual_state(spark, tmp_path / "lake", ["shop.public.items"]) == {
        "shop.public.items": {(("id", 1), ("name", "a2"), ("qty", 10))}
    }
    bad = [(offset, reason) for offset, (_, _, reason) in enumerate(messages) if reason]
    quarantine = sorted(
        delta_rows(spark, tmp_path / "lake" / "_cdc_quarantine"),
        key=lambda r: r["lineage"]["offset"],
    )
    assert [
        (q["lineage"]["offset"], q["lineage"]["source"], q["lineage"]["partition"])
        for q in quarantine
    ] == [(o, topic, 0) for o, _ in bad]
    for q, (offset, reason) in zip(quarantine, bad, strict=True):
        assert reason in q["reason"], (offset, q["reason"])
        assert q["raw"] == messages[offset][1].decode()  # type: ignore[union-attr]
        # the record key and headers, as they came: a replay gives the record back whole
        key = messages[offset][0]
        assert q["key"] == (key.decode() if key is not None else None), offset
        headers = BAD_INPUT_HEADERS.get(offset, {})
        assert (q["headers"] or {}) == {k: v.decode() for k, v in headers.items()}, offset
        assert q["quarantined_at"] is not None
    assert "(--max-message-bytes); not parsed" in quarantine[-1]["reason"]

    batches = sorted(batch_records(spark, tmp_path / "lake"), key=lambda b: b["batch_id"])
    assert [b["messages"] for b in batches] == [5, 5, 2]
    assert_balanced(batches)
    sums = {
        k: sum(b[k] for b in batches)
        for k in ("messages", "applied", "ignored", "control", "quarantined", "oversize")
    }
    assert sums == {
        "messages": 12,
        "applied": 4,
        "ignored": 1,
        "control": 1,
        "quarantined": 6,
        "oversize": 1,
    }
    assert (total.messages, total.applied, total.ignored, total.control, total.quarantined) == (
        12,
        4,
        1,
        1,
        6,
    )
    replay_with_record_keys(spark, tmp_path / "lake", quarantine)


def replay_with_record_keys(
    spark: SparkSession, lake: Path, quarantined: list[dict[str, Any]]
) -> None:
    """``quarantine show`` gives a record's key and headers; a replay (no size limit) applies the
    oversize update, whose row key is in its record key alone; the others still fail, for the
    same reasons, and stay with their key and headers."""
    target = ["--target", str(lake)]
    res = CliRunner().invoke(app, ["quarantine", "show", *target, "--reason", "not valid JSON"])
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[1:3] == ['key: {"id":1}', 'headers: {"trace": "t-1"}']

    res = CliRunner().invoke(app, ["quarantine", "replay", *target, "--format", "debezium"])
    assert res.exit_code == 0, res.output
    assert "selected 6; applied 1; still quarantined 5" in res.stdout

    assert actual_state(spark, lake, ["shop.public.items"]) == {
        "shop.public.items": {(("id", 1), ("name", BIG_NAME), ("qty", 11))}
    }
    fields = ("lineage", "reason", "key", "headers", "raw")
    kept = [{k: q[k] for k in fields} for q in quarantined[:-1]]
    again = sorted(
        delta_rows(spark, lake / "_cdc_quarantine"), key=lambda r: r["lineage"]["offset"]
    )
    assert [{k: q[k] for k in fields} for q in again] == kept


@pytest.mark.e2e
def test_fail_on_bad_input_stops_with_topic_partition_and_offset(
    kafka_broker: str, spark: SparkSession, tmp_path: Path
) -> None:
    topic = _topic("dbz-strict")
    produce_bytes(kafka_broker, topic, [(k, v) for k, v, _ in bad_input_messages(4096)[:3]])
    config = kafka_config(kafka_broker, topic, tmp_path, fail_on_bad_input=True)
    with pytest.raises(BadInputError, match=rf"topic {topic} partition 0 offset 1: not valid JSON"):
        run_kafka(spark, config)

    # the command line says the same, without a Java stack trace, and exits 2
    result = CliRunner().invoke(
        app,
        [
            "apply",
            "--kafka-bootstrap",
            kafka_broker,
            "--topic",
            topic,
            "--checkpoint",
            str(tmp_path / "chk2"),
            "--target",
            str(tmp_path / "lake2"),
            "--available-now",
            "--fail-on-bad-input",
        ],
    )
    assert result.exit_code == 2, result.output
    assert f"bad input at topic {topic} partition 0 offset 1: not valid JSON" in " ".join(
        result.output.split()
    )
    assert "at org.apache" not in result.output
