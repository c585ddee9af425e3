"""Debezium's lanes (issue 36): a stream's Kafka message whose Connect JSON starts as one an
earlier batch typed (the value's and the key's text before ``"payload"``) is read without its
schema section and key being parsed, its position the connector's way only.

The reference is the generic envelope: for any batch, the envelopes with lanes are the
envelopes without them, row for row; what a lane cannot read exactly (another connector, a
payload that does not parse, no table or position, a truncate, a message) takes the generic way
in the same projection.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from builders.msgs import DBZ_FIELDS, debezium
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from cdclake.apply.tables import Target
from cdclake.config import ApplyConfig
from cdclake.decode import KnownGroups, one_pass_envelopes
from cdclake.formats.base import DecodeOptions
from cdclake.run.kafka_tools import source_rows
from cdclake.run.runner import apply_raw
from cdclake.sources import from_kafka_df, with_order

CONNECT_KEY = {
    "schema": {
        "type": "struct",
        "fields": [{"type": "int32", "optional": False, "field": "id"}],
        "optional": False,
        "name": "shop.dbo.items.Key",
    },
}
SOURCES: dict[str, dict[str, Any]] = {
    "sqlserver": {},  # the builder's
    "postgresql": {"connector": "postgresql", "lsn": 1000},
    "mysql": {"connector": "mysql", "file": "binlog.000003", "pos": 400, "row": 0},
}


def _message(n: int, connector: str, key: str, kind: str) -> str:
    """A record line of ``shop.dbo.items`` (schema envelope) from ``connector``: ``key``
    connect / plain / none; ``kind`` a change a lane reads, or one it leaves to the generic
    envelope."""
    row = {"id": n % 7, "name": f"n{n}", "qty": n}
    op = {"update": "u", "delete": "d", "read": "r", "truncate": "t"}.get(kind, "c")
    after = None if op in ("d", "t") else row
    before = row if op in ("u", "d") else None
    record = json.loads(debezium(n, after, before, op=op, schema=DBZ_FIELDS))
    source = record["value"]["payload"]["source"]
    extra = dict(SOURCES[connector])
    for field in ("lsn", "pos"):
        if field in extra:
            extra[field] += n
    source.update(extra)
    if connector != "sqlserver":
        del source["change_lsn"], source["commit_lsn"]
    # as Debezium's: the schema section names the connector's source schema
    record["value"]["schema"]["name"] = f"io.debezium.connector.{connector}.Envelope"
    payload = record["value"]["payload"]
    if kind == "transaction":
        payload["transaction"] = {"id": f"{n}:{n}", "total_order": 2, "data_collection_order": 1}
    elif kind == "malformed":
        payload["after"] = "not an object"
    elif kind == "no table":
        source["table"] = ""
    elif kind == "bad lsn":
        source.update(lsn="x", commit_lsn="x", change_lsn=None, file=None)
    elif kind == "other connector":
        source["connector"] = "oracle"
    elif kind == "message":
        payload.update(op="m", message={"prefix": "p", "content": "c"})
    elif kind == "heartbeat source":
        payload["source"] = None
    record["key"] = {
        "connect": {**CONNECT_KEY, "payload": {"id": n % 7}},
        "plain": {"id": n % 7},
        "none": None,
    }[key]
    return json.dumps(record)


KINDS = [
    "insert", "update", "delete", "read", "transaction",  # a lane reads these
    "truncate", "malformed", "no table", "bad lsn", "other connector", "message",
    "heartbeat source",
]  # fmt: skip
FAST_KINDS = KINDS[:5]


def _kafka(spark: SparkSession, lines: list[str], first_offset: int = 0) -> DataFrame:
    return from_kafka_df(source_rows(spark, lines, "dbz.items", first_offset))


def _first_batch() -> list[str]:
    """An insert of each connector and key form."""
    forms = [(c, k) for c in SOURCES for k in ("connect", "plain", "none")]
    return [_message(i, c, k, "insert") for i, (c, k) in enumerate(forms)]


@pytest.fixture(scope="module")
def learned(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> KnownGroups:
    """A stream's known groups after its first batch (:func:`_first_batch`)."""
    known = KnownGroups()
    config = ApplyConfig(
        format="debezium", inputs=("in",), target=str(tmp_path_factory.mktemp("lanes"))
    )
    result = apply_raw(_kafka(spark, _first_batch()), config, known=known)
    assert not result.one_pass and result.quarantined == 0
    return known


def _envelopes(raw: DataFrame, known: KnownGroups) -> list[str]:
    env, _ = one_pass_envelopes(raw, "debezium", DecodeOptions(), known)
    text = {"meta", "headers", "before_image", "after_image"}
    rows = env.select(
        *[F.to_json(c).alias(c) if c in text else F.col(c) for c in env.columns]
    ).collect()
    return sorted(json.dumps(r.asDict(recursive=True), default=str, sort_keys=True) for r in rows)


def _fast_rows(raw: DataFrame, known: KnownGroups) -> list[int]:
    """The offsets of the messages the lanes read."""
    from cdclake.formats.debezium import _in_lanes

    images = known.images("debezium")
    assert images is not None
    lanes = known.lanes("debezium")
    read = _in_lanes(with_order(raw), images, lanes).filter("_fast")
    return sorted(
        r["offset"] for r in read.select(F.col("lineage")["offset"].alias("offset")).collect()
    )


