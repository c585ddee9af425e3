"""What parsing only a Debezium message's payload saves, against parsing the whole value with
its Connect ``schema`` section (issue 36, item 2: the prefix before ``"payload"`` cut from the
text, so that the parser never sees the schema section).

``python -m bench.prefix [--events 100000] [--repeat 5]`` (``src`` and the checkout on
``PYTHONPATH``). The values are the Kafka record values of the bench's Debezium stream
(:func:`bench.data.debezium_record`: SQL Server, ``schemas.enable=true``), one per line. Each
case is a projection into Spark's ``noop`` sink, interleaved round by round (the first round is
a warm-up, not counted):

- prefix test: whether each line starts with the stream's prefix (``startswith``): the scan
- value: ``from_json`` of the whole value with cdclake's Debezium value type, the row images
  typed as a stream's one pass reads them (the schema section's field list kept as text: the
  schema token)
- payload, cut by characters / by bytes: the same type, of ``{"payload":`` and the text after
  the prefix, where the line starts with it (the token is then the prefix's, a literal); the
  text cut with ``substring`` of the string (Spark counts characters) or of its bytes

It checks that both parses give the same payloads. A development tool: the numbers that count
come from ``bench/run.sh``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructField, StructType
from rich.console import Console
from rich.table import Table

from bench import data
from bench.measure import noop_rounds

PAYLOAD = '"payload":'


def values_file(n: int, out: Path) -> tuple[Path, str, str]:
    """The record values of the bench's first ``n`` Debezium events, one per line; the prefix
    of the first (its text up to and including ``"payload":``) and its row schema's fields."""
    path = out / f"debezium-values-{n}.jsonl"
    first = ""
    with path.open("w", encoding="utf-8") as f:
        for e in data.events(n, max(n // 10, 1), 1):
            value = data.debezium_record(e, n)[1]
            first = first or value
            f.write(value + "\n")
    prefix = first[: first.index(PAYLOAD) + len(PAYLOAD)]
    fields = json.loads(prefix[len('{"schema":') : -len("," + PAYLOAD)])["fields"]
    after = next(f for f in fields if f["field"] == "after")
    return path, prefix, json.dumps(after["fields"], separators=(",", ":"))


def cases(text: DataFrame, prefix: str, images: StructType) -> dict[str, DataFrame]:
    from cdclake.formats.debezium import _value_type

    value = F.col("value")
    fast = F.startswith(value, F.lit(prefix))
    rest = len(prefix) + 1, 1 << 30
    by_chars = F.substring(value, *rest)  # Spark counts characters: it walks the UTF-8
    by_bytes = F.substring(value.cast("binary"), *rest).cast("string")

    def parsed(cut: Column | None) -> DataFrame:
        source = value
        if cut is not None:
            source = F.when(fast, F.concat(F.lit("{" + PAYLOAD), cut)).otherwise(value)
        p = F.from_json(source, _value_type(images))
        token = F.get(F.filter(p["schema"]["fields"], lambda f: f["field"] == "after"), 0)
        return text.select(
            F.when(fast, F.lit("the prefix's")).otherwise(token["fields"]).alias("token"),
            p["payload"]["after"].alias("after"),
            p["payload"]["op"].alias("op"),
            p["payload"]["source"]["change_lsn"].alias("lsn"),
        )

    return {
        "prefix test": text.select(fast.alias("fast")),
        "value": parsed(None),
        "payload, cut by characters": parsed(by_chars),
        "payload, cut by bytes": parsed(by_bytes),
    }


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--events", type=int, default=100_000)
    p.add_argument("--repeat", type=int, default=5, help="rounds; the first is not counted")
    p.add_argument("--work", type=Path, default=Path("bench/out/prefix"))
    a = p.parse_args(argv)
    console = Console()
    from cdclake import _spark
    from cdclake.formats.base import DecodeOptions
    from cdclake.formats.debezium import DebeziumFormat

    a.work.mkdir(parents=True, exist_ok=True)
    path, prefix, token = values_file(a.events, a.work)
    specs = DebeziumFormat().column_specs(token, DecodeOptions())
    images = StructType([StructField(s.name, s.parse_type) for s in specs])
    spark = _spark.builder("cdclake-prefix", kafka=False).getOrCreate()
    text = spark.read.text(str(path)).persist()
    n = text.count()
    runs = cases(text, prefix, images)
    left = runs["value"].drop("token")
    for cut in ("payload, cut by characters", "payload, cut by bytes"):
        right = runs[cut].drop("token")
        differ = left.exceptAll(right).count() + right.exceptAll(left).count()
        console.log(f"{cut}: {differ} payloads differ from the value's parse")
    median = noop_rounds(runs, a.repeat, console.log)
    spark.stop()
    title = f"{n:,} Debezium values of {path.stat().st_size // n:,} bytes, prefix {len(prefix):,}"
    table = Table("case", "median s", "events/s", "over the prefix test s", title=title)
    for name, secs in median.items():
        extra = secs - median["prefix test"]
        table.add_row(name, f"{secs:.2f}", f"{n / secs:,.0f}", f"{extra:.2f}")
    console.print(table)


if __name__ == "__main__":
    main()
