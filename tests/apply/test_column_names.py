"""Column names Delta refuses without column mapping, and names no table can hold (issue 40).

MySQL takes any character in a backquoted column name; Paimon's MySQL sync tests sync a table
with a column named ``$% ^,& *(``. cdclake keeps such names exactly: a table that needs it gets
Delta column mapping (``delta.columnMapping.mode = 'name'``), and Spark and delta-rs read the
source's names. A table whose names no table can hold (two names equal ignoring case, an empty
name, names of cdclake's own columns) has its changes quarantined with the reason, while the
other tables of the batch are written.

The canal messages below are what Canal writes for the SQL in each test's comment (values as
text, ``old`` holding the changed columns), as Paimon's Kafka canal tests feed them.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from builders.dbz import INT32, STRING, event, fields
from hypothesis import given
from hypothesis import strategies as st
from pyspark.sql import SparkSession
from pyspark.sql.types import IntegerType, StringType, StructField, StructType
from typer.testing import CliRunner

from cdclake import names
from cdclake.apply.tables import Target, quote, table_properties
from cdclake.cli import app
from cdclake.errors import ConfigError

ODD = "$% ^,& *("
SPACE, DOT, TICK = "a b", "x.y", "q`q"
ODD_TABLE, PLAIN_TABLE = "shop.odd_names", "shop.plain"
COLUMNS = ["_id", "v1", ODD, SPACE, DOT, TICK]
MYSQL = {
    "_id": "INT",
    "v1": "VARCHAR(10)",
    ODD: "VARCHAR(10)",
    SPACE: "INT",
    DOT: "INT",
    TICK: "VARCHAR(10)",
}
ES = 1_700_000_000_000  # the binlog time of message n is ES + n (ms)
MAPPING = "delta.columnMapping.mode"


def canal(
    n: int,
    kind: str,
    data: list[dict[str, Any]],
    old: list[dict[str, Any]] | None = None,
    *,
    table: str = "odd_names",
    mysql: dict[str, str] | None = None,
    pk: list[str] | None = None,
) -> str:
    """A canal flat message of ``kind`` (INSERT, UPDATE, DELETE) at binlog time ES + n."""

    def text(r: dict[str, Any]) -> dict[str, str | None]:
        return {k: None if v is None else str(v) for k, v in r.items()}

    return json.dumps(
        {
            "data": [text(r) for r in data],
            "database": "shop",
            "es": ES + n,
            "id": n,
            "isDdl": False,
            "mysqlType": mysql or MYSQL,
            "old": [text(r) for r in old] if old else None,
            "pkNames": ["_id"] if pk is None else pk or None,
            "sql": "",
            "sqlType": None,
            "table": table,
            "ts": ES + n,
            "type": kind,
        }
    )


def canal_ddl(n: int, sql: str, table: str = "schema_evolution_multiple") -> str:
    """A canal DDL message (``isDdl``) of ``sql`` at binlog time ES + n."""
    return json.dumps(
        {
            "data": None,
            "database": "shop",
            "es": ES + n,
            "id": n,
            "isDdl": True,
            "mysqlType": None,
            "old": None,
            "pkNames": None,
            "sql": sql,
            "sqlType": None,
            "table": table,
            "ts": ES + n,
            "type": "ALTER" if sql.startswith("ALTER") else "CREATE",
        }
    )


def row(*values: Any, columns: list[str] = COLUMNS) -> dict[str, Any]:
    return dict(zip(columns, values, strict=True))


def path_of(lake: Any, table: str) -> str:
    return Target(str(lake.root)).table_path(table)


def spark_rows(lake: Any, table: str, columns: list[str]) -> list[tuple[Any, ...]]:
    """The table's rows read by Spark, each column selected by its exact name."""
    df = lake.df(table).select(*[quote(c) for c in columns])
    assert df.columns == columns
    return sorted((tuple(r) for r in df.collect()), key=repr)


