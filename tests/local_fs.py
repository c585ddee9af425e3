"""Hadoop's local file system without a process per file, for the JVMs the tests start.

pip's pyspark ships no Hadoop native library, so Hadoop's ``RawLocalFileSystem`` runs ``chmod``
for every file and folder it creates and ``readlink`` for every rename through FileContext (each
Delta commit): a JFR recording of the test session saw 1,619 such processes in 90 s of small
batches, about 90 for two batches of one table, each 5-8 ms of a JVM's fork and exec.
``tests/jvm/io/cdclake/hadoop`` subclasses Hadoop's classes to do the same two calls with
``java.nio``; files, folders and permissions come out as before. Users' installations with
Hadoop's native library (``libhadoop.so``) avoid the processes the same way, through JNI.

``python tests/jvm_archive.py`` (``make test``) compiles them once per JDK and Hadoop into
``$CDCLAKE_CACHE/local-fs/<key>/local-fs.jar``; :func:`settings` names it for the drivers and
executors the tests start, and is empty until it is built (the tests then run as before, slower).
"""

from __future__ import annotations

import functools
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

SOURCES = Path(__file__).resolve().parent / "jvm"


def _java(tool: str) -> str:
    return str(Path(os.environ.get("JAVA_HOME", "/usr")) / "bin" / tool)


@functools.cache
def _hadoop_jars() -> list[Path]:
    import pyspark

    return sorted((Path(pyspark.__file__).parent / "jars").glob("hadoop-client-*.jar"))


@functools.cache
def jar() -> Path:
    """Where the compiled classes live for these sources, this JDK and this Hadoop."""
    java = subprocess.run([_java("java"), "-version"], capture_output=True, text=True).stderr
    key = hashlib.sha256(java.encode())
    for path in [*sorted(SOURCES.rglob("*.java")), *_hadoop_jars()]:
        key.update(path.name.encode())
        if path.suffix == ".java":
            key.update(path.read_bytes())
    cache = Path(os.environ.get("CDCLAKE_CACHE", Path.home() / ".cache" / "cdclake"))
    return cache / "local-fs" / key.hexdigest()[:16] / "local-fs.jar"


def settings() -> dict[str, str]:
    """The Spark settings that put the classes in use: their jar on the driver's and the
    executors' class path (the tests' cluster runs on this machine), Hadoop's two names for the
    ``file:`` scheme bound to them. Empty when the jar has not been built."""
    path = jar()
    if not path.is_file():
        return {}
    return {
        "spark.driver.extraClassPath": str(path),
        "spark.executor.extraClassPath": str(path),
        "spark.hadoop.fs.file.impl": "io.cdclake.hadoop.NioLocalFileSystem",
        "spark.hadoop.fs.AbstractFileSystem.file.impl": "io.cdclake.hadoop.NioLocalFs",
    }


def build() -> Path:
    """Compile the sources into :func:`jar` unless it is there (a few seconds, once per key)."""
    path = jar()
    if path.is_file():
        return path
    classpath = os.pathsep.join(str(p) for p in _hadoop_jars())
    sources = [str(p) for p in sorted(SOURCES.rglob("*.java"))]
    with tempfile.TemporaryDirectory() as out:
        cmd = [_java("javac"), "--release", "17", "-cp", classpath, "-d", out, *sources]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            sys.exit(f"local-fs: javac failed:\n{done.stdout}{done.stderr}")
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}")
        with zipfile.ZipFile(partial, "w") as z:
            for f in sorted(Path(out).rglob("*.class")):
                z.write(f, f.relative_to(out).as_posix())
        partial.replace(path)
    print(f"local-fs: {path}")
    return path


if __name__ == "__main__":
    build()
