"""Progress of a batch run: plain lines when the output is not a terminal, bars on a terminal."""

from __future__ import annotations

import io
import re
from typing import Any

from dbz import event
from rich.console import Console

from cdclake.progress import phase, reporting, table


def test_plain_lines_for_a_batch_run(lake: Any) -> None:
    out = io.StringIO()
    with reporting(Console(file=out, force_terminal=False, width=200)):
        lake.apply(
            [
                event("c", after={"id": 1, "name": "a", "qty": 1}, lsn=1),
                event("c", after={"id": 2, "name": "b", "qty": 2}, lsn=2, table="orders"),
                event("u", after={"id": 1, "name": "a2", "qty": 1}, lsn=3),
            ]
        )
    lines = [re.sub(r"^\[ *\d+\.\d s\] ", "", x) for x in out.getvalue().splitlines()]
    assert lines == [
        "reading",
        "decoding 3 messages",
        "applying table 1 of 2: shop.public.items (2 changes)",
        "applying table 2 of 2: shop.public.orders (1 changes)",
    ]
    assert all(re.match(r"^\[ *\d+\.\d s\] ", x) for x in out.getvalue().splitlines())


def test_bars_on_a_terminal_and_silence_without_a_reporter() -> None:
    phase("reading")  # no reporter: nothing happens
    out = io.StringIO()
    with reporting(Console(file=out, force_terminal=True, width=120)):
        phase("reading")
        phase("decoding", "10 messages")
        table(1, 2, "db.t1", 6)
        table(2, 2, "db.t2", 4)
    text = out.getvalue()
    for label in ("reading", "decoding 10 messages", "applying db.t2 (4 changes)"):
        assert label in text
    assert "2/2" in text and "\x1b[" in text  # a drawn bar: counts, terminal escapes