def delta_rs_rows(lake: Any, table: str, columns: list[str]) -> list[tuple[Any, ...]]:
    """The table's rows read by delta-rs (the ``deltalake`` package), by exact name.

    ``DeltaTable.scan()`` reads column-mapped tables; ``to_pyarrow_table()`` does not in
    deltalake 1.6 (every column of a table with only reader version 2 comes back null,
    delta-io/delta-rs#885), which is why a table gets column mapping only when it needs it.
    """
    import pyarrow as pa
    from deltalake import DeltaTable

    data = pa.table(DeltaTable(path_of(lake, table)).scan())
    assert set(columns) <= set(data.column_names)
    picked = data.select(columns).to_pylist()
    return sorted((tuple(r[c] for c in columns) for r in picked), key=repr)


def mapping_mode(lake: Any, table: str) -> str:
    return table_properties(lake.spark, path_of(lake, table)).get(MAPPING, "none")


# CREATE TABLE odd_names (_id INT, v1 VARCHAR(10), `$% ^,& *(` VARCHAR(10), `a b` INT,
#                         `x.y` INT, `q``q` VARCHAR(10), PRIMARY KEY (_id));
# -- batch 1
# INSERT INTO odd_names VALUES (1, 'one', 'test_1', 10, 100, 'p'),
#                              (2, 'two', 'test_2', 20, 200, 'q');
# INSERT INTO plain VALUES (1, 'x');
# -- batch 2
# UPDATE odd_names SET `$% ^,& *(` = 'test_1b', `a b` = 11 WHERE _id = 1;
# DELETE FROM odd_names WHERE _id = 2;
# INSERT INTO odd_names VALUES (3, 'three', NULL, 30, 300, 'r');
#
# +I[1, one, test_1, 10, 100, p]
# +I[2, two, test_2, 20, 200, q]
# -U[1, one, test_1, 10, 100, p]   +U[1, one, test_1b, 11, 100, p]
# -D[2, two, test_2, 20, 200, q]
# +I[3, three, NULL, 30, 300, r]
ONE = row(1, "one", "test_1", 10, 100, "p")
TWO = row(2, "two", "test_2", 20, 200, "q")
ONE_B = row(1, "one", "test_1b", 11, 100, "p")
THREE = row(3, "three", None, 30, 300, "r")
BATCH_1 = [
    canal(1, "INSERT", [ONE, TWO]),
    canal(
        2,
        "INSERT",
        [{"id": 1, "name": "x"}],
        table="plain",
        mysql={"id": "INT", "name": "VARCHAR(5)"},
        pk=["id"],
    ),
]
BATCH_2 = [
    canal(3, "UPDATE", [ONE_B], old=[{ODD: "test_1", SPACE: 10}]),
    canal(4, "DELETE", [TWO]),
    canal(5, "INSERT", [THREE]),
]
LIVE = [(1, "one", "test_1b", 11, 100, "p"), (3, "three", None, 30, 300, "r")]


def test_odd_names_are_kept_exactly_scd1(lake: Any) -> None:
    """Golden: the live rows under the source's names, read by Spark and by delta-rs; only the
    table that needs column mapping gets it (the plain one stays readable by every reader)."""
    first = lake.apply(BATCH_1, format="canal")
    assert first.quarantined == 0 and first.tables[ODD_TABLE].inserted == 2
    result = lake.apply(BATCH_2, format="canal")
    t = result.tables[ODD_TABLE]
    assert (t.inserted, t.updated, t.deleted, result.quarantined) == (1, 1, 1, 0)
    assert [c for c in lake.df(ODD_TABLE).columns if not c.startswith("_cdc_")] == COLUMNS
    assert spark_rows(lake, ODD_TABLE, COLUMNS) == LIVE
    assert delta_rs_rows(lake, ODD_TABLE, COLUMNS) == LIVE
    assert mapping_mode(lake, ODD_TABLE) == "name"
    assert mapping_mode(lake, PLAIN_TABLE) == "none"
    from deltalake import DeltaTable

    plain = DeltaTable(path_of(lake, PLAIN_TABLE)).to_pyarrow_table().select(["id", "name"])
    assert plain.to_pylist() == [{"id": 1, "name": "x"}]
    from cdclake.ops.status import target_status

    status = target_status(str(lake.root))
    assert {t.table: t.rows for t in status.tables} == {ODD_TABLE: 2, PLAIN_TABLE: 1}


