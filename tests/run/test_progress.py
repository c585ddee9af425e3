"""Progress of a batch run: plain lines when the output is not a terminal, bars on a terminal."""

from __future__ import annotations

import io
import re
from typing import Any

from builders.dbz import event
from rich.console import Console

from cdclake.phases import phase, reporting, table, tables


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
    assert lines[:2] == ["reading", "decoding 3 messages"]
    # the tables go side by side: numbered as they start, in whichever order that is
    assert [x[:22] for x in lines[2:]] == ["applying table 1 of 2:", "applying table 2 of 2:"]
    assert sorted(x[23:] for x in lines[2:]) == [
        "shop.public.items (2 changes)",
        "shop.public.orders (1 changes)",
    ]
    assert all(re.match(r"^\[ *\d+\.\d s\] ", x) for x in out.getvalue().splitlines())


def test_bars_on_a_terminal_and_silence_without_a_reporter() -> None:
    phase("reading")  # no reporter: nothing happens
    out = io.StringIO()
    with reporting(Console(file=out, force_terminal=True, width=120)):
        phase("reading")
        phase("decoding", "10 messages")
        tables(2)
        table("db.t2", 4)  # side by side: any table may start first
        table("db.t1", 6)
    text = out.getvalue()
    for label in ("reading", "decoding 10 messages", "applying db.t1 (6 changes)"):
        assert label in text
    assert "2/2" in text and "\x1b[" in text  # a drawn bar: counts, terminal escapes
