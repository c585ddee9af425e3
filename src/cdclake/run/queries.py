"""The one way cdclake builds and starts a Structured Streaming query: ``apply`` from Kafka or
from a folder, ``convert`` from Kafka to Kafka, ``publish --stream`` from a table's change feed.

- :func:`read_kafka`: Spark's Kafka source for a :class:`cdclake.config.KafkaSource`, with the
  record headers, the subscription and offsets cdclake owns, and the user's pass-through
  options (``--kafka-option``: security settings apply to every query that reads the broker);
- :func:`start`: ``foreachBatch`` on a checkpoint, with ``available_now`` (what the source
  holds when it starts, then stop) or a processing-time trigger.

>>> kafka_options(KafkaSource(bootstrap="h:9092", topics=("a", "b")))["subscribe"]
'a,b'
"""

from __future__ import annotations

from collections.abc import Callable

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming.query import StreamingQuery

from cdclake import paths
from cdclake.config import KafkaSource
from cdclake.errors import ConfigError

# Source options cdclake sets itself; --kafka-option may not change them.
OWNED_OPTIONS = frozenset(
    {
        "kafka.bootstrap.servers",
        "subscribe",
        "subscribepattern",
        "assign",
        "includeheaders",
        "startingoffsets",
        "failondataloss",
        "maxoffsetspertrigger",
    }
)


def kafka_options(kafka: KafkaSource) -> dict[str, str]:
    """The options of Spark's Kafka source for ``kafka`` (pass-through options last)."""
    if kafka.bootstrap is None:
        raise ConfigError("a Kafka query needs --kafka-bootstrap HOST:PORT")
    owned = sorted(k for k in kafka.options if k.lower() in OWNED_OPTIONS)
    if owned:
        raise ConfigError(
            f"--kafka-option {owned[0]!r} is set by cdclake; use the matching cdclake option "
            "(--kafka-bootstrap, --topic, --topic-pattern, --starting-offsets, "
            "--fail-on-data-loss, --max-offsets-per-trigger)"
        )
    opts = {
        "kafka.bootstrap.servers": kafka.bootstrap,
        "includeHeaders": "true",
        "startingOffsets": kafka.starting_offsets,
        "failOnDataLoss": str(kafka.fail_on_data_loss).lower(),
    }
    if kafka.topic_pattern:
        opts["subscribePattern"] = kafka.topic_pattern
    else:
        opts["subscribe"] = ",".join(kafka.topics)
    if kafka.max_offsets_per_trigger is not None:
        opts["maxOffsetsPerTrigger"] = str(kafka.max_offsets_per_trigger)
    return {**opts, **kafka.options}


def read_kafka(spark: SparkSession, kafka: KafkaSource) -> DataFrame:
    """The streaming DataFrame of Spark's Kafka source for ``kafka``."""
    return spark.readStream.format("kafka").options(**kafka_options(kafka)).load()


def start(
    stream: DataFrame,
    each: Callable[[DataFrame, int], None],
    checkpoint: str,
    *,
    available_now: bool = False,
    trigger_interval: str | None = None,
) -> StreamingQuery:
    """Start ``stream`` with ``each`` per micro-batch on ``checkpoint``: with ``available_now``
    until what the source holds now is done, else every ``trigger_interval`` (None: each batch
    as soon as the previous one ends)."""
    clear_a_killed_first_batch(stream.sparkSession, checkpoint)
    writer = stream.writeStream.foreachBatch(each).option("checkpointLocation", checkpoint)
    if available_now:
        writer = writer.trigger(availableNow=True)
    elif trigger_interval is not None:
        writer = writer.trigger(processingTime=trigger_interval)
    return writer.start()


def clear_a_killed_first_batch(spark: SparkSession, checkpoint: str) -> list[str]:
    """Remove what a process killed while Spark wrote a query's first offsets left behind.

    Spark writes ``offsets/0`` as a hidden temporary file (``.0.<uuid>.tmp``, and its ``.crc``
    on a checksummed file system) renamed into place; a kill -9 before the rename leaves the
    temporary file, and Spark then refuses the checkpoint for good: a query with no batch yet
    must find ``offsets`` empty (``STATE_STORE_CHECKPOINT_LOCATION_NOT_EMPTY``). Nothing of a
    batch was written at that point, so the hidden files go; a folder holding any batch, or any
    other file, is left as it is for Spark to judge. The removed files' names are returned."""
    if getattr(spark, "_jvm", None) is None:  # Spark Connect: the server owns the checkpoint
        return []
    folder = paths.join(checkpoint, "offsets")
    names = paths.entry_names(spark, folder)
    if not names or not all(n.startswith(".") and ".tmp" in n for n in names):
        return []
    for name in names:
        paths.delete(spark, paths.join(folder, name))
    return names
