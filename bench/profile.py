"""Where one cdclake apply spends its time: ``python -m bench.profile [--events N]``.

Runs floor-write, cdclake apply and the recipe once each on the same Debezium file (the same
generator and session as ``bench.run``), then prints, per contender, wall time and Spark jobs, and
for cdclake every job with its description (cdclake names each step) and wall time. ``--only``
picks and orders the contenders; ``stream-batch`` is a stream's next batch (typed in one pass
with the plans of a first batch of 1,000 events) into a new table. It also
checks that cdclake and the recipe end with the same table. ``--cpu`` samples the JVM while each
contender runs (Java Flight Recorder, :mod:`bench.cpu`) and prints where its CPU went, by
category. A development tool: the numbers that count come from ``bench/run.sh``.
"""

from __future__ import annotations

import argparse
import shutil
import time
from collections import Counter
from contextlib import nullcontext
from pathlib import Path

from rich.console import Console
from rich.table import Table

from bench import contenders as C
from bench import cpu, data, eventlog

BENCH = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.profile", description=__doc__)
    p.add_argument("--events", type=int, default=100_000)
    p.add_argument("--out", type=Path, default=BENCH / "out" / "profile")
    p.add_argument("--only", default="floor-write,apply,recipe")
    p.add_argument("--cpu", action="store_true", help="sample each contender's CPU (JFR)")
    a = p.parse_args(argv)
    console = Console()
    from cdclake import _spark

    n = a.events
    src = data.debezium_file(n)
    work = a.out.absolute()
    shutil.rmtree(work, ignore_errors=True)
    (work / "eventlog").mkdir(parents=True)
    spark = (
        _spark.builder("cdclake-profile", kafka=False)
        .config("spark.eventLog.enabled", "true")
        .config("spark.eventLog.dir", (work / "eventlog").as_uri())
        .config("spark.eventLog.compress", "false")
        .config("spark.eventLog.rolling.enabled", "false")
        .getOrCreate()
    )
    spark.range(1000).selectExpr("sum(id)").collect()  # warm-up
    jobs = {
        "floor-write": C.floor_write(spark, src, "debezium", work / "floor"),
        "apply": C.apply(spark, src, "debezium", work / "lake"),
        "recipe": C.recipe(spark, src, work / "recipe"),
    }
    if "stream-batch" in a.only:
        known = C.learn_plans(spark, src, "debezium", work / "first-batch")
        jobs["stream-batch"] = C.stream_batch(spark, src, "debezium", work / "stream", known)
    times = {}
    for name in a.only.split(","):
        spark.sparkContext.setJobGroup(f"p/{n}/0/{name}/r0", name)
        recording = cpu.record(spark, work / f"{name}.jfr") if a.cpu else nullcontext()
        with recording:
            t0 = time.perf_counter()
            jobs[name]()
            times[name] = time.perf_counter() - t0
        spark.catalog.clearCache()
        console.log(f"{name}: {times[name]:.2f}s")
    spark.sparkContext.setJobGroup("p/check/0/check/r0", "check")
    if "apply" in times and "recipe" in times:
        cols = ["id", "first_name", "last_name", "email"]
        ident = f"{data.DB}.{data.SCHEMA}.{data.TABLE}"
        mine = spark.read.format("delta").load(str(work / "lake" / ident))
        theirs = spark.read.format("delta").load(str(work / "recipe"))
        a_minus = mine.select(cols).exceptAll(theirs.select(cols)).count()
        b_minus = theirs.select(cols).exceptAll(mine.select(cols)).count()
        console.log(
            f"tables: cdclake {mine.count():,} rows, recipe {theirs.count():,} rows, "
            f"differing {a_minus} / {b_minus}"
        )
    spark.stop()
    groups = eventlog.parse(work / "eventlog")
    summary = Table("contender", "seconds", "events/s", "jobs", "job seconds")
    for name, secs in times.items():
        g = groups.get(f"p/{n}/0/{name}/r0")
        summary.add_row(
            name,
            f"{secs:.2f}",
            f"{n / secs:,.0f}",
            str(len(g.jobs) if g else 0),
            f"{sum(j.seconds for j in g.jobs):.2f}" if g else "-",
        )
    console.print(summary)
    for name in ("apply", "stream-batch"):
        g = groups.get(f"p/{n}/0/{name}/r0")
        if not g:
            continue
        detail = Table(
            "job", "seconds", "tasks", "description / call site", title=f"cdclake {name}"
        )
        for j in g.jobs:
            detail.add_row(str(j.job_id), f"{j.seconds:.2f}", str(j.tasks), j.name[:90])
        console.print(detail)
    if a.cpu:
        console.print(cpu_table({name: cpu.categorize(work / f"{name}.jfr") for name in times}))


def cpu_table(profiles: dict[str, cpu.Profile]) -> Table:
    """Each contender's samples by category: executor work in percent of the executor's
    samples, and the driver's share of all samples."""
    table = Table("category", *profiles, title="where the CPU went (% of executor samples)")
    categories = Counter[str]()
    for prof in profiles.values():
        n = sum(prof.executor.values()) or 1
        categories.update({k: v / n for k, v in prof.executor.items()})
    for name, _ in categories.most_common():
        table.add_row(
            name,
            *[
                f"{100 * p.executor[name] / (sum(p.executor.values()) or 1):.1f}"
                for p in profiles.values()
            ],
        )
    table.add_section()
    table.add_row("executor samples", *[f"{sum(p.executor.values()):,}" for p in profiles.values()])
    table.add_row(
        "driver, % of all samples",
        *[f"{100 * sum(p.driver.values()) / (p.samples or 1):.1f}" for p in profiles.values()],
    )
    for name in sorted({k for p in profiles.values() for k in p.driver}):
        table.add_row(
            f"  driver: {name}",
            *[f"{100 * p.driver[name] / (p.samples or 1):.1f}" for p in profiles.values()],
        )
    return table


if __name__ == "__main__":
    main()
