"""Where the CPU goes: Java Flight Recorder samples of the Spark JVM, by category.

:func:`record` samples the session's JVM while a block runs (``jcmd <pid> JFR.start``, the JDK's
``profile`` settings: a Java stack every 10 ms per running thread); :func:`categorize` reads the
recording (``jfr print``) and puts each sample in one category. In local mode the driver and
the executors share that JVM: a sample of a task thread is executor work, any other is the
driver's (planning, Delta's log, the scheduler). On a cluster only the driver is sampled.

A sample goes to the first of these that holds:

1. a JSON value kept as text (``copyCurrentStructure``: a ``STRING`` field of ``from_json``
   given an object or array), ``json_object_keys``, ``get_json_object``: found anywhere in
   the stack, since the parse they run would otherwise count as parsing;
2. else the category of the frame nearest the top of the stack (what the thread was doing
   itself), from :data:`EXECUTOR` or :data:`DRIVER`.

A development tool (``python -m bench.profile --cpu``); recording adds overhead, so times
measured with it are not comparable to ``bench/run.sh``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from pyspark.sql import SparkSession

ANYWHERE: list[tuple[str, str]] = [
    ("JSON value kept as text", "JsonGenerator.copyCurrentStructure"),
    ("json_object_keys", "JsonExpressionUtils.jsonObjectKeys"),
    ("get_json_object", "GetJsonObject"),
]
EXECUTOR: list[tuple[str, str]] = [
    ("JSON parse (from_json)", r"com\.fasterxml\.jackson|catalyst\.json\.JacksonParser"),
    ("line reading", r"LineReader|HadoopFileLinesReader|LineRecordReader|TextFileFormat"),
    ("Parquet", r"parquet"),
    ("cache (columnar build / read)", r"sql\.execution\.columnar\.(compression|\w*Column)"),
    ("sort", r"Sorter|SortExec|RadixSort|PrefixComparator"),
    ("shuffle", r"\.shuffle\.|ShuffleWriter|serializer\.|\.io\.CompressionCodec|lz4|zstd"),
    ("aggregate", r"execution\.aggregate\.|AggregationIterator|expressions\.aggregate\."),
    ("Delta", r"io\.delta\.|sql\.delta\."),
    ("hashing", r"XXH64|Murmur3|Hashing\.|hash\.\w*Hash"),
    ("string functions", r"UTF8String\.|regex\.|NumberConverter|StringUtils"),
    ("generated code (projections, filters)", r"GeneratedClass"),
]
DRIVER: list[tuple[str, str]] = [
    ("code generation (Janino)", r"janino|codehaus|CodeGenerator"),
    ("Delta log and commits", r"io\.delta\.|sql\.delta\."),
    ("query planning", r"catalyst\.|sql\.execution\.|QueryExecution"),
    ("scheduler", r"\.scheduler\."),
    ("Python bridge (py4j)", r"py4j\."),
]
OTHER = "other"
_FRAME = re.compile(r"^\s+([\w$.<>]+)\(.*\)(\s+line:.*)?$")


@dataclass
class Profile:
    """Samples per category, for executor task threads and for the driver's other threads."""

    executor: Counter[str] = field(default_factory=Counter)
    driver: Counter[str] = field(default_factory=Counter)

    @property
    def samples(self) -> int:
        return sum(self.executor.values()) + sum(self.driver.values())


def jcmd() -> str:
    """The JDK's ``jcmd`` (on the PATH, else next to ``$JAVA_HOME/bin/java``)."""
    found = shutil.which("jcmd") or os.path.join(os.environ.get("JAVA_HOME", ""), "bin", "jcmd")
    if not os.path.exists(found):
        raise RuntimeError("--cpu needs the JDK's jcmd and jfr (not found on the PATH)")
    return found


@contextmanager
def record(spark: SparkSession, out: Path) -> Iterator[None]:
    """Sample the session's JVM while the block runs; the recording goes to ``out``."""
    pid = str(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())  # type: ignore[union-attr]
    name = f"cdclake-{out.stem}"

    def run(*args: str) -> None:
        subprocess.run([jcmd(), pid, *args], check=True, capture_output=True)

    run("JFR.start", f"name={name}", "settings=profile")
    try:
        yield
    finally:
        run("JFR.dump", f"name={name}", f"filename={out}")
        run("JFR.stop", f"name={name}")


def samples(text: str) -> Iterator[tuple[str, list[str]]]:
    """(thread name, frames from the top of the stack) of each sample in ``jfr print`` text."""
    for event in text.split("jdk.ExecutionSample {")[1:]:
        thread = re.search(r'sampledThread = "([^"]*)"', event)
        frames = [m.group(1) for line in event.splitlines() if (m := _FRAME.match(line))]
        if thread and frames:
            yield thread.group(1), frames


def category(frames: list[str], executor: bool) -> str:
    """The category of one sample's stack (see the module doc)."""
    for name, needle in ANYWHERE:
        if executor and any(needle in f for f in frames):
            return name
    rules = [(name, re.compile(rx)) for name, rx in (EXECUTOR if executor else DRIVER)]
    for frame in frames:
        for name, rx in rules:
            if rx.search(frame):
                return name
    return OTHER


def categorize(path: Path, depth: int = 96) -> Profile:
    """The samples of a recording, by category."""
    jfr = shutil.which("jfr") or str(Path(jcmd()).with_name("jfr"))
    text = subprocess.run(
        [jfr, "print", "--events", "jdk.ExecutionSample", "--stack-depth", str(depth), str(path)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return profile_of(text)


def profile_of(text: str) -> Profile:
    """:func:`categorize` on ``jfr print`` text."""
    prof = Profile()
    for thread, frames in samples(text):
        executor = thread.startswith("Executor task")
        (prof.executor if executor else prof.driver)[category(frames, executor)] += 1
    return prof
