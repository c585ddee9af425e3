"""What a stream's one-pass decode costs per message, next to the floor:
``python -m bench.envelope [--events N] [--repeat R]``.

Times, into the ``noop`` sink and interleaved round by round (the first round is a warm-up and
not counted), on the same Debezium file as ``bench.run``:

- floor-parse: ``from_json`` with the exact schema (:func:`bench.contenders.parsed`)
- envelope: the format's envelope, row images as text (:func:`cdclake.decode.envelopes`)
- typed from text: the envelopes typed in one pass with a stream's plans
  (:func:`cdclake.decode.type_known`), the images parsed from their text
- images envelope / typed from images: the same with the images read in the message's own
  parse (:func:`cdclake.decode.one_pass_envelopes`), what a stream's batch runs

It checks that both typed results hold the same changes. A development tool: the numbers that
count come from ``bench/run.sh``.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from rich.console import Console
from rich.table import Table

from bench import contenders as C
from bench import data
from bench.measure import noop_rounds

BENCH = Path(__file__).resolve().parent


def _comparable(df: DataFrame) -> DataFrame:
    """The changes without what set operations refuse (variants, maps) or need not compare."""
    text = ("before", "after", "meta", "headers")
    return df.select(
        *[F.to_json(c).alias(c) if c in text else F.col(c) for c in df.columns if c != "raw"]
    )


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.envelope", description=__doc__)
    p.add_argument("--events", type=int, default=100_000)
    p.add_argument("--repeat", type=int, default=5, help="rounds, the first not counted")
    p.add_argument("--out", type=Path, default=BENCH / "out" / "envelope")
    a = p.parse_args(argv)
    console = Console()
    from cdclake import _spark, decode, sources
    from cdclake.formats.base import DecodeOptions

    n = a.events
    src = data.debezium_file(n)
    work = a.out.absolute()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    spark = _spark.builder("cdclake-envelope", kafka=False).getOrCreate()
    known = C.learn_plans(spark, src, "debezium", work / "first")
    raw = sources.read_files(spark, [str(src)])
    options = DecodeOptions(keys=data.primary_keys("debezium") or {})
    text, _ = decode.envelopes(raw, "debezium", options)
    text = decode.configured_keys(text, options)
    from_text = decode.type_known(text, known)  # type: ignore[arg-type]
    runs = {
        "floor-parse": C.parsed(spark, src, "debezium"),
        "envelope": text,
        "typed from text": from_text,
    }
    one_pass_envelopes = getattr(decode, "one_pass_envelopes", None)  # not in older builds
    if one_pass_envelopes is not None:
        images, _ = one_pass_envelopes(raw, "debezium", options, known)
        images = decode.configured_keys(images, options)
        from_images = decode.type_known(images, known)  # type: ignore[arg-type]
        left, right = _comparable(from_text), _comparable(from_images)
        differ = left.exceptAll(right).count() + right.exceptAll(left).count()
        console.log(f"typed from text and from images: {differ} changes differ")
        runs |= {"images envelope": images, "typed from images": from_images}
    median = noop_rounds(runs, a.repeat, console.log)
    spark.stop()
    table = Table("step", "median s", "events/s", "/ floor", title=f"{n:,} Debezium events")
    for name, secs in median.items():
        table.add_row(
            name, f"{secs:.2f}", f"{n / secs:,.0f}", f"{secs / median['floor-parse']:.2f}"
        )
    console.print(table)


if __name__ == "__main__":
    main()
