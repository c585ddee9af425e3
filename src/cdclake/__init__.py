"""cdclake: database change streams into Delta Lake tables with Apache Spark.

>>> from cdclake import read_changes, apply_changes
>>> changes = read_changes(spark, ["events.jsonl"], format="debezium")  # doctest: +SKIP
>>> apply_changes(changes, "/lake").tables  # doctest: +SKIP

The names below are imported when first used (module ``__getattr__``): importing the package,
or a module of it such as :mod:`cdclake.status`, does not import PySpark, so ``cdclake status``
answers without a JVM.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cdclake.apply.batch import BatchResult, apply_changes
    from cdclake.config import ApplyConfig
    from cdclake.model import CHANGE_SCHEMA, Op
    from cdclake.runner import read_changes, run_batch, run_stream

_WHERE = {
    "CHANGE_SCHEMA": "cdclake.model",
    "ApplyConfig": "cdclake.config",
    "BatchResult": "cdclake.apply.batch",
    "Op": "cdclake.model",
    "apply_changes": "cdclake.apply.batch",
    "read_changes": "cdclake.runner",
    "run_batch": "cdclake.runner",
    "run_stream": "cdclake.runner",
}

__all__ = [
    "CHANGE_SCHEMA",
    "ApplyConfig",
    "BatchResult",
    "Op",
    "apply_changes",
    "read_changes",
    "run_batch",
    "run_stream",
]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'cdclake' has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value
