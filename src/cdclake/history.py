"""Reading history tables (``stored_as_scd_type=2``): the rows as of a time or a position.

A version is valid from ``__START_AT`` (inclusive) to ``__END_AT`` (exclusive; null while it is
current), and from ``_cdc_start_ts`` to ``_cdc_end_ts`` in source time, so both questions are
one filter that any Delta reader can write too.

>>> from cdclake.history import as_of, current
>>> as_of(spark, "/lake/shop.public.orders", ts="2024-03-01 00:00:00").show()  # doctest: +SKIP
>>> as_of(spark, "/lake/shop.public.orders", position=[1234]).show()  # doctest: +SKIP
>>> current(spark, "/lake/shop.public.orders").count()  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from cdclake.errors import ConfigError
from cdclake.model import END_AT, END_TS_COL, START_AT, START_TS_COL

__all__ = ["as_of", "current"]


def current(spark: SparkSession, path: str) -> DataFrame:
    """The current version of every live row of the history table at ``path``."""
    return _load(spark, path).filter(F.col(END_AT).isNull())


def as_of(
    spark: SparkSession,
    path: str,
    *,
    ts: datetime | str | None = None,
    position: Sequence[int] | None = None,
) -> DataFrame:
    """The rows as they were at source time ``ts`` or at source position ``position``
    (exactly one of them): the versions that had started and not yet ended then."""
    if (ts is None) == (position is None):
        raise ConfigError("as_of needs exactly one of ts=... or position=...")
    if position is not None:
        at: Column = F.array(*[F.lit(int(x)).cast("bigint") for x in position])
        start, end = F.col(START_AT), F.col(END_AT)
    else:
        at = F.lit(ts).cast("timestamp")
        start, end = F.col(START_TS_COL), F.col(END_TS_COL)
    return _load(spark, path).filter((start <= at) & (end.isNull() | (end > at)))


def _load(spark: SparkSession, path: str) -> DataFrame:
    df = spark.read.format("delta").load(path)
    if START_AT not in df.columns:
        raise ConfigError(f"{path} is not a history table (no {START_AT} column): --scd-type 2")
    return df
