"""Progress of a long batch run: reading, decoding, applying table k of N, with elapsed time.

The runner and the applier report phases through :func:`phase` and :func:`table`, which do
nothing unless a reporter is active (``with reporting(console):``, as ``cdclake apply`` does for
a batch over files). On a terminal the reporter draws a rich progress bar per phase; otherwise it
prints one plain line per step. It only reports counts the run computes anyway: no extra Spark
pass. A streaming query keeps its one line per batch and never activates it.

>>> with reporting(Console()):  # doctest: +SKIP
...     run_batch(spark, config)
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)


class Reporter:
    """Draws phases on ``console``: bars on a terminal, plain lines elsewhere."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.started = time.monotonic()
        self.bar: Progress | None = None
        self.task: TaskID | None = None
        self.lock = threading.Lock()  # tables of a batch start from several threads
        self.started_tables = 0
        self.n_tables = 0
        if console.is_terminal:
            self.bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=console,
                transient=False,
            )
            self.bar.start()

    def phase(self, name: str, detail: str = "") -> None:
        if self.bar is not None:
            if self.task is not None:
                self.bar.update(self.task, completed=1, total=1)
            self.task = self.bar.add_task(f"{name} {detail}".strip(), total=1)
        else:
            self._line(f"{name} {detail}".strip())

    def tables(self, n: int) -> None:
        with self.lock:
            self.started_tables, self.n_tables = 0, n
            if self.bar is not None:
                if self.task is not None:
                    self.bar.update(self.task, completed=1, total=1)
                self.task = self.bar.add_task(f"applying {n} tables", total=n)

    def table(self, name: str, changes: int) -> None:
        with self.lock:  # numbered as they start: side by side, any table may start first
            self.started_tables += 1
            k, n = self.started_tables, self.n_tables
            label = f"applying {name} ({changes} changes)"
            if self.bar is not None:
                assert self.task is not None
                self.bar.update(self.task, description=label, completed=k - 1)
            else:
                self._line(f"applying table {k} of {n}: {label.removeprefix('applying ')}")

    def close(self) -> None:
        if self.bar is not None:
            if self.task is not None:
                task = self.bar.tasks[-1]
                self.bar.update(self.task, completed=task.total or 1)
            self.bar.stop()

    def _line(self, text: str) -> None:
        elapsed = time.monotonic() - self.started
        self.console.print(f"[{elapsed:6.1f} s] {text}", highlight=False, markup=False)


_current: ContextVar[Reporter | None] = ContextVar("cdclake_progress", default=None)


@contextmanager
def reporting(console: Console) -> Iterator[Reporter]:
    """Report the phases of the runs inside the block on ``console``."""
    reporter = Reporter(console)
    token = _current.set(reporter)
    try:
        yield reporter
    finally:
        _current.reset(token)
        reporter.close()


def phase(name: str, detail: str = "") -> None:
    """A new phase of the current run (``reading``, ``decoding`` ...)."""
    r = _current.get()
    if r is not None:
        r.phase(name, detail)


def tables(n: int) -> None:
    """The batch's ``n`` tables are about to be applied."""
    r = _current.get()
    if r is not None:
        r.tables(n)


def table(name: str, changes: int) -> None:
    """Applying table ``name`` (``changes`` of it in the batch); called as each table starts."""
    r = _current.get()
    if r is not None:
        r.table(name, changes)
