"""A stream's batches after the first of a schema are typed in one pass (issue 13).

The first batch of a schema version is decoded in two passes (the envelopes cached, the
``(format, table, schema)`` groups collected, the row images typed); it leaves its plans in the
query's :class:`~cdclake.decode.KnownGroups`. A later batch whose changes all fall in known
groups is typed in the same pass that parses it. One with a new schema version, a new table or
DDL is decoded again in two passes before anything is written. Either way the tables hold what a
two-pass run gives them, and the counts and quarantine reasons are the same.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from builders.msgs import DBZ_FIELDS, ckafka, ckafka_create, debezium
from jobs import count_jobs
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType

from cdclake.apply.results import BatchResult
from cdclake.apply.tables import Target
from cdclake.config import ApplyConfig
from cdclake.decode import KnownGroups, _Plan, one_pass_envelopes
from cdclake.formats.base import ColumnSpec, DecodeOptions
from cdclake.run.runner import apply_raw
from cdclake.sources import raw_from_lines

WITH_COLOR = [*DBZ_FIELDS, {"type": "string", "optional": True, "field": "color"}]


def _rows(spark: SparkSession, root: Path, table: str) -> list[tuple[Any, ...]]:
    df = spark.read.format("delta").load(Target(str(root)).table_path(table))
    cols = [c for c in df.columns if not c.startswith("_cdc_") and c != "id"]
    return sorted((tuple(r) for r in df.select("id", *sorted(cols)).collect()), key=lambda r: r[0])


def _runner(
    spark: SparkSession, root: Path, fmt: str, known: KnownGroups | None, **settings: Any
) -> Callable[[list[str]], BatchResult]:
    config = ApplyConfig(format=fmt, inputs=("in.jsonl",), target=str(root), **settings)
    batches = iter(range(1000))

    def run(lines: list[str]) -> BatchResult:
        i = next(batches)
        return apply_raw(raw_from_lines(spark, lines, f"b{i}.jsonl"), config, known=known)

    return run


def _row(i: int, qty: Any, **more: Any) -> dict[str, Any]:
    return {"id": i, "name": f"n{i}", "qty": qty, **more}


@pytest.mark.parametrize("fmt", ["debezium", "auto"])
def test_batches_of_known_schemas_type_in_one_pass(
    spark: SparkSession, tmp_path: Path, fmt: str
) -> None:
    """Each batch goes to a stream's lake (``known``) and to a lake written in two passes only;
    both must hold the same rows after every batch. With ``auto``, a batch of one format takes
    that format's one pass."""
    streamed, plain = tmp_path / "stream", tmp_path / "plain"
    one = _runner(spark, streamed, fmt, KnownGroups())
    two = _runner(spark, plain, "debezium", None)
    table = "shop.dbo.items"
    old, new = DBZ_FIELDS, WITH_COLOR
    batches: list[tuple[str, list[str], bool]] = [
        (
            "first",
            [debezium(1, _row(1, 1), schema=old), debezium(2, _row(2, 2), schema=old)],
            False,
        ),
        (
            "known schema",
            [
                debezium(3, _row(1, 5), _row(1, 1), op="u", schema=old),
                debezium(4, _row(3, 3), schema=old),
                debezium(2, _row(2, 2), schema=old),  # a replay: ignored
            ],
            True,
        ),
        (
            "a new version",
            [
                debezium(5, _row(4, 4, color="red"), schema=new),
                debezium(6, _row(2, 7), _row(2, 2), op="u", schema=old),
            ],
            False,
        ),
        (
            "both versions known",
            [
                debezium(7, _row(5, 5, color="blue"), schema=new),
                debezium(8, None, _row(3, 3), op="d", schema=old),
            ],
            True,
        ),
    ]
    for name, lines, one_pass in batches:
        got, want = one(lines), two(lines)
        assert got.one_pass is one_pass, name
        assert not want.one_pass
        assert (got.changes, got.applied, got.ignored, got.quarantined) == (
            want.changes,
            want.applied,
            want.ignored,
            want.quarantined,
        ), name
        assert _rows(spark, streamed, table) == _rows(spark, plain, table), name
    assert _rows(spark, streamed, table) == [
        (1, None, "n1", 5),
        (2, None, "n2", 7),
        (4, "red", "n4", 4),
        (5, "blue", "n5", 5),
    ]


