"""A stream's steady micro-batches, one by one: seconds, Spark jobs and Delta commits of each.

``python -m bench.steady [--events-per-batch 300] [--batches 18] [--keys 200]`` (``src`` and the
checkout on ``PYTHONPATH``). The bench's Debezium stream (inserts, 85 % updates, 15 % deletes)
is cut into batches applied in order to one target, as a stream applies its micro-batches: the
runner's ``apply_raw`` with the batch's idempotent-write ids and the plans of the batches before
(typed in one pass from the second batch on), the tables' rows not counted (as a Kafka stream
does). What a small batch costs is fixed work, not work per event: this is the tool that shows it
(issue 36). A batch whose commits reach a tenth version also writes Delta checkpoints.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from bench.data import debezium_line, events
from cdclake._spark import get_or_create
from cdclake.config import ApplyConfig
from cdclake.decode import KnownGroups
from cdclake.run.runner import apply_raw
from cdclake.sources import raw_from_lines


def _commits(target: Path) -> int:
    return sum(1 for _ in target.glob("**/_delta_log/*.json"))


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.steady", description=__doc__)
    p.add_argument("--events-per-batch", type=int, default=300)
    p.add_argument("--batches", type=int, default=18)
    p.add_argument("--keys", type=int, default=200, help="distinct keys of the stream (200)")
    args = p.parse_args(argv)
    n, batches = args.events_per_batch, args.batches
    spark = get_or_create("bench-steady")
    spark.sparkContext.setLogLevel("ERROR")
    tracker = spark.sparkContext.statusTracker()
    lines = [debezium_line(e, n * batches) for e in events(n * batches, args.keys, 100)]
    table = Table("batch", "seconds", "Spark jobs", "Delta commits", "one pass", "applied")
    seconds: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bench-steady-") as tmp:
        target = Path(tmp) / "lake"
        config = ApplyConfig(format="debezium", target=str(target))
        known = KnownGroups()
        for b in range(batches):
            raw = raw_from_lines(spark, lines[b * n : (b + 1) * n], epoch=b)
            before = _commits(target)
            spark.sparkContext.setJobGroup(f"steady-{b}", f"steady batch {b}")
            started = time.perf_counter()
            result = apply_raw(raw, config, "bench-steady", b, n, False, known)
            took = time.perf_counter() - started
            jobs = len(tracker.getJobIdsForGroup(f"steady-{b}"))
            if b >= 2:  # warm
                seconds.append(took)
            table.add_row(
                str(b), f"{took:.2f}", str(jobs), str(_commits(target) - before),
                "yes" if result.one_pass else "no", str(result.applied),
            )  # fmt: skip
    console = Console()
    console.print(table)
    if seconds:
        console.print(
            f"steady batches (from the third): median "
            f"{statistics.median(seconds):.2f} s, min {min(seconds):.2f} s over {len(seconds)}"
        )


if __name__ == "__main__":
    main()
