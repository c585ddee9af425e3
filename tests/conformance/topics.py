"""Read Kafka topics into record objects with confluent-kafka alone (not the cdclake package).

The record-object form is the one ``cdclake.run.kafka_tools`` reads and writes::

    {"key": …, "value": …, "headers": {…}, "topic": …, "partition": …, "offset": …}

Keys and values are parsed from JSON (``null`` value = tombstone; text that is not JSON stays a
string); header values are UTF-8 strings, except JSON objects and arrays, which are parsed. This
module exists so the fixture capture does not depend on the package importing cleanly mid-change.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

from confluent_kafka import Consumer, KafkaError, TopicPartition
from confluent_kafka.admin import AdminClient

__all__ = ["dump_topic", "list_topics", "topic_end_offsets"]


def _parse(raw: bytes | None) -> Any:
    if raw is None:
        return None
    text = raw.decode("utf-8")
    try:
        return json.loads(text)
    except ValueError:
        return text


def _header(raw: bytes | None) -> Any:
    if raw is None:
        return None
    text = raw.decode("utf-8")
    if text[:1] in ("{", "["):
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


def list_topics(bootstrap: str, timeout_s: float = 10.0) -> list[str]:
    """Names of the topics on the broker, internal ones (``__…``) excluded, sorted."""
    topics = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=timeout_s).topics
    return sorted(t for t in topics if not t.startswith("__"))


def topic_end_offsets(bootstrap: str, topic: str, timeout_s: float = 10.0) -> int:
    """Sum over partitions of the high watermarks: how many records were ever written."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"conformance-{uuid.uuid4().hex}"}
    )
    try:
        meta = consumer.list_topics(topic, timeout=timeout_s).topics[topic]
        return sum(
            consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=timeout_s)[1]
            for p in meta.partitions
        )
    finally:
        consumer.close()


def dump_topic(bootstrap: str, topic: str, timeout_s: float = 30.0) -> Iterator[dict[str, Any]]:
    """Every record of ``topic`` from the start to the current end, partition by partition."""
    deadline = time.monotonic() + timeout_s
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"conformance-{uuid.uuid4().hex}",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    try:
        meta = consumer.list_topics(topic, timeout=timeout_s).topics.get(topic)
        if meta is None or meta.error is not None:
            raise RuntimeError(f"topic {topic!r} does not exist on {bootstrap}")
        for partition in sorted(meta.partitions):
            low, high = consumer.get_watermark_offsets(
                TopicPartition(topic, partition), timeout=timeout_s
            )
            if high <= low:
                continue
            consumer.assign([TopicPartition(topic, partition, low)])
            offset = low
            while offset < high:
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"reading {topic}[{partition}] stopped at offset {offset} of {high}"
                    )
                msg = consumer.poll(1.0)
                if msg is None:
                    continue
                err = msg.error()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:
                        continue
                    raise RuntimeError(f"reading {topic}[{partition}]: {err}")
                at = msg.offset()
                assert at is not None, "a consumed record always has an offset"
                offset = at + 1
                raw_headers = msg.headers() or []
                pairs = raw_headers.items() if isinstance(raw_headers, dict) else raw_headers
                headers = [(k, v.encode() if isinstance(v, str) else v) for k, v in pairs]
                yield {
                    "key": _parse(msg.key()),
                    "value": _parse(msg.value()),
                    "headers": {k: _header(v) for k, v in headers},
                    "topic": topic,
                    "partition": partition,
                    "offset": at,
                }
    finally:
        consumer.close()