def test_odd_names_are_kept_exactly_scd2(lake: Any) -> None:
    """Golden, history table: every version under the source's names (delete 2 closes its
    version at 4; the update of 1 closes one at 3 and opens one)."""
    lake.apply(BATCH_1, format="canal", stored_as_scd_type=2)
    lake.apply(BATCH_2, format="canal", stored_as_scd_type=2)
    columns = [*COLUMNS, "__START_AT", "__END_AT"]
    got = [
        (*r[:-2], r[-2][0] - ES, None if r[-1] is None else r[-1][0] - ES)
        for r in spark_rows(lake, ODD_TABLE, columns)
    ]
    assert sorted(got, key=repr) == sorted(
        [
            (1, "one", "test_1", 10, 100, "p", 1, 3),
            (1, "one", "test_1b", 11, 100, "p", 3, None),
            (2, "two", "test_2", 20, 200, "q", 1, 4),
            (3, "three", None, 30, 300, "r", 5, None),
        ],
        key=repr,
    )
    current = [r for r in delta_rs_rows(lake, ODD_TABLE, columns) if r[-1] is None]
    assert sorted((r[:-2] for r in current), key=repr) == LIVE
    from cdclake.history import current as current_versions

    now = current_versions(lake.spark, path_of(lake, ODD_TABLE)).select(*map(quote, COLUMNS))
    assert sorted((tuple(r) for r in now.collect()), key=repr) == LIVE
    assert mapping_mode(lake, ODD_TABLE) == "name"


def test_odd_key_holds_deletes_back_and_is_recorded(lake: Any) -> None:
    """A key named ``$% ^,& *(``: its tombstone log gets column mapping too, an older insert of
    the deleted key stays deleted, and the key (a name with a comma) is recorded as it is."""
    mysql = {ODD: "VARCHAR(10)", SPACE: "INT"}
    key = {"mysql": mysql, "pk": [ODD], "table": "keyed"}
    lake.apply(
        [canal(1, "INSERT", [{ODD: "a", SPACE: 1}, {ODD: "b", SPACE: 2}], **key)], format="canal"
    )
    lake.apply([canal(5, "DELETE", [{ODD: "a", SPACE: 1}], **key)], format="canal")
    late = lake.apply([canal(3, "INSERT", [{ODD: "a", SPACE: 3}], **key)], format="canal")
    assert late.tables["shop.keyed"].ignored == 1  # older than the delete at 5
    assert spark_rows(lake, "shop.keyed", [ODD, SPACE]) == [("b", 2)]
    target = Target(str(lake.root))
    assert target.keys(lake.spark, "shop.keyed") == (ODD,)
    tombstones = lake.spark.read.format("delta").load(target.tombstone_path("shop.keyed"))
    assert [r[0] for r in tombstones.select(quote(ODD)).collect()] == ["a"]


def test_keyless_table_with_odd_names(lake: Any) -> None:
    """No key: one physical row per live source row, duplicates included."""
    mysql = {ODD: "VARCHAR(10)", DOT: "INT"}
    keyless = {"mysql": mysql, "pk": [], "table": "nokey"}
    same = {ODD: "s", DOT: 1}
    lake.apply([canal(1, "INSERT", [same, same, {ODD: "t", DOT: 2}], **keyless)], format="canal")
    lake.apply([canal(2, "DELETE", [same], **keyless)], format="canal")
    assert spark_rows(lake, "shop.nokey", [ODD, DOT]) == [("s", 1), ("t", 2)]
    assert delta_rs_rows(lake, "shop.nokey", [ODD, DOT]) == [("s", 1), ("t", 2)]


