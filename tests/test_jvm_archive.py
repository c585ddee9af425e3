"""The drivers the tests start map the class-data archive of tests/jvm_archive.py."""

from __future__ import annotations

from pathlib import Path

import jvm_archive
from pyspark.sql import SparkSession


def test_the_test_session_maps_the_class_data_archive(spark: SparkSession) -> None:
    """A JVM that cannot use the archive (a file in the empty conf folder, another class path)
    loads its classes from the jars without a word: this session, started with the environment
    every driver of the tests gets, shows that the archive is in use."""
    archive = jvm_archive.folder() / "driver.jsa"
    assert archive.is_file(), f"no {archive}: run `python tests/jvm_archive.py` (make test does)"
    assert not any((jvm_archive.folder() / "conf").iterdir())
    pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()  # type: ignore[union-attr]
    maps = Path(f"/proc/{pid}/maps").read_text()
    assert str(archive) in maps, f"the driver (pid {pid}) did not map {archive}"
