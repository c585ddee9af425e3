"""Tables by name in a metastore shared by Spark applications (issue 37, item 1).

``cdclake apply --catalog-database shop`` registers every table of its target in a Hive metastore
kept in PostgreSQL (``scripts/metastore.sh conf``); Spark's Thrift JDBC server, another Spark
application on the same metastore (``scripts/metastore.sh thrift start``), serves the tables by
name to a BI tool, beeline here. What the tool sees must be the target: every table under its
name, and each table's rows and columns as delta-rs reads them from the Delta log, without Spark.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest
from deltalake.schema import PrimitiveType
from ports import free_port

from cdclake import delta_rs
from cdclake.target_layout import HISTORY_LOG, KEY_PROPERTY, TOMBSTONES

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
METASTORE_SH = REPO / "scripts" / "metastore.sh"
POSTGRES_SH = REPO / "scripts" / "postgres.sh"
TINY_DATA = REPO / "tests" / "spark-conf" / "spark-defaults.conf"
SAMPLES = REPO / "src" / "cdclake" / "samples"
# Two tables from two formats: PostgreSQL orders (Debezium: updates, deletes, a key change, a
# bad line) and MySQL products (Canal: an ALTER TABLE ADD COLUMN, so a column added later).
INPUTS = (SAMPLES / "010_postgres_orders.jsonl", SAMPLES / "020_canal_products.jsonl")
DATABASE = "shop"


def _run(args: list[str], env: dict[str, str], timeout: float) -> str:
    done = subprocess.run(
        args, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=timeout, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        pytest.fail(
            f"{' '.join(args)} failed (exit {done.returncode}):\n{done.stdout}{done.stderr}",
            pytrace=False,
        )
    return done.stdout


@dataclass
class Metastore:
    conf_dir: Path
    """``SPARK_CONF_DIR`` of the applications that share the metastore."""
    env: dict[str, str]
    """PG_PORT and THRIFT_DIR for scripts/metastore.sh."""


@pytest.fixture
def metastore(tmp_path: Path) -> Iterator[Metastore]:
    """A PostgreSQL server of this test's own (a free port, its own data folder, removed after)
    holding a new metastore: a running project server, or another test's, is never touched."""
    env = {**os.environ, "PG_PORT": str(free_port()), "THRIFT_DIR": str(tmp_path / "thrift")}
    # these drivers read the metastore's SPARK_CONF_DIR, not the class-data archive's settings
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    conf = tmp_path / "spark-conf"
    try:
        _run(["bash", str(METASTORE_SH), "conf", str(conf), "--base", str(TINY_DATA)], env, 900)
        yield Metastore(conf, env)
    finally:
        status = _postgres("status", env=env)  # "running 127.0.0.1:<port> <data folder>"
        _postgres("stop", env=env)
        if status.returncode == 0:
            shutil.rmtree(status.stdout.split()[-1], ignore_errors=True)


