"""Shared value conversions (cdclake.formats.values) that are not one format's own."""

from __future__ import annotations

import itertools

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from cdclake.formats.debezium import ORDERED_CONNECTORS
from cdclake.formats.values import lower_keyword

KEYWORDS = {
    "booleans": ("true", "false"),
    "infinities": ("infinity", "+infinity", "-infinity"),
    "connectors": ORDERED_CONNECTORS,
}


def _casings(word: str) -> list[str]:
    """Every upper/lower case spelling of ``word``."""
    return ["".join(cs) for cs in itertools.product(*[{c.lower(), c.upper()} for c in word])]


def test_lower_keyword_compares_with_its_keywords_as_lower_does(spark: SparkSession) -> None:
    # every casing of every keyword, look-alikes whose case mapping is not ASCII's (Kelvin sign,
    # dotted capital I, long s, a combining dot), other lengths and nulls
    texts: list[str | None] = [None, "", "1", "0", " true", "yes", "2024-01-01T00:00:00Z"]
    texts += ["\u212arue", "\u0130nfinity", "\u017fqlserver", "true\u0307", "TRU\u00c9", "MYSQL8"]
    for words in KEYWORDS.values():
        texts += [s for w in words for s in _casings(w)]
    df = spark.createDataFrame([(t,) for t in texts], "t string")
    checks = [
        (lower_keyword(F.col("t"), *words) == k).eqNullSafe(F.lower(F.col("t")) == k).alias(k)
        for words in KEYWORDS.values()
        for k in words
    ]
    rows = df.select("t", *checks).collect()
    wrong = [(r["t"], k) for r in rows for k in r.asDict() if k != "t" and not r[k]]
    assert len(rows) == len(texts)
    assert wrong == []


def test_a_keyword_in_any_case_is_read_as_the_keyword(spark: SparkSession) -> None:
    df = spark.createDataFrame([("TRUE",), ("False",), ("sqlserver",), ("PostgreSQL",)], "t string")
    got = df.select(lower_keyword(F.col("t"), "true", "false", *ORDERED_CONNECTORS)).collect()
    assert [r[0] for r in got] == ["true", "false", "sqlserver", "postgresql"]