WORKING = ["position", "op", "seq", "source_ts", "lineage", "unavailable", "h", "sign", "final"]
"""Source columns named like the columns cdclake works with while it applies a batch."""


@pytest.mark.parametrize("mode", ["scd1", "keyless", "scd2"])
def test_source_columns_named_like_working_columns(lake: Any, mode: str) -> None:
    """Regression: a column named ``position``, ``op`` or ``seq`` (or ``h`` without a key)
    made the apply fail with an ambiguous reference; the image now travels nested."""
    columns = ["_id", *WORKING]
    mysql = {"_id": "INT", **{c: "VARCHAR(10)" for c in WORKING}}
    opts: dict[str, Any] = {"stored_as_scd_type": 2} if mode == "scd2" else {}
    table: dict[str, Any] = {"mysql": mysql, "pk": [] if mode == "keyless" else ["_id"]}

    def image(i: int, v: str) -> dict[str, Any]:
        return {"_id": i, **dict.fromkeys(WORKING, v)}

    lake.apply(
        [canal(1, "INSERT", [image(1, "x"), image(2, "x")], **table)], format="canal", **opts
    )
    update = canal(3, "UPDATE", [image(1, "y")], old=[dict.fromkeys(WORKING, "x")], **table)
    lake.apply([update, canal(4, "DELETE", [image(2, "x")], **table)], format="canal", **opts)
    got = spark_rows(lake, "shop.odd_names", columns)
    if mode == "scd2":
        assert got == sorted([(1, *["x"] * 9), (1, *["y"] * 9), (2, *["x"] * 9)], key=repr)
    else:
        assert got == [(1, *["y"] * 9)]


# CREATE TABLE schema_evolution_multiple (_id INT NOT NULL, v1 VARCHAR(10), v2 INT,
#                                         v3 VARCHAR(10), PRIMARY KEY (_id));
# INSERT INTO schema_evolution_multiple VALUES (1, 'one', 10, 'string_1');
# ALTER TABLE schema_evolution_multiple ADD v4 INT, MODIFY COLUMN v1 VARCHAR(30),
#   ADD COLUMN (v5 DOUBLE, v6 DECIMAL(5, 3), `$% ^,& *(` VARCHAR(10) COMMENT 'test'),
#   MODIFY v2 BIGINT;
# INSERT INTO schema_evolution_multiple VALUES
#   (2, 'long_string_two', 2000000000000, 'string_2', 20, 20.5, 20.002, 'test_2');
#
# +I[1, one, 10, string_1, NULL, NULL, NULL, NULL]
# +I[2, long_string_two, 2000000000000, string_2, 20, 20.5, 20.002, test_2]
#   (Paimon's MySqlSyncTableActionITCase.testSchemaEvolutionMultipleColumns, canal form)
# -- batch 2: Paimon's canal CHANGE COLUMN event, then a row under the new name
# ALTER TABLE schema_evolution_multiple CHANGE COLUMN `$% ^,& *(` cg VARCHAR(20);
# INSERT INTO schema_evolution_multiple VALUES
#   (3, 'three', 3, 'string_3', 3, 3.5, 3.003, 'test_3');
#
# +I[3, three, 3, string_3, 3, 3.5, 3.003, test_3]
V1 = {"_id": "INT", "v1": "VARCHAR(10)", "v2": "INT", "v3": "VARCHAR(10)"}
V2 = {
    **V1,
    "v1": "VARCHAR(30)",
    "v2": "BIGINT",
    "v4": "INT",
    "v5": "DOUBLE",
    "v6": "DECIMAL(5,3)",
    ODD: "VARCHAR(10)",
}
V3 = {**{k: v for k, v in V2.items() if k != ODD}, "cg": "VARCHAR(20)"}
EVOLVING = "shop.schema_evolution_multiple"
CREATE = (
    "CREATE TABLE schema_evolution_multiple (_id INT NOT NULL, v1 VARCHAR(10), v2 INT, "
    "v3 VARCHAR(10), PRIMARY KEY (_id))"
)
MULTI_ADD = (
    "ALTER TABLE schema_evolution_multiple \nADD v4 INT,\nMODIFY COLUMN v1 VARCHAR(30),\n"
    "ADD COLUMN (v5 DOUBLE, v6 DECIMAL(5, 3), `$% ^,& *(` VARCHAR(10) COMMENT 'test'),\n"
    "            MODIFY v2 BIGINT"
)
CHANGE = "ALTER TABLE schema_evolution_multiple CHANGE COLUMN `$% ^,& *(` cg VARCHAR(20) "


