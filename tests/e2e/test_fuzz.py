"""Fuzz: mutated messages of all four formats mixed into valid workloads never stop a run.

Two batches (the first creates the tables, the second meets them typed) of good messages and
mutants (see :mod:`fuzz_gen`) go through the file path with ``--format auto``; the good messages
alone go to a second target. Per batch: every mutant is quarantined exactly once with a reason,
counts reconcile, and the tables equal the reference tables; the tables of the shapes with types
(odd column names, NUMERIC decimals) also hold exactly the generator's rows under its names.
Seeded: set ``CDCLAKE_FUZZ_SEED`` to replay another run, ``CDCLAKE_FUZZ_MUTANTS`` (per format
and batch) to change its size.
"""

from __future__ import annotations

import json
import os
import uuid
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from builders.fuzz_gen import (
    FORMATS,
    SHAPES,
    TABLES,
    TYPED_SHAPE_MUTATIONS,
    Message,
    live_rows,
    workload,
)
from confluent_kafka import Producer
from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import TimestampNTZType, TimestampType

from cdclake.config import ApplyConfig
from cdclake.names import column
from cdclake.ops.metrics import reason_template
from cdclake.run.kafka_tools import create_topic
from cdclake.run.runner import apply_raw
from cdclake.run.streaming import run_kafka
from cdclake.sources import read_files

pytestmark = pytest.mark.fuzz

