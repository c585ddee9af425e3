"""Every line of every input file gets its file and its 1-based line number, however Spark
splits the files, through the literal map of split offsets and through the broadcast join."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession

from cdclake.sources import number_lines, text_with_files

lines = st.text(alphabet="ab {}:é", max_size=40).filter(lambda s: "\r" not in s)
files = st.lists(st.lists(lines, min_size=1, max_size=25), min_size=1, max_size=4)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(contents=files, split_bytes=st.integers(min_value=8, max_value=300))
def test_line_numbers_survive_any_split(
    spark: SparkSession, contents: list[list[str]], split_bytes: int
) -> None:
    with tempfile.TemporaryDirectory() as d:
        expected = set()
        for i, content in enumerate(contents):
            path = Path(d) / f"part {i}.jsonl"  # a space: the URI is escaped
            path.write_text("\n".join(content) + "\n", encoding="utf-8")
            uri = path.as_uri().replace("file:///", "file:/").replace(" ", "%20")
            expected |= {(uri, n, line) for n, line in enumerate(content, start=1)}
        spark.conf.set("spark.sql.files.maxPartitionBytes", str(split_bytes))
        spark.conf.set("spark.sql.files.openCostInBytes", "1")
        try:
            text = text_with_files(spark.read.text(d))
            for literal_splits in (1000, 0):  # the literal map, then the broadcast join
                got = {
                    (r["lineage"]["source"], r["lineage"]["offset"], r["line"])
                    for r in number_lines(text, literal_splits)[0].collect()
                }
                assert got == expected
        finally:
            spark.conf.unset("spark.sql.files.maxPartitionBytes")
            spark.conf.unset("spark.sql.files.openCostInBytes")
