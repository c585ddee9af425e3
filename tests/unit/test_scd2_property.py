"""History tables against the plain-Python rule (tests/scd2_model.py), in every format.

A generated source history (inserts, updates, deletes, primary-key changes, TOAST-placeholder
updates where the format has them) is rendered in one format, re-delivered in part, shuffled,
and cut into batches; the history table cdclake builds must be exactly the model's.
"""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scd2_model import COLUMNS, FORMATS, Source, expected_history, history_rows

from cdclake.apply.tables import Target
from cdclake.config import ApplyConfig
from cdclake.runner import apply_raw
from cdclake.sources import raw_from_lines

STEP = st.tuples(
    st.integers(1, 3),  # key
    st.integers(0, 3),  # 0 delete, 1 key change, 2 TOAST update, 3 update
    st.sampled_from(["a", "b"]),
    st.integers(0, 2),
    st.integers(1, 4),  # the new key of a key change
)


@st.composite
def deliveries(draw: st.DrawFn, toast: bool) -> tuple[Source, list[list[int]]]:
    """A source history, and the order its changes arrive in: batches of change indexes,
    shuffled, some re-delivered (a later batch or the same one)."""
    source = Source()
    for key, action, name, qty, new_key in draw(st.lists(STEP, min_size=1, max_size=8)):
        source.step(key, action if toast or action != 2 else 3, name, qty, new_key)
    n = len(source.changes)
    again = draw(st.lists(st.integers(0, n - 1), max_size=3))
    order = draw(st.permutations([*range(n), *again]))
    cuts = sorted(draw(st.lists(st.integers(0, len(order)), max_size=2)))
    bounds = [0, *cuts, len(order)]
    return source, [order[a:b] for a, b in itertools.pairwise(bounds) if b > a]


def check(spark: Any, root: Path, fmt: str, data: Any) -> None:
    rendering = FORMATS[fmt]
    source, batches = data.draw(deliveries(toast=fmt == "debezium"))
    tracked = data.draw(st.sampled_from([COLUMNS, ("id", "name")]))
    shutil.rmtree(root, ignore_errors=True)
    config = ApplyConfig(
        format=fmt,
        inputs=("in.jsonl",),
        target=str(root),
        stored_as_scd_type=2,
        track_history_except_column_list={"*": ()} if tracked == COLUMNS else {"*": ("qty",)},
    )
    for i, batch in enumerate(batches):
        lines = [line for c in batch for line in rendering.render(source.changes[c])]
        lines = [*(rendering.preamble if i == 0 else ()), *lines]
        result = apply_raw(raw_from_lines(spark, lines, f"b{i}.jsonl"), config)
        assert result.quarantined == 0, result.quarantine_reasons
    events = [[e for c in batch for e in source.changes[c].events()] for batch in batches]
    want = expected_history(events, tracked)
    df = spark.read.format("delta").load(Target(str(root)).table_path(rendering.table))
    assert history_rows(df, rendering.step) == want, (source.changes, batches)


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_history_is_the_models_whatever_the_arrival_order(
    spark: Any, tmp_path: Path, fmt: str
) -> None:
    @settings(
        max_examples=4,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(data=st.data())
    def run(data: Any) -> None:
        check(spark, tmp_path / "lake", fmt, data)

    run()