def test_paimon_multi_column_alter_then_change_column(lake: Any) -> None:
    """The ALTER adds ``$% ^,& *(`` to a table created without column mapping (turned on
    then); the CHANGE COLUMN renames it to ``cg``. Read by Spark only: the MODIFY to BIGINT
    widens ``v2`` with Delta type widening, a feature deltalake 1.6 does not read."""
    evolving: dict[str, Any] = {"table": "schema_evolution_multiple", "pk": []}
    cols1, cols2 = ["_id", "v1", "v2", "v3"], ["_id", "v1", "v2", "v3", "v4", "v5", "v6", ODD]
    two = row(
        2, "long_string_two", 2000000000000, "string_2", 20, 20.5, "20.002", "test_2", columns=cols2
    )
    lake.apply(
        [
            canal_ddl(1, CREATE),
            canal(
                2, "INSERT", [row(1, "one", 10, "string_1", columns=cols1)], mysql=V1, **evolving
            ),
            canal_ddl(3, MULTI_ADD),
            canal(4, "INSERT", [two], mysql=V2, **evolving),
        ],
        format="canal",
    )
    assert mapping_mode(lake, EVOLVING) == "name"
    assert spark_rows(lake, EVOLVING, cols2) == [
        (1, "one", 10, "string_1", None, None, None, None),
        (2, "long_string_two", 2000000000000, "string_2", 20, 20.5, Decimal("20.002"), "test_2"),
    ]
    cols3 = [*cols2[:-1], "cg"]
    three = row(3, "three", 3, "string_3", 3, 3.5, "3.003", "test_3", columns=cols3)
    lake.apply(
        [canal_ddl(5, CHANGE), canal(6, "INSERT", [three], mysql=V3, **evolving)], format="canal"
    )
    assert [c for c in lake.df(EVOLVING).columns if not c.startswith("_cdc_")] == cols3
    assert spark_rows(lake, EVOLVING, ["_id", "cg"]) == [(1, None), (2, "test_2"), (3, "test_3")]


