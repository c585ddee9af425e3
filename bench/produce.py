"""Throughput of the producer side: ``publish`` (CDF -> changes -> encode -> write) and
``convert`` (decode -> encode -> write), per format, against the floor: Spark's own ``to_json``
of the same rows + the same write.

    python -m bench.produce --events 100000                       # writes to Spark's noop sink
    python -m bench.produce --events 100000 --kafka-bootstrap 127.0.0.1:9092   # to Kafka

One Delta table with Change Data Feed is built per run (N/2 inserts, then N/2 updates of half
the keys as one MERGE: N changes). Prints one JSON line per measurement and a summary line with
events per second. Keep N at 10^4-10^5 on a shared machine; 10^6 is the lead's run.
"""

from __future__ import annotations

import argparse
import functools
import json
import tempfile
import time
from collections.abc import Callable

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from cdclake import _spark, formats
from cdclake.decode import decode
from cdclake.formats.encode import EncodeOptions
from cdclake.run import produce
from cdclake.sources import raw_from_lines_df

FORMATS = tuple(formats.names())


def _table(spark: SparkSession, path: str, n: int) -> None:
    half = max(n // 2, 1)
    rows = spark.range(half).select(
        F.col("id"),
        F.concat(F.lit("name-"), F.col("id").cast("string")).alias("name"),
        (F.col("id") % 1000 * 1.5).alias("score"),
        (F.col("id") % 97).cast("int").alias("qty"),
    )
    rows.write.format("delta").option("delta.enableChangeDataFeed", "true").save(path)
    spark.sql(
        f"MERGE INTO delta.`{path}` t USING (SELECT id, qty + 1 AS qty FROM delta.`{path}`) s "
        "ON t.id = s.id WHEN MATCHED THEN UPDATE SET qty = s.qty"
    )


def _sink(df: DataFrame, bootstrap: str | None, topic: str) -> None:
    if bootstrap is None:
        df.write.format("noop").mode("overwrite").save()
    else:
        df.withColumn("topic", F.lit(topic)).write.format("kafka").option(
            "kafka.bootstrap.servers", bootstrap
        ).save()


def _time(what: str, n: int, run: Callable[[], None]) -> float:
    start = time.perf_counter()
    run()
    seconds = time.perf_counter() - start
    print(json.dumps({"what": what, "events": n, "seconds": round(seconds, 2),
                      "eps": round(n / seconds)}), flush=True)  # fmt: skip
    return n / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--kafka-bootstrap", default=None)
    parser.add_argument("--formats", default=",".join(FORMATS))
    args = parser.parse_args()
    spark = _spark.get_or_create("cdclake-bench-produce")
    n, bootstrap = args.events, args.kafka_bootstrap
    summary: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = f"{tmp}/source"
        _table(spark, path, n)
        cdf = produce.read_change_feed(spark, path, 0).cache()
        events = cdf.filter(F.col("_change_type") != "update_preimage").count()
        cols = [c for c in cdf.columns if not c.startswith("_")]
        floor = cdf.select(
            F.col("id").cast("string").alias("key"), F.to_json(F.struct(*cols)).alias("value")
        )
        summary["floor_eps"] = _time("floor", events, lambda: _sink(floor, bootstrap, "floor"))
        for fmt in args.formats.split(","):
            changes = produce.changes_from_cdf(cdf, "bench.items", ("id",))
            messages = produce.encode(changes, fmt, EncodeOptions(tombstones=False))
            good = messages.filter("error is null and skipped is null").select("key", "value")
            summary[f"publish_{fmt}_eps"] = _time(
                f"publish {fmt}",
                events,
                functools.partial(_sink, good, bootstrap, f"p-{fmt}"),
            )
            lines = good.select(
                produce.record_line(good).alias("line"),
                F.struct(
                    F.lit("bench").alias("source"),
                    F.lit(None).cast("int").alias("partition"),
                    F.monotonically_increasing_id().alias("offset"),
                ).alias("lineage"),
            ).cache()
            lines.count()
            target = "canal" if fmt != "canal" else "debezium"
            out = produce.encode(decode(raw_from_lines_df(lines), fmt), target, EncodeOptions())
            converted = out.filter("error is null and skipped is null").select("key", "value")
            summary[f"convert_{fmt}_to_{target}_eps"] = _time(
                f"convert {fmt} -> {target}",
                events,
                functools.partial(_sink, converted, bootstrap, f"c-{fmt}"),
            )
            lines.unpersist()
    print(json.dumps({k: round(v) for k, v in summary.items()}))


if __name__ == "__main__":
    main()
