"""DDL records are applied in source order, sorted on the driver as Spark would sort them."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession

from cdclake.apply.schema_changes import _source_order

longs = st.one_of(st.none(), st.integers(min_value=-3, max_value=3))
rows = st.lists(
    st.tuples(st.one_of(st.none(), st.lists(longs, max_size=3)), longs),
    min_size=1,
    max_size=30,
)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(records=rows)
def test_driver_order_is_sparks_order(spark: SparkSession, records: list) -> None:
    df = spark.createDataFrame(
        [(i, p, s) for i, (p, s) in enumerate(records)],
        "i INT, position ARRAY<BIGINT>, seq BIGINT",
    )
    by_spark = [(r["position"], r["seq"]) for r in df.orderBy("position", "seq").collect()]
    by_driver = [(r["position"], r["seq"]) for r in sorted(df.collect(), key=_source_order)]

    assert by_driver == by_spark
