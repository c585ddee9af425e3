"""Fuzz: mutated messages of all four formats mixed into valid workloads never stop a run.

Two batches (the first creates the tables, the second meets them typed) of good messages and
mutants (see :mod:`fuzz_gen`) go through the file path with ``--format auto``; the good messages
alone go to a second target. Per batch: every mutant is quarantined exactly once with a reason,
counts reconcile, and the tables equal the reference tables. Seeded: set ``CDCLAKE_FUZZ_SEED``
to replay another run, ``CDCLAKE_FUZZ_MUTANTS`` (per format and batch) to change its size.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from fuzz_gen import FORMATS, TABLES, Message, workload
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from cdclake.config import ApplyConfig
from cdclake.runner import apply_raw
from cdclake.sources import read_files

pytestmark = pytest.mark.fuzz

SEED = int(os.environ.get("CDCLAKE_FUZZ_SEED", "11"))
MUTANTS = int(os.environ.get("CDCLAKE_FUZZ_MUTANTS", "1300"))  # 4 formats x 2 batches: 10,400
GOOD = 250


def _apply(spark: SparkSession, path: Path, target: Path) -> Any:
    config = ApplyConfig(format="auto", inputs=(str(path),), target=str(target))
    return apply_raw(read_files(spark, [str(path)]), config)


def _write(path: Path, messages: list[Message]) -> Path:
    path.write_bytes(b"\n".join(m.line for m in messages) + b"\n")
    return path


def _reason_kind(reason: str) -> str:
    """A reason without its values, to count the kinds seen."""
    text = re.sub(r"'[^']*'", "'…'", reason.split(":")[0] if "not valid JSON" in reason else reason)
    return re.sub(r"\d+", "N", text)[:90]


def _live(spark: SparkSession, target: Path, table: str, columns: list[str]) -> list[Any]:
    df = spark.read.format("delta").load(str(target / table))
    return sorted(tuple(r) for r in df.select(*columns).collect())


def test_mutants_are_quarantined_and_tables_hold_the_good_messages(
    spark: SparkSession, tmp_path: Path
) -> None:
    fuzz, ref = tmp_path / "fuzz", tmp_path / "ref"
    tried: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    for b in range(2):
        batch: list[Message] = []
        for fmt in FORMATS:
            batch += workload(SEED, fmt, GOOD, MUTANTS, 1 + 10_000 * b, 100_000 * b, rare=True)
        bad_lines = {i for i, m in enumerate(batch, 1) if m.kind not in ("good", "control")}
        tried.update(m.fmt for m in batch if m.kind not in ("good", "control"))
        mixed = _apply(spark, _write(tmp_path / f"mixed{b}.jsonl", batch), fuzz)
        alone = _apply(
            spark,
            _write(
                tmp_path / f"good{b}.jsonl", [m for m in batch if m.kind in ("good", "control")]
            ),
            ref,
        )
        assert mixed.messages == len(batch)
        assert mixed.messages == mixed.applied + mixed.ignored + mixed.control + mixed.quarantined
        q = (
            spark.read.format("delta")
            .load(str(fuzz / "_cdc_quarantine"))
            .filter(F.col("lineage.source").endswith(f"mixed{b}.jsonl"))
            .select(F.col("lineage.offset").alias("line"), "reason")
            .collect()
        )
        lines = Counter(r["line"] for r in q)
        missed = sorted(bad_lines - set(lines))
        assert not missed, [(batch[i - 1].kind, batch[i - 1].line[:300]) for i in missed[:5]]
        assert set(lines) == bad_lines, sorted(set(lines) - bad_lines)[:5]
        assert all(n == 1 for n in lines.values())
        assert all(r["reason"] for r in q)
        assert mixed.quarantined == len(bad_lines)
        assert (mixed.control, mixed.applied, mixed.ignored) == (
            alone.control,
            alone.applied,
            alone.ignored,
        )
        reasons.update(_reason_kind(r["reason"]) for r in q)
        for fmt in FORMATS:
            table = TABLES[fmt]
            columns = [
                c
                for c in spark.read.format("delta").load(str(ref / table)).columns
                if c != "_cdc_lineage"
            ]
            assert _live(spark, fuzz, table, columns) == _live(spark, ref, table, columns), table
    print(f"\nfuzz seed {SEED}: mutants tried per format {dict(tried)}; crashes 0")
    for reason, n in reasons.most_common():
        print(f"{n:6d}  {reason}")
