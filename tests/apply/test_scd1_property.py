"""Current-state tables against the plain-Python rule (``expected_current`` in
tests/scd2_model.py), in every format.

A generated source history (inserts, updates with their before image, deletes, primary-key
changes) is rendered in one of the four formats (read with ``format="auto"``), re-delivered in
part, shuffled and cut into batches; the table must hold exactly the newest change of each
key. A late change must not bring back a deleted key (its tombstone holds it back), a newer one
must.

The batches are applied as a stream applies them (``known``): the first of a schema in two
passes, the next ones in one, with the plans the first made.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from scd2_model import COLUMNS, FORMATS, deliveries, expected_current

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