def test_columns_added_later_to_a_table_made_without_column_mapping(lake: Any) -> None:
    """A table made from rows with plain names has no column mapping; a RENAME COLUMN to
    ``v 3.x`` and an ADD COLUMN ```d.e f``` with a DEFAULT turn it on, and a column only a
    later row brings (``n;e=w``) is added by the batch; an ADD COLUMN of ``_cdc_note`` fails
    with the reason and changes nothing."""
    plain: dict[str, Any] = {"table": "evolving", "mysql": {"_id": "INT", "v": "VARCHAR(10)"}}
    lake.apply(
        [canal(1, "INSERT", [{"_id": 1, "v": "a"}, {"_id": 2, "v": "b"}], **plain)], format="canal"
    )
    assert mapping_mode(lake, "shop.evolving") == "none"
    renamed = {"_id": "INT", "v 3.x": "VARCHAR(10)"}
    lake.apply(
        [
            canal_ddl(2, "ALTER TABLE evolving RENAME COLUMN v TO `v 3.x`", "evolving"),
            canal_ddl(
                3, "ALTER TABLE evolving ADD COLUMN `d.e f` VARCHAR(5) DEFAULT 'dflt'", "evolving"
            ),
            canal_ddl(4, "ALTER TABLE evolving ADD COLUMN `_cdc_note` INT", "evolving"),
            canal(
                5,
                "INSERT",
                [{"_id": 3, "v 3.x": "c", "d.e f": "own"}],
                table="evolving",
                mysql={**renamed, "d.e f": "VARCHAR(5)"},
            ),
            # written before the ADD COLUMN reached its message: it gets the default
            canal(
                6,
                "INSERT",
                [{"_id": 4, "v 3.x": "d", "n;e=w": 44}],
                table="evolving",
                mysql={**renamed, "n;e=w": "INT"},
            ),
            canal_ddl(7, "CREATE TABLE evolving_copy LIKE evolving", "evolving_copy"),
        ],
        format="canal",
    )
    columns = ["_id", "v 3.x", "d.e f", "n;e=w"]
    assert [c for c in lake.df("shop.evolving").columns if not c.startswith("_cdc_")] == columns
    expected = [
        (1, "a", "dflt", None),
        (2, "b", "dflt", None),
        (3, "c", "own", None),
        (4, "d", "dflt", 44),
    ]
    assert spark_rows(lake, "shop.evolving", columns) == expected
    assert delta_rs_rows(lake, "shop.evolving", columns) == expected
    ddl = lake.spark.read.format("delta").load(str(lake.root / "_cdc_ddl"))
    [note] = ddl.filter("statement LIKE '%_cdc_note%'").collect()
    assert (note["outcome"], note["reason"]) == ("failed", f"column '_cdc_note' {OWN_NAMES}")
    # a copy of a column-mapped table (Delta's own mapping properties are not copied), made
    # when the batch's DDL ran: before its rows brought `n;e=w`
    assert mapping_mode(lake, "shop.evolving_copy") == "name"
    copy = [c for c in lake.df("shop.evolving_copy").columns if not c.startswith("_cdc_")]
    assert copy == ["_id", "v 3.x", "d.e f"]


OWN_NAMES = (
    "is named like cdclake's own columns (_cdc_*, __START_AT, __END_AT); expected another name"
)
CASED = (
    "column 'Id' differs from column 'id' only in case; expected names unique ignoring case "
    "(Delta resolves names case-insensitively)"
)


def pg_event(after: dict[str, Any], table: str, lsn: int, extra: str) -> str:
    """A PostgreSQL change of a table with columns ``id`` and ``extra``."""
    return event(
        "c", after=after, lsn=lsn, table=table, row_fields=fields(id=INT32, **{extra: STRING})
    )


def test_names_no_table_can_hold_are_quarantined_and_other_tables_written(lake: Any) -> None:
    """Each bad table's changes are quarantined with one line naming the column and what was
    expected; the batch's good table is written, and only it shows in the status; a replay
    keeps them with the same reason."""
    own, history = f"column '_cdc_op' {OWN_NAMES}", f"column '__END_AT' {OWN_NAMES}"
    lines = [
        event("c", after={"id": 1, "name": "a", "qty": 1}, lsn=10),  # shop.public.items: good
        pg_event({"id": 1, "_cdc_op": "x"}, "own", 11, "_cdc_op"),
        pg_event({"id": 2, "_cdc_op": "y"}, "own", 12, "_cdc_op"),
        pg_event({"id": 1, "__END_AT": "x"}, "hist", 13, "__END_AT"),
    ]
    result = lake.apply(lines, parallel_tables=1)
    assert set(result.tables) == {"shop.public.items"}
    assert (result.quarantined, result.quarantine_reasons) == (3, {own: 2, history: 1})
    assert lake.quarantine() == [(2, own), (3, own), (4, history)]
    assert spark_rows(lake, "shop.public.items", ["id", "name", "qty"]) == [(1, "a", 1)]
    assert not (Path(lake.root) / "shop.public.own").exists()
    from cdclake.ops.status import target_status

    status = target_status(str(lake.root))
    assert [t.table for t in status.tables] == ["shop.public.items"]
    assert status.quarantine == {own: 2, history: 1}
    target = ["--target", str(lake.root)]
    res = CliRunner().invoke(app, ["quarantine", "replay", *target, "--table", "*.hist"])
    assert res.exit_code == 0, res.output
    assert "selected 1; applied 0; still quarantined 1" in res.stdout
    assert lake.quarantine() == [(2, own), (3, own), (4, history)]


