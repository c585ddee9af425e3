"""Locations of tables, checkpoints and inputs: URIs that Hadoop's file systems understand.

A location with a scheme (``s3a://bucket/lake``, ``abfss://…``, ``file:/data/x``) is used as it
is; one without is a local path, made absolute against the working directory (so a driver's
relative path means the same on every executor). Nothing here uses ``pathlib`` on a URI: file
system work on a location goes through the session's Hadoop ``FileSystem``.

>>> join("s3a://bucket/lake/", "orders")
's3a://bucket/lake/orders'
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cdclake.jvm import HADOOP_PATH, jclass

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# Two or more characters, so that a Windows drive letter (C:\…) is not taken for a scheme.
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:")


def has_scheme(location: str) -> bool:
    """Whether ``location`` is a URI (``s3a://…``, ``file:/…``) rather than a plain path."""
    return bool(_SCHEME.match(location))


def to_uri(location: str) -> str:
    """A URI as it is; a plain path made absolute (kept plain: ``/work/lake``)."""
    return location if has_scheme(location) else str(Path(location).absolute())


def is_local(location: str) -> bool:
    """A plain path or a ``file:`` URI."""
    return not has_scheme(location) or location.startswith("file:")


def local_path(location: str) -> Path:
    """The local path of a plain path or ``file:`` URI (``file:///x``, ``file:/x``)."""
    return Path(re.sub(r"^file:(//)?", "", location))


def join(root: str, *parts: str) -> str:
    """``root`` and ``parts`` joined by ``/`` (a URI's ``//`` after the scheme kept)."""
    return "/".join([root.rstrip("/"), *parts])


def _fs(spark: SparkSession, location: str) -> tuple[Any, Any]:
    jvm: Any = spark._jvm
    path = jclass(jvm, HADOOP_PATH)(location)
    conf = spark._jsc.hadoopConfiguration()
    return path.getFileSystem(conf), path


def exists(spark: SparkSession, location: str) -> bool:
    """Whether a file or folder is at ``location``."""
    fs, path = _fs(spark, location)
    return bool(fs.exists(path))


def is_dir(spark: SparkSession, location: str) -> bool:
    """Whether ``location`` is a folder (on object storage: a prefix with objects under it)."""
    fs, path = _fs(spark, location)
    return bool(fs.exists(path) and fs.getFileStatus(path).isDirectory())


def delete(spark: SparkSession, location: str) -> None:
    """Delete a folder and everything under it (nothing when it is not there)."""
    fs, path = _fs(spark, location)
    fs.delete(path, True)


def rename(spark: SparkSession, source: str, target: str) -> None:
    """Move a folder (on object storage a copy and delete of each object)."""
    fs, path = _fs(spark, source)
    jvm: Any = spark._jvm
    if not fs.rename(path, jclass(jvm, HADOOP_PATH)(target)):
        raise OSError(f"could not move {source} to {target}")


def read_text(spark: SparkSession, location: str) -> str | None:
    """A small file's text (UTF-8), read on the driver; None when it is not there."""
    fs, path = _fs(spark, location)
    if not fs.exists(path):
        return None
    jvm: Any = spark._jvm
    stream = fs.open(path)
    try:
        return str(jclass(jvm, "org.apache.commons.io.IOUtils").toString(stream, "UTF-8"))
    finally:
        stream.close()


def entry_names(spark: SparkSession, location: str) -> list[str] | None:
    """The names of everything in a folder, hidden files included, in name order; None when
    nothing is there (a local file system's checksum files stay hidden, as Hadoop lists it)."""
    fs, path = _fs(spark, location)
    if not fs.exists(path):
        return None
    return sorted(str(s.getPath().getName()) for s in fs.listStatus(path))


def list_visible_files(spark: SparkSession, location: str) -> list[str] | None:
    """The files of a folder (not starting with ``.`` or ``_``) in name order; ``[location]``
    for a file; None when nothing is there."""
    fs, path = _fs(spark, location)
    if not fs.exists(path):
        return None
    status = fs.getFileStatus(path)
    if not status.isDirectory():
        return [str(status.getPath().toString())]
    names = [
        str(s.getPath().toString())
        for s in fs.listStatus(path)
        if s.isFile() and not s.getPath().getName().startswith((".", "_"))
    ]
    return sorted(names)


@dataclass(frozen=True)
class S3Endpoint:
    """Where object storage is, as the environment says, for every reader and writer of the lake:
    ``CDCLAKE_S3_ENDPOINT`` (an S3-compatible server such as MinIO or s3proxy; None for AWS
    itself) and ``AWS_REGION``. cdclake's Spark sessions turn it into S3A settings
    (:func:`cdclake._spark.s3a_options`), its Spark-free readers into delta-rs options
    (:func:`cdclake.delta_rs.storage_options`): the two must agree."""

    url: str | None
    region: str

    @property
    def tls(self) -> bool:
        return self.url is None or self.url.startswith("https://")


def s3_endpoint() -> S3Endpoint:
    """The :class:`S3Endpoint` the environment names now.

    >>> s3_endpoint().region  # doctest: +SKIP
    'us-east-1'
    """
    return S3Endpoint(
        os.environ.get("CDCLAKE_S3_ENDPOINT") or None, os.environ.get("AWS_REGION", "us-east-1")
    )
