"""cdclake: database change streams into Delta Lake tables with Apache Spark.

>>> from cdclake import read_changes, apply_changes
>>> changes = read_changes(spark, ["events.jsonl"], format="debezium")  # doctest: +SKIP
>>> apply_changes(changes, "/lake").tables  # doctest: +SKIP
"""

from __future__ import annotations

from cdclake.apply.batch import BatchResult, apply_changes
from cdclake.config import ApplyConfig
from cdclake.model import CHANGE_SCHEMA, Op
from cdclake.runner import read_changes, run_batch, run_stream

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
