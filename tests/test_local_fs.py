"""The JVMs the tests start use tests/local_fs.py's local file system, which writes, renames
and reports links as Hadoop's own does."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import local_fs
import pytest
from py4j.protocol import Py4JJavaError
from pyspark.sql import SparkSession


def _hadoop(spark: SparkSession) -> tuple[Any, Any]:
    jvm: Any = spark.sparkContext._jvm
    return jvm, spark.sparkContext._jsc.hadoopConfiguration()  # type: ignore[union-attr]


def test_the_test_session_uses_the_local_file_system_without_processes(
    spark: SparkSession,
) -> None:
    assert local_fs.jar().is_file(), "run `python tests/jvm_archive.py` (make test does)"
    jvm, conf = _hadoop(spark)
    local = jvm.org.apache.hadoop.fs.FileSystem.getLocal(conf)
    assert local.getRaw().getClass().getName() == "io.cdclake.hadoop.NioRawLocalFileSystem"
    context = jvm.org.apache.hadoop.fs.FileContext.getLocalFSFileContext(conf)
    assert context.getDefaultFileSystem().getClass().getName() == "io.cdclake.hadoop.NioLocalFs"


def test_files_folders_renames_and_links_come_out_as_hadoops_own(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Permissions after the umask, FileContext's rename without overwrite (Delta's commit), and
    link statuses the same as Hadoop's own class gives."""
    jvm, conf = _hadoop(spark)
    hpath = jvm.org.apache.hadoop.fs.Path
    local = jvm.org.apache.hadoop.fs.FileSystem.getLocal(conf)
    out = local.create(hpath(f"file:{tmp_path}/a/b/part.txt"), False)
    out.write(b"x")
    out.close()
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE((tmp_path / "a/b/part.txt").stat().st_mode) == 0o666 & ~umask
    assert stat.S_IMODE((tmp_path / "a/b").stat().st_mode) == 0o777 & ~umask

    context = jvm.org.apache.hadoop.fs.FileContext.getLocalFSFileContext(conf)
    renames = spark.sparkContext._gateway.new_array(  # type: ignore[union-attr]
        jvm.org.apache.hadoop.fs.Options.Rename, 1
    )
    renames[0] = jvm.org.apache.hadoop.fs.Options.Rename.NONE
    context.rename(hpath(f"file:{tmp_path}/a/b/part.txt"), hpath(f"file:{tmp_path}/a/c"), renames)
    assert (tmp_path / "a/c").read_text() == "x"
    (tmp_path / "a/d").write_text("y")
    with pytest.raises(Py4JJavaError, match="FileAlreadyExistsException"):
        context.rename(hpath(f"file:{tmp_path}/a/c"), hpath(f"file:{tmp_path}/a/d"), renames)
    assert (tmp_path / "a/d").read_text() == "y"

    (tmp_path / "link").symlink_to(tmp_path / "a/c")
    hadoops = jvm.org.apache.hadoop.fs.RawLocalFileSystem()
    hadoops.initialize(jvm.java.net.URI("file:///"), conf)
    for name in ("link", "a/c", "a"):
        p = hpath(f"file:{tmp_path}/{name}")
        ours, theirs = local.getRaw().getFileLinkStatus(p), hadoops.getFileLinkStatus(p)
        assert ours.isSymlink() == theirs.isSymlink(), name
        assert (ours.getLen(), ours.isDirectory()) == (theirs.getLen(), theirs.isDirectory())
        assert ours.getPath().toString() == theirs.getPath().toString(), name
