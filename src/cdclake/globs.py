"""The one glob rule for table names (and quarantine reasons), in Python and in Spark.

``--include``, ``--exclude``, ``--scd-type TABLE=…``, ``--track-history-columns TABLE=…`` and
``cdclake quarantine … --table/--reason`` all take shell globs with :mod:`fnmatch`'s meaning,
matched against the whole name and case-sensitively: ``*`` any run of characters (dots too),
``?`` one character, ``[abc]``/``[!abc]`` one of (or none of) a set.

>>> matches("shop.public.orders", "shop.*")
True
>>> matches("shop.public.orders", "Shop.*")
False
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # Python's side needs no Spark: status and quarantine list run without it
    from pyspark.sql import Column


def matches(name: str, pattern: str) -> bool:
    """Whether ``name`` is matched by the glob ``pattern`` (whole name, case-sensitive)."""
    return fnmatch.fnmatchcase(name, pattern)


def regex(pattern: str) -> str:
    """The glob ``pattern`` as a whole-string regular expression that Python and Java read
    alike (``fnmatch.translate`` without its Python-only ``(?s:…)\\Z`` frame).

    >>> regex("shop.*")
    '(?s)^shop\\\\..*$'
    """
    return "(?s)^" + fnmatch.translate(pattern).removeprefix("(?s:").removesuffix(")\\Z") + "$"


def any_match(column: Column, patterns: Iterable[str]) -> Column:
    """A predicate: ``column`` is matched by one of ``patterns`` (false for none, or a null)."""
    from pyspark.sql import functions as F

    cond = F.lit(False)
    for p in patterns:
        cond = cond | F.coalesce(column.rlike(regex(p)), F.lit(False))
    return cond