def _postgres(command: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    cmd = ["bash", str(POSTGRES_SH), command]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture
def thrift_port(metastore: Metastore) -> Iterator[int]:
    """Port of Spark's Thrift server on the metastore, stopped after the test."""
    port = free_port()
    env = {**metastore.env, "SPARK_CONF_DIR": str(metastore.conf_dir)}
    try:
        yield port
    finally:
        cmd = ["bash", str(METASTORE_SH), "thrift", "stop", "--port", str(port)]
        subprocess.run(cmd, env=env, capture_output=True, timeout=120, check=False)


def catalog_name(folder: str) -> str:
    """The name ``--catalog-database`` gives the table in ``folder`` (relative to the target):
    lower case, every run of other characters than ``[a-z0-9_]`` one ``_``; a per-table folder
    of cdclake's own joined with ``__`` (``_cdc_tombstones__shop_products``)."""

    def clean(text: str) -> str:
        return re.sub(r"[^a-z0-9_]+", "_", text.lower())

    top, _, rest = folder.partition("/")
    return f"{top}__{clean(rest)}" if top in (TOMBSTONES, HISTORY_LOG) else clean(folder)


def beeline_text(value: object) -> str:
    """A value of a primitive type as beeline prints it: NULL, lower-case booleans, times as a
    ``java.sql.Timestamp`` (in UTC, the server's session zone; fraction without trailing zeros,
    at least one digit)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, datetime):
        t = value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo else value
        return f"{t:%Y-%m-%d %H:%M:%S}.{f'{t.microsecond:06d}'.rstrip('0') or '0'}"
    return str(value)


def results(stdout: str) -> list[list[list[str]]]:
    """The output of ``scripts/metastore.sh beeline --silent=true --outputformat=csv2``: per
    statement, its rows, the header first. Each statement's output follows beeline's prompt."""
    blocks = re.split(r"(?m)^\d+: jdbc:hive2://[^>]*> ", stdout)[1:]
    return [list(csv.reader(block.splitlines())) for block in blocks]


@dataclass
class Expected:
    """One data table as delta-rs reads it: what ``SELECT * … ORDER BY <key>`` must show."""

    name: str
    columns: list[str]
    nested: set[str]
    """Arrays and structs (cdclake's position and lineage), which beeline prints as JSON."""
    rows: list[list[object]]
    """Plain values as beeline prints them, nested ones as Python values, in key order."""
    keys: list[str]

    @classmethod
    def read(cls, target: Path, folder: str) -> Expected:
        table = delta_rs.open_table(str(target / folder))
        assert table is not None, folder
        fields = table.schema().fields
        columns = [f.name for f in fields]
        nested = {f.name for f in fields if not isinstance(f.type, PrimitiveType)}
        keys = delta_rs.properties(table)[KEY_PROPERTY].split(",")
        data = delta_rs.read(str(target / folder), columns)
        assert data is not None, folder
        records = sorted(delta_rs.records(data), key=lambda r: tuple(r[k] for k in keys))
        rows = [[r[c] if c in nested else beeline_text(r[c]) for c in columns] for r in records]
        return cls(catalog_name(folder), columns, nested, rows, keys)

    def select(self) -> str:
        return f"SELECT * FROM {DATABASE}.{self.name} ORDER BY {', '.join(self.keys)}"

    def values(self, shown: list[list[str]]) -> list[list[object]]:
        """beeline's rows (after the header) with the nested values parsed back."""
        header, *rows = shown

        def value(column: str, text: str) -> object:
            if column not in self.nested:
                return text
            return None if text == "NULL" else json.loads(text)

        return [[value(c, t) for c, t in zip(header, row, strict=True)] for row in rows]


# about 100 s on this machine (2 cores), over 120 s while other Spark jobs run: cdclake's driver
# (~75 s, with its Hive client) and the Thrift server (~30 s) start side by side, then beeline
# (~20 s: the server's first query of each table loads its Delta snapshot and plans cold)
def test_bi_tool_sees_the_target_by_name(
    metastore: Metastore, thrift_port: int, tmp_path: Path
) -> None:
    target = tmp_path / "lake"
    env = {**metastore.env, "SPARK_CONF_DIR": str(metastore.conf_dir)}
    inputs = [a for path in INPUTS for a in ("--input", str(path))]
    apply_cmd = [
        str(Path(sys.executable).parent / "cdclake"), "apply", "--format", "auto",
        "--target", str(target), *inputs, "--catalog-database", DATABASE,
    ]  # fmt: skip
    # App 1 (cdclake) and app 2 (the Thrift server) start at the same time on one metastore: the
    # server runs before the tables are registered and finds them when a client asks.
    apply_log = tmp_path / "apply.out"
    with apply_log.open("w") as out:
        apply = subprocess.Popen(
            apply_cmd, env=env, cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=out,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            thrift = ["bash", str(METASTORE_SH), "thrift", "start", "--port", str(thrift_port)]
            _run(thrift, env, timeout=300)
            apply.wait(timeout=600)
        finally:
            if apply.poll() is None:
                apply.kill()
                apply.wait()
    assert apply.returncode == 0, f"{' '.join(apply_cmd)} failed:\n{apply_log.read_text()}"

    logs = target.glob("**/_delta_log")
    folders = sorted(log.parent.relative_to(target).as_posix() for log in logs)
    tables = [Expected.read(target, f) for f in folders if not f.startswith("_cdc_")]
    assert len(tables) == 2 and all(t.rows for t in tables), folders
    statements = [f"SHOW TABLES IN {DATABASE}", *(t.select() for t in tables)]
    beeline = ["bash", str(METASTORE_SH), "beeline", "--port", str(thrift_port), "--silent=true",
               "--outputformat=csv2", *(a for s in statements for a in ("-e", s))]  # fmt: skip
    shown = results(_run(beeline, env, timeout=300))
    assert len(shown) == len(statements), shown

    assert sorted(row[1] for row in shown[0][1:]) == sorted(catalog_name(f) for f in folders)
    for table, rows in zip(tables, shown[1:], strict=True):
        assert rows[0] == table.columns, f"{table.name}: the columns by name"
        assert table.values(rows) == table.rows, f"{table.name}: the rows by name"
