"""Put JSON-lines files into Kafka topics and read topics back out, for tests and demos.

A JSON-lines file holds one message per line, in one of two forms:

* a **bare value**: any JSON value, produced as the message value with no key or headers::

      {"before": null, "after": {"id": 1}, "op": "c"}

* a **record object**: a JSON object that has a ``"value"`` field and no fields other than
  ``key``, ``value``, ``headers``, ``topic``, ``partition`` and ``offset``::

      {"key": {"id": 1}, "value": null, "headers": {"source": "mysql"}}

  ``value: null`` is a tombstone. ``topic`` and ``offset`` are ignored when producing (they say
  where a dumped record came from); ``partition`` is used only with ``keep_partitions=True``.

On the wire, keys and values are compact JSON text (so the string ``"a"`` is the 3 bytes ``"a"``),
header values are UTF-8 text: a string as itself, anything else as compact JSON.

:func:`dump` yields record objects with every field filled, keys and values parsed back from JSON
(text that is not JSON comes back as a string), header values as strings except JSON objects and
arrays, which are parsed. ``dump`` output written to a file and given to :func:`produce` makes a
topic whose ``dump`` is the same again, apart from ``topic``.

Example::

    >>> create_topic("127.0.0.1:19092", "orders")  # doctest: +SKIP
    >>> produce("tests/data/orders.jsonl", "orders", "127.0.0.1:19092")  # doctest: +SKIP
    3
    >>> [r["value"] for r in dump("orders", "127.0.0.1:19092")]  # doctest: +SKIP

Command line (``--bootstrap`` defaults to ``$KAFKA_BOOTSTRAP`` or ``127.0.0.1:$KAFKA_PORT``,
the broker ``scripts/kafka.sh start`` runs)::

    python -m cdclake.run.kafka_tools produce events.jsonl --topic orders
    python -m cdclake.run.kafka_tools dump --topic orders > orders.jsonl
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, Producer, TopicPartition
from confluent_kafka.admin import AdminClient
from confluent_kafka.cimpl import NewTopic

from cdclake.errors import CdclakeError, ConfigError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["KafkaToolError", "create_topic", "dump", "produce", "source_rows", "wait_ready"]

RECORD_FIELDS = frozenset({"key", "value", "headers", "topic", "partition", "offset"})


class LibrdkafkaLog:
    """What librdkafka logs (a refused connection at its ERROR level, a coordinator still loading
    at WARNING: states it retries through), as DEBUG records of the logger ``cdclake.librdkafka``,
    its own level named in the message: cdclake reports a failure itself, in one line (a
    delivery that failed, a broker not reached in time), and ``--debug`` shows this log.

    Give it to a client as its ``logger``: ``Producer({..., "logger": LIBRDKAFKA_LOG})``.
    """

    logger = logging.getLogger("cdclake.librdkafka")

    def log(self, level: int, fmt: str, *args: object) -> None:
        # confluent_kafka calls ``log(level, "%s [%s] %s", facility, client, message)``
        self.logger.debug("%s " + fmt, logging.getLevelName(level), *args)


LIBRDKAFKA_LOG = LibrdkafkaLog()


class KafkaToolError(CdclakeError):
    """The broker refused or failed an operation (names the topic, broker and Kafka's reason)."""


def _client_config(bootstrap: str, **extra: Any) -> dict[str, Any]:
    return {"bootstrap.servers": bootstrap, "logger": LIBRDKAFKA_LOG, **extra}


# --- file lines <-> records ----------------------------------------------------------------------


def _is_record(obj: Any) -> bool:
    return isinstance(obj, dict) and "value" in obj and RECORD_FIELDS.issuperset(obj)


def _json_bytes(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _header_bytes(obj: Any) -> bytes | None:
    if obj is None:
        return None
    return obj.encode("utf-8") if isinstance(obj, str) else _json_bytes(obj)


def _read_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record object) for each non-blank line; bare values become records."""
    with path.open(encoding="utf-8") as lines:
        yield from _records(lines, str(path))


def _records(lines: Iterable[str], where: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record object) for each non-blank line of ``lines`` (read from ``where``)."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(
                f"{where}:{number}: {line.strip()[:80]!r} is not JSON ({exc.msg}); "
                "expected one JSON value or record object per line"
            ) from exc
        record = obj if _is_record(obj) else {"value": obj}
        headers = record.get("headers")
        headers = {} if headers is None else headers
        if not isinstance(headers, dict):
            raise ConfigError(
                f"{where}:{number}: headers {headers!r} is not an object; "
                'expected {"name": value, ...}'
            )
        yield number, {**record, "headers": headers}


SOURCE_SCHEMA = (
    "key binary, value binary, topic string, partition int, offset long, timestamp timestamp, "
    "timestampType int, headers array<struct<key: string, value: binary>>"
)
"""The rows of Spark's Kafka source (with ``includeHeaders``)."""


def source_rows(
    spark: SparkSession, lines: Sequence[str], topic: str = "records", first_offset: int = 0
) -> DataFrame:
    """Record lines (see the module doc) as Spark's Kafka source delivers them: one partition,
    offsets from ``first_offset`` on, now as their time, keys, values and headers as
    :func:`produce` writes them. A micro-batch for :func:`cdclake.run.streaming.process_batch`
    without a broker (tests, ``bench.steady --kafka``)."""
    from datetime import UTC, datetime

    now = datetime.now(UTC)
    rows = []
    for i, (_, record) in enumerate(_records(lines, topic)):
        key, value = record.get("key"), record["value"]
        headers = [(name, _header_bytes(v)) for name, v in record["headers"].items()]
        key_bytes = None if key is None else _json_bytes(key)
        value_bytes = None if value is None else _json_bytes(value)
        rows.append((key_bytes, value_bytes, topic, 0, first_offset + i, now, 0, headers))
    return spark.createDataFrame(rows, SOURCE_SCHEMA)


def _decode_text(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise KafkaToolError(
            f"{where}: {data[:40]!r} is not UTF-8 text; expected JSON or text messages"
        ) from exc


def _parse_payload(data: bytes | None, where: str) -> Any:
    if data is None:
        return None
    text = _decode_text(data, where)
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _parse_header(data: bytes | str | None, where: str) -> Any:
    if data is None:
        return None
    text = data if isinstance(data, str) else _decode_text(data, where)
    if text.lstrip()[:1] in ("{", "["):
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            pass
    return text


def _record_of(message: Message) -> dict[str, Any]:
    where = f"{message.topic()}[{message.partition()}]@{message.offset()}"
    headers: dict[str, Any] = {}
    raw = message.headers() or []
    for name, data in raw.items() if isinstance(raw, dict) else raw:
        if name in headers:
            raise KafkaToolError(
                f"{where}: header {name!r} appears more than once; "
                "expected distinct header names (records hold headers as an object)"
            )
        headers[name] = _parse_header(data, f"{where} header {name!r}")
    return {
        "key": _parse_payload(message.key(), f"{where} key"),
        "value": _parse_payload(message.value(), f"{where} value"),
        "headers": headers,
        "topic": message.topic(),
        "partition": message.partition(),
        "offset": message.offset(),
    }


# --- broker operations ---------------------------------------------------------------------------


def _messages(path: Path, keep_partitions: bool) -> list[tuple[int, dict[str, Any]]]:
    """(line number, ``Producer.produce`` arguments) for each line; all lines checked first."""
    messages = []
    for number, record in _read_records(path):
        partition = record.get("partition") if keep_partitions else None
        if partition is not None and (
            not isinstance(partition, int) or isinstance(partition, bool) or partition < 0
        ):
            raise ConfigError(
                f"{path}:{number}: partition {partition!r} is not a partition number; "
                "expected an integer >= 0"
            )
        key, value = record.get("key"), record["value"]
        headers: list[tuple[str, str | bytes | None]] = [
            (name, _header_bytes(v)) for name, v in record["headers"].items()
        ]
        arguments = {
            "key": None if key is None else _json_bytes(key),
            "value": None if value is None else _json_bytes(value),
            "headers": headers,
            "partition": -1 if partition is None else partition,
        }
        messages.append((number, arguments))
    return messages


def produce(
    path: str | Path,
    topic: str,
    bootstrap: str,
    *,
    keep_partitions: bool = False,
    timeout_s: float = 60.0,
) -> int:
    """Produce every line of the JSON-lines file ``path`` to ``topic``, in file order.

    The whole file is checked before the first message is sent, so a bad line (reported as
    :class:`~cdclake.errors.ConfigError` with its line number) produces nothing. Keyed records
    are partitioned like the Java client does (murmur2), so a key lands where Debezium or Kafka
    Connect would put it; ``keep_partitions=True`` sends each record to its ``partition`` field
    instead. Returns the number of messages written.

    >>> produce("events.jsonl", "orders", "127.0.0.1:19092")  # doctest: +SKIP
    3
    """
    path = Path(path)
    messages = _messages(path, keep_partitions)
    failures: list[str] = []
    reported = [0]  # delivery reports, good or bad

    def reporter(number: int) -> Callable[[KafkaError | None, Message], None]:
        def on_delivery(err: KafkaError | None, _msg: Message) -> None:
            reported[0] += 1
            if err is not None:
                failures.append(f"{path}:{number}: {err}")

        return on_delivery

    # Idempotence keeps file order even when the client retries a batch.
    producer = Producer(
        _client_config(
            bootstrap,
            **{"enable.idempotence": True, "partitioner": "murmur2_random", "linger.ms": 5},
        )
    )
    for number, arguments in messages:
        while True:
            try:
                producer.produce(topic, on_delivery=reporter(number), **arguments)
                break
            except BufferError:  # local queue full: let deliveries drain, then retry this line
                producer.poll(0.5)
        producer.poll(0)
    count = len(messages)
    producer.flush(timeout_s)
    # what flush returns counts the client's own requests too (an idempotent producer's id
    # request): "2 of 1 messages"; a message without a delivery report is one not delivered
    remaining = count - reported[0]
    if failures:
        raise KafkaToolError(
            f"{len(failures)} of {count} messages from {path} to topic {topic!r} at {bootstrap} "
            f"failed; first: {failures[0]}"
        )
    if remaining:
        raise KafkaToolError(
            f"{remaining} of {count} messages from {path} to topic {topic!r} were not delivered "
            f"to {bootstrap} within {timeout_s}s; expected a reachable broker"
        )
    return count


def dump(topic: str, bootstrap: str, *, timeout_s: float = 30.0) -> Iterator[dict[str, Any]]:
    """Read ``topic`` from the beginning to its current end, partition by partition.

    Yields record objects (``key``, ``value``, ``headers``, ``topic``, ``partition``,
    ``offset``) in the form :func:`produce` reads. Raises :class:`KafkaToolError` when the
    topic does not exist or its end is not reached within ``timeout_s`` seconds.

    >>> for record in dump("orders", "127.0.0.1:19092"):  # doctest: +SKIP
    ...     print(record["offset"], record["value"])
    """
    deadline = time.monotonic() + timeout_s

    def left() -> float:
        return max(deadline - time.monotonic(), 0.1)

    consumer = Consumer(
        _client_config(
            bootstrap,
            **{
                "group.id": f"cdclake-dump-{uuid.uuid4().hex}",
                "enable.auto.commit": False,
                "enable.partition.eof": True,
                "auto.offset.reset": "earliest",
            },
        )
    )
    try:
        metadata = consumer.list_topics(topic, timeout=left())
        described = metadata.topics.get(topic)
        if described is None or described.error is not None:
            raise KafkaToolError(
                f"topic {topic!r} does not exist on {bootstrap}"
                + (f" ({described.error})" if described is not None else "")
            )
        for partition in sorted(described.partitions):
            low, high = consumer.get_watermark_offsets(
                TopicPartition(topic, partition), timeout=left()
            )
            if high <= low:
                continue
            consumer.assign([TopicPartition(topic, partition, low)])
            yield from _read_partition(consumer, topic, partition, high, deadline, bootstrap)
    finally:
        consumer.close()


def _read_partition(
    consumer: Consumer, topic: str, partition: int, high: int, deadline: float, bootstrap: str
) -> Iterator[dict[str, Any]]:
    """Records of the assigned partition up to offset ``high - 1`` (or its end, if sooner)."""
    last = -1
    while time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is None:
            continue
        error = message.error()
        if error is not None:
            if error.code() == KafkaError._PARTITION_EOF:
                return
            raise KafkaToolError(f"reading {topic}[{partition}] from {bootstrap}: {error}")
        last = message.offset() or 0
        yield _record_of(message)
        if last >= high - 1:
            return
    raise KafkaToolError(
        f"reading {topic}[{partition}] from {bootstrap}: reached offset {last}, not the end "
        f"offset {high - 1}, before the timeout; expected a reachable broker"
    )


def create_topic(
    bootstrap: str, topic: str, partitions: int = 1, *, timeout_s: float = 30.0
) -> None:
    """Create ``topic`` with ``partitions`` partitions; a topic that already exists is kept.

    >>> create_topic("127.0.0.1:19092", "orders", partitions=3)  # doctest: +SKIP
    """
    if not isinstance(partitions, int) or partitions < 1:
        raise ConfigError(f"partitions {partitions!r} is not allowed; expected an integer >= 1")
    admin = AdminClient(_client_config(bootstrap))
    futures = admin.create_topics(
        [NewTopic(topic, num_partitions=partitions)], operation_timeout=timeout_s
    )
    try:
        futures[topic].result(timeout=timeout_s)
    except KafkaException as exc:
        error = exc.args[0] if exc.args else None
        if isinstance(error, KafkaError) and error.code() == KafkaError.TOPIC_ALREADY_EXISTS:
            return
        raise KafkaToolError(f"creating topic {topic!r} on {bootstrap} failed: {exc}") from exc


def wait_ready(bootstrap: str, timeout_s: float = 60.0) -> None:
    """Return once a broker at ``bootstrap`` answers a topic listing; raise after ``timeout_s``.

    >>> wait_ready("127.0.0.1:19092", timeout_s=30)  # doctest: +SKIP
    """
    deadline = time.monotonic() + timeout_s
    admin = AdminClient(_client_config(bootstrap))
    last: Exception | None = None
    while True:
        try:
            admin.list_topics(timeout=min(max(deadline - time.monotonic(), 0.5), 5.0))
            return
        except KafkaException as exc:
            last = exc
        if time.monotonic() >= deadline:
            raise KafkaToolError(
                f"no Kafka broker answered at {bootstrap} within {timeout_s}s"
                f" (last error: {last}); start one with scripts/kafka.sh start"
            )
        time.sleep(0.5)


# --- command line --------------------------------------------------------------------------------


def _default_bootstrap() -> str:
    return os.environ.get("KAFKA_BOOTSTRAP") or f"127.0.0.1:{os.environ.get('KAFKA_PORT', '19092')}"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m cdclake.run.kafka_tools", description=__doc__.split("\n\n")[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--bootstrap", default=_default_bootstrap(), help="host:port of a broker")
    common.add_argument("--timeout", type=float, default=60.0, help="seconds (default 60)")

    p = sub.add_parser("produce", parents=[common], help="produce a JSON-lines file to a topic")
    p.add_argument("file", type=Path)
    p.add_argument("--topic", required=True)
    p.add_argument("--keep-partitions", action="store_true", help="use each record's partition")
    d = sub.add_parser("dump", parents=[common], help="print a topic as JSON lines")
    d.add_argument("--topic", required=True)
    d.add_argument("--output", "-o", type=Path, help="write here instead of stdout")
    c = sub.add_parser("create-topic", parents=[common], help="create a topic")
    c.add_argument("--topic", required=True)
    c.add_argument("--partitions", type=int, default=1)
    sub.add_parser("wait", parents=[common], help="wait until the broker answers")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m cdclake.run.kafka_tools``; returns the exit code."""
    args = _parser().parse_args(argv)
    try:
        if args.command == "produce":
            count = produce(
                args.file,
                args.topic,
                args.bootstrap,
                keep_partitions=args.keep_partitions,
                timeout_s=args.timeout,
            )
            print(f"produced {count} messages to {args.topic}", file=sys.stderr)
        elif args.command == "dump":
            out = args.output.open("w", encoding="utf-8") if args.output else sys.stdout
            try:
                for record in dump(args.topic, args.bootstrap, timeout_s=args.timeout):
                    out.write(json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n")
            finally:
                if args.output:
                    out.close()
        elif args.command == "create-topic":
            create_topic(args.bootstrap, args.topic, args.partitions, timeout_s=args.timeout)
        else:
            wait_ready(args.bootstrap, args.timeout)
    except (CdclakeError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
