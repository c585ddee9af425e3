"""``--format auto`` next to the format given, per format:
``python -m bench.auto [--events N] [--formats F,...] [--repeat R]``.

For each format, on the same file ``bench.run`` generates, three contenders run interleaved
round by round (the first round is a warm-up and not counted; the session's cache is cleared
after every run): floor-parse, decode (:func:`cdclake.run.runner.read_changes` with the format
given, into ``noop``) and decode-auto (the same with ``auto``), exactly as ``bench.run``'s
contenders. A later round's decode replays the plan built in an earlier one, as a stream's later
batches do. A development tool: the numbers that count come from ``bench/run.sh``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from bench import contenders as C
from bench import data
from bench.data import WIRE_FORMATS

BENCH = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.auto", description=__doc__)
    p.add_argument("--events", type=int, default=100_000)
    p.add_argument("--formats", default=",".join(WIRE_FORMATS))
    p.add_argument("--repeat", type=int, default=4, help="rounds, the first not counted")
    a = p.parse_args(argv)
    console = Console()
    from cdclake import _spark

    spark = _spark.builder("cdclake-auto", kafka=False).getOrCreate()
    n, keys = a.events, max(a.events // 10, 1)
    table = Table(
        "format", "floor-parse s", "decode s", "auto s", "decode / floor", "auto / decode",
        title=f"{n:,} events, median of {max(a.repeat - 1, 1)}",
    )  # fmt: skip
    for fmt in a.formats.split(","):
        folder = BENCH / "out" / "data" / fmt / f"n{n}-k{keys}-s100-seed42"
        path = data.write_events(folder / "events.jsonl", fmt, n, keys, 100)
        runs = {
            "floor": C.floor_parse(spark, path, fmt),
            "decode": C.decode(spark, path, fmt, fmt),
            "auto": C.decode(spark, path, "auto", fmt),
        }
        times: dict[str, list[float]] = {k: [] for k in runs}
        for _ in range(a.repeat):
            for name, run in runs.items():
                t0 = time.perf_counter()
                run()
                times[name].append(time.perf_counter() - t0)
                spark.catalog.clearCache()
        m = {k: statistics.median(v[1:] or v) for k, v in times.items()}
        table.add_row(
            fmt,
            f"{m['floor']:.2f}",
            f"{m['decode']:.2f}",
            f"{m['auto']:.2f}",
            f"{m['floor'] / m['decode']:.2f}",
            f"{m['auto'] / m['decode']:.2f}",
        )
        console.log(f"{fmt}: done")
    spark.stop()
    console.print(table)


if __name__ == "__main__":
    main()
