"""kafka_tools against a real broker: JSON-lines files survive produce -> dump unchanged."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, TopicPartition

from cdclake.run.kafka_tools import KafkaToolError, create_topic, dump, produce, wait_ready

# Every line form the file format allows: a keyed record with headers (one of them JSON),
# a bare object value, a tombstone, a bare string, a bare number, a string key with an array
# value and a null header.
LINES: list[Any] = [
    {
        "key": {"id": 1},
        "value": {"op": "c", "after": {"id": 1, "name": "café"}},
        "headers": {"source": "mysql", "schema": {"version": 2, "fields": ["id", "name"]}},
    },
    {"op": "u", "before": {"id": 1, "name": "café"}, "after": {"id": 1, "name": "tea"}},
    {"key": {"id": 1}, "value": None},
    "a plain text value",
    42,
    {"key": "order-7", "value": [1, 2.5, True, None], "headers": {"trace": None}},
]


def _expected(topic: str) -> list[dict[str, Any]]:
    """LINES as dump reports them: all fields filled, in order on partition 0."""
    records = [
        {
            "key": line.get("key"),
            "value": line["value"],
            "headers": line.get("headers", {}),
        }
        if isinstance(line, dict) and "value" in line
        else {"key": None, "value": line, "headers": {}}
        for line in LINES
    ]
    return [
        {**r, "topic": topic, "partition": 0, "offset": offset} for offset, r in enumerate(records)
    ]


def _write_jsonl(path: Path, lines: list[Any]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _topic() -> str:
    return f"kafka-tools-{uuid.uuid4().hex[:8]}"


@pytest.mark.e2e
def test_file_round_trips_through_broker(kafka_broker: str, tmp_path: Path) -> None:
    topic = _topic()
    source = _write_jsonl(tmp_path / "in.jsonl", LINES)

    assert produce(source, topic, kafka_broker) == len(LINES)

    assert list(dump(topic, kafka_broker, timeout_s=30)) == _expected(topic)


@pytest.mark.e2e
def test_dump_output_produces_the_same_topic_again(kafka_broker: str, tmp_path: Path) -> None:
    first, second = _topic(), _topic()
    produce(_write_jsonl(tmp_path / "in.jsonl", LINES), first, kafka_broker)
    dumped = list(dump(first, kafka_broker, timeout_s=30))

    create_topic(kafka_broker, second)
    assert produce(_write_jsonl(tmp_path / "dump.jsonl", dumped), second, kafka_broker) == 6

    again = list(dump(second, kafka_broker, timeout_s=30))
    assert again == [{**r, "topic": second} for r in dumped]


@pytest.mark.e2e
def test_wire_format_is_compact_json_and_text_headers(kafka_broker: str, tmp_path: Path) -> None:
    topic = _topic()
    produce(_write_jsonl(tmp_path / "in.jsonl", LINES[:1] + LINES[2:4]), topic, kafka_broker)

    consumer = Consumer(
        {"bootstrap.servers": kafka_broker, "group.id": topic, "enable.auto.commit": False}
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    raw: list[tuple[bytes | None, bytes | None, object]] = []
    try:
        while len(raw) < 3:
            message = consumer.poll(10)
            assert message is not None, f"only {len(raw)} of 3 messages arrived"
            assert message.error() is None, message.error()
            raw.append((message.key(), message.value(), message.headers()))
    finally:
        consumer.close()

    assert raw == [
        (
            b'{"id":1}',
            '{"op":"c","after":{"id":1,"name":"café"}}'.encode(),
            [("source", b"mysql"), ("schema", b'{"version":2,"fields":["id","name"]}')],
        ),
        (b'{"id":1}', None, None),
        (None, b'"a plain text value"', None),
    ]


@pytest.mark.e2e
def test_keep_partitions_places_records_and_dump_reads_partition_by_partition(
    kafka_broker: str, tmp_path: Path
) -> None:
    topic = _topic()
    create_topic(kafka_broker, topic, partitions=3)
    lines = [{"value": {"n": n}, "partition": p} for n, p in enumerate([2, 0, 2, 1])]

    produce(_write_jsonl(tmp_path / "in.jsonl", lines), topic, kafka_broker, keep_partitions=True)

    placed = [(r["partition"], r["offset"], r["value"]) for r in dump(topic, kafka_broker)]
    assert placed == [(0, 0, {"n": 1}), (1, 0, {"n": 3}), (2, 0, {"n": 0}), (2, 1, {"n": 2})]


@pytest.mark.e2e
def test_create_topic_twice_keeps_the_topic(kafka_broker: str, tmp_path: Path) -> None:
    topic = _topic()
    create_topic(kafka_broker, topic, partitions=2)
    create_topic(kafka_broker, topic, partitions=2)
    produce(_write_jsonl(tmp_path / "in.jsonl", ["x"]), topic, kafka_broker)

    assert [r["value"] for r in dump(topic, kafka_broker)] == ["x"]


@pytest.mark.e2e
def test_dump_of_missing_topic_names_it(kafka_broker: str) -> None:
    with pytest.raises(KafkaToolError, match=r"topic 'no-such-topic' does not exist on 127\.0"):
        list(dump("no-such-topic", kafka_broker, timeout_s=10))


@pytest.mark.e2e
def test_wait_ready(kafka_broker: str) -> None:
    wait_ready(kafka_broker, timeout_s=10)


@pytest.mark.e2e
def test_module_cli_produces_and_dumps(kafka_broker: str, tmp_path: Path) -> None:
    from cdclake.run.kafka_tools import main

    topic = _topic()
    source = _write_jsonl(tmp_path / "in.jsonl", LINES)
    out = tmp_path / "out.jsonl"

    assert main(["produce", str(source), "--topic", topic, "--bootstrap", kafka_broker]) == 0
    assert main(["dump", "--topic", topic, "--bootstrap", kafka_broker, "-o", str(out)]) == 0

    dumped = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert dumped == _expected(topic)
