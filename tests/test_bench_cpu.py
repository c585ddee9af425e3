"""bench.cpu puts each JFR sample in one category (the profile tool's reading of `jfr print`)."""

from __future__ import annotations

from bench import cpu


def _sample(thread: str, *frames: str) -> str:
    lines = "\n".join(f"    {f} line: 12" for f in frames)
    return (
        "jdk.ExecutionSample {\n  startTime = 19:03:52.366\n"
        f'  sampledThread = "{thread}" (javaThreadId = 18)\n'
        '  state = "STATE_RUNNABLE"\n'
        f"  stackTrace = [\n{lines}\n    ...\n  ]\n}}\n\n"
    )


TASK = "Executor task launch worker for task 1.0 in stage 3.0 (TID 7)"
PARSE = "com.fasterxml.jackson.core.json.ReaderBasedJsonParser.nextToken()"
FROM_JSON = "org.apache.spark.sql.catalyst.json.JacksonParser.parse(Object, Function2, Function1)"
COPY = "com.fasterxml.jackson.core.JsonGenerator.copyCurrentStructure(JsonParser)"
GENERATED = (
    "org.apache.spark.sql.catalyst.expressions.GeneratedClass$SpecificUnsafeProjection"
    ".apply(InternalRow)"
)
SORT = "org.apache.spark.util.collection.unsafe.sort.UnsafeExternalSorter.insertRecord(Object)"


def test_samples_are_categorized_by_thread_and_nearest_frame() -> None:
    text = "".join(
        [
            # the parse a STRING field runs to keep an object as text counts as that
            _sample(TASK, PARSE, COPY, FROM_JSON, GENERATED),
            _sample(TASK, PARSE, FROM_JSON, GENERATED),
            _sample(TASK, PARSE, FROM_JSON, GENERATED),
            # the frame nearest the top decides: a sort fed by generated code is the sort
            _sample(TASK, SORT, GENERATED),
            _sample(TASK, "java.lang.Object.hashCode()"),
            _sample("Thread-4", "org.apache.spark.sql.catalyst.rules.RuleExecutor.execute()"),
        ]
    )

    prof = cpu.profile_of(text)

    assert dict(prof.executor) == {
        "JSON value kept as text": 1,
        "JSON parse (from_json)": 2,
        "sort": 1,
        cpu.OTHER: 1,
    }
    assert dict(prof.driver) == {"query planning": 1}
    assert prof.samples == 6
