"""Tables by name (:mod:`cdclake.ops.catalog`): a run with ``catalog_database`` registers every
table of its target in the session's catalog, and keeps the names in step with renames, drops
and schema changes. The test session's catalog is Spark's in-memory one; the same statements run
against a Hive metastore in tests/e2e/test_catalog.py."""

from __future__ import annotations

import uuid
from decimal import Decimal
from pathlib import Path

from builders.msgs import canal_ddl as ddl
from builders.msgs import canal_rows as row
from pyspark.sql import SparkSession

from cdclake.config import ApplyConfig
from cdclake.ops.catalog import registered_tables, same_location
from cdclake.run.runner import run_batch

V1 = {"id": "int", "name": "varchar(20)"}
V2 = {**V1, "score": "decimal(5,2)"}
T0 = 1_700_000_000_000
CREATE = "CREATE TABLE `{}` (`id` int NOT NULL, `name` varchar(20), PRIMARY KEY (`id`))"


def _batch(spark: SparkSession, tmp: Path, n: int, lines: list[str], database: str, **kw: object):  # type: ignore[no-untyped-def]
    f = tmp / f"batch-{n}.jsonl"
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    config = ApplyConfig(
        format="canal",
        inputs=(str(f),),
        target=str(tmp / "lake"),
        catalog_database=database,
        **kw,  # type: ignore[arg-type]
    )
    return run_batch(spark, config)


def _rows(spark: SparkSession, name: str) -> list[tuple[object, ...]]:
    df = spark.table(name)
    return sorted(
        tuple(r) for r in df.select([c for c in df.columns if not c.startswith("_")]).collect()
    )


def test_tables_are_queried_by_name_through_renames_drops_and_new_columns(
    spark: SparkSession, tmp_path: Path
) -> None:
    db = f"lake_{uuid.uuid4().hex[:8]}"
    lake = (tmp_path / "lake").as_uri()
    _batch(
        spark,
        tmp_path,
        1,
        [
            ddl(CREATE.format("users"), "CREATE", T0),
            row("INSERT", T0 + 1, [{"id": "1", "name": "ann"}], V1),
            ddl(CREATE.format("a_b"), "CREATE", T0 + 2, table="a_b"),
            row("INSERT", T0 + 3, [{"id": "7", "name": "x"}], V1, table="a_b"),
            # shop_a.b and shop.a_b both map to shop_a_b: the second gets a suffix
            ddl(CREATE.format("b"), "CREATE", T0 + 4, table="b", db="shop_a"),
            row("INSERT", T0 + 5, [{"id": "8", "name": "y"}], V1, table="b", db="shop_a"),
            row("DELETE", T0 + 6, [{"id": "1", "name": "ann"}], V1),
            row("INSERT", T0 + 7, [{"id": "2", "name": "bob"}], V1),
        ],
        db,
    )
    names = registered_tables(spark, db)
    assert same_location(names["shop_users"], f"{lake}/shop.users")
    collided = [n for n in names if n.startswith("shop_a_b_")]
    assert len(collided) == 1 and len(collided[0]) == len("shop_a_b_") + 8
    assert {"_cdc_ddl", "_cdc_sources", "_cdc_tombstones__shop_users"} <= set(names)
    assert _rows(spark, f"{db}.shop_users") == [(2, "bob")]
    # each of the colliding names reads its own table
    assert {_rows(spark, f"{db}.shop_a_b")[0][0], _rows(spark, f"{db}.{collided[0]}")[0][0]} == {
        7,
        8,
    }
    assert spark.table(f"{db}._cdc_tombstones__shop_users").count() == 1

    # a new column shows by name at once; a rename moves the name; the old name goes
    _batch(
        spark,
        tmp_path,
        2,
        [
            ddl("ALTER TABLE `users` ADD COLUMN `score` decimal(5,2) NULL", "ALTER", T0 + 10),
            row("INSERT", T0 + 11, [{"id": "3", "name": "cy", "score": "9.50"}], V2),
            ddl("RENAME TABLE `a_b` TO `a_c`", "RENAME", T0 + 12, table="a_b"),
        ],
        db,
    )
    assert _rows(spark, f"{db}.shop_users") == [(2, "bob", None), (3, "cy", Decimal("9.50"))]
    names = registered_tables(spark, db)
    assert "shop_a_b" not in names and _rows(spark, f"{db}.shop_a_c") == [(7, "x")]

    # a dropped table (drop_table=drop deletes its folder) leaves the catalog too
    _batch(spark, tmp_path, 3, [ddl("DROP TABLE `users`", "ERASE", T0 + 20)], db, drop_table="drop")
    names = registered_tables(spark, db)
    assert "shop_users" not in names and "_cdc_tombstones__shop_users" not in names
    assert {"shop_a_c", collided[0]} <= set(names)


def test_tables_of_the_database_outside_the_target_are_left_alone(
    spark: SparkSession, tmp_path: Path
) -> None:
    db = f"lake_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE DATABASE {db}")
    spark.sql(f"CREATE TABLE {db}.shop_users (id INT) USING DELTA LOCATION '{tmp_path / 'theirs'}'")
    _batch(
        spark,
        tmp_path,
        1,
        [ddl(CREATE.format("users"), "CREATE", T0), row("INSERT", T0 + 1, [{"id": "1"}], V1)],
        db,
    )
    names = registered_tables(spark, db)
    assert names["shop_users"].endswith("/theirs")  # the user's table kept its name
    [mine] = [n for n in names if n.startswith("shop_users_")]
    assert _rows(spark, f"{db}.{mine}") == [(1, None)]


def test_register_command_registers_an_existing_target_and_lists_the_names(
    spark: SparkSession, tmp_path: Path
) -> None:
    import json

    from typer.testing import CliRunner

    from cdclake.cli import app

    db = f"lake_{uuid.uuid4().hex[:8]}"
    _batch(
        spark,
        tmp_path,
        1,
        [ddl(CREATE.format("users"), "CREATE", T0), row("INSERT", T0 + 1, [{"id": "1"}], V1)],
        db,
    )
    spark.sql(f"DROP TABLE {db}.shop_users")  # e.g. a catalog rebuilt from scratch
    args = ["register", "--target", str(tmp_path / "lake"), "--catalog-database", db, "--json"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    outcomes = {d["name"]: d["outcome"] for d in map(json.loads, res.output.splitlines())}
    assert outcomes[f"{db}.shop_users"] == "registered"
    assert outcomes[f"{db}._cdc_sources"] == "kept"
    assert _rows(spark, f"{db}.shop_users") == [(1, None)]
    bad = CliRunner().invoke(app, [*args[:3], "--catalog-database", "no-such db"])
    assert bad.exit_code == 2 and "--catalog-database 'no-such db'" in bad.output
