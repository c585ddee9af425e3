"""Current-state tables against the plain-Python rule (``expected_current`` in
tests/scd2_model.py), in every format.

A generated source history (inserts, updates with their before image, deletes, primary-key
changes) is rendered in one of the four formats (read with ``format="auto"``), re-delivered in
part, shuffled and cut into batches; the table must hold exactly the newest change of each
key. A late change must not bring back a deleted key (its tombstone holds it back), a newer one
must; and so after maintenance pruned the tombstone log to its live tombstones between batches.

The batches are applied as a stream applies them (``known``): the first of a schema in two
passes, the next ones in one, with the plans the first made.
"""

from __future__ import annotations

import itertools
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from delta.tables import DeltaTable
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from scd2_model import COLUMNS, FORMATS, STEP, Source, deliveries, expected_current

from cdclake.apply.scd1 import prune_tombstones
from cdclake.apply.tables import Target
from cdclake.config import ApplyConfig
from cdclake.decode import KnownGroups
from cdclake.run.runner import apply_raw
from cdclake.sources import raw_from_lines


@pytest.mark.timeout(1800)
@settings(
    max_examples=int(os.environ.get("CDCLAKE_SCD1_EXAMPLES", "10")),
    deadline=None,
    derandomize=True,
    phases=[Phase.generate],  # no shrinking: a failure prints its changes and batches as drawn
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_current_state_is_the_models_whatever_the_arrival_order(
    spark: Any, tmp_path: Path, data: Any
) -> None:
    source, batches = data.draw(deliveries(toast=False))
    fmt = FORMATS[data.draw(st.sampled_from(sorted(FORMATS)))]
    root = tmp_path / "lake"
    shutil.rmtree(root, ignore_errors=True)
    config = ApplyConfig(format="auto", inputs=("in.jsonl",), target=str(root))
    known = KnownGroups()
    passes = []
    for i, batch in enumerate(batches):
        lines = [*(fmt.preamble if i == 0 else ())]
        lines += [line for c in batch for line in fmt.render(source.changes[c])]
        result = apply_raw(raw_from_lines(spark, lines, f"b{i}.jsonl"), config, known=known)
        assert result.quarantined == 0, result.quarantine_reasons
        assert result.changes == result.applied + result.ignored
        passes.append(1 if result.one_pass else 2)
    print(fmt.name, passes)
    events = [[e for c in batch for e in source.changes[c].events()] for batch in batches]
    rows = spark.read.format("delta").load(Target(str(root)).table_path(fmt.table))
    got = {tuple(r) for r in rows.select(*COLUMNS).collect()}
    assert got == expected_current(events), (fmt.name, source.changes, batches)


@st.composite
def in_order_with_late(draw: st.DrawFn) -> tuple[Source, list[list[int]]]:
    """A history of deletes and comebacks over ids 1..3 delivered in order in three to five
    batches, each also re-delivering earlier changes (late events), shuffled within the batch."""
    source = Source()
    for key, action, name, qty, new_key in draw(st.lists(STEP, min_size=6, max_size=12)):
        source.step(key, action if action != 2 else 3, name, qty, new_key)
    n = len(source.changes)
    cuts = sorted(set(draw(st.lists(st.integers(1, n - 1), min_size=2, max_size=4))))
    bounds = [0, *cuts, n]
    batches = []
    for a, b in itertools.pairwise(bounds):
        late = draw(st.lists(st.integers(0, a - 1), max_size=3)) if a else []
        batches.append(draw(st.permutations([*range(a, b), *late])))
    return source, batches


@pytest.mark.timeout(1800)
@settings(
    max_examples=int(os.environ.get("CDCLAKE_PRUNE_EXAMPLES", "4")),
    deadline=None,
    derandomize=True,
    phases=[Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_pruned_tombstones_hold_back_what_every_tombstone_held_back(
    spark: Any, tmp_path: Path, data: Any
) -> None:
    """Maintenance prunes the tombstone log after every batch (``prune_tombstones``: a key's
    older deletes, and the deletes of a key that came back, go); the table is still the model's,
    late events included, and the log holds only the newest delete of each key deleted now."""
    source, batches = data.draw(in_order_with_late())
    fmt = FORMATS["debezium"]
    root = tmp_path / "lake"
    shutil.rmtree(root, ignore_errors=True)
    config = ApplyConfig(format="debezium", inputs=("in.jsonl",), target=str(root))
    target = Target(str(root))
    tombs, table = target.tombstone_path(fmt.table), target.table_path(fmt.table)
    known, pruned, seen = KnownGroups(), [], []
    for i, batch in enumerate(batches):
        lines = [*(fmt.preamble if i == 0 else ())]
        lines += [line for c in batch for line in fmt.render(source.changes[c])]
        result = apply_raw(raw_from_lines(spark, lines, f"b{i}.jsonl"), config, known=known)
        assert result.quarantined == 0, result.quarantine_reasons
        seen += [e for c in batch for e in source.changes[c].events()]
        pruned.append(
            prune_tombstones(spark, tombs, table) if DeltaTable.isDeltaTable(spark, tombs) else 0
        )
        live = {r[0] for r in spark.read.format("delta").load(table).select("id").collect()}
        log = (
            spark.read.format("delta").load(tombs).collect()
            if DeltaTable.isDeltaTable(spark, tombs)
            else []
        )
        newest = {r["id"]: max(x["_cdc_position"] for x in log if x["id"] == r["id"]) for r in log}
        # one delete position per key deleted now (a re-delivered delete may log it twice)
        assert all(r["_cdc_position"] == newest[r["id"]] for r in log), (i, log)
        assert not set(newest) & live, (i, log, live)
    print("pruned per batch", pruned)
    got = {tuple(r) for r in spark.read.format("delta").load(table).select(*COLUMNS).collect()}
    assert got == expected_current([seen]), (source.changes, batches)
