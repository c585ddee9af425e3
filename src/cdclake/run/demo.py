"""The demo: the bundled sample events applied into a local folder, each table printed.

The samples hold every Debezium example of the seed documents (the SQL Server create event; the
PostgreSQL create, update, truncate, messages and delete) and a small PostgreSQL ``orders``
stream with a snapshot, a replayed old event, a late update after a delete, a primary-key change
and one bad line, so that every rule shows in the output.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from pyspark.sql import SparkSession
from rich.console import Console
from rich.table import Table

from cdclake.apply.tables import QUARANTINE, Target
from cdclake.config import ApplyConfig
from cdclake.run.runner import run_batch
from cdclake.run.summary import print_summary

SAMPLES = Path(__file__).resolve().parents[1] / "samples"


def show_table(
    spark: SparkSession, path: str, title: str, console: Console, limit: int = 20
) -> None:
    df = spark.read.format("delta").load(path)
    cols = [c for c in df.columns if c not in ("_cdc_lineage", "_cdc_row_hash", "_cdc_dup")]
    rows = df.select(*cols).orderBy(*cols[:1]).limit(limit).collect()
    t = Table(title=f"{title} ({df.count()} rows)")
    for c in cols:
        t.add_column(c)
    for r in rows:
        t.add_row(*["" if v is None else str(v) for v in r])
    console.print(t)


def run_demo(spark: SparkSession, target: str, console: Console | None = None) -> None:
    console = console or Console()
    shutil.rmtree(target, ignore_errors=True)
    config = ApplyConfig(format="auto", inputs=(str(SAMPLES),), target=target)
    console.print(f"Applying the sample events in {SAMPLES} to {Path(target).absolute()}")
    result = run_batch(spark, config)
    print_summary(result, console)
    tgt = Target(config.target)
    for name in sorted(result.tables):
        show_table(spark, tgt.table_path(name), name, console)
    quarantine = tgt.system_path(QUARANTINE)
    if Path(quarantine).exists():
        show_table(spark, quarantine, "_cdc_quarantine", console)