SEED = int(os.environ.get("CDCLAKE_FUZZ_SEED", "11"))
MUTANTS = int(os.environ.get("CDCLAKE_FUZZ_MUTANTS", "1300"))  # 4 formats x 2 batches: 10,400
GOOD = 250
# other producers' shapes (Flink's Debezium and canal JSON): fewer mutants, of the envelope only
SHAPE_MUTANTS = max(1, MUTANTS // 10)
# where a message came from differs between the two inputs (canal's position holds the line)
IGNORED = ("_cdc_lineage", "_cdc_position")


def _apply(spark: SparkSession, path: Path, target: Path) -> Any:
    config = ApplyConfig(format="auto", inputs=(str(path),), target=str(target))
    return apply_raw(read_files(spark, [str(path)]), config)


def _write(path: Path, messages: list[Message]) -> Path:
    path.write_bytes(b"\n".join(m.line for m in messages) + b"\n")
    return path


def _live(spark: SparkSession, target: Path, table: str, columns: list[str]) -> list[Any]:
    df = spark.read.format("delta").load(str(target / table))
    return sorted(
        tuple(r) for r in df.select(*[_comparable(df.schema[c]) for c in columns]).collect()
    )


def _comparable(field: Any) -> Column:
    """A column by its exact name (``x.y`z`` too); a timestamp as ms since the epoch (UTC)."""
    if isinstance(field.dataType, TimestampType | TimestampNTZType):
        return F.unix_millis(column(field.name).cast("timestamp"))
    return column(field.name)


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _expected(rows: list[dict[str, Any]], columns: list[str]) -> list[Any]:
    """The generator's typed rows as :func:`_live` reads them."""

    def value(v: Any) -> Any:
        return (v - EPOCH) // timedelta(milliseconds=1) if isinstance(v, datetime) else v

    return sorted(tuple(value(r[c]) for c in columns) for r in rows)


# over 120 s (236 s in a full run), because: 10,400 mutants and their good workloads in four
# formats and six other producers' shapes, twice (with and without the mutants), two batches
# each; CDCLAKE_FUZZ_MUTANTS gives a smaller run by hand
def test_mutants_are_quarantined_and_tables_hold_the_good_messages(
    spark: SparkSession, tmp_path: Path
) -> None:
    fuzz, ref = tmp_path / "fuzz", tmp_path / "ref"
    tried: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    for b in range(2):
        batch: list[Message] = []
        for fmt in (*FORMATS, *SHAPES):
            n_bad = SHAPE_MUTANTS if fmt in SHAPES else MUTANTS
            batch += workload(SEED, fmt, GOOD, n_bad, 1 + 10_000 * b, 100_000 * b, rare=True)
        bad_lines = {i for i, m in enumerate(batch, 1) if m.kind not in ("good", "control")}
        tried.update(m.fmt for m in batch if m.kind not in ("good", "control"))
        mixed = _apply(spark, _write(tmp_path / f"mixed{b}.jsonl", batch), fuzz)
        alone = _apply(
            spark,
            _write(
                tmp_path / f"good{b}.jsonl", [m for m in batch if m.kind in ("good", "control")]
            ),
            ref,
        )
        assert mixed.messages == len(batch)
        assert mixed.messages == mixed.applied + mixed.ignored + mixed.control + mixed.quarantined
        q = (
            spark.read.format("delta")
            .load(str(fuzz / "_cdc_quarantine"))
            .filter(F.col("lineage.source").endswith(f"mixed{b}.jsonl"))
            .select(F.col("lineage.offset").alias("line"), "reason")
            .collect()
        )
        lines = Counter(r["line"] for r in q)
        missed = sorted(bad_lines - set(lines))
        assert not missed, [(batch[i - 1].kind, batch[i - 1].line[:300]) for i in missed[:5]]
        assert set(lines) == bad_lines, sorted(set(lines) - bad_lines)[:5]
        assert all(n == 1 for n in lines.values())
        assert all(r["reason"] for r in q)
        assert mixed.quarantined == len(bad_lines)
        assert (mixed.control, mixed.applied, mixed.ignored) == (
            alone.control,
            alone.applied,
            alone.ignored,
        )
        reasons.update(reason_template(r["reason"]) for r in q)
        for fmt in (*FORMATS, *SHAPES):
            table = TABLES[fmt]
            columns = [
                c
                for c in spark.read.format("delta").load(str(ref / table)).columns
                if c not in IGNORED
            ]
            assert _live(spark, fuzz, table, columns) == _live(spark, ref, table, columns), table
            if fmt in TYPED_SHAPE_MUTATIONS:  # and hold exactly the generator's rows and names
                rows = [
                    r
                    for k in range(b + 1)
                    for r in live_rows(SEED, fmt, GOOD, 1 + 10_000 * k, 100_000 * k)
                ]
                assert [c for c in columns if not c.startswith("_cdc_")] == list(rows[0])
                assert _live(spark, fuzz, table, list(rows[0])) == _expected(rows, list(rows[0]))
    print(f"\nfuzz seed {SEED}: mutants tried per format {dict(tried)}; crashes 0")
    for reason, n in reasons.most_common():
        print(f"{n:6d}  {reason}")


KAFKA_MUTANTS = 40  # per format: a sample through the streaming path


def _kafka_record(m: Message) -> tuple[bytes | None, bytes]:
    """A line as Kafka carries it: a record object's key and value apart, anything else as the
    value (a mutant that is no longer a record object stays as it is)."""
    try:
        doc = json.loads(m.line)
    except ValueError:
        return None, m.line
    if isinstance(doc, dict) and set(doc) == {"key", "value"}:
        return json.dumps(doc["key"]).encode(), json.dumps(doc["value"]).encode()
    return None, m.line


@pytest.mark.e2e
def test_mutants_through_kafka(kafka_broker: str, spark: SparkSession, tmp_path: Path) -> None:
    batch: list[Message] = []
    for fmt in FORMATS:
        batch += workload(SEED, fmt, 60, KAFKA_MUTANTS, 1, 0, rare=False)
    topic = f"fuzz-{uuid.uuid4().hex[:8]}"
    create_topic(kafka_broker, topic, partitions=1)
    producer = Producer({"bootstrap.servers": kafka_broker, "enable.idempotence": True})
    for m in batch:
        key, value = _kafka_record(m)
        producer.produce(topic, key=key, value=value, partition=0)
    assert producer.flush(30) == 0
    config = ApplyConfig(
        format="auto",
        kafka_bootstrap=kafka_broker,
        topics=(topic,),
        checkpoint=str(tmp_path / "chk"),
        target=str(tmp_path / "lake"),
        available_now=True,
        max_offsets_per_trigger=len(batch) // 2 + 1,
    )
    total = run_kafka(spark, config)
    good = [m for m in batch if m.kind in ("good", "control")]
    alone = _apply(spark, _write(tmp_path / "good.jsonl", good), tmp_path / "ref")

    bad = {i for i, m in enumerate(batch) if m.kind not in ("good", "control")}
    q = spark.read.format("delta").load(str(tmp_path / "lake" / "_cdc_quarantine"))
    offsets = Counter(r["offset"] for r in q.select("lineage.offset").collect())
    assert set(offsets) == bad and all(n == 1 for n in offsets.values())
    assert total.messages == len(batch)
    assert total.messages == total.applied + total.ignored + total.control + total.quarantined
    assert (total.applied, total.control) == (alone.applied, alone.control)
    for fmt in FORMATS:
        table = TABLES[fmt]
        ref = spark.read.format("delta").load(str(tmp_path / "ref" / table))
        columns = [c for c in ref.columns if c not in IGNORED]
        assert _live(spark, tmp_path / "lake", table, columns) == _live(
            spark, tmp_path / "ref", table, columns
        ), table