def test_a_stream_learns_one_lane_per_connector_and_key_form(learned: KnownGroups) -> None:
    lanes = learned.lanes("debezium")
    got = sorted((lane.connector, lane.key_columns or ()) for lane in lanes)
    # a Connect key: its schema's columns; a plain key: each message's own (None); no key: none
    want = sorted((c, keys) for c in SOURCES for keys in (("id",), (), ()))
    assert got == want, lanes
    assert sum(lane.key_columns is None for lane in lanes) == len(SOURCES)
    assert {lane.schema_token for lane in lanes} == {json.dumps(DBZ_FIELDS, separators=(",", ":"))}
    forgetful = KnownGroups(dict(learned.plans), dict(learned._lanes))
    forgetful.forget()
    assert forgetful.lanes("debezium") == ()


def _read_by_lane(connector: str, kind: str) -> bool:
    """Whether a lane reads a message of :func:`_message`: a row change of the lane's connector
    with a table and a position (a SQL Server or MySQL position that does not parse is -1; a
    PostgreSQL LSN that does not is an error, which the generic envelope gives)."""
    return kind in FAST_KINDS or (kind == "bad lsn" and connector != "postgresql")


@settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(list(SOURCES)),
            st.sampled_from(["connect", "plain", "none"]),
            st.sampled_from(KINDS),
        ),
        min_size=1,
        max_size=25,
    )
)
def test_envelopes_with_lanes_are_the_generic_envelopes(
    spark: SparkSession, learned: KnownGroups, messages: list[tuple[str, str, str]]
) -> None:
    """Whatever the batch, its envelopes with lanes equal those without, and exactly the
    changes a lane can read take it."""
    lines = [_message(100 + i, c, k, kind) for i, (c, k, kind) in enumerate(messages)]
    raw = _kafka(spark, lines, 100)
    with_lanes = _envelopes(raw, learned)
    generic = _envelopes(raw, KnownGroups(dict(learned.plans)))
    assert with_lanes == generic
    fast = [100 + i for i, (c, _, kind) in enumerate(messages) if _read_by_lane(c, kind)]
    assert _fast_rows(raw, learned) == fast


def _model(messages: list[tuple[int, str]]) -> list[tuple[Any, ...]]:
    """The table after ``(n, kind)`` messages of :func:`_message` in position order: a row
    change's after image, or no row after a delete."""
    table: dict[int, tuple[Any, ...]] = {}
    for n, kind in sorted(messages):
        if kind == "delete":
            table.pop(n % 7, None)
        else:
            table[n % 7] = (n % 7, f"n{n}", n)
    return sorted(table.values())


def test_a_kafka_stream_with_lanes_writes_the_models_table(
    spark: SparkSession, tmp_path: Path
) -> None:
    """A stream's first batch learns its lane; its next batch, every change read by the lane,
    is applied in one pass, and the table holds what the messages say, in position order."""
    known = KnownGroups()
    stream = ApplyConfig(format="debezium", inputs=("in",), target=str(tmp_path / "stream"))
    batches = [
        [(i, "insert") for i in range(9)],
        [(20 + i, kind) for i, kind in enumerate(FAST_KINDS * 2)][::-1],  # newest first
    ]
    offset = 0
    for i, batch in enumerate(batches):
        raw = _kafka(spark, [_message(n, "sqlserver", "connect", k) for n, k in batch], offset)
        got = apply_raw(raw, stream, known=known)
        assert (got.one_pass, got.changes, got.quarantined) == (i > 0, len(batch), 0)
        if i == 0:
            assert len(known.lanes("debezium")) == 1
        else:
            assert _fast_rows(raw, known) == list(range(offset, offset + len(batch)))
        offset += len(batch)
    rows = (
        spark.read.format("delta")
        .load(Target(str(tmp_path / "stream")).table_path("shop.dbo.items"))
        .select("id", "name", "qty")
        .collect()
    )
    assert sorted(tuple(r) for r in rows) == _model([m for b in batches for m in b])


def test_each_message_is_parsed_once_by_its_lane_or_the_generic_envelope(
    spark: SparkSession, learned: KnownGroups
) -> None:
    """The optimized plan of a batch with lanes holds the lanes' parse (the payload alone,
    for the messages of a known lane), the generic parse (for the others: not the lanes'), and
    the flattened rows' field list; no filter below them parses again (issue 36)."""
    from cdclake.decode import configured_keys, type_known

    raw = _kafka(spark, [_message(i, "sqlserver", "connect", "insert") for i in range(3)])
    env, _ = one_pass_envelopes(raw, "debezium", DecodeOptions(), learned)
    changes = type_known(configured_keys(env, DecodeOptions()), learned)
    plan = changes._jdf.queryExecution().optimizedPlan().toString()
    parses = plan.split("from_json(")[1:]
    lane = [p for p in parses if p.startswith("StructField(payload,")]
    whole = [p for p in parses if p.startswith("StructField(schema,")]
    flat = [p for p in parses if p.startswith("ArrayType(StringType,true), get_json_object(")]
    assert (len(parses), len(lane), len(whole), len(flat)) == (3, 1, 1, 1), plan
    assert "CASE WHEN NOT _fast" in plan, plan  # the generic parse: only where no lane reads
    ids = changes.select("error", F.expr("variant_get(after, '$.id', 'int')").alias("id"))
    assert sorted((r["id"], r["error"]) for r in ids.collect()) == [(0, None), (1, None), (2, None)]
