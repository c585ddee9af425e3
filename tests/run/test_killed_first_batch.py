"""A query killed while Spark wrote its first batch's offsets starts again on the same
checkpoint (the kill -9 test met it: Spark refused the checkpoint for good)."""

from __future__ import annotations

import uuid
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession

from cdclake.run import queries


def _leftover_of_a_kill(chk: Path) -> str:
    """What a kill -9 between writing and renaming ``offsets/0`` leaves: Spark's hidden temporary
    file and the checksum the local file system writes beside it (and hides from listings)."""
    offsets = chk / "offsets"
    offsets.mkdir(parents=True)
    temp = f".0.{uuid.uuid4()}.tmp"
    (offsets / temp).write_text("v1\n")
    (offsets / f".{temp}.crc").write_bytes(b"crc")
    return temp


def _run(spark: SparkSession, source: Path, chk: Path) -> list[int]:
    seen: list[int] = []

    def each(batch: DataFrame, _batch_id: int) -> None:
        seen.extend(r["n"] for r in batch.collect())

    stream = spark.readStream.schema("n INT").json(str(source))
    queries.start(stream, each, str(chk), available_now=True).awaitTermination(120)
    return sorted(seen)


def test_a_checkpoint_killed_in_its_first_offset_write_starts_and_reads_everything(
    spark: SparkSession, tmp_path: Path
) -> None:
    source = tmp_path / "in"
    source.mkdir()
    (source / "a.json").write_text('{"n": 1}\n{"n": 2}\n')
    chk = tmp_path / "chk"
    left = _leftover_of_a_kill(chk)

    assert queries.clear_a_killed_first_batch(spark, str(chk)) == [left]
    assert list((chk / "offsets").iterdir()) == []  # the checksum went with its file
    _leftover_of_a_kill(chk / "again")
    assert _run(spark, source, chk / "again") == [1, 2]
    assert (chk / "again" / "offsets" / "0").is_file()


def test_a_checkpoint_with_batches_or_other_files_is_left_to_spark(
    spark: SparkSession, tmp_path: Path
) -> None:
    chk = tmp_path / "chk"
    offsets = chk / "offsets"
    offsets.mkdir(parents=True)
    (offsets / "0").write_text("v1\n")
    (offsets / ".1.x.tmp").write_text("v1\n")  # a later batch's unfinished write: Spark's to judge
    assert queries.clear_a_killed_first_batch(spark, str(chk)) == []
    assert sorted(p.name for p in offsets.iterdir()) == [".1.x.tmp", "0"]
    (offsets / "0").unlink()
    (offsets / "notes.txt").write_text("mine")
    assert queries.clear_a_killed_first_batch(spark, str(chk)) == []
    assert queries.clear_a_killed_first_batch(spark, str(tmp_path / "nothing")) == []