def test_one_pass_takes_fewer_jobs(spark: SparkSession, tmp_path: Path) -> None:
    """No job to cache the envelopes and collect the groups, none to collect DDL records: the
    batch is parsed, typed and cached in the summary's one job."""
    first = [debezium(i, _row(i, i), schema=DBZ_FIELDS) for i in range(1, 4)]
    second = [
        debezium(10 + i, _row(i, 10 * i), _row(i, i), op="u", schema=DBZ_FIELDS) for i in (1, 2)
    ]
    counts = {}
    for label, known in (("one", KnownGroups()), ("two", None)):
        run = _runner(spark, tmp_path / label, "debezium", known)
        run(first)
        counts[label], result = count_jobs(spark, f"one-pass-{label}", lambda run=run: run(second))
        assert result.one_pass is (known is not None)
        assert (result.tables["shop.dbo.items"].updated, result.ignored) == (2, 0)
    assert counts["one"] <= counts["two"] - 3, counts


def test_a_bad_value_is_quarantined_with_the_same_reason(
    spark: SparkSession, tmp_path: Path
) -> None:
    run = _runner(spark, tmp_path / "lake", "debezium", KnownGroups())
    run([debezium(1, _row(1, 1), schema=DBZ_FIELDS)])
    result = run(
        [
            debezium(2, _row(2, "many"), schema=DBZ_FIELDS),
            debezium(3, _row(3, 3), schema=DBZ_FIELDS),
        ]
    )
    assert result.one_pass
    assert result.quarantine_reasons == {"column qty: value 'many' does not fit int64": 1}
    assert _rows(spark, tmp_path / "lake", "shop.dbo.items") == [(1, "n1", 1), (3, "n3", 3)]


def _canal(
    sql: str | None, es: int, data: list[dict[str, Any]] | None, mysql: Any, table: str = "users"
) -> str:
    return json.dumps(
        {
            "data": data,
            "database": "shop",
            "es": es,
            "id": es,
            "isDdl": sql is not None,
            "mysqlType": mysql,
            "old": None,
            "pkNames": None if sql else ["id"],
            "sql": sql or "",
            "sqlType": None,
            "table": table,
            "ts": es,
            "type": "ALTER" if sql else "INSERT",
        }
    )


def test_ddl_sends_the_batch_through_two_passes(spark: SparkSession, tmp_path: Path) -> None:
    """A DDL record changes what the tables look like before their rows are typed: its batch
    is decoded in two passes, and the plans are made again."""
    v1 = {"id": "int", "name": "varchar(20)"}
    add = "ALTER TABLE users ADD COLUMN score int DEFAULT 7"
    batches = [
        ("first", [_canal(None, 1, [{"id": "1", "name": "a"}], v1)], False),
        (
            "ddl",
            [_canal(add, 2, None, None), _canal(None, 3, [{"id": "2", "name": "b"}], v1)],
            False,
        ),
        ("after the ddl", [_canal(None, 4, [{"id": "3", "name": "c"}], v1)], True),
    ]
    one = _runner(spark, tmp_path / "stream", "canal", KnownGroups())
    two = _runner(spark, tmp_path / "plain", "canal", None)
    for name, lines, one_pass in batches:
        got, want = one(lines), two(lines)
        assert got.one_pass is one_pass, name
        assert (got.control_by_op, got.applied) == (want.control_by_op, want.applied), name
    assert got.control_by_op == {}
    assert _rows(spark, tmp_path / "stream", "shop.users") == _rows(
        spark, tmp_path / "plain", "shop.users"
    )
    assert [r[:2] for r in _rows(spark, tmp_path / "stream", "shop.users")] == [
        (1, "a"),
        (2, "b"),
        (3, "c"),
    ]


