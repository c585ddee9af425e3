"""Building a batch's decode plan once per query, not once per batch.

A decode builds hundreds of column expressions, and each ``F.col``, ``F.when`` or ``alias`` is
a call from Python into the JVM: a Debezium envelope alone takes about 4,000 of them, close to
half a second of driver time per batch whatever its size. A
:class:`~pyspark.sql.Column` names the columns it reads; it is not bound to a DataFrame. So the
columns one batch was built with serve the next batch of the same schema as they are.

:func:`replayed` runs a builder (a function of one DataFrame that only adds projections and
filters to it) on a recording stand-in of its input: each ``select``, ``withColumn``,
``withColumns``, ``filter`` or ``drop`` call is made on the real DataFrame and kept with its
arguments. A later input with the same schema and key gets the same calls with the same
arguments: a few JVM calls per step instead of thousands. A builder that does anything else
with its input (joins it, indexes it with ``df["x"]``, persists it, branches from one step
twice) is run as it is every time.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pyspark import SparkContext
from pyspark.sql import DataFrame

R = TypeVar("R")

_RECORDED = frozenset({"select", "withColumn", "withColumns", "filter", "where", "drop"})
MAX_PLANS = 64
"""The most recordings kept (least recently used dropped first): a query has a few."""

Step = tuple[str, tuple[Any, ...], dict[str, Any]]


@dataclass
class _Chain:
    steps: list[Step] = field(default_factory=list)
    linear: bool = True  # every step was made on the one before it


class _Recording:
    """A DataFrame whose plan-building calls in :data:`_RECORDED` are kept in ``chain``."""

    def __init__(self, df: DataFrame, chain: _Chain, step: int) -> None:
        self._df = df
        self._chain = chain
        self._step = step

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._df, name)
        if not callable(attr):  # columns, schema, sparkSession...
            return attr
        chain = self._chain
        if name not in _RECORDED:

            def other(*args: Any, **kwargs: Any) -> Any:
                chain.linear = False  # an action or a transformation that is not replayed
                return attr(*_real(args), **{k: _real((v,))[0] for k, v in kwargs.items()})

            return other

        def call(*args: Any, **kwargs: Any) -> _Recording:
            if self._step != len(chain.steps) or any(
                isinstance(a, _Recording | DataFrame) for a in (*args, *kwargs.values())
            ):
                chain.linear = False
            out = attr(*_real(args), **{k: _real((v,))[0] for k, v in kwargs.items()})
            chain.steps.append((name, args, kwargs))
            return _Recording(out, chain, len(chain.steps))

        return call

    def __getitem__(self, item: Any) -> Any:
        self._chain.linear = False  # a column bound to this DataFrame's plan
        return self._df[item]


def _real(args: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(a._df if isinstance(a, _Recording) else a for a in args)


_plans: OrderedDict[Hashable, list[Step]] = OrderedDict()
_lock = threading.Lock()


def replayed(key: Hashable, df: DataFrame, build: Callable[[DataFrame], R]) -> R:
    """``build(df)``, with the plan-building calls ``build`` made for an earlier input of the
    same schema and ``key`` replayed rather than built again (see the module's doc). ``key``
    names everything ``build`` depends on besides its input's schema."""
    if getattr(df, "_jdf", None) is None:  # Spark Connect: expressions are built in Python
        return build(df)
    full = (key, df.schema.json(), id(SparkContext._gateway))
    with _lock:
        steps = _plans.get(full)
        if steps is not None:
            _plans.move_to_end(full)
    if steps is not None:
        out = df
        for name, args, kwargs in steps:
            out = getattr(out, name)(*args, **kwargs)
        return out  # type: ignore[return-value]
    chain = _Chain()
    result = build(_Recording(df, chain, 0))  # type: ignore[arg-type]
    if not isinstance(result, _Recording):
        return result
    if chain.linear and result._step == len(chain.steps):
        with _lock:
            _plans[full] = chain.steps
            while len(_plans) > MAX_PLANS:
                _plans.popitem(last=False)
    return result._df  # type: ignore[return-value]


def forget() -> None:
    """Drop every recording (tests; a new JVM gets new ones by itself)."""
    with _lock:
        _plans.clear()
