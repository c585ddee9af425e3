"""JVM classes through py4j, each found in one lookup.

``jvm.org.apache.hadoop.fs.Path`` makes py4j ask the JVM about ``org``, then ``org.apache``,
``org.apache.hadoop`` and ``org.apache.hadoop.fs`` before the class: each package is a class
lookup that misses, and a miss searches every jar on the class path, again under each of the
session's star imports (about 0.5 ms a package here; a ``Path`` made that way took 2.0 ms, by
its full name 0.25 ms). The full name is one lookup, and it finds the class.
"""

from __future__ import annotations

from typing import Any

HADOOP_PATH = "org.apache.hadoop.fs.Path"
"""Hadoop's ``Path``: every location cdclake hands to a ``FileSystem``."""


def jclass(jvm: Any, name: str) -> Any:
    """The class or Scala object ``name`` (fully qualified: ``"scala.collection.immutable.Nil$"``)
    of the py4j view ``jvm`` (``spark._jvm``)."""
    return getattr(jvm, name)