def test_ddl_of_an_excluded_table_still_takes_two_passes(
    spark: SparkSession, tmp_path: Path
) -> None:
    """``--exclude`` leaves a table's rows out, not its DDL (which a two-pass batch applies):
    a DDL record of an excluded table sends the batch through two passes all the same."""
    v1 = {"id": "int", "name": "varchar(20)"}
    create = "CREATE TABLE other (id int PRIMARY KEY, note varchar(10))"
    batches = [
        [_canal(None, 1, [{"id": "1", "name": "a"}], v1)],
        [_canal(create, 2, None, None, "other"), _canal(None, 3, [{"id": "2", "name": "b"}], v1)],
    ]
    lakes = {"stream": KnownGroups(), "plain": None}
    results = {}
    for name, known in lakes.items():
        run = _runner(spark, tmp_path / name, "canal", known, exclude=("shop.other",))
        results[name] = [run(lines) for lines in batches]
    assert [r.one_pass for r in results["stream"]] == [False, False]
    assert [r.excluded for r in results["stream"]] == [r.excluded for r in results["plain"]]
    other = Path(Target(str(tmp_path / "stream")).table_path("shop.other"))
    plain_other = Path(Target(str(tmp_path / "plain")).table_path("shop.other"))
    assert (other / "_delta_log").exists() == (plain_other / "_delta_log").exists()
    assert _rows(spark, tmp_path / "stream", "shop.users") == [(1, "a"), (2, "b")]


def test_a_message_the_one_pass_parse_cannot_read_takes_two_passes(
    spark: SparkSession, tmp_path: Path
) -> None:
    """In one pass a Debezium message's row images are read in its own parse, as the columns
    the plans know. A message that does not parse that way (a row image that is not a JSON
    object, a line that is not JSON) sends the batch through two passes, which quarantine it
    with the reason a two-pass run gives."""
    not_object = json.loads(debezium(3, _row(3, 3), schema=DBZ_FIELDS))
    not_object["value"]["payload"]["after"] = "id=3"
    batch = [
        debezium(2, _row(2, 2), schema=DBZ_FIELDS),
        json.dumps(not_object),
        '{"key": {"id": 4}, "value": {"payload": ',
    ]
    one = _runner(spark, tmp_path / "stream", "debezium", KnownGroups())
    two = _runner(spark, tmp_path / "plain", "debezium", None)
    for lines in ([debezium(1, _row(1, 1), schema=DBZ_FIELDS)], batch):
        got, want = one(lines), two(lines)
    assert not got.one_pass
    assert got.quarantine_reasons == want.quarantine_reasons
    assert sorted(got.quarantine_reasons) == [
        "not valid JSON",
        "row image is not a JSON object: id=3",
    ]
    assert _rows(spark, tmp_path / "stream", "shop.dbo.items") == [(1, "n1", 1), (2, "n2", 2)]
    assert _rows(spark, tmp_path / "plain", "shop.dbo.items") == [(1, "n1", 1), (2, "n2", 2)]


