"""cdclake: database change streams into Delta Lake tables with Apache Spark.

>>> from cdclake import read_changes, apply_changes
>>> changes = read_changes(spark, ["events.jsonl"], format="debezium")  # doctest: +SKIP
>>> apply_changes(changes, "/lake").tables  # doctest: +SKIP

The names below are loaded on first use: ``import cdclake`` (or ``cdclake.errors``) imports
neither PySpark nor Delta, so the commands that read a target without Spark start at once.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cdclake import history
    from cdclake.apply.batch import apply_changes
    from cdclake.apply.consistency import snapshot
    from cdclake.apply.results import BatchResult
    from cdclake.config import ApplyConfig
    from cdclake.model import CHANGE_SCHEMA, Op
    from cdclake.ops.catalog import register_tables
    from cdclake.run.runner import read_changes, run_batch, run_stream

_PUBLIC = {
    "CHANGE_SCHEMA": "cdclake.model",
    "ApplyConfig": "cdclake.config",
    "BatchResult": "cdclake.apply.batch",
    "Op": "cdclake.model",
    "apply_changes": "cdclake.apply.batch",
    "history": "cdclake.history",
    "read_changes": "cdclake.run.runner",
    "register_tables": "cdclake.ops.catalog",
    "run_batch": "cdclake.run.runner",
    "run_stream": "cdclake.run.runner",
    "snapshot": "cdclake.apply.consistency",
}
__all__ = [
    "CHANGE_SCHEMA",
    "ApplyConfig",
    "BatchResult",
    "Op",
    "apply_changes",
    "history",
    "read_changes",
    "register_tables",
    "run_batch",
    "run_stream",
    "snapshot",
]


def __getattr__(name: str) -> Any:
    """``cdclake.apply_changes`` and the other public names, imported when first asked for."""
    if name not in _PUBLIC:
        raise AttributeError(f"module 'cdclake' has no attribute {name!r}")
    module = import_module(_PUBLIC[name])
    value = module if module.__name__ == f"cdclake.{name}" else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC})
