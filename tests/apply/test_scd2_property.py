"""History tables against the plain-Python rule (tests/scd2_model.py), in every format.

A generated source history (inserts, updates, deletes, primary-key changes, TOAST-placeholder
updates where the format has them) is rendered in one format, re-delivered in part, shuffled,
and cut into batches; the history table cdclake builds must be exactly the model's.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from scd2_model import COLUMNS, FORMATS, deliveries, expected_history, history_rows

from cdclake.apply.tables import Target
from cdclake.config import ApplyConfig
from cdclake.run.runner import apply_raw
from cdclake.sources import raw_from_lines


# over 120 s (96-127 s in full runs), because: each of its 2 examples applies several batches in
# each of the four formats, and every SCD type 2 batch is a MERGE of versions rebuilt from the
# history log (about 45 Spark jobs); fewer examples would test less than the issue keeps
# A timeout past pytest's default 900 s: hitting it mid-call breaks the shared Spark session for
# every test after this one.
@pytest.mark.timeout(2400)
@settings(
    max_examples=int(os.environ.get("CDCLAKE_SCD2_EXAMPLES", "2")),  # a quick local look: 1
    deadline=None,
    derandomize=True,
    phases=[Phase.generate],  # no shrinking: a failure prints its changes and batches as drawn
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_history_is_the_models_whatever_the_arrival_order_in_every_format(
    spark: Any, tmp_path: Path, data: Any
) -> None:
    """Each batch carries the same changes in all four formats (each into its own table, read
    with ``format="auto"``); only Debezium has the TOAST placeholder, the others send the value
    the placeholder stands for, so every table must hold the same history."""
    source, batches = data.draw(deliveries(toast=True))
    tracked = data.draw(st.sampled_from([COLUMNS, ("id", "name")]))
    root = tmp_path / "lake"
    shutil.rmtree(root, ignore_errors=True)
    config = ApplyConfig(
        format="auto",
        inputs=("in.jsonl",),
        target=str(root),
        stored_as_scd_type=2,
        track_history_except_column_list={"*": ()} if tracked == COLUMNS else {"*": ("qty",)},
    )
    for i, batch in enumerate(batches):
        lines = [line for r in FORMATS.values() for line in (r.preamble if i == 0 else ())]
        lines += [
            line for c in batch for r in FORMATS.values() for line in r.render(source.changes[c])
        ]
        result = apply_raw(raw_from_lines(spark, lines, f"b{i}.jsonl"), config)
        assert result.quarantined == 0, result.quarantine_reasons
    events = [[e for c in batch for e in source.changes[c].events()] for batch in batches]
    want = expected_history(events, tracked)
    got = {
        r.name: history_rows(
            spark.read.format("delta").load(Target(str(root)).table_path(r.table)), r.step
        )
        for r in FORMATS.values()
    }
    assert got == dict.fromkeys(FORMATS, want), (source.changes, batches)