def test_names_equal_ignoring_case_are_quarantined(lake: Any, spark: SparkSession) -> None:
    """Canonical changes straight to the applier: PostgreSQL keeps the case of a quoted name,
    so ``"Id"`` and ``id`` are two columns there, which Delta cannot hold (it resolves names
    ignoring case). (The decode of such a message fails before the applier sees it.)"""
    from builders.changes import Change, changes_df
    from pyspark.sql import functions as F

    from cdclake.apply.batch import apply_changes

    def table(*extra: str) -> StructType:
        return StructType(
            [StructField("id", IntegerType()), *[StructField(n, StringType()) for n in extra]]
        )

    schemas = {"s.cased": table("Id"), "s.good": table("name")}
    changes = [
        Change("s.cased", "insert", None, {"id": 1, "Id": "x"}, [1], ["id"]),
        Change("s.good", "insert", None, {"id": 1, "name": "x"}, [3], ["id"]),
    ]
    df = changes_df(spark, changes, schemas)
    lineage = F.struct(
        F.lit("mem").alias("source"),
        F.lit(None).cast("int").alias("partition"),
        F.col("position")[0].alias("offset"),
    )
    df = df.withColumns({"lineage": lineage, "seq": lineage, "raw": F.to_json(F.col("after"))})
    result = apply_changes(df, str(lake.root), parallel_tables=1)
    assert set(result.tables) == {"s.good"}
    assert result.quarantine_reasons == {CASED: 1}
    assert spark_rows(lake, "s.good", ["id", "name"]) == [(1, "x")]


def test_fail_on_bad_input_names_the_column(lake: Any) -> None:
    from cdclake.errors import BadInputError

    with pytest.raises(BadInputError, match="column '_cdc_op' is named like cdclake's own"):
        lake.apply(
            [pg_event({"id": 1, "_cdc_op": "x"}, "own", 13, "_cdc_op")], fail_on_bad_input=True
        )


def test_a_failing_table_does_not_stop_the_others(lake: Any) -> None:
    """One table at a time (``parallel_tables=1``): ``shop.public.a`` cannot become a history
    table, which fails the run, but ``shop.public.b``, applied after it, is written first."""
    a, b = {"id": 1, "name": "a", "qty": 1}, {"id": 1, "name": "b", "qty": 1}
    lake.apply([event("c", after=a, lsn=1, table="a")])
    with pytest.raises(ConfigError, match=r"table shop\.public\.a"):
        lake.apply(
            [event("u", after=a, lsn=2, table="a"), event("c", after=b, lsn=3, table="b")],
            stored_as_scd_type={"shop.public.a": 2},
            parallel_tables=1,
        )
    assert spark_rows(lake, "shop.public.b", ["id", "name"]) == [(1, "b")]


PUBLISHED = ["_id", "v1", ODD, SPACE, DOT]


