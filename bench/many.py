"""Many tables in one input: do cdclake's lake and the looping recipe's lake hold the same rows?

A fast wrong answer must not pass as a win, so after ``apply-many`` and ``recipe-many`` the
bench compares the two lakes table by table: row counts per table, against each other and
against the live rows the generator leaves (:func:`bench.data.live_rows`), and every row's
``(id, first_name, last_name, email)`` (present in both, once each). The lakes hold one row
per live key (about events / 10), so the full comparison is cheap at every size.
"""

from __future__ import annotations

import time
import urllib.parse
from functools import reduce
from pathlib import Path
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from bench import contenders as C
from bench import data, tables
from bench.data import COLUMNS

if TYPE_CHECKING:
    from bench.run import Bench

FOLDERS_SKIPPED = ("_", ".")


def _tables(lake: Path) -> dict[str, str]:
    """Source table name (the last part of the identifier) -> Delta table folder."""
    if not lake.is_dir():
        return {}
    out: dict[str, str] = {}
    for p in sorted(lake.iterdir()):
        if p.name.startswith(FOLDERS_SKIPPED) or not (p / "_delta_log").is_dir():
            continue
        out[urllib.parse.unquote(p.name).rsplit(".", 1)[-1]] = str(p)
    return out


def _rows(spark: SparkSession, folders: dict[str, str], side: str) -> DataFrame | None:
    """Every row of every table, as strings, with ``_a``/``_b`` = 1 on its ``side``."""
    frames = [
        spark.read.format("delta")
        .load(path)
        .select(
            F.lit(name).alias("_table"),
            *[F.col(c).cast("string").alias(c) for c in COLUMNS],
            F.lit(int(side == "a")).alias("_a"),
            F.lit(int(side == "b")).alias("_b"),
        )
        for name, path in folders.items()
    ]
    return reduce(DataFrame.unionByName, frames) if frames else None


def compare_lakes(
    spark: SparkSession, cdclake_lake: Path, recipe_lake: Path, expected: dict[str, int]
) -> dict[str, object]:
    """``lakes_agree`` and ``check``, saying where the lakes differ first when they do.

    One Spark action: rows of both lakes grouped by (table, row) and then by table, so the
    driver receives one line per table (rows on each side, rows not on both sides)."""
    ours, theirs = _tables(cdclake_lake), _tables(recipe_lake)
    out: dict[str, object] = {"tables": len(ours), "recipe_tables": len(theirs)}
    a, b = _rows(spark, ours, "a"), _rows(spark, theirs, "b")
    if a is None or b is None:
        return {**out, "lakes_agree": False, "check": "a lake holds no table"}
    per_row = (
        a.unionByName(b)
        .groupBy("_table", *COLUMNS)
        .agg(F.sum("_a").alias("a"), F.sum("_b").alias("b"))
    )
    per_table = per_row.groupBy("_table").agg(
        F.sum("a").alias("a"),
        F.sum("b").alias("b"),
        F.sum(F.when(F.col("a") != F.col("b"), 1).otherwise(0)).alias("differ"),
    )
    stats = {r["_table"]: (r["a"], r["b"], r["differ"]) for r in per_table.collect()}
    want = {t: n for t, n in expected.items() if n}
    out["rows"] = sum(s[0] for s in stats.values())
    out["expected_rows"] = sum(want.values())
    for side, name in ((0, "cdclake"), (1, "recipe")):
        counts = {t: s[side] for t, s in stats.items() if s[side]}
        if counts != want:
            bad = sorted(t for t in set(counts) | set(want) if counts.get(t) != want.get(t))
            t = bad[0]
            note = f"{name} has {counts.get(t, 0)} rows in {t}, the generator leaves {want.get(t)}"
            return {**out, "lakes_agree": False, "check": f"{note} ({len(bad)} tables differ)"}
    differ = sum(s[2] for s in stats.values())
    if differ:
        note = f"{differ} rows are not the same in both lakes"
        return {**out, "lakes_agree": False, "check": note}
    return {**out, "lakes_agree": True, "check": "same rows in every table"}


def run_cases(bench: Bench, n: int) -> None:
    """apply-many and recipe-many over one input spread over ``--tables`` tables, then the
    check that both lakes hold the same rows (see the module docstring)."""
    from bench.run import log

    sp, t = bench.spark, bench.args.tables
    keys = bench.keys_for(n)
    path = bench.events_file("debezium", n, keys, 100, t)
    w = bench.work / f"many-{n}"
    lake, rlake = w / "lake", w / "recipe"
    applied = bench.measure(
        "apply-many",
        "debezium",
        n,
        lambda: C.apply(sp, path, "debezium", lake),
        setup=lambda _: tables.remove(lake),
    )
    recipe = bench.measure(
        "recipe-many",
        "debezium",
        n,
        lambda: C.recipe_many(sp, path, rlake),
        setup=lambda _: tables.remove(rlake),
    )
    if applied.status != "ok" or recipe.status != "ok":
        return
    t0 = time.perf_counter()
    expected = data.live_rows(n, keys, 100, bench.args.seed, t)
    check = compare_lakes(sp, lake, rlake, expected)
    log(f"many tables: {check['check']} ({time.perf_counter() - t0:.1f}s)")
    for m in (applied, recipe):
        m.extra.update({"n_tables": t, **check})