def test_one_pass_reads_debezium_images_in_the_message_parse(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Debezium offers the images parsed with the message (no text made and parsed again);
    a format that does not is typed from the images' text, as before."""
    known = KnownGroups()
    run = _runner(spark, tmp_path / "lake", "debezium", known)
    run([debezium(1, _row(1, 1), schema=DBZ_FIELDS)])
    images = known.images("debezium")
    assert images is not None and images.fieldNames() == ["id", "name", "qty"]
    raw = raw_from_lines(spark, [debezium(2, _row(2, 2), schema=DBZ_FIELDS)])
    env, _ = one_pass_envelopes(raw, "debezium", DecodeOptions(), known)
    assert {"before_image", "after_image", "reparse"} <= set(env.columns)
    env, tagged = one_pass_envelopes(raw, "auto", DecodeOptions(), known)  # Debezium alone
    assert {"before_image", "after_image", "reparse"} <= set(env.columns) and tagged is None
    # without plans for its format, ``auto`` falls back to the envelope of the format it found,
    # not to a second detection: the two jobs are the detection's one-row aggregate
    jobs, (env, tagged) = count_jobs(
        spark,
        "one-pass-auto",
        lambda: one_pass_envelopes(raw, "auto", DecodeOptions(), KnownGroups()),
    )
    assert (jobs, tagged, "after_image" in env.columns) == (2, None, False)
    assert known.images("canal") is None
    env, _ = one_pass_envelopes(raw, "canal", DecodeOptions(), known)
    assert "after_image" not in env.columns


def test_columns_differing_only_in_case_are_read_from_text(spark: SparkSession) -> None:
    """Two tables with columns ``id`` and ``ID``: one struct cannot hold both (a field is
    found whatever its case), so the images are read from their text."""
    specs = {name: [ColumnSpec(name, StringType(), lambda c: c, "string")] for name in ("id", "ID")}
    known = KnownGroups(
        {
            ("debezium", f"db.{name}", "token"): (True, _Plan((name,), spec))
            for name, spec in specs.items()
        }
    )
    assert known.images("debezium") is None
    del known.plans[("debezium", "db.ID", "token")]
    images = known.images("debezium")
    assert images is not None and images.fieldNames() == ["id"]


def test_schemaless_messages_of_a_known_table_type_in_one_pass(
    spark: SparkSession, tmp_path: Path
) -> None:
    """CKafka's rows carry no types: a table's plan is its columns. A later batch whose images
    have no other keys is typed in one pass; an image with a key the plan lacks (a column the
    table does not have yet) takes two passes, which add the column, as a two-pass run does."""
    batches: list[tuple[str, list[str], bool]] = [
        ("first", [ckafka_create(), ckafka(1, _row(1, 1))], False),
        ("known keys", [ckafka(2, _row(1, 5), _row(1, 1)), ckafka(3, _row(2, 2))], True),
        ("a row without qty", [ckafka(4, {"id": 3, "name": "n3"})], True),
        ("a new key", [ckafka(5, _row(4, 4, color="red")), ckafka(6, _row(5, 5))], False),
        ("the new key known", [ckafka(7, _row(5, 6, color="blue"), _row(5, 5))], True),
        # a plan that fails its rows for what their values hold is not kept for later rows
        ("a key in another case", [ckafka(10, {**_row(7, 7), "NAME": "N7"})], False),
        ("after it", [ckafka(11, _row(8, 8))], False),
        ("a bad value", [ckafka(8, _row(6, "many")), ckafka(9, None, _row(2, 2))], True),
    ]
    one = _runner(spark, tmp_path / "stream", "ckafka", KnownGroups())
    two = _runner(spark, tmp_path / "plain", "ckafka", None)
    for name, lines, one_pass in batches:
        got, want = one(lines), two(lines)
        assert got.one_pass is one_pass, name
        assert (got.changes, got.applied, got.quarantine_reasons) == (
            want.changes,
            want.applied,
            want.quarantine_reasons,
        ), name
        assert _rows(spark, tmp_path / "stream", "shop.items") == _rows(
            spark, tmp_path / "plain", "shop.items"
        ), name
    assert got.quarantine_reasons == {"column qty: value 'many' does not fit bigint": 1}
    assert _rows(spark, tmp_path / "stream", "shop.items") == [
        (1, None, "n1", 5),
        (3, None, "n3", None),
        (4, "red", "n4", 4),
        (5, "blue", "n5", 6),
        (8, None, "n8", 8),
    ]


def test_a_known_schema_kafka_batch_parses_each_message_once(
    spark: SparkSession, tmp_path: Path
) -> None:
    """A stream's batch of a known schema, read from Kafka, holds one ``from_json`` of the
    message in its optimized plan, and no other outside the branch of flattened rows (whose
    field list is read from the text again: they are the only rows that take that branch). A
    filter pushed below the parse would show here as more parses (issue 36 saw 34)."""
    from cdclake.decode import configured_keys, type_known
    from cdclake.run.kafka_tools import source_rows
    from cdclake.sources import from_kafka_df

    known = KnownGroups()
    run = _runner(spark, tmp_path / "lake", "debezium", known)
    run([debezium(1, _row(1, 1), schema=DBZ_FIELDS)])
    lines = [debezium(n, _row(n, n), schema=DBZ_FIELDS) for n in (2, 3)]
    kafka = source_rows(spark, lines, "t")  # as Spark's Kafka source delivers them
    env, _ = one_pass_envelopes(from_kafka_df(kafka), "debezium", DecodeOptions(), known)
    changes = type_known(configured_keys(env, DecodeOptions()), known)
    plan = changes._jdf.queryExecution().optimizedPlan().toString()
    parses = plan.split("from_json(")[1:]
    whole = [p for p in parses if p.startswith("StructField(schema,")]
    flat = [p for p in parses if p.startswith("ArrayType(StringType,true), get_json_object(")]
    assert (len(parses), len(whole), len(flat)) == (2, 1, 1), plan
    assert "$.schema.fields" in flat[0][:120]
    typed = changes.select("error", F.expr("variant_get(after, '$.id', 'int')").alias("id"))
    assert sorted((r["id"], r["error"]) for r in typed.collect()) == [(2, None), (3, None)]


def test_a_batch_of_one_plan_carries_its_images_as_structs(
    spark: SparkSession, tmp_path: Path
) -> None:
    """With ``struct_images`` (what a run asks for, unless consistent), a one-pass batch whose
    rows all take one plan carries ``before``/``after`` as structs of the table's types: no
    VARIANT is built per row only to be cast back at the write. Two plans (here the table's two
    schema versions): VARIANTs, as :data:`~cdclake.model.CHANGE_SCHEMA` says. The apply reads
    a struct image by name."""
    from pyspark.sql.types import LongType, StructField, StructType, VariantType

    from cdclake.apply.batch import as_row
    from cdclake.decode import configured_keys, type_known

    known = KnownGroups()
    run = _runner(spark, tmp_path / "lake", "debezium", known)
    run([debezium(1, _row(1, 1), schema=DBZ_FIELDS)])
    lines = [
        debezium(2, _row(2, 2), schema=DBZ_FIELDS),
        debezium(3, _row(1, 5), _row(1, 1), op="u", schema=DBZ_FIELDS),
    ]

    def typed(struct_images: bool) -> Any:
        env, _ = one_pass_envelopes(
            raw_from_lines(spark, lines), "debezium", DecodeOptions(), known
        )
        return type_known(configured_keys(env, DecodeOptions()), known, struct_images)

    structs, variants = typed(True), typed(False)
    after = structs.schema["after"].dataType
    assert isinstance(after, StructType) and after.fieldNames() == ["id", "name", "qty"]
    assert isinstance(variants.schema["after"].dataType, VariantType)
    got = structs.orderBy("seq").select("after.id", "after.qty", "before.qty").collect()
    assert [tuple(r) for r in got] == [(2, 2, None), (1, 5, 1)]
    # read by name, not by position: a table whose columns come in another order, and one more
    wanted = StructType(
        [StructField("qty", LongType()), StructField("extra", LongType()), after["id"]]
    )
    rows = structs.orderBy("seq").select(as_row(structs, "after", wanted).alias("a")).collect()
    assert [tuple(r["a"]) for r in rows] == [(2, None, 2), (5, None, 1)]
    # a batch of the table's two schema versions: two plans, VARIANT images
    lines = [
        debezium(5, _row(5, 5, color="blue"), schema=WITH_COLOR),
        debezium(6, _row(6, 6), schema=DBZ_FIELDS),
    ]
    run(lines)
    variants = typed(True)
    assert isinstance(variants.schema["after"].dataType, VariantType)
    got = variants.orderBy("seq").select(
        "error",
        F.expr("variant_get(after, '$.id', 'int')"),
        F.expr("variant_get(after, '$.color', 'string')"),
    )
    assert [tuple(r) for r in got.collect()] == [(None, 5, "blue"), (None, 6, None)]