def test_publish_reads_a_column_mapped_table(lake: Any, spark: SparkSession) -> None:
    """The Change Data Feed of a column-mapped table gives its changes under the source's
    names. A column whose name holds a backquote (``q`q``) cannot be written while the feed is
    on (Delta's MERGE fails on it): that table's changes are quarantined with the reason."""
    from cdclake.run.produce import changes_from_cdf, encode, read_change_feed

    published = {"table": "published", "mysql": {c: MYSQL[c] for c in PUBLISHED}}

    def mine(image: dict[str, Any]) -> dict[str, Any]:
        return {c: image[c] for c in PUBLISHED}

    lake.apply([*BATCH_1, canal(2, "INSERT", [mine(ONE), mine(TWO)], **published)], format="canal")
    versions = {}
    for table in (ODD_TABLE, "shop.published"):
        path = quote(path_of(lake, table))
        spark.sql(f"ALTER TABLE delta.{path} SET TBLPROPERTIES (delta.enableChangeDataFeed = true)")
        versions[table] = spark.sql(f"DESCRIBE HISTORY delta.{path}").first()["version"]
    update = canal(3, "UPDATE", [mine(ONE_B)], old=[{ODD: "test_1", SPACE: 10}], **published)
    delete, insert = (
        canal(4, "DELETE", [mine(TWO)], **published),
        canal(5, "INSERT", [mine(THREE)], **published),
    )
    result = lake.apply([*BATCH_2, update, delete, insert], format="canal")
    feed = (
        "column 'q`q' holds a backquote, which Delta cannot write while the table's Change Data "
        "Feed is on; expected a name without one, or delta.enableChangeDataFeed = false"
    )
    assert result.quarantine_reasons == {feed: 3}
    cdf = read_change_feed(spark, path_of(lake, "shop.published"), versions["shop.published"] + 1)
    changes = changes_from_cdf(cdf, "shop.published", ("_id",))
    images = changes.selectExpr("op", "to_json(coalesce(after, before)) AS image").collect()
    assert sorted((r["op"], json.loads(r["image"])) for r in images) == [
        ("delete", mine(TWO)),
        ("insert", mine(THREE)),
        ("update", mine(ONE_B)),
    ]
    messages = encode(changes, "debezium").collect()
    values = [m["value"] for m in messages if m["value"] is not None]  # and the delete's tombstone
    assert len(values) == 3 and all(json.dumps(ODD)[1:-1] in v for v in values)


def test_name_problems() -> None:
    def struct(*names: str, nested: StructType | None = None) -> StructType:
        out = StructType([StructField(n, IntegerType()) for n in names])
        return out.add("s", nested) if nested is not None else out

    assert names.name_problem(struct("id", ODD, SPACE, DOT, TICK, "\n", "=")) is None
    assert (
        names.name_problem(struct("id", ""))
        == "column '' has an empty name; expected a non-empty name"
    )
    assert names.name_problem(struct("id", "_CDC_position")) is not None
    assert names.name_problem(struct("id", nested=struct("a", "A"))) == (
        "field 'A' of column 's' differs from field 'a' of column 's' only in case; expected "
        "names unique ignoring case (Delta resolves names case-insensitively)"
    )
    assert not names.needs_column_mapping(struct("id", DOT, TICK, "_x"))
    assert names.needs_column_mapping(
        struct("id", nested=StructType([StructField("a b", StringType())]))
    )


@given(st.lists(st.text(), min_size=1, max_size=4))
def test_key_property_round_trip(keys: list[str]) -> None:
    assert names.keys_from_text(names.keys_to_text(keys)) == tuple(keys)


def test_a_message_with_names_equal_ignoring_case_is_quarantined(lake: Any) -> None:
    """PostgreSQL's ``"Id"`` next to ``id``, through decode: the message's changes are
    quarantined with the reason (the decode used to fail the run), the other table is written,
    in a schema-carrying Debezium message and a canal one alike."""
    canal_cased = canal(
        20, "INSERT", [{"id": 1, "Id": "x"}], table="cased", mysql={"id": "INT", "Id": "TEXT"}
    )
    lines = [
        pg_event({"id": 1, "Id": "x"}, "cased", 21, "Id"),
        event("c", after={"id": 1, "name": "a", "qty": 1}, lsn=22),
    ]
    result = lake.apply(lines)
    assert set(result.tables) == {"shop.public.items"}
    assert result.quarantine_reasons == {CASED: 1}
    assert spark_rows(lake, "shop.public.items", ["id", "name", "qty"]) == [(1, "a", 1)]
    canal_result = lake.apply([canal_cased, canal(21, "INSERT", [ONE])], format="canal")
    assert set(canal_result.tables) == {ODD_TABLE}
    assert canal_result.quarantine_reasons == {CASED: 1}
