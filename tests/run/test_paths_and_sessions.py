"""Locations as URIs (cdclake.paths), the jar list sessions ship, and sessions left as given."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from py4j.protocol import MEMORY_COMMAND_NAME
from pyspark.sql import SparkSession

from cdclake import _spark, paths
from cdclake.apply.tables import Target
from cdclake.cli.cluster import submit_args
from cdclake.config import ApplyConfig
from cdclake.run.runner import app_id_for


@pytest.mark.parametrize(
    ("location", "expected"),
    [
        ("s3a://bucket/lake", "s3a://bucket/lake"),
        ("abfss://c@acct.dfs.core.windows.net/x", "abfss://c@acct.dfs.core.windows.net/x"),
        ("file:/data/lake", "file:/data/lake"),
        ("/data/lake", "/data/lake"),
    ],
)
def test_uris_stay_as_given_and_plain_paths_become_absolute(location: str, expected: str) -> None:
    assert paths.to_uri(location) == expected


def test_relative_paths_are_made_absolute() -> None:
    assert paths.to_uri("lake") == str(Path.cwd() / "lake")


def test_table_paths_under_an_s3a_target_keep_the_scheme() -> None:
    """Regression: pathlib turned s3a://bucket/lake into s3a:/bucket/lake."""
    t = Target(ApplyConfig(format="debezium", inputs=("x",), target="s3a://b/lake/").target)
    assert t.table_path("db.t") == "s3a://b/lake/db.t"
    assert t.system_path("_cdc_quarantine") == "s3a://b/lake/_cdc_quarantine"


def test_app_id_of_an_s3a_checkpoint_is_not_made_local() -> None:
    a, b = app_id_for("s3a://b/chk"), app_id_for("s3a://b/chk2")
    assert a != b and a.startswith("cdclake-")
    assert app_id_for("chk") == app_id_for(str(Path.cwd() / "chk"))  # as before for local paths


def test_file_system_operations_on_a_file_uri(spark: SparkSession, tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    for name in ("b.jsonl", "a.jsonl", "_hidden", ".dot"):
        (tmp_path / "in" / name).write_text("{}\n")
    uri = (tmp_path / "in").as_uri()
    assert paths.is_dir(spark, uri)
    listed = paths.list_visible_files(spark, uri)
    assert listed == [f"file:{tmp_path}/in/a.jsonl", f"file:{tmp_path}/in/b.jsonl"]
    assert paths.list_visible_files(spark, uri + "/nothing") is None
    paths.rename(spark, uri, (tmp_path / "moved").as_uri())
    assert (tmp_path / "moved" / "a.jsonl").is_file() and not (tmp_path / "in").exists()
    paths.delete(spark, (tmp_path / "moved").as_uri())
    assert not paths.exists(spark, (tmp_path / "moved").as_uri())


@pytest.mark.parametrize(
    ("jar", "artifact"),
    [
        ("org.apache.hadoop_hadoop-client-api-3.4.2.jar", "hadoop-client-api"),
        ("hadoop-client-api-3.5.0.jar", "hadoop-client-api"),
        ("io.delta_delta-spark_4.2_2.13-4.4.0.jar", "delta-spark_4.2_2.13"),
        ("scala-library-2.13.18.jar", "scala-library"),
        ("org.wildfly.openssl_wildfly-openssl-2.2.5.Final.jar", "wildfly-openssl"),
    ],
)
def test_artifact_names_of_ivy_and_pyspark_jars(jar: str, artifact: str) -> None:
    assert _spark._artifact(jar) == artifact


def test_sessions_ship_delta_kafka_and_s3a_but_nothing_pyspark_has() -> None:
    """Regression: executors got the Delta jars as plain files, not on their class path."""
    names = [Path(j).name for j in _spark.jars()]
    assert any(n.startswith("io.delta_delta-spark_") for n in names)
    assert any("spark-sql-kafka" in n for n in names)
    assert any(n.startswith("org.apache.hadoop_hadoop-aws-3.5.0") for n in names)
    assert not [n for n in names if "hadoop-client-api" in n or "log4j" in n]
    assert all(Path(j).is_file() for j in _spark.jars())


def test_the_active_session_is_returned_untouched(spark: SparkSession) -> None:
    before = dict(spark.sparkContext.getConf().getAll())
    assert _spark.get_or_create(master="spark://elsewhere:7077") is spark
    assert dict(spark.sparkContext.getConf().getAll()) == before


def test_submit_args_name_the_jars_the_settings_and_the_entry_point() -> None:
    args = submit_args(master="yarn")
    assert args[:2] == ["--master", "yarn"]
    assert args[args.index("--jars") + 1].split(",") == _spark.jars()
    assert "spark.sql.extensions=io.delta.sql.DeltaSparkSessionExtension" in args
    assert "spark.delta.logStore.s3a.impl=io.delta.storage.S3SingleDriverLogStore" in args
    assert args[-1].endswith("cdclake/spark_submit/main.py")
    pkgs = submit_args(packages=True)
    assert pkgs[pkgs.index("--packages") + 1].split(",") == list(_spark.PACKAGES)
    assert "--master" not in pkgs


def test_a_column_function_takes_two_py4j_round_trips_in_cdclakes_sessions(
    spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """cdclake's sessions do not send each call's Python call site to the JVM: ``F.col`` is
    one py4j call for its JVM function and one for the column, not about a dozen."""
    from pyspark.errors import utils as errors_utils
    from pyspark.sql import functions as F

    # PySpark reads the setting once per process, from the session active at its first column
    # call, and keeps it: read it again here from this one (a case that ran earlier in this
    # worker may have made that first call under a session of its own)
    monkeypatch.setattr(errors_utils, "_enable_debugging_cache", None)
    client = spark.sparkContext._gateway._gateway_client  # type: ignore[union-attr]
    sent: list[str] = []
    send = client.send_command

    def counting(command: str, *args: object, **kwargs: object) -> object:
        # py4j releasing JVM objects whose Python proxies were garbage-collected, those of earlier
        # cases included, is not a part of the call (it made the count depend on the order)
        if not command.startswith(MEMORY_COMMAND_NAME):
            sent.append(command.split("\n", 1)[0])
        return send(command, *args, **kwargs)

    F.col("warm-up")
    gc.collect()
    monkeypatch.setattr(client, "send_command", counting)
    F.col("x")
    monkeypatch.setattr(client, "send_command", send)
    assert len(sent) <= 3, sent
    assert _spark.session_settings()["spark.python.sql.dataFrameDebugging.enabled"] == "false"
